"""Test modules whose tensors never leave the CPU.

A test that builds its tensors with no device and never moves them runs on the CPU on a Mac as
anywhere: a float64 dtype or an operator without an MPS kernel is no porting problem there. Rules
with `silenced_in_host_tests` (the dtype and op-coverage rules) report nothing in such a module.
Anything that may place a tensor counts as placing one: a device string ("cuda", "mps", "xpu"), any
name, attribute, keyword, definition or import whose name speaks of a device (`device`, `to_cuda`,
`use_gpu`, `torch.cuda.synchronize`, `accelerator`; the CPU aside: a `device="cpu"` keyword, `torch.device("cpu")`), a call of
`.pin_memory()`, and `.to(...)` with an argument that is not a dtype, "cpu" or a copy flag
(`x.to(torch.double)` moves nothing): a project's own helper that moves tensors has such a name. A
file cut in parts (python/parts.py) is judged part by part.

In a test module that does place tensors somewhere, a test that places none runs on the CPU too: a
top-level test function or class (decorators included) that places nothing, nor do the module's own
functions it calls or takes as fixtures (by parameter name), is judged on its own, provided the
module's code outside its functions and classes places nothing either (torchkbnufft's accuracy tests
under `torch.set_default_dtype(torch.double)` beside the CUDA tests that skip without CUDA).
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Tuple

DEVICE_PARTS = ("cuda", "gpu", "device", "accelerat")  # anywhere in a name, lower-cased
DEVICE_WORDS = frozenset({"mps", "xpu"})  # as a word of a name (`to_mps`, `use_xpu`; not `json.dumps`)
MOVES = frozenset({"pin_memory"})
DEVICE_PREFIXES = ("cuda", "mps", "xpu")
TO_FLAGS = frozenset({"dtype", "non_blocking", "copy", "memory_format"})


def places_on_device(tree: ast.AST, dtypes: FrozenSet[str]) -> bool:
    """Whether the module may place a tensor on a device (see the module docstring); `dtypes`: the names
    of torch's dtypes (`float64`, `double`, ...)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_cpu(node):
            continue  # `torch.device("cpu")` names the host: its `device` says nothing of a placement
        stack.extend(ast.iter_child_nodes(node))
        kind = type(node)
        if kind is ast.Call and type(node.func) is ast.Attribute:
            method = node.func.attr
            if method in MOVES or method == "to" and not (
                    all(_not_a_place(arg, dtypes) for arg in node.args) and all(kw.arg in TO_FLAGS for kw in node.keywords)):
                return True
        elif kind is ast.keyword:
            if node.arg is not None and _speaks_of_device(node.arg) and not _is_cpu(node.value):
                return True
        elif kind is ast.Constant:
            if type(node.value) is str and node.value.startswith(DEVICE_PREFIXES):
                return True
        else:
            name = _name_of(node, kind)
            if name is not None and _speaks_of_device(name):
                return True
    return False


def _name_of(node: ast.AST, kind: type):
    if kind is ast.Name:
        return node.id
    if kind is ast.Attribute:
        return node.attr
    if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
        return node.name
    if kind is ast.alias:
        return node.asname or node.name
    if kind is ast.arg:
        return node.arg
    return None


def _speaks_of_device(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in DEVICE_PARTS) or not DEVICE_WORDS.isdisjoint(lowered.split("_"))


def _not_a_place(node: ast.AST, dtypes: FrozenSet[str]) -> bool:
    """A `.to()` argument that is a dtype (`torch.float64`, `dtype`) or the CPU."""
    if type(node) is ast.Attribute:
        return node.attr in dtypes
    if type(node) is ast.Name:
        return node.id in dtypes or node.id == "dtype"
    return _is_cpu(node)


def _is_cpu(node: ast.AST) -> bool:
    """"cpu", or a device made of it: `torch.device("cpu")`."""
    if type(node) is ast.Call and not node.keywords and len(node.args) == 1:
        func = node.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        return name == "device" and _is_cpu(node.args[0])
    return type(node) is ast.Constant and node.value == "cpu"


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def host_tests(tree: ast.Module, dtypes: FrozenSet[str]) -> List[Tuple[int, int]]:
    """The line ranges (first, last; decorators included) of the module's top-level functions and classes
    that place no tensor on a device, themselves or through the module's functions they call or take as
    fixtures; none where the module's other top-level code places one (see the module docstring)."""
    outside = [statement for statement in tree.body if not isinstance(statement, DEFINITIONS)]
    if any(places_on_device(statement, dtypes) for statement in outside):
        return []
    functions: Dict[str, List[ast.AST]] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(statement.name, []).append(statement)
    placing: Dict[int, bool] = {}

    def places(definition: ast.AST) -> bool:
        pending, seen = [definition], set()
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if id(node) not in placing:
                placing[id(node)] = places_on_device(node, dtypes)
            if placing[id(node)]:
                return True
            pending.extend(reached for name in _names_used(node) for reached in functions.get(name, ()))
        return False

    return [(min([statement.lineno] + [d.lineno for d in statement.decorator_list]), statement.end_lineno or statement.lineno)
            for statement in tree.body if isinstance(statement, DEFINITIONS) and not places(statement)]


def _names_used(definition: ast.AST) -> List[str]:
    """The bare names a definition calls, and the parameters of its functions (pytest fixtures by name)."""
    names = []
    for node in ast.walk(definition):
        if type(node) is ast.Call and type(node.func) is ast.Name:
            names.append(node.func.id)
        elif type(node) is ast.arg:
            names.append(node.arg)
    return names
