"""Test modules whose tensors never leave the CPU.

A test that builds its tensors with no device and never moves them runs on the CPU on a Mac as
anywhere: a float64 dtype or an operator without an MPS kernel is no porting problem there. Rules
with `silenced_in_host_tests` (the dtype and op-coverage rules) report nothing in such a module.
Anything that may place a tensor counts as placing one: a device string ("cuda", "mps", "xpu"), a
`device`/`devices` name, attribute or keyword (unless the keyword is the literal "cpu"), a call of a
method that moves (`.cuda()`, `.mps()`, `.pin_memory()`; `torch.cuda.synchronize()` moves nothing),
and `.to(...)` with an argument that is not a dtype, "cpu" or a copy flag (`x.to(torch.double)`). A file cut in parts
(python/parts.py) is judged part by part.
"""

from __future__ import annotations

import ast
from typing import FrozenSet

DEVICE_NAMES = frozenset({"device", "devices", "set_default_device", "accelerator"})
MOVES = frozenset({"cuda", "mps", "xpu", "pin_memory"})
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
        elif kind is ast.Name and node.id in DEVICE_NAMES:
            return True
        elif kind is ast.Attribute and node.attr in DEVICE_NAMES:
            return True
        elif kind is ast.keyword and node.arg in DEVICE_NAMES and not _is_cpu(node.value):
            return True
        elif kind is ast.Constant and type(node.value) is str and node.value.startswith(DEVICE_PREFIXES):
            return True
    return False


def _not_a_place(node: ast.AST, dtypes: FrozenSet[str]) -> bool:
    """A `.to()` argument that is a dtype (`torch.float64`, `dtype`) or the CPU."""
    if type(node) is ast.Attribute:
        return node.attr in dtypes
    if type(node) is ast.Name:
        return node.id in dtypes or node.id == "dtype"
    return _is_cpu(node)


def _is_cpu(node: ast.AST) -> bool:
    return type(node) is ast.Constant and node.value == "cpu"
