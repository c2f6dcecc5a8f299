"""The configured device for fixes: read by config (which needs no libcst), used by fix planning."""

from typing import NamedTuple, Optional, Tuple

DEFAULT_LINE_LENGTH = 88


class DeviceSetting(NamedTuple):
    """`device-expression` and `device-import` from the configuration, if set; the line length the
    project's formatter uses; the oldest torch release the project's manifests allow."""

    expression: Optional[str] = None
    import_line: Optional[str] = None
    line_length: int = DEFAULT_LINE_LENGTH
    floor: Optional[Tuple[int, ...]] = None
