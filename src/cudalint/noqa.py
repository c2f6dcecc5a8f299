"""`# noqa` and `# noqa: CDL101, CDL2` on the reported line."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional

NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
ALL = frozenset()  # bare noqa: every code


def noqa_lines(text: str) -> Dict[int, FrozenSet[str]]:
    """line number -> codes silenced there (empty set = all). Only lines with a comment sign are scanned."""
    result: Dict[int, FrozenSet[str]] = {}
    if "noqa" not in text and "NOQA" not in text:
        return result
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" not in line:
            continue
        match = NOQA_RE.search(line)
        if match is None:
            continue
        codes = match.group("codes")
        result[number] = ALL if not codes else frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)
    return result


def silenced(code: str, codes: Optional[FrozenSet[str]]) -> bool:
    if codes is None:
        return False
    return codes == ALL or any(code.startswith(prefix) for prefix in codes)
