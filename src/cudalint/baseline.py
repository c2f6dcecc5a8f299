"""A baseline: the findings a project has accepted for now, so that a check reports only new ones.

`--write-baseline FILE` records each finding's rule, path (relative to the baseline file's folder)
and fingerprint (cudalint.fingerprint, the one SARIF's partialFingerprints use: the finding's line
and its neighbours, not its line number), so an edit elsewhere in the file does not make a recorded
finding new. `--baseline FILE` drops the findings it records and counts the entries of the files
checked that no longer occur.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from cudalint.config import ConfigError
from cudalint.findings import Finding
from cudalint.fingerprint import fingerprints
from cudalint.noqa import physical_lines
from cudalint.source import decode_python, decode_text

FORMAT, FORMAT_VERSION = "cudalint-baseline", 1
Key = Tuple[str, str, str]  # (code, path relative to the baseline's folder, fingerprint)


@dataclass
class Outcome:
    findings: List[Finding]  # those not in the baseline
    matched: int  # findings the baseline accounted for
    stale: int  # entries of checked files that no longer occur


def _lines(path: str) -> List[str]:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    decoded = decode_python(data) if path.endswith((".py", ".pyi")) else decode_text(data)
    return physical_lines(decoded.text) if decoded.text is not None else []


def relative_to(folder: Path, path: str) -> str:
    return Path(os.path.relpath(os.path.abspath(path), folder)).as_posix()


def keys(findings: Sequence[Finding], folder: Path) -> List[Key]:
    """Each finding's key, in the order given."""
    by_path: Dict[str, List[int]] = defaultdict(list)
    for index, finding in enumerate(findings):
        by_path[finding.path].append(index)
    result: List[Optional[Key]] = [None] * len(findings)
    for path, indexes in by_path.items():
        indexes.sort(key=lambda i: findings[i].sort_key)
        printed = fingerprints([(findings[i].code, findings[i].line) for i in indexes], _lines(path))
        relative = relative_to(folder, path)
        for index, fingerprint in zip(indexes, printed):
            result[index] = (findings[index].code, relative, fingerprint)
    return result  # type: ignore[return-value]


def write(path: Path, findings: Sequence[Finding]) -> int:
    folder = Path(os.path.abspath(path)).parent
    entries = [
        {"code": code, "path": relative, "fingerprint": fingerprint, "line": finding.line, "message": finding.message}
        for finding, (code, relative, fingerprint) in zip(findings, keys(findings, folder))
    ]
    entries.sort(key=lambda e: (e["path"], e["line"], e["code"], e["fingerprint"]))
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "findings": entries}
    try:
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--write-baseline {path}: {exc.strerror or exc}") from None
    return len(entries)


def read(path: Path) -> List[Key]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--baseline {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"--baseline {path}: not JSON ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(document.get("findings"), list):
        raise ConfigError(f"--baseline {path}: not a baseline written by `cudalint check --write-baseline`")
    entries = []
    for number, entry in enumerate(document["findings"], start=1):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("code", "path", "fingerprint")):
            raise ConfigError(f"--baseline {path}: entry {number} lacks a code, path or fingerprint")
        entries.append((entry["code"], entry["path"], entry["fingerprint"]))
    return entries


def apply(path: Path, findings: Sequence[Finding], checked: Iterable[str]) -> Outcome:
    """The findings `path` does not record; entries are used once each, so a second identical finding is new."""
    folder = Path(os.path.abspath(path)).parent
    remaining: Dict[Key, int] = defaultdict(int)
    for key in read(path):
        remaining[key] += 1
    kept: List[Finding] = []
    matched = 0
    for finding, key in zip(findings, keys(findings, folder)):
        if remaining.get(key):
            remaining[key] -= 1
            matched += 1
        else:
            kept.append(finding)
    files: Set[str] = {relative_to(folder, display) for display in checked}
    stale = sum(count for (_, relative, _), count in remaining.items() if relative in files)
    return Outcome(kept, matched, stale)
