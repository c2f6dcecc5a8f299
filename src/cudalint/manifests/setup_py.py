"""setup.py, read with libcst and never run: the requirement lists passed to setup().

Only install_requires, extras_require, setup_requires, tests_require and
dependency_links are read here; CUDA extensions in the same file are the Python
checker's business. A file that does not parse gives nothing here, because the
Python checker reports the syntax error.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from cudalint.manifests.base import Parsed, Span, make_dependency
from cudalint.manifests.requirements import read_requirement_item

_LISTS = ("install_requires", "setup_requires", "tests_require")


class _SetupCalls(cst.CSTVisitor):
    def __init__(self):
        self.calls = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        if name == "setup":
            self.calls.append(node)


def _module_assignments(module: cst.Module) -> Dict[str, cst.BaseExpression]:
    """Top-level `NAME = value` statements, so install_requires=REQUIRES can be followed."""
    found = {}
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        found[target.value] = small.value
    return found


class _Reader:
    def __init__(self, path: str, wrapper: MetadataWrapper):
        self.path = path
        self.positions = wrapper.resolve(PositionProvider)
        self.assignments = _module_assignments(wrapper.module)
        self.parsed = Parsed()

    def span(self, node: cst.CSTNode) -> Span:
        code_range = self.positions[node]
        return Span(code_range.start.line, code_range.start.column + 1, code_range.end.line, code_range.end.column + 1)

    def resolve(self, node: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
        if isinstance(node, cst.Name) and node.value in self.assignments and depth < 5:
            return self.resolve(self.assignments[node.value], depth + 1)
        return node

    def strings(self, node: cst.BaseExpression) -> Iterator[Tuple[str, cst.CSTNode]]:
        """The string literals of a list/tuple (or a sum of them), each with its node."""
        node = self.resolve(node)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            yield from self.strings(node.left)
            yield from self.strings(node.right)
        elif isinstance(node, (cst.List, cst.Tuple)):
            for element in node.elements:
                value = _literal(element.value)
                if value is not None:
                    yield value, element.value
        elif _literal(node) is not None:
            yield from ((line, node) for line in _literal(node).splitlines())

    def requirements(self, node: cst.BaseExpression, section: str) -> None:
        for text, literal in self.strings(node):
            found = read_requirement_item(self.path, text, self.span(literal), section)
            self.parsed.dependencies += found.dependencies
            self.parsed.problems += found.problems

    def links(self, node: cst.BaseExpression) -> None:
        for text, literal in self.strings(node):
            self.parsed.dependencies.append(
                make_dependency(
                    self.path, self.span(literal), name="", specifier="", extras=(), marker=None, raw=text,
                    section="setup.dependency_links", kind="find-links", url=text,
                )
            )

    def call(self, call: cst.Call) -> None:
        for arg in call.args:
            keyword = arg.keyword.value if arg.keyword else ""
            if keyword in _LISTS:
                self.requirements(arg.value, f"setup.{keyword}")
            elif keyword == "extras_require":
                extras = self.resolve(arg.value)
                for element in extras.elements if isinstance(extras, cst.Dict) else ():
                    extra = _literal(element.key) if isinstance(element, cst.DictElement) else None
                    if extra is not None:
                        self.requirements(element.value, f"setup.extras_require.{extra}")
            elif keyword == "dependency_links":
                self.links(arg.value)


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def read(path: str, text: str) -> Parsed:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError:
        return Parsed()
    reader = _Reader(path, wrapper)
    visitor = _SetupCalls()
    wrapper.module.visit(visitor)
    for call in visitor.calls:
        reader.call(call)
    return reader.parsed
