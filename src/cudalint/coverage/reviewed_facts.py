"""What the extracted release facts cannot show, from two reviewed data files in data/mps-coverage/:

* ``python_registrations.toml``: MPS kernels torch registers from Python (``torch.library``), which
  neither native_functions.yaml nor the C++ registrations contain;
* ``corrections.toml``: manual corrections, each with a public reference.

Both name minor releases (``from``, ``until`` inclusive). ``apply`` folds them into one release's
operator facts, marking each changed operator with its source, so the database can say where every
answer came from. ``scan_torch`` finds the Python registrations in an installed torch's own files.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from .names import op_key
from .release_facts import (
    KIND_COMPOSITE,
    KIND_CPU_FALLBACK,
    KIND_MISSING,
    KIND_MISSING_BACKEND,
    KIND_NATIVE,
    SOURCE_CORRECTION,
    SOURCE_PYTHON,
    SOURCE_TORCHVISION,
    OpFacts,
)
from .status import COMPOSITE_CODES
from .versions import version_tuple

REGISTRATIONS_FILE = "python_registrations.toml"
CORRECTIONS_FILE = "corrections.toml"
TORCHVISION_FILE = "ops.toml"  # in data/torchvision/
LEAF_KINDS = {"N": KIND_NATIVE, "F": KIND_CPU_FALLBACK, "E": KIND_MISSING, "G": KIND_MISSING_BACKEND}


@dataclass(frozen=True)
class Span:
    first: str            # minor release, "2.0"
    last: Optional[str]   # inclusive; None: every later release

    def covers(self, version: str) -> bool:
        minor = version_tuple(version)[:2]
        if minor < version_tuple(self.first)[:2]:
            return False
        return self.last is None or minor <= version_tuple(self.last)[:2]


@dataclass(frozen=True)
class Registration:
    op: str          # database key, "var_mean.correction"
    span: Span
    file: str        # the wheel's file that registers it
    reference: str


@dataclass(frozen=True)
class Correction:
    ops: Tuple[str, ...]
    span: Span
    code: str        # storage code
    reference: str
    why: str


def _span(entry: dict, where: str) -> Span:
    if "from" not in entry:
        raise ValueError(f"{where}: 'from' is required")
    return Span(str(entry["from"]), str(entry["until"]) if "until" in entry else None)


def _referenced(path: Path, table: str, label: str, noun: str, data: Optional[dict] = None):
    """(entry, where) for each [[table]] entry of a reviewed-facts file; every entry must cite a reference."""
    data = tomllib.loads(path.read_text(encoding="utf-8")) if data is None else data
    for index, entry in enumerate(data.get(table, [])):
        where = f"{path.name}: {label} {index + 1}"
        if not entry.get("reference"):
            raise ValueError(f"{where}: every {noun} needs a reference")
        yield entry, where


def load_registrations(path: Path) -> List[Registration]:
    return [Registration(op_key(entry["op"]), _span(entry, where), entry["file"], entry["reference"])
            for entry, where in _referenced(path, "registration", "registration", "registration")]


@dataclass(frozen=True)
class Limit:
    """An argument value the MPS kernel of ``op`` rejects in ``span``: database row ``op[argument]``."""

    op: str
    argument: str
    span: Span
    reference: str
    why: str

    @property
    def key(self) -> str:
        return f"{self.op}[{self.argument}]"

    def as_correction(self) -> Correction:
        return Correction((self.key,), self.span, "E", self.reference, self.why)


def load_limits(path: Path) -> List[Limit]:
    return [Limit(op_key(entry["op"]), entry["argument"], _span(entry, where), entry["reference"], entry.get("why", ""))
            for entry, where in _referenced(path, "limit", "limit", "limit")]


def load_corrections(path: Path) -> List[Correction]:
    """The [[op]] corrections, and each [[limit]] as a correction of its own row."""
    found = []
    for entry, where in _referenced(path, "op", "op correction", "correction"):
        code = entry["code"]
        if code not in LEAF_KINDS and code not in COMPOSITE_CODES:
            raise ValueError(f"{where}: unknown status code {code!r}")
        found.append(Correction(tuple(op_key(op) for op in entry["ops"]), _span(entry, where), code,
                                entry["reference"], entry.get("why", "")))
    return found + [limit.as_correction() for limit in load_limits(path)]


@dataclass(frozen=True)
class TorchvisionTable:
    pairs: Dict[str, str]                     # torch minor -> torchvision minor
    ops: Tuple[Tuple[str, str, str], ...]     # (operator name, first torchvision release with MPS, reference)

    def release_for(self, torch_version: str) -> Optional[str]:
        return self.pairs.get(".".join(torch_version.split(".")[:2]))

    def facts(self, torch_version: str) -> Dict[str, OpFacts]:
        """``torchvision::<name>`` -> its MPS kind with the torchvision release paired with ``torch_version``."""
        release = self.release_for(torch_version)
        if release is None:
            return {}
        return {f"torchvision::{name}": OpFacts(KIND_NATIVE if version_tuple(release) >= version_tuple(first)
                                                else KIND_MISSING, source=SOURCE_TORCHVISION)
                for name, first, _ in self.ops}

    def to_json(self) -> dict:
        return {"pairs": self.pairs, "ops": [{"op": f"torchvision::{name}", "mps_from": first, "reference": ref}
                                             for name, first, ref in self.ops]}


def load_torchvision(path: Path) -> TorchvisionTable:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    ops = []
    for entry, _ in _referenced(path, "op", "op", "entry", data):
        ops.extend((name, str(entry["mps_from"]), entry["reference"]) for name in entry["names"])
    return TorchvisionTable({str(k): str(v) for k, v in data["pairs"].items()}, tuple(ops))


def apply(version: str, ops: Dict[str, OpFacts], registrations: Iterable[Registration],
          corrections: Iterable[Correction]) -> None:
    """Fold the reviewed facts covering ``version`` into ``ops`` (in place); corrections win. A limit's row
    (``op[argument]``, named by its correction) starts as a copy of its operator."""
    for correction in corrections:
        for key in correction.ops:
            base = key.split("[", 1)[0]
            if "[" in key and base in ops and key not in ops:
                ops[key] = OpFacts(ops[base].kind, ops[base].callees, ops[base].source, ops[base].forced)
    for registration in registrations:
        facts = ops.get(registration.op)
        if registration.span.covers(version) and facts is not None and facts.kind != KIND_NATIVE:
            ops[registration.op] = OpFacts(KIND_NATIVE, source=SOURCE_PYTHON)
    for correction in corrections:
        if not correction.span.covers(version):
            continue
        for op in correction.ops:
            facts = ops.get(op)
            if facts is None:
                continue
            if correction.code in LEAF_KINDS:
                ops[op] = OpFacts(LEAF_KINDS[correction.code], source=SOURCE_CORRECTION)
            else:
                callees = facts.callees if facts.kind == KIND_COMPOSITE else None
                ops[op] = OpFacts(KIND_COMPOSITE, callees, source=SOURCE_CORRECTION, forced=correction.code)


def covering(items: Iterable, op: str, version: str) -> list:
    """The registrations or corrections that speak for ``op`` at ``version``."""
    key = op_key(op)
    return [item for item in items
            if item.span.covers(version) and key in (item.ops if isinstance(item, Correction) else (item.op,))]


# -- Python registrations in an installed torch --------------------------------------------------------
def _string(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _library_key(call: ast.Call) -> Optional[str]:
    """The dispatch key of ``Library("aten", "IMPL", KEY)``; "" when none is given."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if not name.endswith("Library") or len(call.args) < 2:
        return None
    if _string(call.args[0]) != "aten" or _string(call.args[1]) != "IMPL":
        return None
    key = _string(call.args[2]) if len(call.args) > 2 else None
    for keyword in call.keywords:
        if keyword.arg == "dispatch_key":
            key = _string(keyword.value)
    return key or ""


def registrations_in_source(text: str) -> List[str]:
    """Operators a module registers for MPS: ``lib.impl("op", fn, "MPS")``, or ``lib.impl("op", fn)`` on a
    ``Library("aten", "IMPL", "MPS")``. Read with ``ast``; nothing is imported or run."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    libraries: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            key = _library_key(node.value)
            if key is not None:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        libraries[target.id] = key
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "impl"):
            continue
        receiver = node.func.value
        if not (isinstance(receiver, ast.Name) and receiver.id in libraries) or not node.args:
            continue
        op = _string(node.args[0])
        key = _string(node.args[2]) if len(node.args) > 2 else libraries[receiver.id]
        for keyword in node.keywords:
            if keyword.arg == "dispatch_key":
                key = _string(keyword.value)
        if op and key == "MPS":
            found.append(op_key(op))
    return found


def scan_torch(torch_dir: Path) -> Dict[str, str]:
    """op key -> file (relative to the wheel root) for every MPS registration in torch's .py files."""
    found: Dict[str, str] = {}
    for path in sorted(torch_dir.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "IMPL" not in text or "MPS" not in text:
            continue
        for op in registrations_in_source(text):
            found.setdefault(op, str(path.relative_to(torch_dir.parent)))
    return found
