"""Whether a function calls compiled kernels: what an `is_cuda` precondition before them is about.

`assert src.is_cuda and dst.is_cuda` before `C.ncclAllReduce(src.data_ptr(), ...)` (bmtrain), `assert
indices.is_cuda, "implicit gemm only support cuda"` before spconv's compiled ops: the function hands the
tensor to kernels built for CUDA, and the assert states what they need. A port gives those kernels a
fallback (the extension's build is where that is reported, CDL401/CDL404); the assert is not the
problem. (An `if not x.is_cuda: raise NotImplementedError` there is: it tells users the device is not
implemented, a gap the port fills, and CDL103 reports it.) A call is into compiled code when its callee is a name under the project's own package that
none of its Python modules holds (ProjectIndex.compiled: an extension module of the project), under a
library that never imports on a Mac (CDL404's list, through the semantic model), or under another
package's compiled CUDA module (`*_cuda`, rules/guards.toml).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List

import libcst as cst

from cudalint.python.children import code_children

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def calls_compiled(model: "SemanticModel", function: cst.FunctionDef, memo: Dict[int, bool]) -> bool:
    """Some call of the function's own body (not of the functions it defines) is into compiled code."""
    key = id(function)
    if key not in memo:
        memo[key] = _calls_compiled(model, function)
    return memo[key]


def _calls_compiled(model: "SemanticModel", function: cst.FunctionDef) -> bool:
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            qualified = model.resolve(node.func)
            if qualified is not None and _compiled(model, qualified):
                return True
        stack.extend(child for child in code_children(node) if not isinstance(child, NESTED))
    return False


def _compiled(model: "SemanticModel", qualified: str) -> bool:
    project = model.project
    if project is not None and project.is_own(qualified):
        return project.compiled(qualified)
    module = qualified.rpartition(".")[0]
    return model.cuda_imports.cuda_only(module) or model.guards.facts.cuda_extension(module)
