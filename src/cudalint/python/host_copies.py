"""CDL120: a tensor copied to the host only where its device is CUDA, then read into NumPy.

    if device.type == "cuda":
        preds = preds.cpu()
    return preds.numpy()

    if self.device.type == "cuda":
        features = out.cpu().detach().numpy()
    else:
        features = out.detach().numpy()

`Tensor.numpy()` works only for a tensor in host memory ("can't convert mps:0 device type tensor to
numpy. Use Tensor.cpu() to copy the tensor to host memory first"): code that copies back only when the
device is CUDA takes the CPU's path for a tensor on MPS, and raises there. `.cpu()` costs nothing for a
tensor already on the CPU: copy whenever the device is not the CPU. Reported at the test, when its
branch copies names to the host (`x = x.cpu()`, also several at once) that the statements after the `if`
read into NumPy (`x.numpy()`), or when the branch reads a value into NumPy through `.cpu()` and the `else`
reads the same value into NumPy without one. `if x.is_cuda: x = x.cpu()` with no `else` counts too
(`.is_cuda` is False on MPS); an `if x.is_cuda:` with an `else` is CDL103's. A test of CUDA's availability is
no test of a tensor's device (CDL104 judges those choices).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set

import libcst as cst

from cudalint.python.children import code_children, enclosing_block
from cudalint.python.context import FileContext
from cudalint.python.names import conjuncts, source_of, string_value
from cudalint.python.placement import SAME_DEVICE_METHODS
from cudalint.python.visitor import Registry


def host_copies(registry: Registry) -> None:
    registry.on(cst.If, _cuda_only_copy)


def _cuda_only_copy(node: cst.If, ctx: FileContext) -> None:
    if type(node.test) not in (cst.Comparison, cst.BooleanOperation, cst.Call, cst.Attribute):
        return  # the cheap test first: this runs on every `if`
    parts = list(conjuncts(node.test))
    if not any(tests_cuda_device(part) for part in parts):
        if node.orelse is not None or not any(type(part) is cst.Attribute and part.attr.value == "is_cuda" for part in parts):
            return  # (`if x.is_cuda: ... else: ...` is CDL103's; with no `else`, the copy is this rule's)
    read = _read_after(node, ctx) if node.orelse is None else _read_in_else(node)
    if read is not None:
        ctx.report("CDL120", node.test, ctx.rules["CDL120"].match["message"].format(value=source_of(read)))


def tests_cuda_device(test: cst.BaseExpression) -> bool:
    """`<expr> == "cuda"` (a device's type, a device or its name), `"cuda" in str(device)`,
    `str(device).startswith("cuda")`."""
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        operator, right = type(test.comparisons[0].operator), test.comparisons[0].comparator
        if operator is cst.Equal and string_value(right) == "cuda":
            return True
        if operator is cst.In and string_value(test.left) == "cuda":
            return True
    if (type(test) is cst.Call and type(test.func) is cst.Attribute and test.func.attr.value == "startswith"
            and test.args and string_value(test.args[0].value) == "cuda"):
        return True
    return False


def _moved_names(block: cst.BaseSuite) -> Set[str]:
    """The names every statement of the block copies to the host in place (`x = x.cpu()`, `a, b = a.cpu(),
    b.cpu()`); empty when a statement does anything else."""
    names: Set[str] = set()
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    for statement in statements:
        small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
        if type(small) is not cst.Assign or len(small.targets) != 1:
            return set()
        target, value = small.targets[0].target, small.value
        pairs = (list(zip([element.value for element in target.elements], [element.value for element in value.elements]))
                 if type(target) is cst.Tuple and type(value) is cst.Tuple and len(target.elements) == len(value.elements)
                 else [(target, value)])
        for name, moved in pairs:
            if type(name) is not cst.Name or _copied_to_host(moved) != name.value:
                return set()
            names.add(name.value)
    return names


def _copied_to_host(value: cst.BaseExpression) -> Optional[str]:
    """The name `value` copies to the host: `x.cpu()`, `x.detach().cpu()`, else None."""
    found = False
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        method = value.func.attr.value
        if method == "cpu":
            found = True
        elif method not in SAME_DEVICE_METHODS:
            return None
        value = value.func.value
    return value.value if found and type(value) is cst.Name else None


def _read_after(node: cst.If, ctx: FileContext) -> Optional[cst.CSTNode]:
    """A `.numpy()` of a name the branch copies to the host, in the statements after the `if`."""
    names = _moved_names(node.body)
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1) if names else None
    if found is None:
        return None
    statements, index = found
    for statement in statements[index + 1:]:
        for call in _numpy_reads(statement):
            receiver = _receiver(call)
            if type(receiver) is cst.Name and receiver.value in names:
                return call
    return None


def _read_in_else(node: cst.If) -> Optional[cst.CSTNode]:
    """The `else` reads into NumPy, without `.cpu()`, a value the branch reads through `.cpu()`."""
    if not isinstance(node.orelse, cst.Else):
        return None
    copied = {source_of(_receiver(call)) for call in _numpy_reads(node.body) if _through_cpu(call)}
    for call in _numpy_reads(node.orelse.body):
        if not _through_cpu(call) and source_of(_receiver(call)) in copied:
            return call
    return None


def _numpy_reads(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The `.numpy()` calls in the code (not in the functions and classes it defines)."""
    pending: List[cst.CSTNode] = [node]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            continue
        if (kind is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value == "numpy"
                and not current.args):
            yield current
        pending.extend(code_children(current))


def _receiver(call: cst.Call) -> cst.BaseExpression:
    """What `.numpy()` reads, past the calls that keep a tensor where it is and past `.cpu()`."""
    value = call.func.value
    while (type(value) is cst.Call and type(value.func) is cst.Attribute
           and (value.func.attr.value == "cpu" or value.func.attr.value in SAME_DEVICE_METHODS)):
        value = value.func.value
    return value


def _through_cpu(call: cst.Call) -> bool:
    value = call.func.value
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        if value.func.attr.value == "cpu":
            return True
        if value.func.attr.value not in SAME_DEVICE_METHODS:
            return False
        value = value.func.value
    return False
