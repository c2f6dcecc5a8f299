"""Pipfile: [[source]] indexes and the package tables ([packages], [dev-packages], custom categories)."""

from __future__ import annotations

from typing import Dict, List, Optional

from cudalint.manifests.base import Parsed, make_dependency
from cudalint.manifests.checks import is_off_mac
from cudalint.manifests.markers import VARIABLES
from cudalint.manifests.tables import items, table_dependency, text_of
from cudalint.manifests.toml_nodes import Node, read_toml

_NOT_PACKAGES = {"source", "requires", "scripts", "pipenv", "pipfile"}


def _marker(entry: Node) -> Optional[str]:
    """`markers = "..."` plus Pipenv's `sys_platform = "== 'linux'"` shorthand."""
    if entry.kind != "table":
        return None
    parts = [f"({text_of(entry.get('markers'))})"] if text_of(entry.get("markers")) else []
    for key, value in items(entry):
        if key in VARIABLES and text_of(value):
            parts.append(f"{key} {text_of(value)}")
    return " and ".join(parts) or None


def read(path: str, text: str) -> Parsed:
    root, problems = read_toml(path, text)
    parsed = Parsed(problems=list(problems))
    by_index: Dict[str, List] = {}
    for category, table in items(root):
        if category in _NOT_PACKAGES or table.kind != "table":
            continue
        for key, entry in items(table):
            dep = table_dependency(path, key, entry, category, marker=_marker(entry))
            if dep is None:
                continue
            parsed.dependencies.append(dep)
            index = text_of(entry.get("index")) if entry.kind == "table" else ""
            if index:
                by_index.setdefault(index, []).append(dep)
    sources = root.get("source").tables() if root.get("source") is not None else []
    for number, source in enumerate(sources):
        url, name = source.get("url"), text_of(source.get("name"))
        if not text_of(url):
            continue
        # Pipenv installs from the first source; later ones serve only the packages that name them.
        restricted = number > 0 and all(is_off_mac(dep) for dep in by_index.get(name, []))
        parsed.dependencies.append(
            make_dependency(
                path, url.entry, name=name, specifier="", extras=(), marker=None, raw=url.source,
                section="source", kind="index-url", url=text_of(url), off_mac=restricted,
            )
        )
    return parsed
