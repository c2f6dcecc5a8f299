"""CDL610: a compiled PyG extension operator, which has CPU and CUDA kernels only, called on what may
be an MPS tensor.

    from torch_scatter import scatter, scatter_max
    from torch_cluster import radius_graph

    edge_index = radius_graph(pos, r=cutoff, batch=batch)   # torch_cluster::radius
    pooled = scatter_max(x, batch, dim=0)[0]                 # torch_scatter::scatter_max
    edge_index = torch_geometric.nn.knn_graph(x, k=8)        # torch_geometric calls torch_cluster::knn
    out = scatter(x, index, 0, None, size, reduce="max")     # so does reduce="min" or "mul"
    out = scatter(x, index, 0, None, size, reduce="mean")    # torch code: runs on MPS

These libraries pick a kernel by the input's device themselves: CUDA, else the CPU kernel, which checks
that its tensors are CPU tensors, so an MPS tensor raises in every torch release (the catalog entry's
provenance cites the sources). Which APIs reach such an operator, and the argument that decides it for
`scatter`, are the catalog's (`apis`). As for torch's own operators (op_coverage.py), a call is not
reported under a CUDA guard, on an input the code makes on the host, or after the code moves its input
off MPS.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.children import find_argument
from cudalint.python.context import FileContext
from cudalint.python.mps_fallback import moved_off_mps
from cudalint.python.names import string_value
from cudalint.python.placement import on_host
from cudalint.python.visitor import Registry

CODE = "CDL610"
ROOTS = frozenset({"torch_scatter", "torch_cluster", "torch_geometric"})  # the packages of the catalog's `apis`
LIBRARIES = tuple(f"{root}." for root in sorted(ROOTS))
LITERALS = (cst.Integer, cst.Float, cst.SimpleString)  # a number or a string: no tensor


def _entry(qualified: str, ctx: FileContext) -> Optional[dict]:
    """The catalog entry of a qualified name: `torch_scatter.scatter_max`, also by any module path under
    its package (`torch_scatter.scatter.scatter_max`, `torch_geometric.nn.pool.radius_graph`)."""
    root, last = qualified.partition(".")[0], qualified.rpartition(".")[2]
    return next((entry for entry in ctx.rules[CODE].match["apis"]
                 if entry["api"].partition(".")[0] == root and entry["api"].rpartition(".")[2] == last), None)


def _reached(call: cst.Call, entry: dict) -> Optional[str]:
    """The compiled operator the call reaches: the entry's, or where a deciding argument picks it, the one
    the value the call visibly passes picks (`reduce="max"`, by keyword or position: `scatter_max`); None
    where it reaches none (another value, or one the code does not show)."""
    argument = entry.get("argument")
    if argument is None:
        return entry["op"]
    position, keyword, values = argument
    given = find_argument(call, keyword, position)
    value = string_value(given.value) if given is not None else None
    return entry["op"].format(value=value) if value in values else None


def _on_host(call: cst.Call, ctx: FileContext) -> bool:
    """One of the tensors the operator reads is made on the host where the code shows it (`grid_cluster(
    coords, torch.tensor([1, 1, 1]))`), or its input is moved off MPS first: all of them are on the CPU then
    (operands on two devices raise on CUDA too), and the CPU kernel is right."""
    model = ctx.model
    for position, arg in enumerate(call.args):
        if arg.star or type(arg.value) in LITERALS:
            continue
        if on_host(model, arg.value, model.scope) or (position == 0 and moved_off_mps(model, ctx.stack, arg.value)):
            return True
    return False


def _on_call(call: cst.Call, ctx: FileContext) -> None:
    if ctx.guard_depth:
        return  # runs only on CUDA hosts
    func = call.func
    last = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
    if last not in ctx.rules[CODE].match["words"]:
        return  # the common case, decided without resolving the callee: no API of the table ends so
    qualified = ctx.model.resolve(func)
    if qualified is None or not qualified.startswith(LIBRARIES):
        return
    entry = _entry(qualified, ctx)  # (only calls under ROOTS get here: the short table is read as it is)
    op = _reached(call, entry) if entry is not None else None
    if op is None or ctx.guarded():
        return
    if _on_host(call, ctx):
        return
    library = entry.get("library") or entry["api"].partition(".")[0]
    match = ctx.rules[CODE].match
    ctx.report(CODE, call, match["message"].format(api=entry["api"], library=library, op=op,
                                                    use=match["uses"][library]))


def register(registry: Registry) -> None:
    registry.on(cst.Call, _on_call)
