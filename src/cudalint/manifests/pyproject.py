"""pyproject.toml: PEP 621 and PEP 735 lists, [build-system], Poetry, uv and pixi tables, and the
environments and scripts of hatch and PDM (their dependency lists, and the install commands they run)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, List, Optional

from cudalint.manifests import pixi
from cudalint.manifests.base import LineIndex, Parsed, make_dependency
from cudalint.manifests.checks import is_off_mac, platform_named
from cudalint.manifests.commands import Scanner, Word, scan_text
from cudalint.manifests.markers import excludes_macos
from cudalint.manifests.tables import add_strings, command_strings, items, string_offsets, table_dependency, text_of
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
    index = LineIndex(text)
    read_hatch(path, index, root.get("tool", "hatch"), parsed)
    read_pdm(path, index, root.get("tool", "pdm"), parsed)
    _drop_self_references(root, parsed)
    return parsed


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


EXTRAS = "project.optional-dependencies."


def _drop_self_references(root, parsed: Parsed) -> None:
    """`myproject[cuda]` among myproject's own optional dependencies names the project's other extras,
    whose packages are listed (and judged) where they are written: never a package of its own. An extra
    named for CUDA that a Mac user's extra pulls in (`all = ["myproject[cuda]"]`) is installed on a Mac
    all the same: its packages are judged again as part of the extra that names it."""
    name = root.get("project", "name")
    if name is None or name.kind != "string":
        return
    own = _normal(name.value)
    mine = [dep for dep in parsed.dependencies if dep.kind == "package" and _normal(dep.name) == own]
    parsed.dependencies[:] = [dep for dep in parsed.dependencies if not (dep.kind == "package" and _normal(dep.name) == own)]
    by_extra: Dict[str, List] = {}
    for dep in parsed.dependencies:
        if dep.section.startswith(EXTRAS):
            by_extra.setdefault(_normal(dep.section[len(EXTRAS):]), []).append(dep)
    for reference in mine:
        if is_off_mac(reference):
            continue
        pending, seen = [_normal(extra) for extra in reference.extras], set()
        while pending:
            extra = pending.pop()
            if extra in seen or not platform_named(extra):
                continue
            seen.add(extra)
            parsed.dependencies += [replace(dep, section=reference.section) for dep in by_extra.get(extra, ())]
            pending += [_normal(x) for dep in mine if dep.section.startswith(EXTRAS)
                        and _normal(dep.section[len(EXTRAS):]) == extra for x in dep.extras]


def _scripts(path: str, index: LineIndex, node: Optional[Node], section: str, parsed: Parsed) -> None:
    off_mac = platform_named(section)
    for text, offsets in command_strings(index, node):
        scan_text(path, text, section, parsed, index=index, offsets=offsets, off_mac=off_mac)


def read_hatch(path: str, index: LineIndex, hatch: Optional[Node], parsed: Parsed) -> None:
    """[tool.hatch.envs.NAME]: dependencies, extra-dependencies, pre/post-install-commands and scripts."""
    for env, table in items(hatch.get("envs") if hatch is not None else None):
        prefix = f"tool.hatch.envs.{env}"
        for key in ("dependencies", "extra-dependencies"):
            add_strings(path, table.get(key), f"{prefix}.{key}", parsed)
        for key in ("pre-install-commands", "post-install-commands"):
            _scripts(path, index, table.get(key), f"{prefix}.{key}", parsed)
        for name, script in items(table.get("scripts")):
            _scripts(path, index, script, f"{prefix}.scripts.{name}", parsed)


def read_pdm(path: str, index: LineIndex, pdm: Optional[Node], parsed: Parsed) -> None:
    """[tool.pdm.scripts] (a command string, or `cmd`/`shell`/`composite`) and [tool.pdm.dev-dependencies]."""
    if pdm is None:
        return
    for group, array in items(pdm.get("dev-dependencies")):
        add_strings(path, array, f"tool.pdm.dev-dependencies.{group}", parsed)
    for name, script in items(pdm.get("scripts")):
        section = f"tool.pdm.scripts.{name}"
        if script.kind != "table":
            _scripts(path, index, script, section, parsed)
            continue
        cmd = script.get("cmd")
        if cmd is not None and cmd.kind == "array":
            words = [Word(item.value, string_offsets(index, item)) for item in cmd.strings()]
            if words:
                Scanner(path, index, section, parsed, platform_named(section)).command(words, 0)
        else:
            _scripts(path, index, cmd, section, parsed)
        _scripts(path, index, script.get("shell"), section, parsed)
        _scripts(path, index, script.get("composite"), section, parsed)


def read_requirement_lists(path: str, root: Node, parsed: Parsed) -> None:
    add_strings(path, root.get("project", "dependencies"), "project.dependencies", parsed)
    for extra, array in items(root.get("project", "optional-dependencies")):
        add_strings(path, array, f"project.optional-dependencies.{extra}", parsed)
    for group, array in items(root.get("dependency-groups")):
        add_strings(path, array, f"dependency-groups.{group}", parsed)
    add_strings(path, root.get("build-system", "requires"), "build-system.requires", parsed)
    add_strings(path, root.get("tool", "uv", "dev-dependencies"), "tool.uv.dev-dependencies", parsed)


def _poetry_marker(table: Node) -> Optional[str]:
    """Poetry's `markers` and `platform` keys as one PEP 508 marker."""
    parts = []
    if text_of(table.get("markers")):
        parts.append(f"({text_of(table.get('markers'))})")
    if text_of(table.get("platform")):
        parts.append(f'sys_platform == "{text_of(table.get("platform"))}"')
    return " and ".join(parts) or None


def _poetry_tables(poetry: Node):
    yield "tool.poetry.dependencies", poetry.get("dependencies")
    yield "tool.poetry.dev-dependencies", poetry.get("dev-dependencies")
    for group, table in items(poetry.get("group")):
        yield f"tool.poetry.group.{group}.dependencies", table.get("dependencies")


def _tables(node: Optional[Node]) -> List[Node]:
    return node.tables() if node is not None else []


def _index(path: str, url: Node, name: str, section: str, off_mac: bool):
    return make_dependency(
        path, url.entry, name=name, specifier="", extras=(), marker=None, raw=url.source, section=section,
        kind="index-url", url=text_of(url), off_mac=off_mac,
    )


def read_poetry(path: str, poetry: Optional[Node], parsed: Parsed) -> None:
    """Dependencies of the main table and of every group, and [[tool.poetry.source]] indexes.

    An explicit source serves only the dependencies that name it, so it does not
    block a Mac when all of those are kept off macOS.
    """
    if poetry is None:
        return
    users: Dict[str, List] = {}
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
                if item.kind == "table" and text_of(item.get("source")):
                    users.setdefault(text_of(item.get("source")), []).append(dep)
    for source in _tables(poetry.get("source")):
        url, name = source.get("url"), text_of(source.get("name"))
        if text_of(url):
            explicit = text_of(source.get("priority")) == "explicit"
            off_mac = explicit and all(is_off_mac(dep) for dep in users.get(name, []))
            parsed.dependencies.append(_index(path, url, name, "tool.poetry.source", off_mac))


def _uv_reference_off_mac(reference: Node) -> bool:
    """A [tool.uv.sources] entry used only off macOS: a marker, or an extra/group named for CUDA."""
    if excludes_macos(text_of(reference.get("marker"))):
        return True
    return any(platform_named(text_of(reference.get(key))) for key in ("extra", "group"))


def read_uv(path: str, uv: Optional[Node], parsed: Parsed) -> None:
    """[[tool.uv.index]] (an explicit index serves only the sources that name it) and the pip-style index keys."""
    if uv is None:
        return
    references: Dict[str, List[bool]] = {}
    for _, source in items(uv.get("sources")):
        for reference in source.tables():
            if text_of(reference.get("index")):
                references.setdefault(text_of(reference.get("index")), []).append(_uv_reference_off_mac(reference))
    for index in _tables(uv.get("index")):
        url, name = index.get("url"), text_of(index.get("name"))
        if text_of(url):
            explicit = index.get("explicit") is not None and index.get("explicit").is_true()
            off_mac = explicit and all(references.get(name, []))
            parsed.dependencies.append(_index(path, url, name, "tool.uv.index", off_mac))
    for key, kind in (("index-url", "index-url"), ("extra-index-url", "index-url"), ("find-links", "find-links")):
        node = uv.get(key)
        entries = node.strings() if node is not None and node.kind == "array" else [node] if text_of(node) else []
        for item in entries:
            parsed.dependencies.append(
                make_dependency(
                    path, item.span if node.kind == "array" else item.entry, name="", specifier="", extras=(),
                    marker=None, raw=item.source, section=f"tool.uv.{key}", kind=kind, url=item.value,
                )
            )
