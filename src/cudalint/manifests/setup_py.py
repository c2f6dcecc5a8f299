"""setup.py, read with CPython's own parser and never run: the requirement lists passed to setup().

Only install_requires, extras_require, setup_requires, tests_require and
dependency_links are read here (passed by keyword, or in a dict spread into the call:
`setup(**configuration)`); CUDA extensions in the same file are the Python
checker's business. CPython's parser is fast and refuses nesting it cannot handle
with an exception instead of overflowing the C stack, so any setup.py, however
hostile, gives findings or one problem, on any thread.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import replace
from typing import Dict, Iterator, List, Optional, Tuple

from cudalint.manifests.base import Parsed, Problem, Span, make_dependency, split_lines
from cudalint.manifests.markers import MarkerError, both, extra_and_marker, parse_marker
from cudalint.manifests.requirements import read_requirement_item

_LISTS = ("install_requires", "setup_requires", "tests_require")
_FOLLOW = 5  # how many `NAME = ...` hops install_requires=NAME may take


def parse(text: str) -> Tuple[Optional[ast.Module], Optional[Tuple[int, int, str]]]:
    """CPython's tree of the text, or (None, (line, column, why)) when it has none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text), None
    except SyntaxError as error:
        return None, (error.lineno or 1, max(error.offset or 1, 1), f"syntax error: {error.msg}")
    except (RecursionError, MemoryError):
        return None, (1, 1, "nested too deeply to parse")
    except ValueError as error:  # NUL bytes
        return None, (1, 1, f"cannot parse: {error}")


def _module_assignments(module: ast.Module) -> Dict[str, List[ast.expr]]:
    """Top-level `NAME = value` statements, in order, so install_requires=REQUIRES can be followed (each
    value knows its line: `REQUIRES = REQUIRES + EXTRA` reads the REQUIRES bound before it)."""
    found: Dict[str, List[ast.expr]] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(statement.value)
    return found


def _literal(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Reader:
    def __init__(self, path: str, text: str, module: ast.Module):
        self.path = path
        self.lines = split_lines(text)
        self.assignments = _module_assignments(module)
        self.parsed = Parsed()

    def column(self, line: int, byte_offset: int) -> int:
        """CPython counts columns in UTF-8 bytes; findings count characters."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.expr) -> Span:
        end_line = node.end_lineno or node.lineno
        return Span(node.lineno, self.column(node.lineno, node.col_offset),
                    end_line, self.column(end_line, node.end_col_offset or node.col_offset))

    def resolve(self, node: ast.expr) -> ast.expr:
        """What a name read at `node` is bound to: the last top-level assignment before the line it is
        read on (`test_requires = test_requires + unittest_requires` reads the earlier list), else the
        last of all (a `setup()` in a function that runs once the module has bound its names)."""
        for _ in range(_FOLLOW):
            if not (isinstance(node, ast.Name) and node.id in self.assignments):
                break
            values = self.assignments[node.id]
            earlier = [value for value in values if value.lineno < node.lineno]
            node = earlier[-1] if earlier else values[-1]  # read in a function that runs after the module is done
        return node

    def strings(self, node: ast.expr) -> Iterator[Tuple[str, ast.expr]]:
        """The string literals of a list/tuple (or a sum of them), each with its node, in order; each
        expression is expanded once, so sums that name each other cannot grow without end."""
        stack: List[ast.expr] = [node]
        seen = set()
        while stack:
            current = self.resolve(stack.pop())
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, ast.BinOp) and isinstance(current.op, ast.Add):
                stack += [current.right, current.left]
            elif isinstance(current, (ast.List, ast.Tuple)):
                for element in current.elts:
                    value = _literal(element)
                    if value is not None:
                        yield value, element
            elif _literal(current) is not None:
                yield from ((line, current) for line in split_lines(_literal(current)))

    def requirements(self, node: ast.expr, section: str, marker: Optional[str] = None) -> None:
        for text, literal in self.strings(node):
            found = read_requirement_item(self.path, text, self.span(literal), section)
            self.parsed.dependencies += [replace(dep, marker=both(dep.marker, marker)) for dep in found.dependencies]
            self.parsed.problems += found.problems

    def extra(self, key: ast.expr, value: ast.expr) -> None:
        """One extras_require entry; a `name:marker` key puts its marker on every requirement of the extra."""
        name, marker = extra_and_marker(_literal(key) or "")
        if marker is not None:
            try:
                parse_marker(marker)
            except MarkerError as error:
                span = self.span(key)
                self.parsed.problems.append(Problem(self.path, span, f"line {span.line}: {error}"))
                marker = None
        self.requirements(value, f"setup.extras_require.{name}", marker)

    def links(self, node: ast.expr) -> None:
        for text, literal in self.strings(node):
            self.parsed.dependencies.append(
                make_dependency(
                    self.path, self.span(literal), name="", specifier="", extras=(), marker=None, raw=text,
                    section="setup.dependency_links", kind="find-links", url=text,
                )
            )

    def call(self, call: ast.Call) -> None:
        for keyword in call.keywords:
            if keyword.arg is not None:
                self.argument(keyword.arg, keyword.value)
                continue
            # `setup(**configuration)` with `configuration = {"install_requires": [...], ...}` (or `dict(...)`)
            spread = self.resolve(keyword.value)
            if isinstance(spread, ast.Dict):
                for key, value in zip(spread.keys, spread.values):
                    if key is not None and _literal(key) is not None:
                        self.argument(_literal(key), value)
            elif isinstance(spread, ast.Call) and isinstance(spread.func, ast.Name) and spread.func.id == "dict":
                for inner in spread.keywords:
                    if inner.arg is not None:
                        self.argument(inner.arg, inner.value)

    def argument(self, name: str, value: ast.expr) -> None:
        """One argument of setup(), by name."""
        if name in _LISTS:
            self.requirements(value, f"setup.{name}")
        elif name == "extras_require":
            extras = self.resolve(value)
            for key, item in zip(extras.keys, extras.values) if isinstance(extras, ast.Dict) else ():
                if key is not None and _literal(key) is not None:
                    self.extra(key, item)
        elif name == "dependency_links":
            self.links(value)


def _is_setup_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "setup") or (isinstance(func, ast.Attribute) and func.attr == "setup")


def read(path: str, text: str) -> Parsed:
    module, failure = parse(text)
    if module is None:
        line, column, why = failure
        span = Span(line, column, line, column)
        return Parsed(problems=[Problem(path, span, f"line {line}: {why}; the requirements in it were not read")])
    reader = _Reader(path, text, module)
    for node in ast.walk(module):
        if _is_setup_call(node):
            reader.call(node)
    return reader.parsed
