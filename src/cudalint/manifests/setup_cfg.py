"""setup.cfg: [options] install_requires / setup_requires / tests_require / dependency_links and
[options.extras_require], read line by line so each requirement keeps its position."""

from __future__ import annotations

import re
from typing import Optional

from cudalint.manifests.base import LineIndex, Parsed, Problem, Span, make_dependency, split_lines
from cudalint.manifests.requirements import read_requirement_item

_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$")
_LISTS = {"install_requires", "setup_requires", "tests_require"}


def _section_for(section: str, key: str) -> Optional[str]:
    """The dependency section a key holds, or None when it holds none."""
    if section == "options" and (key in _LISTS or key == "dependency_links"):
        return f"options.{key}"
    if section == "options.extras_require":
        return f"options.extras_require.{key}"
    return None


def read(path: str, text: str) -> Parsed:
    parsed = Parsed()
    index = LineIndex(text)

    def problem(number: int, message: str) -> None:
        parsed.problems.append(Problem(path, index.line_span(number), f"line {number}: {message}"))

    section, current = "", None  # current: the dependency section being continued
    for number, line in enumerate(split_lines(text), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        value_start = None
        if line[0] in " \t":
            if current is None and not section:
                problem(number, "indented line before any section")
                continue
            value_start = len(line) - len(line.lstrip())
        elif stripped.startswith("["):
            header = _SECTION.match(stripped)
            if not header:
                problem(number, "malformed section header")
                continue
            section, current = header.group(1).strip(), None
            continue
        else:
            key = _KEY.match(line)
            if not key:
                problem(number, "expected 'key = value'")
                current = None
                continue
            current = _section_for(section, key.group(1).strip())
            value_start = key.start(2)
        if current is None:
            continue
        value = re.sub(r"\s+#.*$", "", line[value_start:]).rstrip()
        if not value or value.startswith("file:"):
            continue
        span = Span(number, value_start + 1, number, value_start + len(value) + 1)
        if current == "options.dependency_links":
            parsed.dependencies.append(
                make_dependency(path, span, name="", specifier="", extras=(), marker=None, raw=value,
                                section=current, kind="find-links", url=value)
            )
            continue
        found = read_requirement_item(path, value, span, current)
        parsed.dependencies += found.dependencies
        parsed.problems += found.problems
    return parsed
