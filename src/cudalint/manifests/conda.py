"""Conda environment files: channels, dependencies and their `pip:` list.

A YAML file is an environment file by what it holds, whatever its name (conda.yaml,
env/gpu.yml): a top-level `dependencies` list of package specs, or one next to `channels`.
"""

from __future__ import annotations

import re
from typing import Optional

import yaml

from cudalint.manifests.base import Dependency, Parsed, Span, make_dependency
from cudalint.manifests.pixi import channel_name
from cudalint.manifests.requirement import looks_like_url
from cudalint.manifests.requirements import read_requirement_item
from cudalint.manifests.yaml_nodes import Document, compose, get, mapping, sequence

# [channel::]name[ version[ build]], name=version=build, name>=1.0, name[build=...]
_SPEC = re.compile(r"^\s*(?:(?P<channel>\S+?)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<spec>.*)$")


def is_environment(root: Optional[yaml.Node]) -> bool:
    """A mapping with a `dependencies` list that has a package spec in it (a Helm chart's list of
    mappings is not one), or with both `channels` and `dependencies`."""
    dependencies = get(root, "dependencies")
    if not isinstance(dependencies, yaml.SequenceNode):
        return False
    if get(root, "channels") is not None:
        return True
    return any(isinstance(item, yaml.ScalarNode) and _SPEC.match(item.value) for item in dependencies.value)


def package(path: str, span: Span, text: str, section: str, **fields) -> Optional[Dependency]:
    """One conda package spec (`pytorch::pytorch-cuda=11.7.0`, `cudatoolkit 11.8.*`); None if it is not one."""
    match = _SPEC.match(text)
    if not match:
        return None
    return make_dependency(
        path, span, name=match["name"].lower(), specifier=match["spec"].strip(), extras=(), marker=None,
        raw=text, section=section, kind="package", ecosystem="conda",
        channel=channel_name(match["channel"]) if match["channel"] else None, **fields,
    )


def channel(path: str, span: Span, text: str, section: str, **fields) -> Dependency:
    return make_dependency(
        path, span, name=channel_name(text), specifier="", extras=(), marker=None, raw=text, section=section,
        kind="conda-channel", ecosystem="conda", url=text.strip() if looks_like_url(text.strip()) else None, **fields,
    )


def read(path: str, text: str) -> Parsed:
    parsed = Parsed()
    document = compose(path, text, parsed)
    if document is not None:
        read_document(document, parsed)
    return parsed


def read_document(document: Document, parsed: Parsed) -> None:
    if not isinstance(document.root, yaml.MappingNode):
        parsed.problems.append(document.problem(document.root, "an environment file must be a mapping"))
        return
    for key, value in mapping(document.root):
        if key == "channels":
            _channels(document, value, parsed)
        elif key == "dependencies":
            _dependencies(document, value, parsed)


def _expect_list(document: Document, key: str, node: yaml.Node, parsed: Parsed) -> bool:
    if isinstance(node, yaml.SequenceNode):
        return True
    if not (isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~")):
        parsed.problems.append(document.problem(node, f"`{key}` must be a list"))
    return False


def _channels(document: Document, node: yaml.Node, parsed: Parsed) -> None:
    if not _expect_list(document, "channels", node, parsed):
        return
    for item in sequence(node):
        if isinstance(item, yaml.ScalarNode) and item.value.strip():
            parsed.dependencies.append(channel(document.path, document.span(item), item.value, "channels"))


def _dependencies(document: Document, node: yaml.Node, parsed: Parsed) -> None:
    if not _expect_list(document, "dependencies", node, parsed):
        return
    for item in sequence(node):
        if isinstance(item, yaml.MappingNode):
            for key, value in mapping(item):
                if key == "pip" and _expect_list(document, "pip", value, parsed):
                    pip_list(document, value, "dependencies.pip", parsed)
            continue
        dependency = package(document.path, document.span(item), item.value, "dependencies") if isinstance(
            item, yaml.ScalarNode) else None
        if dependency is None:
            parsed.problems.append(document.problem(item, "not a conda package spec"))
            continue
        parsed.dependencies.append(dependency)


def pip_list(document: Document, node: yaml.Node, section: str, parsed: Parsed) -> None:
    """A YAML list of requirement lines (an environment's `pip:`, cog's `python_packages`)."""
    for item in sequence(node):
        if isinstance(item, yaml.ScalarNode):
            found = read_requirement_item(document.path, item.value, document.span(item), section)
            parsed.dependencies += found.dependencies
            parsed.problems += found.problems
