"""Core metadata of a built wheel (`NAME-VERSION.dist-info/METADATA`): its `Requires-Dist` entries.

A tree unpacked from a wheel has no setup.py, pyproject.toml or requirements list: what the project
installs (and the torch release it allows) is written only here. The file is an email-style header
block, one `Key: value` per line with indented continuation lines, ended by the first empty line (the
long description follows). Each `Requires-Dist` value is a PEP 508 requirement (older tools write the
specifier in parentheses: `torch (>=1.7)`); an extra's entries carry `extra == "NAME"` in their marker,
and sit in the section `extra.NAME`, so an extra named for CUDA or for the docs reads as one would in
pyproject.toml. An sdist's PKG-INFO is not read: it repeats what the sdist's own manifests say.
"""

from __future__ import annotations

from dataclasses import replace

from cudalint.manifests.base import Parsed, Span, split_lines
from cudalint.manifests.markers import extras_asked
from cudalint.manifests.requirements import read_requirement_item

_REQUIRES = "requires-dist"


def read(path: str, text: str) -> Parsed:
    parsed = Parsed()
    for number, column, value in _headers(text):
        found = read_requirement_item(path, value, Span(number, column, number, column + len(value)), "Requires-Dist")
        for dep in found.dependencies:
            extras = sorted(extras_asked(dep.marker))
            parsed.dependencies.append(replace(dep, section=f"extra.{extras[0]}") if extras else dep)
        parsed.problems += found.problems
    return parsed


def _headers(text: str):
    """(line, column, value) of each one-line Requires-Dist header, up to the first empty line (a line of
    only spaces is a folded header's continuation: a License field's blank line)."""
    for number, line in enumerate(split_lines(text), start=1):
        if not line:
            return
        if line[0] in " \t":
            continue
        key, colon, rest = line.partition(":")
        if not colon or key.strip().lower() != _REQUIRES:
            continue
        value = rest.strip()
        if value:
            yield number, line.index(value, len(key) + 1) + 1, value
