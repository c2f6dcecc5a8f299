"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

    ::error file=src/train.py,line=3,col=5,endLine=3,endColumn=11,title=CDL101::message

error -> `error`, warning -> `warning`, info -> `notice`. As GitHub's runner expects,
`%`, CR and LF are escaped in the message, and also `:` and `,` in property values.
"""

from __future__ import annotations

from pathlib import PurePath

from cudalint.findings import Severity
from cudalint.runner import RunResult

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: RunResult, **_options) -> str:
    lines = []
    for finding in result.findings:
        properties = [
            ("file", PurePath(finding.path).as_posix()),
            ("line", str(finding.line)),
            ("col", str(finding.column)),
            ("endLine", str(finding.end_line)),
            ("endColumn", str(finding.end_column)),
            ("title", finding.code),
        ]
        joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
        lines.append(f"::{COMMANDS[finding.severity]} {joined}::{escape_data(finding.message)}")
    return "".join(line + "\n" for line in lines)
