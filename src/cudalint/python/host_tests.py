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
module's code outside its functions and classes places nothing either (a name bound to a question about
the host, `CUDA = torch.cuda.is_available()`, or to a skip marker made of one, places nothing) (torchkbnufft's accuracy tests
under `torch.set_default_dtype(torch.double)` beside the CUDA tests that skip without CUDA). A module's
`if __name__ == "__main__":` block that calls its tests one by one (`test_cuda()`, run as a script) is no
code outside them: each test it calls is judged on its own, as pytest runs it.
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
        elif kind is ast.Attribute and _follows_a_tensor(node):
            continue
        elif kind is ast.keyword:
            if node.arg is not None and speaks_of_device(node.arg) and not _is_cpu(node.value) and not (
                    type(node.value) is ast.Attribute and _follows_a_tensor(node.value)):
                return True
        elif kind is ast.Constant:
            if type(node.value) is str and node.value.startswith(DEVICE_PREFIXES):
                return True
        else:
            name = _name_of(node, kind)
            if name is not None and speaks_of_device(name):
                return True
    return False


def _follows_a_tensor(node: ast.Attribute) -> bool:
    """`th.device` read from a local value (`torch.zeros(3, device=th.device)`): the device of a tensor
    the code already has, which places nothing new (where that tensor was placed is judged there); not
    `self.device`, which the class may set to anything, nor `torch.device(...)`, a call."""
    value = node.value
    return (node.attr == "device" and type(node.ctx) is ast.Load and type(value) is ast.Name
            and value.id not in ("self", "cls", "torch"))


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


def speaks_of_device(name: str) -> bool:
    """A name that speaks of a device (`device`, `use_gpu`, `DeviceGPU`, `to_mps`), by its parts."""
    lowered = name.lower()
    return any(part in lowered for part in DEVICE_PARTS) or not DEVICE_WORDS.isdisjoint(lowered.split("_"))


def _not_a_place(node: ast.AST, dtypes: FrozenSet[str]) -> bool:
    """A `.to()` argument that is a dtype (`torch.float64`, `dtype`), the CPU or another tensor's device."""
    if type(node) is ast.Attribute:
        return node.attr in dtypes or _follows_a_tensor(node)
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
    functions: Dict[str, List[ast.AST]] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(statement.name, []).append(statement)
    outside = [part for statement in tree.body if not isinstance(statement, DEFINITIONS) for part in _outside(statement, functions)]
    if any(places_on_device(statement, dtypes) and not _asks_the_host(statement) for statement in outside):
        return []
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


# Calls that ask what the host has (`torch.cuda.is_available()`, `device_count()`, `torch.backends.mps.is_built()`)
# and the skip markers made of such answers (`pytest.mark.skipif(not CUDA, ...)`): a module that binds them places nothing
HOST_QUESTIONS = frozenset({"is_available", "device_count", "is_built", "skipif", "skipIf", "skipUnless"})


def _asks_the_host(statement: ast.AST) -> bool:
    """`CUDA = torch.cuda.is_available()`, `requires_cuda = pytest.mark.skipif(not CUDA, reason="...")`: a
    module-level name bound to a question about the host (or a marker that skips on its answer), which the
    tests read to skip themselves; it places no tensor."""
    if type(statement) not in (ast.Assign, ast.AnnAssign) or statement.value is None:
        return False
    pending = [statement.value]
    while pending:
        node = pending.pop()
        if type(node) is ast.UnaryOp and type(node.op) is ast.Not:
            pending.append(node.operand)
        elif type(node) is ast.BoolOp:
            pending.extend(node.values)
        elif not (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in HOST_QUESTIONS):
            return False
    return True


def _outside(statement: ast.stmt, functions: Dict[str, List[ast.AST]]) -> List[ast.AST]:
    """The code of a top-level statement that runs outside the module's functions: all of it, but for an
    `if __name__ == "__main__":` block, whose calls of the module's own functions are those functions' code
    (their arguments aside)."""
    if not (type(statement) is ast.If and _is_main(statement.test)):
        return [statement]
    parts: List[ast.AST] = [statement.test, *statement.orelse]
    for inner in statement.body:
        call = inner.value if type(inner) is ast.Expr else None
        if type(call) is ast.Call and type(call.func) is ast.Name and call.func.id in functions:
            parts.extend((*call.args, *call.keywords))
        else:
            parts.append(inner)
    return parts


def _is_main(test: ast.AST) -> bool:
    """`__name__ == "__main__"`."""
    return (type(test) is ast.Compare and type(test.left) is ast.Name and test.left.id == "__name__" and len(test.comparators) == 1
            and type(test.comparators[0]) is ast.Constant and test.comparators[0].value == "__main__")


def _names_used(definition: ast.AST) -> List[str]:
    """The bare names a definition calls, and the parameters of its functions (pytest fixtures by name)."""
    names = []
    for node in ast.walk(definition):
        if type(node) is ast.Call and type(node.func) is ast.Name:
            names.append(node.func.id)
        elif type(node) is ast.arg:
            names.append(node.arg)
    return names
