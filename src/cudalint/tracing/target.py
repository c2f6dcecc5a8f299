"""Which release the coverage database answers for: the one asked for, else the installed torch's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from cudalint.coverage import CoverageDB
from cudalint.coverage.versions import version_tuple

from .program import UsageError


@dataclass(frozen=True)
class Target:
    requested: str  # what was asked for, or the installed torch's version
    release: str  # the covered release that answers for it
    source: str  # where `requested` came from

    def to_json(self) -> dict:
        return {"requested": self.requested, "release": self.release, "source": self.source}

    def __str__(self) -> str:
        return f"torch {self.release} ({self.source} {self.requested})"


def choose_target(torch_version: Optional[str], installed: str, asked_by: str = "--torch-version") -> Target:
    db = CoverageDB.load()
    requested, source = (torch_version, asked_by) if torch_version else (installed, "installed torch")
    try:
        version_tuple(requested)
    except ValueError:
        raise UsageError(f"torch version {requested!r} is not a version like 2.3 or 2.3.1") from None
    release = db.nearest_release(requested)
    if release is None:
        raise UsageError(f"torch {requested} is older than every release the MPS coverage database covers "
                         f"({db.versions()[0]} to {db.newest()})")
    return Target(requested, release, source)
