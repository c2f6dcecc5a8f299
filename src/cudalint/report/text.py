"""Human output: path:line:col: CODE message, a summary line, optional statistics."""

from __future__ import annotations

import collections
from typing import List

from cudalint.findings import Safety, Severity
from cudalint.runner import RunResult, count_by_severity

COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
BOLD, RESET = "\033[1m", "\033[0m"


def render_text(result: RunResult, *, colour: bool = False, statistics: bool = False, quiet: bool = False) -> str:
    lines: List[str] = []
    for finding in result.findings:
        code = f"{COLOURS[finding.severity]}{finding.code}{RESET}" if colour else finding.code
        where = f"{finding.path}:{finding.line}:{finding.column}:"
        lines.append(f"{BOLD}{where}{RESET} {code} {finding.message}" if colour else f"{where} {code} {finding.message}")
    if statistics and result.findings:
        lines.append("")
        counts = collections.Counter(finding.code for finding in result.findings)
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"{count:>5}  {code}")
    if not quiet:
        lines.extend(f"note: {note}" for note in result.notes)
        lines.append(summary(result))
    return "\n".join(lines) + ("\n" if lines else "")


def summary(result: RunResult) -> str:
    target = f"target torch {result.torch_version} ({result.torch_version_source})"
    if result.targets:  # subtrees with a manifest of their own
        target += "; " + "; ".join(f"{folder}/: {where}" for folder, where in sorted(result.targets.items()))
    files = f"{result.files} file{'s' if result.files != 1 else ''} checked"
    fixed = f"Fixed {result.fixed} problem{'s' if result.fixed != 1 else ''}. " if result.fixed else ""
    if not result.findings:
        return f"{fixed}All clear: {files}, {target}."
    counts = count_by_severity(result.findings)
    parts = [f"{counts[s]} {s.value}{'s' if counts[s] != 1 and s is not Severity.INFO else ''}" for s in Severity if counts[s]]
    safe = sum(1 for finding in result.findings if finding.fix is not None and finding.fix.safety is Safety.SAFE)
    unsafe = sum(1 for finding in result.findings if finding.fix is not None and finding.fix.safety is Safety.UNSAFE)
    fixable = f"{safe} fixable with --fix" + (f" ({unsafe} more with --unsafe-fixes)" if unsafe else "")
    total = len(result.findings)
    return fixed + (
        f"Found {total} problem{'s' if total != 1 else ''} ({', '.join(parts)}) in {files}; "
        f"{fixable}; {target}."
    )
