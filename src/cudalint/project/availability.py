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

from cudalint.python.optional_facts import optional_facts

MAX_DEPTH = 6


def availability_tests(tree: ast.Module, resolve: Callable[[ast.AST], Optional[str]], text: bytes = b"") -> List[str]:
    """Module-level functions and names of this module that are true only where a package imports."""
    facts = optional_facts()
    if text and not any(word.encode() in text for word in facts.words):
        return []
    functions: Dict[str, ast.AST] = {}
    assigned: Dict[str, List[ast.AST]] = {}
    _module_level(tree.body, functions, assigned)
    judge = _Judge(facts.queries, resolve, functions, assigned)
    found = [name for name in functions if judge.function(name)]
    found += [name for name in assigned if judge.name(name)]
    return sorted(found)


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

    def function(self, name: str, depth: int = 0) -> bool:
        node = self.functions.get(name)
        if node is None or ("def", name) in self.visiting or depth > MAX_DEPTH:
            return False
        self.visiting.add(("def", name))
        try:
            returns = [inner.value for inner in _own_returns(node)]
            return self._only_when_available(returns, depth)
        finally:
            self.visiting.discard(("def", name))

    def name(self, name: str, depth: int = 0) -> bool:
        values = self.assigned.get(name)
        if not values or ("name", name) in self.visiting or depth > MAX_DEPTH:
            return False
        self.visiting.add(("name", name))
        try:
            return self._only_when_available(values, depth)
        finally:
            self.visiting.discard(("name", name))

    def _only_when_available(self, values, depth) -> bool:
        tested = False
        for value in values:
            if value is None or (isinstance(value, ast.Constant) and value.value in (None, False)):
                continue
            if not self.test(value, depth + 1):
                return False
            tested = True
        return tested

    def test(self, node: ast.AST, depth: int) -> bool:
        """True only where a package imports."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return any(self.test(value, depth + 1) for value in node.values)
        if isinstance(node, ast.BoolOp):
            return all(self.test(value, depth + 1) for value in node.values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            other = node.comparators[0]
            if isinstance(other, ast.Constant) and other.value is None:
                return self.test(node.left, depth + 1)
            return False
        if isinstance(node, ast.Call):
            if self.resolve(node.func) in self.queries:
                return True
            if isinstance(node.func, ast.Name) and node.func.id in ("bool",) and len(node.args) == 1:
                return self.test(node.args[0], depth + 1)
            return isinstance(node.func, ast.Name) and self.function(node.func.id, depth + 1)
        if isinstance(node, ast.Name):
            return self.name(node.id, depth + 1)
        return False


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
