"""CDL219: a tensor's legacy type string handed back to `.type()`.

`b.type(a.type())`, or `dtype = a.type()` then `b.type(dtype)`: `.type()` without arguments answers the
tensor's type as a string ("torch.cuda.FloatTensor"), and `.type(string)` converts to it. For a tensor on
MPS the string is "torch.mps.FloatTensor", which `.type()` rejects (PyTorch issue 118517). `b.to(a)` and
`b.type_as(a)` work on every device.

Also a chain that sorts tensors by their CUDA type string and raises for any other (NVIDIA apex's fp16 utils:
`if p.type() == "torch.cuda.HalfTensor": ... elif p.type() == "torch.cuda.FloatTensor": ... else: raise
TypeError(...)`), or an assertion of one: every tensor a Mac has takes the raise.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import source_of, string_value
from cudalint.python.visitor import Registry, ends_flow


def _type_query(node: cst.BaseExpression) -> bool:
    """`x.type()`: a tensor's type as a string."""
    return type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "type" and not node.args


def _type_string(node: cst.BaseExpression, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """Where the expression's type string is written: `x.type()` itself; a local name every binding of which
    binds one; a parameter that a call of its function in the file passes one for (YOLOX's
    `self.get_output_and_grid(..., xin[0].type())`: on MPS that call raises)."""
    if _type_query(node):
        return node
    if type(node) is cst.Name:
        bindings = ctx.model.lookup(node.value)
        if bindings and all(binding.kind == "assign" and binding.value is not None and _type_query(binding.value)
                            for binding in bindings):
            return node
        if len(bindings) == 1 and bindings[0].kind == "param":
            return next((value for value, _, _ in filter(None, ctx.model.call_sites.seen(bindings[0]))
                         if value is not None and _type_query(value)), None)
    return None


def _call(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    if not (type(func) is cst.Attribute and func.attr.value == "type" and len(node.args) == 1):
        return
    arg = node.args[0]
    if arg.keyword is not None or arg.star or ctx.imports.is_module_ref(func.value) \
            or not ctx.model.imports_under("torch"):  # tensors' `.type()` are torch's
        return
    found = _type_string(arg.value, ctx)
    if found is None:
        return
    message = ctx.rules["CDL219"].match["message"].format(found=source_of(found))
    if found is arg.value or type(found) is cst.Name:
        ctx.report("CDL219", arg.value, message)
    else:  # passed for a parameter: reported where it is written, the `.type(...)` it reaches as related
        ctx.report("CDL219", found, message, related=((node, f"{source_of(found)} reaches {source_of(func)}(...) here"),))


CUDA_TYPES = "torch.cuda."  # the prefix of every CUDA tensor type string ("torch.cuda.HalfTensor")


def _cuda_type_test(node: cst.BaseExpression) -> bool:
    """`x.type() == "torch.cuda.HalfTensor"` (either way round)."""
    if type(node) is not cst.Comparison or len(node.comparisons) != 1 or type(node.comparisons[0].operator) is not cst.Equal:
        return False
    left, right = node.left, node.comparisons[0].comparator
    text = string_value(right) if _type_query(left) else string_value(left) if _type_query(right) else None
    return text is not None and text.startswith(CUDA_TYPES)


def _comparison(node: cst.Comparison, ctx: FileContext) -> None:
    """`p.type() == "torch.cuda.HalfTensor"` as the test of an `if` whose chain ends in an `else` that raises,
    or asserted: false for every tensor a Mac has, whose type string names the CPU or MPS."""
    if not _cuda_type_test(node) or not ctx.model.imports_under("torch"):
        return
    holder = ctx.parent
    earlier = ctx.stack[-3] if len(ctx.stack) >= 3 else None
    if type(holder) is cst.If and type(earlier) is cst.If and earlier.orelse is holder and _cuda_type_test(earlier.test):
        return  # `elif p.type() == "torch.cuda.FloatTensor":` after the first link: one finding per chain
    if type(holder) is cst.Assert and holder.test is node:
        demands = True
    elif type(holder) is cst.If and holder.test is node:
        link = holder
        while type(link.orelse) is cst.If:
            link = link.orelse
        demands = type(link.orelse) is cst.Else and ends_flow(link.orelse.body, ctx.model) == "raise"
    else:
        demands = False
    if demands:
        ctx.report("CDL219", node, f"{source_of(node)} holds only for a tensor on CUDA (on a Mac the type string is "
                                   f"'torch.FloatTensor' or 'torch.mps.FloatTensor'), and the other way raises: test "
                                   f"the dtype (and, where it matters, device.type) instead")


def type_string(registry: Registry) -> None:
    registry.on(cst.Call, _call)
    registry.on(cst.Comparison, _comparison)
