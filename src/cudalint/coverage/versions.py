"""Torch release numbers, and mapping a user's version to a covered release."""

from __future__ import annotations

import functools
import re
from typing import Optional, Sequence, Tuple

_NUMBER = re.compile(r"\s*(?:[<>=!~^]=?|===)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?")


@functools.lru_cache(maxsize=4096)
def version_tuple(text: str) -> Tuple[int, int, int]:
    """``"2.3"`` -> (2, 3, 0); ``">=2.1"`` -> (2, 1, 0); ``"2.13.0+cpu"`` -> (2, 13, 0).

    A leading comparison operator is dropped: a requirement such as ``>=2.1`` is
    answered for its lower bound. Raises ValueError when no number is found.
    """
    first = text.split(",")[0]
    match = _NUMBER.match(first)
    if not match:
        raise ValueError(f"not a torch version: {text!r}")
    major, minor, micro = match.groups()
    return (int(major), int(minor or 0), int(micro or 0))


def sort_releases(releases: Sequence[str]) -> list:
    return sorted(releases, key=version_tuple)


def nearest_release(text: str, releases: Sequence[str]) -> Optional[str]:
    """The covered release that answers for ``text``.

    The release of the same major.minor when covered, else the newest covered
    release older than it. None when ``text`` is older than every covered release.
    """
    return _nearest(text, tuple(releases))


@functools.lru_cache(maxsize=4096)
def _nearest(text: str, releases: Tuple[str, ...]) -> Optional[str]:
    wanted = version_tuple(text)[:2]
    best = None
    for release in sort_releases(releases):
        if version_tuple(release)[:2] <= wanted:
            best = release
    return best
