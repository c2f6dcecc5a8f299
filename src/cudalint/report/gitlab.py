"""`--format gitlab`: GitLab's code quality report, a JSON list of issues (a subset of the Code Climate spec)
that a merge request shows as new and fixed findings.

Each issue has `description` (the code and message), `check_name` (the code), `severity`
(error -> `major`, warning -> `minor`, info -> `info`), `location` (`path` relative to the repository
root, `lines.begin` and `lines.end`) and a `fingerprint` that GitLab uses to tell the same issue in
two pipelines apart: the file's path and the finding's line fingerprint (code_scanning.py), so it
does not change when unrelated lines move.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath

from cudalint.digests import sha256
from cudalint.findings import Severity
from cudalint.report.code_scanning import finding_fingerprints, relative_path, repository_root
from cudalint.runner import RunResult

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def gitlab_issues(result: RunResult, cwd: Path = None) -> list:
    cwd = Path(cwd or os.getcwd()).resolve()
    root = repository_root(cwd)
    issues = []
    for finding, line_hash in zip(result.findings, finding_fingerprints(result.findings, cwd, result.texts)):
        path = relative_path(finding.path, cwd, root) or PurePath(finding.path).as_posix()
        digest = sha256(f"{path}\x1f{line_hash}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
        issues.append(
            {
                "description": f"{finding.code} {finding.message}",
                "check_name": finding.code,
                "fingerprint": digest,
                "severity": SEVERITIES[finding.severity],
                "location": {"path": path, "lines": {"begin": finding.line, "end": max(finding.end_line, finding.line)}},
            }
        )
    return issues


def render_gitlab(result: RunResult, **_options) -> str:
    return json.dumps(gitlab_issues(result), indent=2, ensure_ascii=False) + "\n"
