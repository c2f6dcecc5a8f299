"""A name that is None on every Mac: its test (`x is not None`, `if x:`) is a CUDA guard.

    stream = torch.cuda.Stream() if torch.cuda.is_available() else None
    if stream is not None:            # or `if stream:`
        with torch.cuda.stream(stream): ...

The value model answers every value a name (in its scope) or `self.attr` (in its class)
can hold. When each of them is None, taken only where the guard evaluator proves the host
is not a Mac (a binding under a CUDA guard, the CUDA arm of a conditional expression), or
the result of a call that raises off CUDA (the catalog's `cuda_only_results`: the line
that makes it is where a Mac fails, and where that is reported), then on a Mac the name is
None whenever the test is reached. A name with no value other than None says nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from cudalint.python.names import is_none
from cudalint.python.semantic.values import MAX_VALUES

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope


def none_on_mac(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int) -> bool:
    """Every value `node` can hold on a Mac is None, and it holds another one somewhere."""
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    cuda_only = model.guards.facts.cuda_only_results
    if isinstance(node, cst.Name):
        bindings = model.lookup(node.value, scope)
        if bindings and all(binding.kind == "param" and _cuda_object_or_none(model, binding.annotation, binding.context, cuda_only)
                            for binding in bindings):
            return True  # `comm: torch.cuda.Stream | None`: no Mac makes such an object, so it is None there
    values = model.values(node, scope, depth + 1)
    if not values or len(values) >= MAX_VALUES:  # a capped answer may have left a value out
        return False
    other = False
    for value in values:
        if value.kind == "none":
            continue
        if not (value.off_mac or value.kind == "result" and model.canonical(value.data) in cuda_only):
            return False
        other = True
    return other


def _cuda_object_or_none(model: "SemanticModel", annotation, scope: "Scope", cuda_only) -> bool:
    """`torch.cuda.Stream | None`, `Optional[torch.cuda.Event]`: an annotation naming one object only CUDA
    makes (the catalog's `cuda_only_results`), or None."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        others = [side for side in (annotation.left, annotation.right) if not is_none(side)]
    elif isinstance(annotation, cst.Subscript) and model.resolve(annotation.value, scope) == "typing.Optional" \
            and len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
        others = [annotation.slice[0].slice.value]
    else:
        return False
    return len(others) == 1 and model.canonical(model.resolve(others[0], scope) or "") in cuda_only
