"""Read the per-release facts of the mps-coverage data set (``torch-<version>.json``).

The data set is described in its own README.md; this module keeps only what the
database needs: each operator's raw MPS kind, the direct callees of composite
operators, and the OpInfo MPS test lists.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .names import base_name, op_key
from .release_facts import (
    KIND_COMPOSITE,
    KIND_CPU_FALLBACK,
    KIND_MISSING,
    KIND_MISSING_BACKEND,
    KIND_NATIVE,
    SOURCE_BINARY,
    OpFacts,
    ReleaseFacts,
    XfailEntry,
)
from .versions import sort_releases

_YAML_KEYS = re.compile(r"yaml dispatch lists (.*?) but not MPS")
_DELEGATE = re.compile(r"structured_delegate -> (\S+)")
_ERROR_INPUTS_TEST = "mps_ops_error_inputs_modifier"
_GRAD_TEST = "mps_ops_grad_modifier"
REASON_LENGTH = 80
# What the builder reads of a release file (scripts/vendor_mps_facts.py keeps only these).
RELEASE_FIELDS = ("torch", "format_version", "source", "sources", "registered_outside_yaml", "xfail",
                  "xfail_approximate", "xfail_lists", "xfail_sets")
OP_FIELDS = ("on_mps", "kind", "basis", "decomposes_to", "autogen_of", "xfail_opinfo_guess",
             "registered_outside_yaml")
SUFFIXES = (".json", ".json.gz")


def _version_of(path: Path) -> str:
    name = path.name[len("torch-"):]
    return next(name[: -len(suffix)] for suffix in sorted(SUFFIXES, key=len, reverse=True) if name.endswith(suffix))


def release_files(directory: Path) -> Dict[str, Path]:
    """version -> file, for every ``torch-<version>.json`` (or ``.json.gz``) in ``directory``."""
    found = {_version_of(path): path for suffix in SUFFIXES for path in directory.glob("torch-*" + suffix)}
    return {version: found[version] for version in sort_releases(found)}


def load_release_file(path: Path) -> dict:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


# Name parts of operators that serve one layout or library (sparse, quantized, ...);
# composites call them only behind a layout or device check.
LAYOUT_WORDS = frozenset(
    "sparse coo csr csc bsr bsc compressed quantize quantized dequantize mkldnn nested fbgemm cudnn miopen "
    "nnpack xnnpack vulkan".split()
)
# Accessors that only sparse tensors implement.
LAYOUT_OPS = frozenset("dense_dim sparse_dim _dimI _dimV _nnz is_coalesced indices values _indices _values".split())


def missing_kind(name: str, dispatch_keys: List[str]) -> str:
    """An operator without MPS path is a real gap when dense CPU and CUDA both have kernels
    and its name does not tie it to one layout or library."""
    base = base_name(name)
    parts = set(base.strip("_").split("_"))
    if "fake" in parts:  # fake quantization rounds ordinary float tensors: no quantized layout involved
        parts -= {"quantize", "quant"}
    layout_specific = bool(parts & LAYOUT_WORDS) or base in LAYOUT_OPS or base.startswith("q_")
    if {"CPU", "CUDA"} <= set(dispatch_keys) and not layout_specific:
        return KIND_MISSING
    return KIND_MISSING_BACKEND


def short_reason(text: Optional[str]) -> str:
    words = " ".join((text or "").split())
    if len(words) <= REASON_LENGTH:
        return words
    return words[: REASON_LENGTH - 3].rsplit(" ", 1)[0] + "..."


def _op_facts(name: str, entry: dict) -> OpFacts:
    facts = _yaml_or_binary_facts(name, entry)
    if entry.get("registered_outside_yaml") or entry["on_mps"] == "cpu-fallback":
        facts.source = SOURCE_BINARY
    return facts


def _yaml_or_binary_facts(name: str, entry: dict) -> OpFacts:
    on_mps = entry["on_mps"]
    if on_mps == "native":
        return OpFacts(KIND_NATIVE)
    if on_mps == "cpu-fallback":
        return OpFacts(KIND_CPU_FALLBACK)
    if on_mps == "composite":
        callees = entry.get("decomposes_to")
        return OpFacts(KIND_COMPOSITE, tuple(sorted(op_key(c) for c in callees)) if callees is not None else None)
    assert on_mps == "error", on_mps
    listed = _YAML_KEYS.match(entry.get("basis", ""))
    if listed is None:  # registered outside the yaml (a device-mismatch guard): a real gap
        return OpFacts(KIND_MISSING)
    return OpFacts(missing_kind(name, [key.strip() for key in listed.group(1).split(",") if key.strip()]))


def _dtype_list(node: ast.AST) -> Optional[Tuple[str, ...]]:
    """``[torch.int32, torch.int64]`` -> ("int32", "int64"); None for anything else."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    names = []
    for element in node.elts:
        if not (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                and element.value.id == "torch"):
            return None
        names.append(element.attr)
    return tuple(names)


def always_listed(expression: str) -> Tuple[str, ...]:
    """Dtypes in both branches of a conditional dtype list (``[a, b] if MACOS_VERSION < 15.0 else [b]``):
    listed whatever the condition. () when the expression is not of that form."""
    try:
        node = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return ()
    if not isinstance(node, ast.IfExp):
        return ()
    body, orelse = _dtype_list(node.body), _dtype_list(node.orelse)
    if body is None or orelse is None:
        return ()
    return tuple(dtype for dtype in body if dtype in orelse)


def _xfail_entries(raw: dict) -> List[XfailEntry]:
    entry = _xfail_entry(raw)
    both = always_listed(raw["dtypes_expr"]) if raw.get("dtypes_expr") and raw.get("dtypes") is None else ()
    if not both:
        return [entry]
    unconditional = XfailEntry(entry.list_name, entry.kind, entry.grad, both, entry.reason, raw.get("condition") or "")
    return [unconditional, entry]


def _xfail_entry(raw: dict) -> XfailEntry:
    condition = raw.get("condition") or ""
    if raw.get("dtypes_expr"):
        condition = " ".join(filter(None, [condition, "dtypes: " + " ".join(raw["dtypes_expr"].split())]))
    dtypes = raw.get("dtypes")
    return XfailEntry(
        list_name=raw["list"],
        kind=raw["kind"],
        grad=raw["function"] == _GRAD_TEST,
        dtypes=tuple(dtypes) if dtypes is not None else None,
        reason=short_reason(raw.get("reason") or raw.get("section")),
        condition=condition,
    )


def _complex_support(sets: dict) -> Dict[str, str]:
    """OpInfo key -> "y" (complex dtypes supported), "m" (from macOS 14), "n" (unsupported)."""
    support: Dict[str, str] = {}
    if "UNSUPPORTED_COMPLEX_OPS" in sets:
        for key in sets["UNSUPPORTED_COMPLEX_OPS"]["items"]:
            support[key] = "n"
    for key in sets.get("AFTER_MACOS_14_0_SUPPORTED_COMPLEX_OPS", {}).get("items", []):
        support[key] = "m"
    for key in sets.get("SUPPORTED_COMPLEX_OPS", {}).get("items", []):
        support[key] = "y"
    return support


def read_release(path: Path) -> ReleaseFacts:
    data = load_release_file(path)
    sources = data.get("sources", {})
    ops = {op_key(name): _op_facts(name, entry) for name, entry in data["ops"].items()}
    for name, entry in data["ops"].items():
        # A structured op or a generated variant without MPS path is missing the way its base op is.
        delegate = _DELEGATE.match(entry.get("basis", ""))
        base = op_key(delegate.group(1)) if delegate else op_key(entry.get("autogen_of") or "")
        if entry["on_mps"] == "error" and ops.get(base) and ops[base].kind in (KIND_MISSING, KIND_MISSING_BACKEND):
            ops[op_key(name)] = OpFacts(ops[base].kind, source=ops[op_key(name)].source)
    links = {
        op_key(name): tuple(entry["xfail_opinfo_guess"])
        for name, entry in data["ops"].items()
        if entry.get("xfail_opinfo_guess")
    }
    xfail = None
    if data.get("xfail") is not None:
        xfail = {}
        for key, entries in data["xfail"].items():
            kept = [entry for raw in entries if raw["function"] != _ERROR_INPUTS_TEST for entry in _xfail_entries(raw)]
            if kept:
                xfail[key] = kept
    if data.get("xfail") is None:
        xfail_state = "absent"
    elif data.get("xfail_approximate"):
        xfail_state = "approximate"
    else:
        xfail_state = "release"
    sets = data.get("xfail_sets") or {}
    complex_support = _complex_support(sets) if xfail is not None else {}
    if not complex_support:
        complex_default = ""
    else:  # a release lists either the supported or (2.15.0 on) the unsupported OpInfos
        complex_default = "y" if "UNSUPPORTED_COMPLEX_OPS" in sets else "n"
    info = {
        "source": "mps-coverage data set",
        "dispatch_table": sources.get("dispatch_table", ""),
        "git_version": sources.get("git_version", ""),
        "xfail": xfail_state,
    }
    return ReleaseFacts(
        version=data["torch"],
        info=info,
        ops=ops,
        xfail=xfail,
        complex_support=complex_support,
        opinfo_links=links,
        complex_default=complex_default,
    )
