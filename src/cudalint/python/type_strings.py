"""CDL219: a tensor's legacy type string handed back to `.type()`.

`b.type(a.type())`, or `dtype = a.type()` then `b.type(dtype)`: `.type()` without arguments answers the
tensor's type as a string ("torch.cuda.FloatTensor"), and `.type(string)` converts to it. For a tensor on
MPS the string is "torch.mps.FloatTensor", which `.type()` rejects (PyTorch issue 118517). `b.to(a)` and
`b.type_as(a)` work on every device.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import source_of
from cudalint.python.visitor import Registry


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


def type_string(registry: Registry) -> None:
    registry.on(cst.Call, _call)
