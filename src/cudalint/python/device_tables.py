"""CDL119: a table keyed by device type, with "cpu" and "cuda" entries and no "mps" one, looked up.

    isotonic = {"cpu": isotonic_cpu, "cuda": isotonic_cuda}
    ...
    solution = isotonic[values.device.type](values)

A library that dispatches on a tensor's device type through a dict of implementations (or of block
sizes, of dtype maps) runs on the CPU and on CUDA, and raises `KeyError: 'mps'` for a tensor on a Mac's
GPU: the author meant the code to run off CUDA, and left out the one device a Mac has. Reported where
the table is read (`table[key]`), the table's literal as the related location when it is written
elsewhere; the table is a dict literal (or `dict(cpu=..., cuda=...)`) every one of whose keys is a device
name (CDL116's `devices`), found through a name, `self.attr` or `Class.attr` by the semantic model's
values, and the key is a device's type (`x.device.type`, or a local name bound to one). Not reported: a store (`table[key] = ...`), a constant key (`table["cuda"]`: a choice, not a
dispatch), a table with "mps" or with "meta" (the implementations a kernel registers), a lookup inside
`if key in table:`, or one in a `try:` whose `except KeyError` (or a broader handler) goes on another way.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import source_of, string_value
from cudalint.python.visitor import Registry, caught_exceptions, ends_flow

# Handlers that catch a failed lookup: KeyError, its base, and what catches everything.
LOOKUP_ERRORS = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})


def device_tables(registry: Registry) -> None:
    registry.on(cst.Subscript, _device_table_lookup)


def _device_table_lookup(node: cst.Subscript, ctx: FileContext) -> None:
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return  # the cheap tests first: this runs on every subscript of the file
    key = node.slice[0].slice.value
    if type(key) in (cst.SimpleString, cst.Integer, cst.ConcatenatedString) or not isinstance(node.value, (cst.Name, cst.Attribute, cst.Dict)):
        return
    if _stored(node, ctx) or not _device_type(key, ctx):
        return
    held = ctx.model.values(node.value)
    tables = [value for value in held if value.kind == "dict"]
    if not tables or len(tables) != len(held):
        return
    devices = ctx.rules["CDL119"].match["devices"]
    keys: List[Tuple[str, ...]] = []
    for table in tables:
        found = _keys(table.data[0])
        if found is None or not all(name in devices for name in found):
            return
        keys.append(found)
    if any("mps" in found or "meta" in found for found in keys) or not any({"cpu", "cuda"} <= set(found) for found in keys):
        return  # a table with an MPS entry (in one of its bindings), or one that was never meant to run off CUDA
    if _checked_first(node, ctx) or _falls_back(node, ctx):
        return
    literal = tables[0].data[0]
    written = ", ".join(f'"{name}"' for name in keys[0])
    related = () if literal is node.value else ((literal, f"{source_of(node.value)} is written here, without an \"mps\" entry"),)
    ctx.report("CDL119", node, ctx.rules["CDL119"].match["message"].format(table=source_of(node.value), keys=written), None, related)


def _device_type(key: cst.BaseExpression, ctx: FileContext) -> bool:
    """The key is a device's type: `<device>.type` (`x.device.type`, `torch.device(name).type`), or a local
    name every binding of which is one (`device_type = q.device.type`). Another key (a backend's name, a
    mode) keys a table that is not about devices, whatever its strings."""
    if type(key) is cst.Name:
        values = [value for value, _ in ctx.model.assigned(key) if type(value) is not cst.Name]
        return bool(values) and all(_device_type(value, ctx) for value in values)
    return type(key) is cst.Attribute and key.attr.value == "type"


def _keys(table: cst.BaseExpression) -> Optional[Tuple[str, ...]]:
    """The keys of a dict literal, or of `dict(cpu=..., cuda=...)`, when every one is a written string."""
    if type(table) is cst.Dict:
        names = []
        for element in table.elements:
            text = string_value(element.key) if type(element) is cst.DictElement else None
            if text is None:
                return None  # `**other`, or a key that is not a written string
            names.append(text.split(":")[0])
        return tuple(names) if names else None
    if type(table) is cst.Call and table.args and all(arg.keyword is not None and not arg.star for arg in table.args):
        return tuple(arg.keyword.value for arg in table.args)
    return None


def _stored(node: cst.Subscript, ctx: FileContext) -> bool:
    """The subscript is written to or deleted (`table[key] = impl`, `del table[key]`), not read."""
    parent = ctx.parent
    if type(parent) in (cst.AssignTarget, cst.Del):
        return True
    return type(parent) in (cst.AugAssign, cst.AnnAssign) and parent.target is node


def _ancestors(ctx: FileContext) -> Iterator[Tuple[cst.CSTNode, cst.CSTNode]]:
    """(holder, the child of it the node lies in), from the nearest outwards, up to the enclosing function."""
    stack = ctx.stack
    for depth in range(len(stack) - 2, -1, -1):
        holder = stack[depth]
        yield holder, stack[depth + 1]
        if type(holder) in (cst.FunctionDef, cst.Lambda):
            return


def _checked_first(node: cst.Subscript, ctx: FileContext) -> bool:
    """Inside `if key in table:` (or its one-line form `x if key in table else y`): the lookup happens only
    for a device the table has."""
    table = source_of(node.value)
    for holder, child in _ancestors(ctx):
        if type(holder) in (cst.If, cst.IfExp) and child is holder.body:
            test = holder.test
            if (type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.In
                    and source_of(test.comparisons[0].comparator) == table):
                return True
    return False


def _falls_back(node: cst.Subscript, ctx: FileContext) -> bool:
    """In the body of a `try:` one of whose handlers catches a failed lookup and does not raise again."""
    for holder, child in _ancestors(ctx):
        if type(holder) is cst.Try and child is holder.body:
            for handler in holder.handlers:
                caught = caught_exceptions(handler, ctx.model)
                if (caught is None or LOOKUP_ERRORS.intersection(caught)) and ends_flow(handler.body, ctx.model) != "raise":
                    return True
    return False

