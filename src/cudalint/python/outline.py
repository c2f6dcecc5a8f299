"""The statements of CPython's tree, as much as positions and the walk need: where each starts and
ends, the statements of its block, a definition's name, and the names a module- or class-level
statement binds. Built from the tree the gates parse (without libcst), so that tree can be freed
before libcst parses the file; positions.py and quiet.py read it."""

from __future__ import annotations

import ast
from collections.abc import Sequence

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
STAR = "*"  # in `binds`: `from m import *`, which may bind any name


Binding = tuple[str, int, int, bool]  # a name, the lines of the code whose value it is bound to, whether a call binds it


class Statement:
    """A statement of CPython's tree: where it starts (`first`: its first decorator's line, if any)
    and ends, the statements of its (first) block, the name of a function (`function`) or class it
    defines, and, at the module's or a class's level, the names it binds for code elsewhere, each
    with the lines of the value it is bound to (see `_binds`)."""

    __slots__ = ("lineno", "col_offset", "body", "first", "end", "name", "function", "binds")

    def __init__(self, lineno: int, col_offset: int, body: list["Statement"] | None, first: int = 0, end: int = 0,
                 name: str | None = None, function: bool = False, binds: tuple[Binding, ...] = ()):
        self.lineno = lineno
        self.col_offset = col_offset
        self.body = body
        self.first = first or lineno
        self.end = end or lineno
        self.name = name
        self.function = function
        self.binds = binds


def outline(tree: ast.Module) -> list[Statement]:
    """The statements of a module, each with the statements of its block (a few per cent of the tree's nodes)."""
    return _outline(tree.body, True)


def _outline(body: Sequence[ast.stmt], level: bool) -> list[Statement]:
    """`level`: the module's or a class's own statements (their bindings are noted)."""
    statements = []
    for node in body:
        kind = type(node)
        block = getattr(node, "body", None)
        defines = kind in DEFINITIONS
        statements.append(Statement(
            node.lineno, node.col_offset,
            _outline(block, level and kind is ast.ClassDef) if isinstance(block, list) else None,
            min((decorator.lineno for decorator in node.decorator_list), default=node.lineno) if defines else node.lineno,
            node.end_lineno or node.lineno,
            node.name if defines else None,
            kind in FUNCTIONS,
            _binds(node) if level and kind is not ast.ClassDef else (),
        ))
    return statements


def _lines(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.end_lineno or node.lineno


def _targets(target: ast.AST, lines: tuple[int, int], names: list[Binding], attributes: list[Binding]) -> None:
    """The names an assignment target binds (`names`) and the attributes it stores into, or the
    containers a subscript stores into (`cfg["device"] = ...`), through tuples, lists and stars."""
    kind = type(target)
    if kind is ast.Name:
        names.append((target.id, *lines, False))
    elif kind is ast.Attribute:
        attributes.append((target.attr, *lines, False))
    elif kind is ast.Subscript or kind is ast.Starred:
        _targets(target.value, lines, names, attributes)
    elif kind is ast.Tuple or kind is ast.List:
        for element in target.elts:
            _targets(element, lines, names, attributes)


def _binds(statement: ast.stmt) -> tuple[Binding, ...]:
    """What a module- or class-level statement binds that code elsewhere may read, each name with the
    lines of the value bound to it: the targets of assignments, loops and `with`, imports and
    definitions (in a function, only the names it declares global), the attributes it stores into, a
    function's own name (bound to its signature and to each value it returns), the dests of the options
    it declares (`add_argument("--gpu-id", ...)`, read as `args.gpu_id`), and the name of each function
    it calls with arguments (bound to the call: the arguments are what that function's parameters are)."""
    function = type(statement) in FUNCTIONS
    names: list[Binding] = []  # a function's own only when declared global
    found: list[Binding] = []
    declared: set[str] = set()
    if function:
        found.append((statement.name, statement.lineno, max(statement.lineno, statement.body[0].lineno - 1), False))
    for node in ast.walk(statement):
        kind = type(node)
        if kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
            if node.value is not None:
                for target in node.targets if kind is ast.Assign else (node.target,):
                    _targets(target, _lines(node.value), names, found)
        elif kind is ast.NamedExpr:
            _targets(node.target, _lines(node.value), names, found)
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            _targets(node.target, _lines(node.iter), names, found)
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                _targets(node.optional_vars, _lines(node.context_expr), names, found)
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in node.names:
                names.append((STAR if alias.name == STAR else (alias.asname or alias.name.partition(".")[0]), *_lines(node), False))
        elif kind is ast.Global:
            declared.update(node.names)
        elif kind is ast.Return:
            if function and node.value is not None:
                found.append((statement.name, *_lines(node.value), False))
        elif kind in DEFINITIONS:
            if node is not statement:
                names.append((node.name, *_lines(node), False))
        elif kind is ast.Call:
            callee = node.func
            name = callee.attr if type(callee) is ast.Attribute else callee.id if type(callee) is ast.Name else None
            if name is not None and (node.args or node.keywords):
                found.append((name, *_lines(node), True))
            for argument in node.args:
                if type(argument) is ast.Constant and type(argument.value) is str and argument.value.startswith("-"):
                    found.append((argument.value.lstrip("-").replace("-", "_"), *_lines(node), False))
    found.extend(binding for binding in names if not function or binding[0] in declared)
    return tuple(found)
