"""Read a release's MPS kinds from torch's packaged ``native_functions.yaml``.

Used to add a release straight from an installed torch. The yaml says which
operators have an MPS kernel, a composite kernel, or neither; it does not say
which operators a composite calls, nor which operators ``MPSFallback.mm``
routes to the CPU outside the yaml, and the MPS OpInfo test lists are not in
the wheel either (see docs/coverage.md).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path
from typing import Dict, List, Optional

from .release_facts import KIND_COMPOSITE, KIND_MISSING, KIND_MISSING_BACKEND, KIND_NATIVE, OpFacts
from .shared_facts import missing_kind

COMPOSITE_KEYS = frozenset(
    {"CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}
)
YAML_IN_TORCHGEN = Path("packaged") / "ATen" / "native" / "native_functions.yaml"
# torchgen's autogen kernels write the functional result into ``out``.
AUTOGEN_CALLEES = ("copy_", "resize_")


def _dispatch_keys(entry: dict) -> Optional[List[str]]:
    dispatch = entry.get("dispatch")
    if dispatch is None:
        return None
    return [key.strip() for keys in dispatch for key in str(keys).split(",") if key.strip()]


def read_native_functions(path: Path) -> Dict[str, OpFacts]:
    """Operator key -> facts; composite callees are left unknown (None)."""
    import yaml  # only the release-adding path needs PyYAML

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    ops: Dict[str, OpFacts] = {}
    delegates: Dict[str, str] = {}
    autogen: Dict[str, str] = {}
    for entry in entries:
        name = entry["func"].split("(", 1)[0].strip()
        keys = _dispatch_keys(entry)
        if keys is not None and "MPS" in keys:
            ops[name] = OpFacts(KIND_NATIVE)
        elif entry.get("structured_delegate"):
            delegates[name] = entry["structured_delegate"]
        elif keys is None or COMPOSITE_KEYS & set(keys):
            ops[name] = OpFacts(KIND_COMPOSITE)
        else:
            ops[name] = OpFacts(missing_kind(name, keys))
        for generated in str(entry.get("autogen") or "").split(","):
            if generated.strip():
                autogen[generated.strip()] = name
    for name, delegate in delegates.items():
        ops[name] = _follow(ops, delegate)
    for name, base in autogen.items():
        # A generated variant calls its base op; without any MPS path there it has none either.
        base_facts = ops[base]
        if base_facts.kind in (KIND_MISSING, KIND_MISSING_BACKEND):
            ops[name] = OpFacts(base_facts.kind)
        else:
            ops[name] = OpFacts(KIND_COMPOSITE, tuple(sorted((base,) + AUTOGEN_CALLEES)))
    return ops


def _follow(ops: Dict[str, OpFacts], delegate: str) -> OpFacts:
    """A structured op runs where its delegate (the ``out`` variant) runs."""
    target = ops.get(delegate)
    if target is None or target.kind == KIND_COMPOSITE:
        return OpFacts(KIND_COMPOSITE, (delegate,))
    return OpFacts(target.kind)


def installed_torch() -> Dict[str, object]:
    """Version, git commit and yaml path of the installed torch, without importing torch."""
    version = importlib.metadata.version("torch").split("+", 1)[0]
    torch_spec = importlib.util.find_spec("torch")
    torchgen_spec = importlib.util.find_spec("torchgen")
    if torch_spec is None or torchgen_spec is None or torchgen_spec.origin is None:
        raise RuntimeError("torch (with torchgen) is not installed in this environment")
    yaml_path = Path(torchgen_spec.origin).parent / YAML_IN_TORCHGEN
    git_version = ""
    if torch_spec.origin is not None:
        version_file = Path(torch_spec.origin).parent / "version.py"
        if version_file.exists():
            found = re.search(r"git_version\s*=\s*['\"]([0-9a-f]+)['\"]", version_file.read_text(encoding="utf-8"))
            git_version = found.group(1) if found else ""
    return {"version": version, "git_version": git_version, "yaml": yaml_path}
