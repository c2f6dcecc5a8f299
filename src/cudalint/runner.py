"""The one entry point every front end calls: settings + paths -> findings."""

from __future__ import annotations

import fnmatch
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from cudalint import manifests
from cudalint.catalog import Catalog, load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile, discover
from cudalint.findings import Finding, Severity
from cudalint.noqa import noqa_lines, silenced
from cudalint.python.analyze import checks_for, check_python, unreadable
from cudalint.source import decode_python, decode_text
from cudalint.versions import parse_version

PARALLEL_THRESHOLD = 16  # below this many files a process pool costs more than it saves
NEWEST_KNOWN_TORCH = "2.15"


@dataclass
class RunResult:
    findings: List[Finding] = field(default_factory=list)
    files: int = 0
    torch_version: str = NEWEST_KNOWN_TORCH
    torch_version_source: str = "newest release cudalint knows"


def target_torch(settings: Settings, files: Sequence[SourceFile]) -> Tuple[str, str]:
    """--torch-version, else the project's own pin or lower bound, else the newest known release."""
    if settings.torch_version:
        return settings.torch_version, "configured"
    for source in files:
        if source.kind == "python" and source.path.name != "setup.py":
            continue
        try:
            text = source.path.read_text(encoding="utf-8")
            found = manifests.torch_version_from(manifests.dependencies(source.display, text))
        except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
            continue
        if found:
            return found, f"from {source.display}"
    return NEWEST_KNOWN_TORCH, "newest release cudalint knows"


def lint_text(
    display: str, kind: str, text: str, settings: Settings, torch_version: str, catalog: Optional[Catalog] = None
) -> List[Finding]:
    """Lint text already in memory (used by the flake8 plugin and tests)."""
    catalog = catalog or load_catalog()
    findings: List[Finding] = []
    if kind == "python":
        checks = checks_for(settings.select, tuple(catalog))
        findings.extend(check_python(display, text, checks, parse_version(torch_version)))
    if kind != "python" or Path(display).name == "setup.py":
        findings.extend(manifests.check_manifest(display, text, torch_version=torch_version))
    return _filter(findings, text, display, settings)


def lint_file(source: SourceFile, settings: Settings, torch_version: str) -> List[Finding]:
    try:
        data = source.path.read_bytes()
    except OSError as exc:
        return [unreadable(source.display, f"cannot read: {exc.strerror or exc}")]
    decoded = decode_python(data) if source.kind == "python" else decode_text(data)
    if decoded.text is None:
        return [unreadable(source.display, f"{decoded.error}; the file was not checked", decoded.error_line, decoded.error_column)]
    try:
        return lint_text(source.display, source.kind, decoded.text, settings, torch_version)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not end the run
        return [unreadable(source.display, f"internal error while checking: {type(exc).__name__}: {exc}")]


def _filter(findings: List[Finding], text: str, display: str, settings: Settings) -> List[Finding]:
    ignored = set()
    for pattern, codes in settings.per_file_ignores:
        if fnmatch.fnmatchcase(display, pattern) or fnmatch.fnmatchcase(Path(display).name, pattern):
            ignored |= codes
    noqa = noqa_lines(text) if findings else {}
    return [
        finding
        for finding in findings
        if finding.code in settings.select
        and finding.code not in ignored
        and not silenced(finding.code, noqa.get(finding.line))
    ]


def _lint_many(batch: Sequence[SourceFile], settings: Settings, torch_version: str) -> List[Finding]:
    out: List[Finding] = []
    for source in batch:
        out.extend(lint_file(source, settings, torch_version))
    return out


def run(paths: Sequence[str], settings: Settings, jobs: Optional[int] = None) -> RunResult:
    files = list(discover(paths, settings.exclude, settings.root))
    torch_version, origin = target_torch(settings, files)
    result = RunResult(files=len(files), torch_version=torch_version, torch_version_source=origin)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(files) >= PARALLEL_THRESHOLD:
        size = max(1, len(files) // (jobs * 8))
        batches = [files[i : i + size] for i in range(0, len(files), size)]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [(batch, pool.submit(_lint_many, batch, settings, torch_version)) for batch in batches]
            for batch, future in futures:
                try:
                    result.findings.extend(future.result())
                except Exception as exc:  # noqa: BLE001 - a dead worker becomes findings, not a dead run
                    result.findings.extend(
                        unreadable(source.display, f"worker failed while checking: {type(exc).__name__}: {exc}")
                        for source in batch
                    )
    else:
        result.findings.extend(_lint_many(files, settings, torch_version))
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def count_by_severity(findings: Sequence[Finding]) -> dict:
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return counts
