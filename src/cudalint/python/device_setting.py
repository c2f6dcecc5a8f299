"""The configured device for fixes: read by config (which needs no libcst), used by fix planning."""

from __future__ import annotations

from collections import namedtuple

DEFAULT_LINE_LENGTH = 88


class DeviceSetting(namedtuple("DeviceSetting", "expression import_line line_length floor",
                                defaults=(None, None, DEFAULT_LINE_LENGTH, None))):
    """`device-expression` and `device-import` from the configuration, if set (str or None); the line
    length the project's formatter uses (an int); the oldest torch release the project's manifests
    allow (a tuple of ints, or None)."""

    __slots__ = ()
