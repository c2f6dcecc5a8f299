"""The availability tests a module defines, for the project index (CPython's tree, no libcst).

`def is_triton_available(): return importlib.util.find_spec("triton") is not None` and
`_xformers_available = importlib.util.find_spec("xformers") is not None` (later set to False
when its version is wrong) are true only where a package imports. Another module's
`if is_triton_available(): import triton` then imports it only where that succeeds. The same
rules as the libcst side (cudalint.python.optional_imports), on module-level names and functions.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional

from cudalint.project.reach import TRIES
from cudalint.python.optional_facts import optional_facts, requirement_module

MAX_DEPTH = 6


def availability_tests(tree: ast.Module, resolve: Callable[[ast.AST], Optional[str]], text: bytes = b"") -> Dict[str, str]:
    """Module-level functions and names of this module that are true only where a package imports,
    each with the top-level module it tests ("" when that is not known)."""
    facts = optional_facts()
    if text and not any(word.encode() in text for word in facts.words) and not (b"try" in text and b"True" in text):
        return {}  # neither a query nor a `try: import ...` with a True in it
    functions: Dict[str, ast.AST] = {}
    assigned: Dict[str, List[ast.AST]] = {}
    _module_level(tree.body, functions, assigned)
    judge = _Judge(facts.queries, resolve, functions, assigned)
    for trial in _trials(tree.body):
        _scan_trial(trial, judge.trues)
    found = {name: judge.function(name) for name in functions}
    found.update((name, judge.name(name)) for name in assigned)
    return {name: library for name, library in sorted(found.items()) if library is not None}


def _module_level(body, functions, assigned) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.If, ast.Try)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                _module_level(getattr(node, field, []) or [], functions, assigned)
            for handler in getattr(node, "handlers", []):
                _module_level(handler.body, functions, assigned)


class _Judge:
    def __init__(self, queries, resolve, functions, assigned):
        self.queries = queries
        self.resolve = resolve
        self.functions = functions
        self.assigned = assigned
        self.visiting = set()
        self.trues: Dict[int, str] = {}  # id of a `True` set or returned after a guarded import -> the module

    def function(self, name: str, depth: int = 0) -> Optional[str]:
        """None: not an availability test; else the module it tests ("" when not known)."""
        node = self.functions.get(name)
        if node is None or ("def", name) in self.visiting or depth > MAX_DEPTH:
            return None
        self.visiting.add(("def", name))
        try:
            return self._only_when_available([inner.value for inner in _own_returns(node)], depth)
        finally:
            self.visiting.discard(("def", name))

    def name(self, name: str, depth: int = 0) -> Optional[str]:
        values = self.assigned.get(name)
        if not values or ("name", name) in self.visiting or depth > MAX_DEPTH:
            return None
        self.visiting.add(("name", name))
        try:
            return self._only_when_available(values, depth)
        finally:
            self.visiting.discard(("name", name))

    def _only_when_available(self, values, depth) -> Optional[str]:
        libraries = set()
        for value in values:
            if value is None or (isinstance(value, ast.Constant) and value.value in (None, False)):
                continue
            library = self.trues.get(id(value)) or self.test(value, depth + 1)
            if library is None:
                return None
            libraries.add(library)
        if not libraries:
            return None
        return libraries.pop() if len(libraries) == 1 else ""

    def test(self, node: ast.AST, depth: int) -> Optional[str]:
        """True only where a package imports: the module it tests ("" when not known), else None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.BoolOp):
            found = [self.test(value, depth + 1) for value in node.values]
            known = {library for library in found if library is not None}
            if isinstance(node.op, ast.And) and not known or isinstance(node.op, ast.Or) and None in found:
                return None
            return known.pop() if len(known) == 1 else ""
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            other = node.comparators[0]
            if isinstance(other, ast.Constant) and other.value is None:
                return self.test(node.left, depth + 1)
            return None
        if isinstance(node, ast.Call):
            if self.resolve(node.func) in self.queries:
                return _queried_library(node)
            if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1:
                return self.test(node.args[0], depth + 1)
            return self.function(node.func.id, depth + 1) if isinstance(node.func, ast.Name) else None
        if isinstance(node, ast.Name):
            return self.name(node.id, depth + 1)
        return None


def _queried_library(call: ast.Call) -> str:
    module = next((kw.value for kw in call.keywords if kw.arg == "module"), None)
    first = module or (call.args[0] if call.args else None)
    return requirement_module(first.value if isinstance(first, ast.Constant) else None)


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _trials(body):
    """Every `try:` in a block, in its nested blocks and in the functions defined there (not in classes)."""
    for statement in body:
        if isinstance(statement, TRIES):
            yield statement
        if isinstance(statement, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from _trials(inner)
        for handler in getattr(statement, "handlers", ()):
            yield from _trials(handler.body)


def _scan_trial(statement, into: Dict[int, str]) -> None:
    """`try: import triton ... HAS_TRITON = True / return True except ImportError: ...`: a value bound or
    returned after the import (True, or `Version(triton.__version__) >= ...`) is bound only where the
    import succeeded."""
    if not any(_catches_import_error(h) for h in statement.handlers):
        return
    library = None
    for node in _in_order(statement.body):
        if library is None and isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.names[0].name if isinstance(node, ast.Import) else (node.module if not node.level else "")
            library = (module or "").split(".")[0]
        elif library and isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign)) and node.value is not None:
            into[id(node.value)] = library


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id in IMPORT_ERRORS for kind in kinds)


def _in_order(body):
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _in_order(node.body)


def _own_returns(function) -> List[ast.Return]:
    """The `return <value>` statements of a function, not of the functions and classes inside it."""
    found: List[ast.Return] = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found
