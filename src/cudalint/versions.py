"""Torch release numbers as comparable tuples, and the target a run lints for.

A run targets one release (the newest the project's torch requirement allows, or the one
``--torch-version`` pins). When the requirement allows older releases too, the target's
text carries the oldest of them: ``"2.15 from 2.0"``. Parsed, that is a ``TorchTarget``,
a version tuple that also knows its ``floor``, so the op-coverage check can say which ops
fail somewhere inside the allowed range. Everything else reads it as the plain tuple.
"""

from __future__ import annotations

import re

_VERSION_RE = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")
FLOOR_MARK = " from "
# From torch 2.5 an integer device index means the current accelerator's device (an MPS device on a
# Mac), not cuda:N (PyTorch pull request #129119, "Refine the logic of device construction when only
# device index is given").
INT_DEVICE_ACCELERATOR = (2, 5)


class TorchTarget(tuple):
    """A target release (compares as its version tuple) with the oldest release the project allows."""

    floor: tuple[int, int, int] | None

    def __new__(cls, version: tuple[int, int, int], floor: tuple[int, int, int] | None = None):
        target = super().__new__(cls, version)
        target.floor = floor if floor is not None and floor < version else None
        return target

    def __eq__(self, other: object) -> bool:
        return tuple.__eq__(self, other) and getattr(other, "floor", None) == self.floor

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((tuple(self), self.floor))

    def __reduce__(self):
        return (TorchTarget, (tuple(self), self.floor))


def parse_version(text: str) -> tuple[int, int, int]:
    """"2.3" -> (2, 3, 0); "2.1.0+cu118" -> (2, 1, 0); "2.15 from 2.0" -> a TorchTarget with floor (2, 0, 0).
    Raises ValueError on junk."""
    target, _, floor = text.partition(FLOOR_MARK)
    match = _VERSION_RE.match(target.strip())
    if not match:
        raise ValueError(f"not a version: {text!r}")
    version = tuple(int(part or 0) for part in match.groups())
    if floor:
        return TorchTarget(version, parse_version(floor))  # type: ignore[arg-type]
    return version  # type: ignore[return-value]


def with_floor(target: str, floor: str | None) -> str:
    """The text of a target that knows the oldest allowed release (see the module docstring)."""
    return f"{target}{FLOOR_MARK}{floor}" if floor and floor != target else target


def plain_version(text: str) -> str:
    """The target release alone: "2.15 from 2.0" -> "2.15"."""
    return text.partition(FLOOR_MARK)[0]


def format_version(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)
