"""A finding's fingerprint: what stays the same when unrelated lines move.

SARIF's `partialFingerprints` and the baseline both match a finding by its rule, the
normalised text of its line and the normalised text of the nearest non-blank lines
around it, never by its line number, so an edit above a finding does not make it new.
Identical lines in one file are told apart by their order (the n-th occurrence).
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Tuple

from cudalint.digests import sha256

CONTEXT = 1  # non-blank lines taken on each side


def normalise(line: str) -> str:
    """A line's text without indentation, trailing space or repeated inner spaces."""
    return " ".join(line.split())


def _neighbours(lines: Sequence[str], index: int, step: int) -> List[str]:
    found: List[str] = []
    position = index + step
    while 0 <= position < len(lines) and len(found) < CONTEXT:
        text = normalise(lines[position])
        if text:
            found.append(text)
        position += step
    return found


def line_fingerprint(code: str, lines: Sequence[str], line: int) -> str:
    """The fingerprint of a finding of `code` on 1-based `line` of a file split into `lines`."""
    index = min(max(line - 1, 0), max(len(lines) - 1, 0))
    own = normalise(lines[index]) if lines else ""
    before = _neighbours(lines, index, -1)
    after = _neighbours(lines, index, +1)
    material = "\x1f".join([code, own, "\x1e".join(reversed(before)), "\x1e".join(after)])
    return sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def fingerprints(findings: Iterable[Tuple[str, int]], lines: Sequence[str]) -> List[str]:
    """Fingerprints for (code, line) pairs of one file, in the order given (pass them sorted by line), each suffixed with its
    occurrence number among equal fingerprints (`...:1`, `...:2`) so that duplicates stay distinct."""
    seen: Dict[str, int] = {}
    result = []
    for code, line in findings:
        base = line_fingerprint(code, lines, line)
        seen[base] = seen.get(base, 0) + 1
        result.append(f"{base}:{seen[base]}")
    return result
