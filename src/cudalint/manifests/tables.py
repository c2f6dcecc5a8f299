"""TOML shapes several formats share: arrays of requirement strings, `name = spec` tables."""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from cudalint.manifests.base import Dependency, LineIndex, Parsed, Span, make_dependency, normalize_name
from cudalint.manifests.requirements import read_requirement_item
from cudalint.manifests.toml_nodes import Node


def items(table: Optional[Node]) -> Iterator[Tuple[str, Node]]:
    """The (key, node) pairs of a table node; nothing for a missing or non-table node."""
    if table is not None and table.kind == "table":
        yield from table.value.items()


def add_strings(path: str, array: Optional[Node], section: str, parsed: Parsed) -> None:
    """Each string of a TOML array read as one PEP 508 requirement."""
    for item in array.strings() if array is not None else ():
        found = read_requirement_item(path, item.value, item.span, section)
        parsed.dependencies += found.dependencies
        parsed.problems += found.problems


def text_of(node: Optional[Node]) -> str:
    return node.value.strip() if node is not None and node.kind == "string" else ""


def table_dependency(
    path: str, key: str, node: Node, section: str, *, marker: Optional[str] = None, span: Optional[Span] = None
) -> Optional[Dependency]:
    """`name = "^1.2"` or `name = { version = "...", extras = [...], git = "..." }` (Poetry, Pipfile, pixi)."""
    if node.kind == "string":
        spec, extras, kind, url = node.value.strip(), (), "package", None
    elif node.kind == "table":
        spec = text_of(node.get("version"))
        extras_node = node.get("extras")
        extras = tuple(normalize_name(e.value) for e in extras_node.strings()) if extras_node is not None else ()
        kind, url = "package", None
        for url_key, url_kind in (("git", "vcs"), ("url", "url"), ("path", "url"), ("file", "url")):
            if text_of(node.get(url_key)):
                kind, url = url_kind, text_of(node.get(url_key))
    else:
        return None
    return make_dependency(
        path,
        span or node.entry,
        name=normalize_name(key),
        specifier=spec,
        extras=extras,
        marker=marker,
        raw=node.source,
        section=section,
        kind=kind,
        url=url,
    )


def string_offsets(index: LineIndex, node: Node) -> List[int]:
    """The file offset of each character of a string node's value: exact when the value is written
    without escapes, else every character at the string's opening quote."""
    start = index.starts[node.span.line - index.first_line] + node.span.column - 1
    end = index.starts[node.span.end_line - index.first_line] + node.span.end_column - 1
    raw = index.text[start:end]
    quote = 3 if raw[:3] in ('"""', "'''") else 1
    if raw[quote:-quote] == node.value:
        return list(range(start + quote, start + quote + len(node.value)))
    return [start] * len(node.value)


def command_strings(index: LineIndex, node: Optional[Node]) -> Iterator[Tuple[str, List[int]]]:
    """A script table value as shell text with offsets: a string, or each string of an array."""
    if node is None:
        return
    for item in [node] if node.kind == "string" else node.strings():
        yield item.value, string_offsets(index, item)
