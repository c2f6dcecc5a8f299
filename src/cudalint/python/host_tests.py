"""Test modules whose tensors never leave the CPU.

A test that builds its tensors with no device and never moves them runs on the CPU on a Mac as
anywhere: a float64 dtype or an operator without an MPS kernel is no porting problem there. Rules
with `silenced_in_host_tests` (the dtype and op-coverage rules) report nothing in such a module.
Anything that may place a tensor counts as placing one: a device string ("cuda", "mps", "xpu"), any
name, attribute, keyword, definition or import whose name speaks of a device (`device`, `to_cuda`,
`use_gpu`, `torch.cuda.synchronize`, `accelerator`; a `device="cpu"` keyword aside), a call of
`.pin_memory()`, and `.to(...)` with an argument that is not a dtype, "cpu" or a copy flag
(`x.to(torch.double)` moves nothing): a project's own helper that moves tensors has such a name. A
file cut in parts (python/parts.py) is judged part by part.
"""

from __future__ import annotations

import ast
from typing import FrozenSet

DEVICE_PARTS = ("cuda", "gpu", "device", "accelerat")  # anywhere in a name, lower-cased
DEVICE_WORDS = frozenset({"mps", "xpu"})  # as a word of a name (`to_mps`, `use_xpu`; not `json.dumps`)
MOVES = frozenset({"pin_memory"})
DEVICE_PREFIXES = ("cuda", "mps", "xpu")
TO_FLAGS = frozenset({"dtype", "non_blocking", "copy", "memory_format"})


def places_on_device(tree: ast.AST, dtypes: FrozenSet[str]) -> bool:
    """Whether the module may place a tensor on a device (see the module docstring); `dtypes`: the names
    of torch's dtypes (`float64`, `double`, ...)."""
    for node in ast.walk(tree):
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
    return type(node) is ast.Constant and node.value == "cpu"
