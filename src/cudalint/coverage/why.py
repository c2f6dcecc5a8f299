"""`cudalint coverage QUERY --why`: where each release's answer for an operator came from.

One line per run of releases with the same answer and the same reason: the status code,
the source (dispatch table, binary registration, Python registration, manual correction
with its reference) and what that source says; then the MPS test lists' dtype entries.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from .db import CoverageDB
from .names import qualified
from .release_facts import SOURCE_BINARY, SOURCE_CORRECTION, SOURCE_PYTHON, SOURCE_TORCHVISION
from .status import CODE_ABSENT, COMPOSITE_CODES

_YAML_SAYS = {
    "N": "MPS kernel in native_functions.yaml (directly or through its structured delegate)",
    "E": "no MPS kernel in native_functions.yaml, while CPU and CUDA have one",
    "G": "no MPS kernel in native_functions.yaml; only one other backend or layout has one",
    "F": "explicit CPU fallback",
}
_BINARY_SAYS = {
    "F": "explicit CPU fallback registered by MPSFallback.mm (found in the release's macOS libtorch)",
    "E": "MPSFallback.mm registers only a device-mismatch guard, no kernel",
    "N": "MPS kernel registered by hand outside the yaml (found in the release's macOS libtorch)",
}
_XFAIL_STATE = {
    "release": "MPS test list of the release",
    "approximate": "MPS test list of a main-branch commit near the release",
}


def _short(release: str) -> str:
    return ".".join(release.split(".")[:2])


def _span(releases: Sequence[str]) -> str:
    first, last = _short(releases[0]), _short(releases[-1])
    return first if first == last else f"{first}-{last}"


def _composite(db: CoverageDB, op: str, release: str, code: str) -> str:
    gaps, fallbacks = db.blocked_by(op, release)
    if code == "C":
        return "composite: every operator it reaches runs on MPS"
    if code == "U":
        return "composite: no callee information"
    if code == "B":
        return f"composite: reaches the CPU fallback {', '.join(fallbacks)}"
    missing = ", ".join(gaps) or "operators without MPS"
    if code == "P":
        return f"composite: some code paths reach {missing}, which lack MPS"
    return f"composite: the operators doing the work lack MPS ({missing})"


def reason(db: CoverageDB, op: str, release: str) -> str:
    """Why ``op`` has its status at ``release``, naming the source."""
    code, source = db.code(op, release), db.source(op, release)
    if code == CODE_ABSENT:
        return "the operator does not exist in this release"
    if source == SOURCE_CORRECTION:
        found = db.corrections(op, release)
        if found:
            return f"manual correction: {found[0]['why']} [{found[0]['reference']}]"
    if source == SOURCE_PYTHON:
        found = db.registrations(op, release)
        if found:
            return f"Python registration in {found[0]['file']} [{found[0]['reference']}]"
    if source == SOURCE_TORCHVISION:
        table = db.torchvision()
        found = next(entry for entry in table["ops"] if entry["op"] == op)
        first_torch = next((t for t, v in table["pairs"].items() if v == found["mps_from"]), "?")
        has = "an MPS kernel" if code == "N" else "no MPS kernel"
        return (f"the torchvision release paired with this torch has {has}; MPS from torchvision "
                f"{found['mps_from']} (torch {first_torch}) [{found['reference']}]")
    if source == SOURCE_BINARY:
        return "binary: " + _BINARY_SAYS.get(code, "registration outside the yaml")
    if code in COMPOSITE_CODES:
        return "yaml: " + _composite(db, op, release, code)
    return "yaml: " + _YAML_SAYS[code]


def _runs(items: Sequence[Tuple[str, str]]) -> List[Tuple[List[str], str]]:
    """Group consecutive releases with the same text."""
    runs: List[Tuple[List[str], str]] = []
    for release, text in items:
        if runs and runs[-1][1] == text:
            runs[-1][0].append(release)
        else:
            runs.append(([release], text))
    return runs


def _test_list_text(db: CoverageDB, op: str, release: str) -> str:
    state = db.release_info(release).get("xfail", "absent")
    if state == "absent":
        return "no test-list data for this release"
    entries = [f for f in db.known_failures(op, release) if not f.grad]
    if not entries:
        return f"{_XFAIL_STATE[state]}: not listed"
    shown: Dict[str, None] = {}
    for failure in entries:
        dtypes = ", ".join(failure.dtypes) if failure.dtypes is not None else "all dtypes"
        condition = f" when {failure.condition}" if failure.condition else ""
        shown[f"{failure.opinfo} {failure.list_name} ({dtypes}){condition}"] = None
    return f"{_XFAIL_STATE[state]}: " + "; ".join(shown)


def explain_op(db: CoverageDB, op: str) -> List[str]:
    """The --why lines of one operator."""
    releases = db.versions()
    lines = [qualified(op)]
    statuses = _runs([(r, f"{db.code(op, r)}  {reason(db, op, r)}") for r in releases])
    width = max(len(_span(span)) for span, _ in statuses)
    lines.extend(f"  {_span(span).ljust(width)}  {text}" for span, text in statuses)
    if db.opinfo_keys(op):
        lines.append("  dtypes:")
        tests = _runs([(r, _test_list_text(db, op, r)) for r in releases])
        width = max(len(_span(span)) for span, _ in tests)
        lines.extend(f"    {_span(span).ljust(width)}  {text}" for span, text in tests)
    return lines
