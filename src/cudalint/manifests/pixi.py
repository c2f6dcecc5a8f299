"""pixi.toml (and [tool.pixi] in pyproject.toml): conda and PyPI dependencies per target and feature."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from cudalint.manifests.base import Parsed, make_dependency
from cudalint.manifests.tables import items, table_dependency, text_of
from cudalint.manifests.toml_nodes import Node, read_toml

_CONDA_TABLES = ("dependencies", "host-dependencies", "build-dependencies", "run-dependencies")


def read(path: str, text: str) -> Parsed:
    root, problems = read_toml(path, text)
    parsed = Parsed(problems=list(problems))
    read_tables(path, root, "", parsed)
    return parsed


def runs_on_mac(platform: str) -> bool:
    return platform in ("unix", "osx") or platform.startswith("osx")


def _platforms_exclude_mac(table: Optional[Node]) -> bool:
    """A `platforms = [...]` list with no macOS platform in it."""
    platforms = table.get("platforms") if table is not None else None
    if platforms is None or not platforms.strings():
        return False
    return not any(runs_on_mac(item.value) for item in platforms.strings())


def read_tables(path: str, root: Node, prefix: str, parsed: Parsed) -> None:
    """The whole pixi document, or [tool.pixi] with prefix 'tool.pixi.'."""
    header = "workspace" if root.get("workspace") is not None else "project"
    project = root.get(header)
    off_mac = _platforms_exclude_mac(project)
    if project is not None:
        _channels(path, project.get("channels"), f"{prefix}{header}.channels", off_mac, parsed)
    _scope(path, root, prefix, off_mac, parsed)
    for name, feature in items(root.get("feature")):
        feature_prefix = f"{prefix}feature.{name}."
        feature_off_mac = off_mac or _platforms_exclude_mac(feature)
        _channels(path, feature.get("channels"), f"{feature_prefix}channels", feature_off_mac, parsed)
        _scope(path, feature, feature_prefix, feature_off_mac, parsed)


def _scope(path: str, table: Node, prefix: str, off_mac: bool, parsed: Parsed) -> None:
    """Dependency tables of the project or a feature, and of its targets."""
    _dependency_tables(path, table, prefix, off_mac, parsed)
    for platform, target in items(table.get("target")):
        target_off_mac = off_mac or not runs_on_mac(platform)
        _dependency_tables(path, target, f"{prefix}target.{platform}.", target_off_mac, parsed)


def _dependency_tables(path: str, table: Node, prefix: str, off_mac: bool, parsed: Parsed) -> None:
    for section in _CONDA_TABLES:
        for key, node in items(table.get(section)):
            _conda_entry(path, key, node, f"{prefix}{section}", off_mac, parsed)
    for key, node in items(table.get("pypi-dependencies")):
        dep = table_dependency(path, key, node, f"{prefix}pypi-dependencies")
        if dep is not None:
            parsed.dependencies.append(replace(dep, off_mac=off_mac))
    cuda = table.get("system-requirements", "cuda")
    if cuda is not None:
        parsed.dependencies.append(
            make_dependency(
                path, cuda.entry, name="__cuda", specifier=str(cuda.value), extras=(), marker=None,
                raw=cuda.source, section=f"{prefix}system-requirements", kind="package",
                ecosystem="conda", off_mac=off_mac,
            )
        )
    options = table.get("pypi-options")
    for key, kind in (("index-url", "index-url"), ("extra-index-urls", "index-url"), ("find-links", "find-links")):
        node = options.get(key) if options is not None else None
        if node is None:
            continue
        for item in node.value if node.kind == "array" else [node]:
            url = text_of(item) or text_of(item.get("url"))
            if url:
                parsed.dependencies.append(
                    make_dependency(
                        path, item.span if node.kind == "array" else item.entry, name="", specifier="",
                        extras=(), marker=None, raw=item.source, section=f"{prefix}pypi-options.{key}",
                        kind=kind, url=url, off_mac=off_mac,
                    )
                )


def _conda_entry(path: str, key: str, node: Node, section: str, off_mac: bool, parsed: Parsed) -> None:
    if node.kind == "string":
        spec, channel = node.value.strip(), None
    elif node.kind == "table":
        version, build = text_of(node.get("version")), text_of(node.get("build"))
        spec = f"{version or '*'}={build}" if build else version
        channel = text_of(node.get("channel")) or None
    else:
        return
    parsed.dependencies.append(
        make_dependency(
            path, node.entry, name=key.lower(), specifier=spec, extras=(), marker=None, raw=node.source,
            section=section, kind="package", ecosystem="conda", off_mac=off_mac, channel=channel,
        )
    )


def channel_name(channel: str) -> str:
    """'nvidia', 'https://example.org/nvidia/' and 'nvidia/label/cuda-12.1.0' all name the nvidia channel."""
    text = channel.strip().rstrip("/")
    if "://" in text:
        text = text.split("://", 1)[1].split("/", 1)[-1]
    return text.split("/", 1)[0].lower()


def _channels(path: str, channels: Optional[Node], section: str, off_mac: bool, parsed: Parsed) -> None:
    for item in channels.value if channels is not None and channels.kind == "array" else ():
        name = text_of(item) or text_of(item.get("channel"))
        if name:
            parsed.dependencies.append(
                make_dependency(
                    path, item.span, name=channel_name(name), specifier="", extras=(), marker=None,
                    raw=item.source, section=section, kind="conda-channel", ecosystem="conda", off_mac=off_mac,
                    url=name if "://" in name else None,
                )
            )
