"""Torch release numbers as comparable tuples."""

from __future__ import annotations

import re
from typing import Tuple

_VERSION_RE = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def parse_version(text: str) -> Tuple[int, int, int]:
    """"2.3" -> (2, 3, 0); "2.1.0+cu118" -> (2, 1, 0). Raises ValueError on junk."""
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part or 0) for part in match.groups())  # type: ignore[return-value]


def format_version(version: Tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
