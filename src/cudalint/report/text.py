"""Human output: path:line:col: CODE message, a summary line, optional statistics."""

from __future__ import annotations

import collections
from collections.abc import Sequence

from cudalint.findings import Finding, Safety, Severity
from cudalint.runner import RunResult, count_by_severity

COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
BOLD, RESET = "\033[1m", "\033[0m"


def render_text(result: RunResult, *, colour: bool = False, statistics: bool = False, quiet: bool = False,
                fixes: str = "", catalog=None) -> str:
    """Findings, the fixes section, then the summary line. `statistics` adds one line per code (with
    `quiet`, only those lines)."""
    if statistics and quiet:
        return "".join(line + "\n" for line in statistics_lines(result.findings, catalog))
    lines: list[str] = []
    for finding in result.findings:
        code = f"{COLOURS[finding.severity]}{finding.code}{RESET}" if colour else finding.code
        where = f"{finding.path}:{finding.line}:{finding.column}:"
        lines.append(f"{BOLD}{where}{RESET} {code} {finding.message}" if colour else f"{where} {code} {finding.message}")
    if statistics and result.findings:
        lines.append("")
        lines += statistics_lines(result.findings, catalog)
    if fixes:
        lines.append(fixes.rstrip("\n"))
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
    if not result.files:
        return f"{fixed}Nothing checked: no file found to check, {target}."
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


def _fixability(findings: Sequence[Finding]) -> str:
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.SAFE)
    unsafe = sum(1 for f in findings if f.fix is not None and f.fix.safety is Safety.UNSAFE)
    parts = []
    if safe:
        parts.append(("" if safe == len(findings) else f"{safe} ") + "fixable with --fix")
    if unsafe:
        parts.append(("" if unsafe == len(findings) else f"{unsafe} ") + "fixable with --unsafe-fixes")
    return ", ".join(parts) or "no fix"


def statistics_lines(findings: Sequence[Finding], catalog=None) -> list[str]:
    """One line per code, most frequent first: count, code, rule name, what --fix can do."""
    from cudalint.catalog import load_catalog

    catalog = catalog or load_catalog()
    by_code: dict[str, list[Finding]] = collections.defaultdict(list)
    for finding in findings:
        by_code[finding.code].append(finding)
    width = max([len(str(len(group))) for group in by_code.values()] + [1])
    names = {code: catalog[code].name if code in catalog else "" for code in by_code}
    name_width = max([len(name) for name in names.values()] + [1])
    return [
        f"{len(group):>{width}}  {code}  {names[code]:<{name_width}}  {_fixability(group)}"
        for code, group in sorted(by_code.items(), key=lambda item: (-len(item[1]), item[0]))
    ]


def fixes_section(counts: dict[tuple[str, str], int], catalog, heading: str) -> str:
    """`--show-fixes`: per file, how many findings of each code were (or would be) fixed."""
    total = sum(counts.values())
    if not total:
        return "No fix to apply.\n" if heading.startswith("Would") else "No fix applied.\n"
    lines = [f"{heading} problem{'s' if total != 1 else ''}:"]
    for path in sorted({path for path, _ in counts}):
        lines.append(f"- {path}:")
        for (where, code), count in sorted(counts.items(), key=lambda item: (item[0][0], item[0][1])):
            if where == path:
                name = catalog[code].name if code in catalog else ""
                lines.append(f"    {count} \u00d7 {code} ({name})")
    return "\n".join(lines) + "\n"
