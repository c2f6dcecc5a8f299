"""`cudalint coverage --project PATH`: the operators a project reaches that fail on MPS somewhere in the
torch releases its requirement allows, and the lower bound from which they all run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .target import RANGE_CODE, range_note, requirement_notes

OP_CODES = frozenset({"CDL604", "CDL605", RANGE_CODE})
_REACHES = re.compile(r" reaches (?P<ops>.+?), which ")


def _ops(message: str) -> Tuple[str, ...]:
    match = _REACHES.search(message)
    return tuple(op.strip() for op in match.group("ops").split(",")) if match else ()


def project_report(path: str, torch_version: Optional[str] = None) -> str:
    from cudalint.config import Settings
    from cudalint.runner import run

    result = run([path], Settings(select=OP_CODES, root=Path(path).resolve(), torch_version=torch_version))
    lines = [f"{path}: target torch {result.torch_version} ({result.torch_version_source})"]
    rows: Dict[Tuple[str, ...], List[str]] = {}
    notes = list(result.notes)
    for finding in result.findings:
        suggestion, uses = requirement_notes(finding)
        if suggestion:  # the CDL609 at the requirement: one row per operator it names, at its first call
            notes.append(suggestion)
            for note, place in uses:
                rows.setdefault(note.ops, [f"fails in an older allowed release; runs on MPS from torch {note.first}",
                                           f"{place.path}:{place.line}:{place.column}"])
            continue
        note = range_note(finding.message) if finding.code == RANGE_CODE else None
        if note is not None:
            verdict = f"fails in an older allowed release; runs on MPS from torch {note.first}"
        else:
            verdict = f"fails in the target release ({finding.code})"
        rows.setdefault(_ops(finding.message), [verdict, f"{finding.path}:{finding.line}:{finding.column}"])
    if not rows:
        lines.append("every operator the project reaches runs on MPS in every release it allows")
        return "\n".join(lines) + "\n"
    lines.append("")
    width = max(len(", ".join(ops)) for ops in rows)
    for ops, (verdict, where) in sorted(rows.items()):
        lines.append(f"  {', '.join(ops).ljust(width)}  {verdict}  (first at {where})")
    lines.append("")
    if notes:
        lines.extend(f"suggested lower bound: {note}" for note in notes)
    else:
        lines.append("no lower bound helps: the operators above fail in the target release too")
    return "\n".join(lines) + "\n"
