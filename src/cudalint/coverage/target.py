"""Which covered torch releases a project's requirement allows, and what to suggest for its lower bound.

The target of a run is the newest covered release the requirement allows (what a user
installing today gets); the oldest allowed one is its floor. Ops that fail somewhere between
floor and target are one info note each (CDL609); the smallest release from which every op the
project reaches runs on MPS is the suggested lower bound (a note in the report, and
``cudalint coverage --project``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from cudalint.manifests.versions import alternatives, release

from .versions import version_tuple

Release = Tuple[int, ...]
PATCHES = range(10)  # a covered release answers for its minor series: x.y.0 ... x.y.9


def _pad(parts: Release, width: int) -> Release:
    return parts + (0,) * (width - len(parts))


def _cmp(a: Release, b: Release) -> int:
    width = max(len(a), len(b))
    a, b = _pad(a, width), _pad(b, width)
    return (a > b) - (a < b)


def _prefix(parts: Release, candidate: Release) -> bool:
    return _pad(candidate, len(parts))[: len(parts)] == parts


def _bump(parts: Release, index: int) -> Release:
    return parts[:index] + (parts[index] + 1,)


def _clause(op: str, version: str, candidate: Release) -> bool:
    """Does ``candidate`` satisfy one pip / Poetry / conda clause?"""
    if version in ("*", ""):
        return True
    wildcard = version.endswith("*")
    parts = release(version.rstrip(".*"))
    if parts is None:
        return True  # not a release number: this check cannot tell
    if op in ("==", "==="):
        return _prefix(parts, candidate) if wildcard else _cmp(candidate, parts) == 0
    if op == "!=":
        return not (_prefix(parts, candidate) if wildcard else _cmp(candidate, parts) == 0)
    if op in ("", "="):  # conda `=2.1` and bare `2.1`: the series
        return _prefix(parts, candidate)
    if op == "<":
        return _cmp(candidate, parts) < 0
    if op == "<=":
        return _cmp(candidate, parts) <= 0
    if op == ">":
        return _cmp(candidate, parts) > 0
    if op == ">=":
        return _cmp(candidate, parts) >= 0
    if op == "~=":
        return _cmp(candidate, parts) >= 0 and _prefix(parts[:-1] or parts, candidate)
    if op == "^":
        first = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
        return _cmp(candidate, parts) >= 0 and _cmp(candidate, _bump(parts, first)) < 0
    if op == "~":
        return _cmp(candidate, parts) >= 0 and _cmp(candidate, _bump(parts, min(1, len(parts) - 1))) < 0
    return True


def satisfies(spec: str, version: str) -> bool:
    """Does release ``version`` satisfy the requirement ``spec`` (any of its alternatives)?"""
    candidate = release(version) or (0,)
    return any(all(_clause(op, v, candidate) for op, v in clauses) for clauses in alternatives(spec))


def allowed_releases(spec: str, releases: Sequence[str]) -> Tuple[str, ...]:
    """The covered releases whose minor series ``spec`` allows, oldest first."""
    allowed = []
    for covered in releases:
        major, minor, _ = version_tuple(covered)
        if any(satisfies(spec, f"{major}.{minor}.{patch}") for patch in PATCHES):
            allowed.append(covered)
    return tuple(allowed)


def short(release_text: str) -> str:
    return ".".join(release_text.split(".")[:2])


# -- CDL609 messages, and the lower bound they suggest -------------------------------------------------
RANGE_NOTE = "{reaches} {verb} in torch {failing} of the releases the project allows ({allowed}); " \
             "it runs on MPS from torch {first}"
_NOTE = re.compile(r" reaches (?P<ops>.+?), which .* it runs on MPS from torch (?P<first>\d+\.\d+)$")


@dataclass(frozen=True)
class RangeNote:
    ops: Tuple[str, ...]
    first: str


def range_note(message: str) -> Optional[RangeNote]:
    """The ops and first good release of a CDL609 message (None for other messages)."""
    match = _NOTE.search(message)
    if match is None:
        return None
    return RangeNote(tuple(op.strip() for op in match.group("ops").split(",")), match.group("first"))


def suggested_floor(notes: Sequence[RangeNote]) -> Optional[Tuple[str, List[str]]]:
    """(lowest release from which every noted op runs, the ops that need it), or None without notes."""
    if not notes:
        return None
    first = max((note.first for note in notes), key=version_tuple)
    ops = sorted({op.split("::", 1)[-1] for note in notes for op in note.ops})
    return first, ops


# -- the run's target and its project-level notes -------------------------------------------------------
RANGE_CODE = "CDL609"


def requirement_text(dep) -> str:
    return f"{dep.name}{dep.specifier}"


def project_target(dep) -> Tuple[str, str]:
    """(target text, where it came from) for a project whose torch requirement is ``dep``."""
    from cudalint.versions import with_floor

    from .db import CoverageDB

    from cudalint.manifests.versions import lower_bound

    covered = CoverageDB.load().versions()
    allowed = allowed_releases(dep.specifier, covered)
    pinned = lower_bound(dep.specifier)
    exact = any(op in ("==", "===") for group in alternatives(dep.specifier) for op, _ in group)
    if len(allowed) == 1 and not exact and (pinned is None or version_tuple(pinned) < version_tuple(allowed[0])):
        # a range with one covered release in it (`torch<2.0`, `>=1.12,<2.0`: 1.13): that release, what an
        # install gets (the range's own lower bound is older than every release covered, or there is none)
        return short(allowed[0]), f"the newest release {requirement_text(dep)} in {dep.path} allows"
    if len(allowed) < 2 and pinned is not None:  # a pin, or no release covered: the requirement's own version
        return pinned, f"from {dep.path}"
    if not allowed:  # only a cap below every release covered (`torch<1.13`): the oldest covered is the nearest
        return short(covered[0]), f"the oldest release cudalint knows: {requirement_text(dep)} in {dep.path} allows none it covers"
    origin = f"the newest release {requirement_text(dep)} in {dep.path} allows"
    return with_floor(short(allowed[-1]), short(allowed[0])), origin


def project_notes(findings: list, dep, at_requirement: bool = False) -> Tuple[list, List[str]]:
    """(findings with one CDL609 per operator across the project, the first; the suggested lower bound
    as a note for the report, when some operator fails in an older allowed release). With
    `at_requirement` (the requirement's file is one the run checks), the operators' findings become one
    CDL609 at the requirement itself, which is what a port changes: the lower bound, with each
    operator's first call as a related place (DESIGN.md: one info-level note with the range and a
    suggested lower bound)."""
    kept, seen, notes, uses = [], set(), [], []
    for finding in sorted(findings, key=lambda f: f.sort_key):
        note = range_note(finding.message) if finding.code == RANGE_CODE else None
        if note is not None:
            if note.ops in seen:
                continue
            seen.add(note.ops)
            notes.append(note)
            uses.append((finding, note))
            continue
        kept.append(finding)
    suggestion = suggested_floor(notes)
    if suggestion is None or dep is None:
        return kept + [finding for finding, _ in uses], []
    if not at_requirement:
        return kept + [finding for finding, _ in uses], [floor_message(dep, *suggestion)]
    from cudalint.findings import Finding, Related

    related = tuple(Related(finding.line, finding.column, finding.end_line, finding.end_column,
                            USE_NOTE.format(ops=", ".join(note.ops), first=note.first), finding.path)
                    for finding, note in uses)
    floor, ops = suggestion
    first = uses[0][0]
    message = floor_message(dep, floor, ops, where=False) + FLOOR_TAIL.format(where=f"{first.path}:{first.line}")
    return kept + [Finding(RANGE_CODE, dep.path, dep.line, dep.column, dep.end_line, dep.end_column, message,
                           first.severity, None, related)], []


USE_NOTE = "{ops} runs on MPS from torch {first}; called here"  # a related place of the CDL609 at the requirement
FLOOR_TAIL = ": the older releases it allows have no MPS kernel for them (first call: {where})"
_USE = re.compile(r"^(?P<ops>.+) runs on MPS from torch (?P<first>\d+\.\d+); called here$")


def requirement_notes(finding) -> Tuple[str, List[Tuple[RangeNote, object]]]:
    """The suggested lower bound a CDL609 at the requirement carries (as the run's note would say it), and
    each operator's range note with the place of its first call (a Related); ("", []) for another finding."""
    if finding.code != RANGE_CODE or " to get MPS kernels for " not in finding.message:
        return "", []
    change, _, rest = finding.message.partition(" to get MPS kernels for ")
    ops = rest.split(FLOOR_TAIL.split("{")[0], 1)[0]
    uses = []
    for place in finding.related:
        match = _USE.match(place.message)
        if match is not None:
            uses.append((RangeNote(tuple(op.strip() for op in match.group("ops").split(",")), match.group("first")), place))
    return f"{change} in {finding.path}:{finding.line} to get MPS kernels for {ops}", uses


def floor_message(dep, floor: str, ops: Sequence[str], where: bool = True) -> str:
    clauses = [clause for group in alternatives(dep.specifier) for clause in group]
    if len(clauses) == 1 and clauses[0][0] in (">=", ">"):
        change = f"raise {requirement_text(dep)} to {dep.name}>={floor}"
    else:
        change = f"raise the lower bound of {requirement_text(dep)} to {floor}"
    return f"{change}{f' in {dep.path}:{dep.line}' if where else ''} to get MPS kernels for {', '.join(ops)}"
