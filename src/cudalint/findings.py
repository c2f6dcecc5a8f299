"""The values every check produces and every front end consumes.

collections.namedtuple classes, not dataclasses nor typing.NamedTuple: every run makes these classes
at start-up, and a clean file's run should pay neither for importing dataclasses (and inspect) nor
for importing typing (about 3 ms, 7 % of a one-file run). The same holds for the other records made
at start-up (catalog, source, fileio, discover, op_cases, device_setting); each lists its fields'
types in its docstring."""

from __future__ import annotations

import enum
from collections import namedtuple


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Safety(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


class Edit(namedtuple("Edit", "line column end_line end_column content")):
    """Replace the text between two 1-based (line, column) positions; end is exclusive. The positions
    are ints, content a str."""

    __slots__ = ()

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


class Fix(namedtuple("Fix", "safety description edits", defaults=((),))):
    """safety: Safety; description: str; edits: a tuple of Edit."""

    __slots__ = ()

    def to_json(self) -> dict:
        return {
            "safety": self.safety.value,
            "description": self.description,
            "edits": [edit.to_json() for edit in self.edits],
        }


class Related(namedtuple("Related", "line column end_line end_column message path", defaults=("",))):
    """Another place that explains a finding (the device argument a value reaches): int positions, a
    str message, and path, another file of the project (empty: the finding's own file)."""

    __slots__ = ()

    def to_json(self) -> dict:
        return {
            **({"path": self.path} if self.path else {}),
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
        }


_FINDING_FIELDS = "code path line column end_line end_column message severity fix related"


class Finding(namedtuple("Finding", _FINDING_FIELDS, defaults=(None, ()))):
    """One problem at one place. Lines and columns are 1-based ints; columns count characters. code,
    path and message are str; severity a Severity; fix a Fix or None; related a tuple of Related."""

    __slots__ = ()

    # Two findings are the same problem at the same place whatever fix or related places they carry.
    def __eq__(self, other) -> bool:
        return isinstance(other, Finding) and self[:8] == other[:8]

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self[:8])

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "severity": self.severity.value,
            "fix": self.fix.to_json() if self.fix else None,
            "related": [place.to_json() for place in self.related],
        }
