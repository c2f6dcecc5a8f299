"""Conda environment files (environment.yml): channels, dependencies and their `pip:` list."""

from __future__ import annotations

import re
from typing import Optional

import yaml

from cudalint.manifests.base import Parsed, Problem, Span, make_dependency
from cudalint.manifests.pixi import channel_name
from cudalint.manifests.requirements import read_requirement_item

# [channel::]name[ version[ build]], name=version=build, name>=1.0, name[build=...]
_SPEC = re.compile(r"^\s*(?:(?P<channel>\S+?)::)?(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)(?P<spec>.*)$")


def node_span(node: yaml.Node) -> Span:
    """PyYAML marks are 0-based; findings are 1-based."""
    start, end = node.start_mark, node.end_mark
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def compose(path: str, text: str, parsed: Parsed) -> Optional[yaml.Node]:
    """The YAML node tree, or None after recording why the text is not YAML."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        column = mark.column + 1 if mark else 1
        reason = error.problem or error.context or "not valid YAML"
        span = Span(line, column, line, column + 1)
        parsed.problems.append(Problem(path, span, f"invalid YAML at line {line}: {reason}"))
    except yaml.YAMLError as error:
        parsed.problems.append(Problem(path, Span(1, 1, 1, 1), f"invalid YAML: {error}"))
    return None


def _mapping(node: yaml.Node):
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode):
            yield key.value, value


def read(path: str, text: str) -> Parsed:
    parsed = Parsed()
    root = compose(path, text, parsed)
    if root is None:
        return parsed
    if not isinstance(root, yaml.MappingNode):
        parsed.problems.append(Problem(path, node_span(root), "an environment file must be a mapping"))
        return parsed
    for key, value in _mapping(root):
        if key == "channels":
            _channels(path, value, parsed)
        elif key == "dependencies":
            _dependencies(path, value, parsed)
    return parsed


def _expect_list(path: str, key: str, node: yaml.Node, parsed: Parsed) -> bool:
    if isinstance(node, yaml.SequenceNode):
        return True
    if not (isinstance(node, yaml.ScalarNode) and node.value in ("", "null", "~")):
        span = node_span(node)
        parsed.problems.append(Problem(path, span, f"line {span.line}: `{key}` must be a list"))
    return False


def _channels(path: str, node: yaml.Node, parsed: Parsed) -> None:
    if not _expect_list(path, "channels", node, parsed):
        return
    for item in node.value:
        if isinstance(item, yaml.ScalarNode) and item.value.strip():
            parsed.dependencies.append(
                make_dependency(
                    path, node_span(item), name=channel_name(item.value), specifier="", extras=(), marker=None,
                    raw=item.value, section="channels", kind="conda-channel", ecosystem="conda",
                )
            )


def _dependencies(path: str, node: yaml.Node, parsed: Parsed) -> None:
    if not _expect_list(path, "dependencies", node, parsed):
        return
    for item in node.value:
        if isinstance(item, yaml.MappingNode):
            for key, value in _mapping(item):
                if key == "pip" and _expect_list(path, "pip", value, parsed):
                    _pip(path, value, parsed)
            continue
        span = node_span(item)
        match = _SPEC.match(item.value) if isinstance(item, yaml.ScalarNode) else None
        if not match:
            parsed.problems.append(Problem(path, span, f"line {span.line}: not a conda package spec"))
            continue
        parsed.dependencies.append(
            make_dependency(
                path, span, name=match["name"].lower(), specifier=match["spec"].strip(), extras=(), marker=None,
                raw=item.value, section="dependencies", kind="package", ecosystem="conda",
                channel=channel_name(match["channel"]) if match["channel"] else None,
            )
        )


def _pip(path: str, node: yaml.SequenceNode, parsed: Parsed) -> None:
    for item in node.value:
        if isinstance(item, yaml.ScalarNode):
            found = read_requirement_item(path, item.value, node_span(item), "dependencies.pip")
            parsed.dependencies += found.dependencies
            parsed.problems += found.problems
