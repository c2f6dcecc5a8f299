"""CDL222: a Numba CUDA kernel launched.

    @cuda.jit
    def add_one(a):
        ...

    add_one[blocks, threads](values)

`@numba.cuda.jit` without a signature compiles the kernel at its first launch, and that launch needs
NVIDIA's driver: on a Mac it raises CudaSupportError (rules/cdl2-runtime.toml, CDL222's provenance),
even when the arguments are NumPy arrays Numba would copy over. A kernel of this file (its `def` bound
under the decorator, or a name bound to `numba.cuda.jit(f)`) launched as `kernel[grid, block](...)` is
reported at the launch. A kernel given a signature compiles where it is defined and is reported there
(the catalog's argument entry); its launches add nothing. The walk's guards apply as for every finding.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import source_of
from cudalint.python.visitor import Registry

JIT = "numba.cuda.jit"


def numba_launches(registry: Registry) -> None:
    registry.on(cst.Call, _launch)


def _launch(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    if type(func) is not cst.Subscript or type(func.value) is not cst.Name:
        return
    kernel = func.value.value
    if any(_lazy_kernel(binding, ctx) for binding in ctx.model.lookup(kernel)):
        ctx.report("CDL222", node, f"{source_of(func)}(...) launches the Numba CUDA kernel {kernel}, which compiles and runs only "
                                   "with NVIDIA's CUDA driver: Numba raises CudaSupportError on a Mac; test numba.cuda.is_available() "
                                   "first and keep a NumPy (or torch) path")


def _lazy_kernel(binding, ctx: FileContext) -> bool:
    """The binding is a kernel `numba.cuda.jit` compiles at its first launch: a `def` under `@cuda.jit`
    (or `@cuda.jit(...)` with keywords only), or `k = cuda.jit(f)`."""
    node = binding.node
    if binding.kind == "def" and isinstance(node, cst.FunctionDef):
        return any(_jit_without_signature(decorator.decorator, ctx) is not None for decorator in node.decorators)
    value = binding.value
    return (binding.kind == "assign" and type(value) is cst.Call and ctx.model.resolve(value.func) == JIT
            and len(value.args) == 1 and value.args[0].keyword is None)


def _jit_without_signature(decorator: cst.BaseExpression, ctx: FileContext) -> Optional[cst.BaseExpression]:
    if type(decorator) is cst.Call:
        if any(arg.keyword is None for arg in decorator.args) or any(
                arg.keyword is not None and arg.keyword.value == "device" and _true(arg.value) for arg in decorator.args):
            return None  # a signature (compiled where it is defined: reported there), or a device function
        decorator = decorator.func
    return decorator if ctx.model.resolve(decorator) == JIT else None


def _true(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "True"
