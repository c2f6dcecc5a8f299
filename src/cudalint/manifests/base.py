"""What every manifest reader returns: dependency records and parse problems."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

# Manifests break lines at \r\n, \r and \n only: a form feed, U+2028 or U+0085 is a character on its
# line (str.splitlines would break there and put every later position on the wrong line).
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> List[str]:
    """The lines of a text without their breaks, split the way LineIndex counts them."""
    lines = LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


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
    entry names (`nvidia::cuda-nvcc`), if any. `command` marks the arguments of
    install commands (Dockerfile RUN, scripts, CI steps), which say how the project is
    installed somewhere but do not declare the release it targets.
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
    command: bool = False  # an argument of an install command (a RUN line, a script), not a declaration
    locked: bool = False  # a lock file's resolution (uv.lock, poetry.lock), not a requirement someone wrote


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


class SyntaxAt(ValueError):
    """A hand-written reader's syntax error at a character offset of the text (CMake, JSON with comments);
    the offset becomes the line the finding names (LineIndex.position)."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset


class LineIndex:
    """Turns character offsets into 1-based (line, column) positions.

    `first_line` is the line the text starts on, for a piece cut out of a larger file at a line start.
    """

    def __init__(self, text: str, first_line: int = 1):
        self.text = text
        self.first_line = first_line
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    def position(self, offset: int) -> Tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset) - 1
        return row + self.first_line, offset - self.starts[row] + 1

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column, end_line, end_column)

    def line_span(self, line: int) -> Span:
        """The whole of a line (numbered as in the file), without its line break."""
        row = max(0, min(line - self.first_line, len(self.starts) - 1))
        start = self.starts[row]
        end = self.starts[row + 1] if row + 1 < len(self.starts) else len(self.text)
        first = self.text[start:end].rstrip("\r\n")
        return Span(row + self.first_line, 1, row + self.first_line, len(first) + 1)


def make_dependency(path: str, span: Span, **fields) -> Dependency:
    return Dependency(
        path=path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        **fields,
    )
