"""pyproject.toml: PEP 621 and PEP 735 lists, [build-system], Poetry, uv and pixi tables."""

from __future__ import annotations

from typing import Dict, List, Optional

from cudalint.manifests import pixi
from cudalint.manifests.base import Parsed, make_dependency
from cudalint.manifests.checks import is_off_mac, platform_named
from cudalint.manifests.markers import excludes_macos
from cudalint.manifests.tables import add_strings, items, table_dependency
from cudalint.manifests.toml_nodes import Node, read_toml


def read(path: str, text: str) -> Parsed:
    root, problems = read_toml(path, text)
    parsed = Parsed(problems=list(problems))
    read_requirement_lists(path, root, parsed)
    read_poetry(path, root.get("tool", "poetry"), parsed)
    read_uv(path, root.get("tool", "uv"), parsed)
    tool_pixi = root.get("tool", "pixi")
    if tool_pixi is not None:
        pixi.read_tables(path, tool_pixi, "tool.pixi.", parsed)
    return parsed


def read_requirement_lists(path: str, root: Node, parsed: Parsed) -> None:
    add_strings(path, root.get("project", "dependencies"), "project.dependencies", parsed)
    for extra, array in items(root.get("project", "optional-dependencies")):
        add_strings(path, array, f"project.optional-dependencies.{extra}", parsed)
    for group, array in items(root.get("dependency-groups")):
        add_strings(path, array, f"dependency-groups.{group}", parsed)
    add_strings(path, root.get("build-system", "requires"), "build-system.requires", parsed)
    add_strings(path, root.get("tool", "uv", "dev-dependencies"), "tool.uv.dev-dependencies", parsed)


def _poetry_marker(table: Node) -> Optional[str]:
    parts = []
    markers = table.get("markers")
    if markers is not None and markers.text():
        parts.append(f"({markers.value})")
    platform = table.get("platform")
    if platform is not None and platform.text():
        parts.append(f'sys_platform == "{platform.value}"')
    return " and ".join(parts) or None


def _poetry_tables(poetry: Node):
    yield "tool.poetry.dependencies", poetry.get("dependencies")
    yield "tool.poetry.dev-dependencies", poetry.get("dev-dependencies")
    for group, table in items(poetry.get("group")):
        yield f"tool.poetry.group.{group}.dependencies", table.get("dependencies")


def read_poetry(path: str, poetry: Optional[Node], parsed: Parsed) -> None:
    if poetry is None:
        return
    by_source: Dict[str, List] = {}
    for section, table in _poetry_tables(poetry):
        for key, node in items(table):
            if key == "python":
                continue
            for item in node.value if node.kind == "array" else [node]:
                marker = _poetry_marker(item) if item.kind == "table" else None
                span = item.span if node.kind == "array" else None
                dep = table_dependency(path, key, item, section, marker=marker, span=span)
                if dep is None:
                    continue
                parsed.dependencies.append(dep)
                source = item.get("source") if item.kind == "table" else None
                if source is not None and source.text():
                    by_source.setdefault(source.value, []).append(dep)
    for source in poetry.get("source").tables() if poetry.get("source") is not None else ():
        url, name = source.get("url"), source.get("name")
        if url is None or not url.text():
            continue
        priority = source.get("priority")
        explicit = priority is not None and priority.value == "explicit"
        users = by_source.get(name.value if name is not None else "", [])
        parsed.dependencies.append(
            make_dependency(
                path, url.entry, name=name.value if name is not None else "", specifier="", extras=(),
                marker=None, raw=url.source, section="tool.poetry.source", kind="index-url", url=url.value,
                off_mac=explicit and all(is_off_mac(dep) for dep in users),
            )
        )


def _uv_reference_off_mac(reference: Node) -> bool:
    marker = reference.get("marker")
    if marker is not None and excludes_macos(marker.value):
        return True
    return any(reference.get(key) is not None and platform_named(str(reference.get(key).value))
               for key in ("extra", "group"))


def read_uv(path: str, uv: Optional[Node], parsed: Parsed) -> None:
    if uv is None:
        return
    references: Dict[str, List[bool]] = {}
    for _, source in items(uv.get("sources")):
        for reference in source.tables():
            index = reference.get("index")
            if index is not None and index.text():
                references.setdefault(index.value, []).append(_uv_reference_off_mac(reference))
    for index in uv.get("index").tables() if uv.get("index") is not None else ():
        url, name = index.get("url"), index.get("name")
        if url is None or not url.text():
            continue
        explicit = index.get("explicit") is not None and index.get("explicit").is_true()
        name_text = name.value if name is not None and name.text() else ""
        parsed.dependencies.append(
            make_dependency(
                path, url.entry, name=name_text, specifier="", extras=(), marker=None, raw=url.source,
                section="tool.uv.index", kind="index-url", url=url.value,
                off_mac=explicit and all(references.get(name_text, [])),
            )
        )
    for key, kind in (("index-url", "index-url"), ("extra-index-url", "index-url"), ("find-links", "find-links")):
        node = uv.get(key)
        if node is None:
            continue
        for item in node.strings() if node.kind == "array" else [node] if node.text() else []:
            parsed.dependencies.append(
                make_dependency(
                    path, item.span if node.kind == "array" else item.entry, name="", specifier="", extras=(),
                    marker=None, raw=item.source, section=f"tool.uv.{key}", kind=kind, url=item.value,
                )
            )
