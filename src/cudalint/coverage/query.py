"""`cudalint coverage QUERY`: one API's or operator's MPS status in every release, as a table."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .api_ops import api_ops, load_api_ops, module_cases
from .db import CoverageDB
from .names import qualified
from .status import CODE_LEGEND
from .why import explain_op

NAMESPACES = ("torch.", "torch.nn.functional.", "torch.Tensor.", "torch.nn.", "torch.linalg.", "torch.fft.", "torch.special.")


def resolve_query(query: str, db: CoverageDB) -> Tuple[str, Tuple[str, ...]]:
    """(what was found, the operators to show): a Python API reaches its operators; an op is itself."""
    apis = load_api_ops()["apis"]
    if query.startswith("F."):  # the usual `import torch.nn.functional as F`
        query = "torch.nn.functional." + query[2:]
    bare = query[len("torch."):] if query.startswith("torch.") else query
    for candidate in [query] + [prefix + bare for prefix in NAMESPACES]:
        if candidate in apis or module_cases(candidate):
            entries, reached = api_ops(candidate)
            return candidate, tuple(dict.fromkeys([*entries, *reached]))
    op = query[len("aten::"):] if query.startswith("aten::") else query
    if db.has_op(op):
        return qualified(op), (op,)
    raise LookupError(f"{query!r} is neither a torch API in the mapping nor an ATen operator in the database")


def coverage_table(query: str, torch_version: Optional[str] = None, why: bool = False) -> str:
    db = CoverageDB.load()
    found, ops = resolve_query(query, db)
    releases = list(db.versions())
    target = db.nearest_release(torch_version) if torch_version else db.newest()
    short = [".".join(release.split(".")[:2]) for release in releases]
    names = [qualified(op) for op in ops]
    width = max([len(name) for name in names] + [len("operator")])
    lines = [f"{found}: MPS coverage as of torch {'.'.join(target.split('.')[:2])} (the release marked *)", ""]
    header = "operator".ljust(width) + "  " + " ".join(
        (s + ("*" if release == target else "")).rjust(6) for s, release in zip(short, releases)
    )
    lines.append(header)
    for op, name in zip(ops, names):
        codes = [db.code(op, release) for release in releases]
        lines.append(name.ljust(width) + "  " + " ".join(code.rjust(6) for code in codes))
    used = sorted({db.code(op, release) for op in ops for release in releases})
    lines.append("")
    lines.extend(f"  {code}  {CODE_LEGEND[code]}" for code in used)
    first = _first_all(db, ops, releases)
    lines.append("")
    lines.append(
        f"runs on MPS from torch {'.'.join(first.split('.')[:2])}" if first else "no release in the database runs all of it on MPS"
    )
    if why:
        lines.append("")
        lines.append("why, per release:")
        for op in ops:
            lines.extend(explain_op(db, op))
    return "\n".join(lines) + "\n"


def _first_all(db: CoverageDB, ops: Sequence[str], releases: List[str]) -> Optional[str]:
    for release in releases:
        if all(db.runs_on_mps(op, release) for op in ops):
            return release
    return None
