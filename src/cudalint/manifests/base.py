"""What every manifest reader returns: dependency records and parse problems."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

def normalize_name(name: str) -> str:
    """PEP 503: runs of '-', '_' and '.' become one '-', lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Span:
    """1-based line and column of the first character, and the end (exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Dependency:
    """One entry of a manifest: a package requirement, an index, a channel or a link.

    `kind` is "package", "index-url", "find-links", "conda-channel", "url" or "vcs";
    `ecosystem` is "pypi" or "conda". `off_mac` is true when the manifest
    itself (a platform-specific section, a lock file's resolution) keeps the
    entry off macOS, beyond what `marker` says. `channel` is the conda channel an
    entry names (`nvidia::cuda-nvcc`), if any.
    """

    name: str
    specifier: str
    extras: Tuple[str, ...]
    marker: Optional[str]
    raw: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    section: str
    kind: str
    url: Optional[str] = None
    ecosystem: str = "pypi"
    off_mac: bool = False
    channel: Optional[str] = None


@dataclass(frozen=True)
class Problem:
    """Input a reader could not make sense of; reported as CDL000."""

    path: str
    span: Span
    message: str


@dataclass
class Parsed:
    dependencies: List[Dependency] = field(default_factory=list)
    problems: List[Problem] = field(default_factory=list)


class LineIndex:
    """Turns character offsets into 1-based (line, column) positions."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def position(self, offset: int) -> Tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        return row + 1, offset - self.starts[row] + 1

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column, end_line, end_column)

    def line_span(self, line: int) -> Span:
        """The whole of a 1-based line, without its line break."""
        line = max(1, min(line, len(self.starts)))
        rest = self.text[self.starts[line - 1] :]
        first = rest.splitlines()[0] if rest else ""
        return Span(line, 1, line, len(first) + 1)


def make_dependency(path: str, span: Span, **fields) -> Dependency:
    return Dependency(
        path=path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        **fields,
    )
