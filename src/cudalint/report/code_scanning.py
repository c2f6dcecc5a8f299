"""What the code-scanning formats (SARIF, GitLab's code quality) share: the repository root that their paths are
relative to, and each finding's fingerprint, which stays the same when unrelated lines move (fingerprint.py)."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path, PurePath
from typing import Dict, List, Mapping, Optional, Sequence

from cudalint.findings import Finding
from cudalint.fingerprint import fingerprints
from cudalint.source import decode_python, decode_text


def repository_root(start: Path) -> Path:
    """The top of the git work tree holding `start` (a `.git` folder, or the `.git` file of a worktree or
    submodule), else `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def relative_path(path: str, cwd: Path, root: Path) -> Optional[str]:
    """`path` (as a finding gives it: relative to `cwd`, or absolute) relative to `root`, with forward slashes;
    None when it lies outside `root`."""
    absolute = Path(os.path.abspath(cwd / path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return None


def finding_fingerprints(findings: Sequence[Finding], cwd: Path, texts: Mapping[str, str] = None) -> List[str]:
    """One fingerprint per finding, in the order given. A file's text comes from `texts` (a buffer linted from
    memory) or from disk; a file that cannot be read is fingerprinted from its rule alone."""
    texts = texts or {}
    by_path: Dict[str, List[int]] = defaultdict(list)
    for position, finding in enumerate(findings):
        by_path[finding.path].append(position)
    result: List[str] = [""] * len(findings)
    for path, positions in by_path.items():
        lines = _lines(path, cwd, texts)
        ordered = sorted(positions, key=lambda p: (findings[p].line, findings[p].column, findings[p].code))
        for position, value in zip(ordered, fingerprints([(findings[p].code, findings[p].line) for p in ordered], lines)):
            result[position] = value
    return result


def _lines(path: str, cwd: Path, texts: Mapping[str, str]) -> List[str]:
    if path in texts:
        return texts[path].splitlines()
    try:
        data = (cwd / path).read_bytes()
    except OSError:
        return []
    decoded = decode_python(data) if PurePath(path).suffix in (".py", ".pyi") else decode_text(data)
    return decoded.text.splitlines() if decoded.text is not None else []
