"""`--format json`: a stable list of finding objects, sorted by path, line, column."""

from __future__ import annotations

import json

from cudalint.runner import RunResult


def render_json(result: RunResult, **_options) -> str:
    return json.dumps([finding.to_json() for finding in result.findings], indent=2) + "\n"
