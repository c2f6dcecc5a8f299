"""The values every check produces and every front end consumes.

NamedTuples, not dataclasses: every run makes these classes at start-up, and a clean file's run
should not pay for importing dataclasses (and inspect) to do so. No `from __future__ import
annotations` here nor in the other modules that make NamedTuples at start-up (catalog, source,
fileio, discover, noqa, op_cases, device_setting, parts): with it, typing.NamedTuple compiles every
field's annotation string into a ForwardRef."""

import enum
from typing import NamedTuple, Optional, Tuple


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Safety(str, enum.Enum):
    SAFE = "safe"
    UNSAFE = "unsafe"


class Edit(NamedTuple):
    """Replace the text between two 1-based (line, column) positions; end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


class Fix(NamedTuple):
    safety: Safety
    description: str
    edits: Tuple[Edit, ...] = ()

    def to_json(self) -> dict:
        return {
            "safety": self.safety.value,
            "description": self.description,
            "edits": [edit.to_json() for edit in self.edits],
        }


class Related(NamedTuple):
    """Another place in the same file that explains a finding (the device argument a value reaches)."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    path: str = ""  # another file of the project; empty: the finding's own file

    def to_json(self) -> dict:
        return {
            **({"path": self.path} if self.path else {}),
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
        }


class Finding(NamedTuple):
    """One problem at one place. Lines and columns are 1-based; columns count characters."""

    code: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    severity: Severity
    fix: Optional[Fix] = None
    related: Tuple[Related, ...] = ()

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
