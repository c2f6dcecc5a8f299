"""A process-group backend chosen by whether the device is the CPU: `"gloo" if device == "cpu" else "nccl"`.

A Mac runs torch.distributed collectives on CPU tensors only: gloo takes CPU (and CUDA) tensors, and no
backend takes MPS tensors (torch/distributed docs, "Backends"). A choice that gives the CPU gloo and
anything else nccl therefore already serves every Mac setup that can run collectives at all; the nccl arm
is taken only for a device no backend of a Mac could serve. `cpu_gets(node, "gloo", model)` answers for
the expression handed as the backend: such a conditional expression, or a name bound once to one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel


def cpu_gets(node: cst.BaseExpression, backend: str, model: "SemanticModel") -> bool:
    """`node` is `A if <device> == "cpu" else B` (or `!=`, either side) with the CPU's arm `backend`."""
    choice = _choice(node, model)
    if choice is None or not isinstance(choice.test, cst.Comparison) or len(choice.test.comparisons) != 1:
        return False
    comparison = choice.test.comparisons[0]
    if string_value(comparison.comparator) == "cpu":
        other = choice.test.left
    elif string_value(choice.test.left) == "cpu":
        other = comparison.comparator
    else:
        return False
    if string_value(other) is not None:
        return False  # "cpu" == "cpu": no device is tested
    if isinstance(comparison.operator, cst.Equal):
        cpu_arm = choice.body
    elif isinstance(comparison.operator, cst.NotEqual):
        cpu_arm = choice.orelse
    else:
        return False
    return string_value(cpu_arm) == backend


def _choice(node: cst.BaseExpression, model: "SemanticModel") -> Optional[cst.IfExp]:
    if isinstance(node, cst.IfExp):
        return node
    binding = model.assigned_once(node)
    return binding.value if binding is not None and isinstance(binding.value, cst.IfExp) else None
