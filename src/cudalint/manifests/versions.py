"""Just enough version arithmetic for the checks: pip, Poetry and conda specifiers.

Pip: `>=0.43,<0.46`, `==0.41.*`, `~=0.45.0`. Poetry: `^0.41`, `~0.41.1`, `0.41.1`,
`>=1.2 <2.0`, `a || b`. Conda: `=0.41`, `0.41.*`, `>=0.4|<0.2`. Only the release
numbers count; pre-release and post-release tags are ignored.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

_CLAUSE = re.compile(r"(~=|===|==|!=|<=|>=|<|>|\^|~|=)?\s*([A-Za-z0-9_.*+!-]+)")
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)")
# A local version label naming a CUDA build: +cu118, +cu121.post1, +pt21cu118, +cuda11.cudnn82
CUDA_LOCAL = re.compile(r"\+[a-z0-9]*?cu(?:da)?\d+[a-z0-9.]*", re.IGNORECASE)

Release = Tuple[int, ...]


def release(version: str) -> Optional[Release]:
    match = _RELEASE.match(version.strip())
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def _pad(a: Release, b: Release) -> Tuple[Release, Release]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def _less(a: Release, b: Release) -> bool:
    a, b = _pad(a, b)
    return a < b


def _bump(parts: Release, index: int) -> Release:
    """parts with parts[index] increased by one and everything after it dropped."""
    return parts[:index] + (parts[index] + 1,)


def alternatives(spec: str) -> List[List[Tuple[str, str]]]:
    """The spec as alternatives ('||' or '|') of clauses (operator, version)."""
    result = []
    for alternative in re.split(r"\|\|?", spec):
        clauses = [(op or "", version) for op, version in _CLAUSE.findall(alternative)]
        result.append(clauses)
    return result


def _admits_at_least(op: str, version: str, floor: Release) -> bool:
    """Does this one clause allow some release >= floor?"""
    if op in (">", ">=", "!=") or version in ("*", ""):
        return True
    prefix = version.endswith(".*") or (op in ("", "=") and "*" not in version)
    parts = release(version.rstrip(".*"))
    if parts is None:
        return True
    if op == "<":
        return _less(floor, parts)
    if op == "<=":
        return not _less(parts, floor)
    if op == "^":
        first = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
        return _less(floor, _bump(parts, first))
    if op == "~=" and len(parts) > 1:
        parts, prefix = parts[:-1], True
    elif op == "~":
        return _less(floor, _bump(parts, min(1, len(parts) - 1)))
    if prefix:
        return not _less(parts, floor[: len(parts)])
    return not _less(parts, floor)


def admits_at_least(spec: str, floor: str) -> bool:
    """Can something satisfying `spec` be version `floor` or newer?"""
    floor_parts = release(floor) or (0,)
    return any(
        all(_admits_at_least(op, version, floor_parts) for op, version in clauses)
        for clauses in alternatives(spec)
    )


_PIN_ORDER = ("==", "===", "~=", "^", "~", "=", "", ">=", ">")


def lower_bound(spec: str) -> Optional[str]:
    """The version a spec pins, else its lower bound: '==2.3.1' -> '2.3.1', '>=2.1,<3' -> '2.1'."""
    clauses = [clause for group in alternatives(spec) for clause in group]
    for wanted in _PIN_ORDER:
        for op, version in clauses:
            if op == wanted and release(version):
                return re.sub(r"(\.\*|\*)$", "", version.split("+")[0])
    return None


def upper_bound(spec: str) -> Optional[str]:
    """The version a spec caps releases below (or at): '<2.0' -> '2.0', '>=1.12,<=1.13.1' -> '1.13.1'."""
    clauses = [clause for group in alternatives(spec) for clause in group]
    return next((version for op, version in clauses if op in ("<", "<=") and release(version)), None)


def cuda_local_tag(spec: str) -> Optional[str]:
    """The local label ('+cu118') when a version in spec names a CUDA build, else None."""
    match = CUDA_LOCAL.search(spec)
    return match.group(0) if match else None
