"""Tests a conftest.py's collection hook skips where CUDA is missing.

    def pytest_collection_modifyitems(session, config, items):
        if not torch.cuda.is_available():
            for test in items:
                if "cuda" in test.name:
                    test.add_marker(pytest.mark.skip("CUDA unavailable"))

pytest hands the hook every collected test; one it marks to skip never runs. Read from the conftest's
CPython tree by the project index: each skip as [what it tests, the text], "name" for the test's name or
node id (`"cuda" in item.name`), "keyword" for its keywords (`"gpu" in item.keywords`: its markers, its own
name and its class's, pytest's Item.keywords). A skip counts only where every condition on the way to it is
either true on every Mac (a test the guard evaluator says is false only off a Mac, and is false there: `not
torch.cuda.is_available()`) or that one test of the item, and at least one is the former: a skip that also
hangs on a command-line option or anything else may not happen. ProjectIndex.collection_skips gives the
skips of the conftest files above a test module (pytest reads every conftest.py from the rootdir down).
"""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Tuple

HOOK = "pytest_collection_modifyitems"
SKIP_MARKERS = frozenset({"pytest.mark.skip", "_pytest.mark.skip"})
# What a membership test of an item reads: its name (a substring of the test function's name, parameters aside),
# its node id (of the file's path, the class's name and the function's), or its keywords (a mapping: one of its
# markers, the function's or the class's name, exactly).
ITEM_TEXTS = {"name": "name", "originalname": "name", "nodeid": "nodeid", "keywords": "keyword"}
Condition = Tuple[ast.AST, bool]  # a test on the way to a statement, and the value it has there


def collection_skips(tree: ast.Module, resolve: Callable[[ast.AST], Optional[str]],
                     guard: Callable[[ast.AST, ast.AST], Tuple[bool, bool]]) -> List[List[str]]:
    """The skips of a conftest's collection hook (see the module's doc). `resolve`: a name or attribute's
    qualified name; `guard(test, function)`: (true only off a Mac, false only off a Mac), the index's evaluator."""
    hook = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == HOOK), None)
    if hook is None:
        return []
    markers = {target.id for node in ast.walk(hook) if isinstance(node, ast.Assign) and _skip_marker(node.value, resolve)
               for target in node.targets if isinstance(target, ast.Name)}  # `skip = pytest.mark.skip(reason=...)`
    found: List[List[str]] = []
    for call, conditions in _calls(hook.body, []):
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "add_marker" and isinstance(func.value, ast.Name)
                and len(call.args) == 1):
            continue
        marker = call.args[0]
        if not (_skip_marker(marker, resolve) or (isinstance(marker, ast.Name) and marker.id in markers)):
            continue
        skip = _judged(conditions, func.value.id, hook, guard)
        if skip is not None and skip not in found:
            found.append(skip)
    return found


def _calls(body, conditions: List[Condition]):
    """Each call statement of a block, with the conditions on the way to it (into ifs and loops, not into
    nested definitions)."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from _calls(statement.body, conditions + [(statement.test, True)])
            yield from _calls(statement.orelse, conditions + [(statement.test, False)])
        elif isinstance(statement, (ast.For, ast.While)):
            yield from _calls(statement.body, conditions)
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            yield statement.value, conditions


def _judged(conditions: List[Condition], item: str, hook: ast.AST, guard) -> Optional[List[str]]:
    parts: List[Condition] = []
    for test, value in conditions:  # `if "cuda" in item.name and not torch.cuda.is_available():` is two
        if value and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            parts.extend((part, True) for part in test.values)
        else:
            parts.append((test, value))
    tested: List[List[str]] = []
    on_a_mac = False
    for test, value in parts:
        membership = _membership(test, item) if value else None
        if membership is not None:
            tested.append(membership)
            continue
        true_off_mac, false_off_mac = guard(test, hook)
        if (value and false_off_mac) or (not value and true_off_mac):
            on_a_mac = True  # the branch a Mac takes: what holds there unless CUDA is present
            continue
        return None  # a condition that may be false on a Mac: the skip may not happen
    return tested[0] if on_a_mac and len(tested) == 1 else None


def _membership(test: ast.AST, item: str) -> Optional[List[str]]:
    """`"cuda" in item.name` (or `.nodeid`, `.keywords`) of the loop's item: [what it tests, the text]."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)):
        return None
    text, where = test.left, test.comparators[0]
    if not (isinstance(text, ast.Constant) and isinstance(text.value, str) and text.value):
        return None
    if isinstance(where, ast.Attribute) and isinstance(where.value, ast.Name) and where.value.id == item and where.attr in ITEM_TEXTS:
        return [ITEM_TEXTS[where.attr], text.value]
    return None


def _skip_marker(node: ast.AST, resolve) -> bool:
    """`pytest.mark.skip` or `pytest.mark.skip(reason=...)`."""
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, (ast.Name, ast.Attribute)) and resolve(target) in SKIP_MARKERS
