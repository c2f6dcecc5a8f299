"""CDL118: a tensor's device index (`x.get_device()`) handed on as a device.

    grad = grad.to(weight.get_device())

`Tensor.get_device()` answers the index of the tensor's device: -1 for a tensor on the CPU, which no
device argument accepts ("Device index must not be negative"), and 0 for one on MPS, which an integer
device reads as `cuda:0` before torch 2.5 (PyTorch pull request #129119 made it the current
accelerator's). So the move works only where the tensor sits on CUDA, or, from torch 2.5, on MPS;
`x.device` works everywhere. Reported where the index is written: as the device of `.to(...)` (its first
argument or `device=`), as any call's `device=`, or as `torch.device(...)`'s argument, directly or
through a local name every binding of which binds one. `.cuda(x.get_device())` is CDL102's.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import source_of
from cudalint.python.visitor import Registry


def device_index(registry: Registry) -> None:
    registry.on(cst.Call, _device_argument)


def _index_query(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """`x.get_device()`: the index of a tensor's device; not a module's function (`warp.get_device()`,
    `utils.get_device()`), nor a method the code's own class defines (`self.get_device()`), nor one of the
    file's own definitions of that name, nor, where a class of the project defines a method of that name, any
    call of it: the receiver may be one of the project's objects (`self.generator.get_device()`)."""
    if not (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get_device" and not node.args):
        return False
    receiver, model = node.func.value, ctx.model
    if model.is_module_ref(receiver) or model.resolve(node.func) is not None:
        return False
    if type(receiver) is cst.Name and receiver.value == model.scope.self_name:
        return False  # a method of the class (or of a base the file cannot see): the class's own answer
    if any(binding.kind == "def" for scope in model.scopes.values() for binding in scope.bindings.get("get_device", ())):
        return False
    return model.project is None or not model.project.defines_method("get_device")  # `self.generator.get_device()`


def _device_of(call: cst.Call, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """The expression a call takes as its device, where it may hold an index (a `get_device()` call or a
    name): `device=` of any call, the first argument of `.to(...)` (not a dtype's place: `.to(tensor)` and
    `.to(dtype)` take other things there, which an index is not), and `torch.device(...)`'s first argument.
    The syntactic tests come first: this runs for every call of the file."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value if _may_be_index(arg.value) else None
    first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
    if first is None or not _may_be_index(first.value):
        return None
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "to" and not ctx.model.is_module_ref(func.value):
        return first.value
    if ctx.model.resolve(func) == "torch.device":
        return first.value
    return None


def _may_be_index(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name or (type(node) is cst.Call and type(node.func) is cst.Attribute
                                      and node.func.attr.value == "get_device")


def _device_argument(node: cst.Call, ctx: FileContext) -> None:
    value = _device_of(node, ctx)
    if value is None:
        return
    if _index_query(value, ctx):
        written = value
    elif type(value) is cst.Name:
        bindings = ctx.model.lookup(value.value)
        if not bindings or not all(binding.kind == "assign" and binding.value is not None and _index_query(binding.value, ctx)
                                   for binding in bindings):
            return
        written = value
    else:
        return
    ctx.report("CDL118", written, f"{source_of(written)} is the index of a tensor's device: -1 on the CPU, which no device"
                                  " argument accepts, and read as cuda:0 before torch 2.5; use the tensor's .device")
