"""setup.cfg: [options] install_requires / setup_requires / tests_require / dependency_links and
[options.extras_require], read line by line so each requirement keeps its position.

setuptools reads the file with configparser's basic interpolation: `%(docs)s` in a value is the value of
the key `docs` of the same section (or of [DEFAULT]), and `%%` is one `%`. A line that only names other
keys (`all =` / `%(docs)s` / `%(test)s`) repeats requirements read where those keys are written; a
reference inside a requirement is replaced by the key's one-line value."""

from __future__ import annotations

import re
from typing import Optional

from cudalint.manifests.base import LineIndex, Parsed, Problem, Span, make_dependency, split_lines
from cudalint.manifests.requirements import read_requirement_item

_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")
_KEY = re.compile(r"^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$")
_LISTS = {"install_requires", "setup_requires", "tests_require"}
_REFERENCE = re.compile(r"%\(([^)]*)\)s")
_ONLY_REFERENCES = re.compile(r"^(?:%\([^)]*\)s[\s;,]*)+$")


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
    values: dict = {}  # (section, key) -> the lines of its value, for interpolation
    key_name = ""
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
            section, current, key_name = header.group(1).strip(), None, ""
            continue
        else:
            key = _KEY.match(line)
            if not key:
                problem(number, "expected 'key = value'")
                current, key_name = None, ""
                continue
            key_name = key.group(1).strip().lower()  # configparser's keys are case-insensitive
            current = _section_for(section, key.group(1).strip())
            value_start = key.start(2)
        value = re.sub(r"\s+#.*$", "", line[value_start:]).rstrip()
        if key_name and value:
            values.setdefault((section, key_name), []).append(value)
        if current is None:
            continue
        if not value or value.startswith("file:"):
            continue
        span = Span(number, value_start + 1, number, value_start + len(value) + 1)  # the value as written
        if "%" in value:
            value = _interpolated(value, section, values, lambda message: problem(number, message))
            if value is None:
                continue
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


def _interpolated(value: str, section: str, values: dict, problem) -> Optional[str]:
    """The value as setuptools reads it (configparser's basic interpolation), or None where the line only
    names other keys of the section (their requirements are read where they are written) or names a key
    the section lacks (reported: setuptools stops there)."""
    missing = [name for name in _REFERENCE.findall(value)
               if (section, name.lower()) not in values and ("DEFAULT", name.lower()) not in values]
    if missing:
        problem(f"'%({missing[0]})s' names no key of [{section}]; setuptools cannot read this value")
        return None
    if _ONLY_REFERENCES.match(value):
        return None

    def one_line(match: "re.Match[str]") -> str:
        lines = values.get((section, match.group(1).lower())) or values.get(("DEFAULT", match.group(1).lower())) or []
        return lines[0] if len(lines) == 1 and "%" not in lines[0] else match.group(0)

    return _REFERENCE.sub(one_line, value).replace("%%", "%")
