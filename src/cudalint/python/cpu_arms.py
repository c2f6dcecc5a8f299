"""Code in the CPU arm of a CUDA-or-CPU selection statement: on a Mac it runs with the CPU chosen.

    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"

        def to_device(tensor):
            return tensor.double()  # float64 where the code runs on the CPU, as its author meant

The arm that binds a name to the CPU, where the other arm of the same `if` binds that name to a CUDA device
under a test that holds only where CUDA is (the guard evaluator's answer), is the code's CPU path: a Mac takes
it, and what it makes there is made for the CPU the arm chooses. Rules with `silenced_in_cpu_arm` (the
float64 rules) report nothing there. CDL104 reports the selection itself. Not where the test or either arm
names an MPS (or other accelerator) path: then the arm may be more than the CPU's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, Set

import libcst as cst

from cudalint.python.names import dotted, is_cuda_device_string, mentions_mac_path
from cudalint.python.placement import names_cuda, names_host

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

DEVICE_ATTRIBUTES = frozenset({"type", "is_cuda", "device"})  # what a test of a device or tensor reads
MAX_NODES = 200  # the parts of a test (and of what its names are bound to) read for them
MAX_BINDINGS = 4  # the bindings of one name read


def in_cpu_arm(model: "SemanticModel", stack: Sequence[cst.CSTNode]) -> bool:
    """The top of `stack` is inside (perhaps in a function defined inside) the CPU arm of a CUDA-or-CPU
    selection statement (see the module's doc)."""
    for depth in range(len(stack) - 2, 0, -1):
        holder, inner = stack[depth], stack[depth + 1]
        if isinstance(holder, cst.If) and inner is holder.body:
            other = holder.orelse.body if isinstance(holder.orelse, cst.Else) else None
            if other is not None and _cpu_arm(model, holder, holder.body, other, cuda_when=False):
                return True
        elif isinstance(holder, cst.Else) and isinstance(stack[depth - 1], cst.If) and stack[depth - 1].orelse is holder:
            branch = stack[depth - 1]
            if _cpu_arm(model, branch, holder.body, branch.body, cuda_when=True):
                return True
    return False


def _cpu_arm(model: "SemanticModel", node: cst.If, arm: cst.BaseSuite, other: cst.BaseSuite, cuda_when: bool) -> bool:
    """`arm` binds a name to the CPU that `other` binds to a CUDA device, and `other` runs only where the
    test is `cuda_when`, which it is only where CUDA is."""
    cpu = _bound(arm, names_host, model)
    if not cpu:
        return False
    cuda = _bound(other, names_cuda, model)
    if cpu.isdisjoint(cuda):
        return False
    if mentions_mac_path(node.test) or mentions_mac_path(arm) or mentions_mac_path(other):
        return False
    if _tests_a_device(node.test, model):
        return False  # `if device.type == "cuda":` is false on MPS too: the arm may run with MPS chosen elsewhere
    guard = model.guard(node.test)
    return guard.when_true if cuda_when else guard.when_false


def _tests_a_device(test: cst.BaseExpression, model: "SemanticModel") -> bool:
    """The test reads a device or tensor rather than the host: it compares with a CUDA device string, or reads
    `.type`, `.is_cuda` or `.device` (as written, or in what a name it reads is bound to)."""
    pending: list = [test]
    seen = 0
    while pending and seen < MAX_NODES:
        node = pending.pop()
        seen += 1
        if isinstance(node, cst.Attribute) and node.attr.value in DEVICE_ATTRIBUTES:
            return True
        if isinstance(node, cst.Comparison) and any(
                is_cuda_device_string(side) for side in (node.left, *(target.comparator for target in node.comparisons))):
            return True
        if isinstance(node, cst.Name):
            pending.extend(value for value, _ in model.assigned(node)[:MAX_BINDINGS])
        pending.extend(child for child in node.children if isinstance(child, cst.BaseExpression))
    return False


def _bound(block: cst.BaseSuite, chooses, model: "SemanticModel") -> Set[str]:
    """The names (`device`, `self.device`) a statement of the block binds to a value `chooses(model, value)`
    accepts (placement.names_host, placement.names_cuda)."""
    found: Set[str] = set()
    for line in block.body:
        for small in getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and chooses(model, small.value):
                name = dotted(small.targets[0].target)
                if name is not None:
                    found.add(name)
    return found
