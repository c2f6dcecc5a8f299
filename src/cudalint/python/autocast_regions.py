"""What an autocast turned off for CUDA leaves cast on a Mac.

`with torch.autocast("cuda", enabled=False):` (or `torch.cuda.amp.autocast(enabled=False)`, or either as a
decorator) keeps CUDA autocast out of a region so that its math runs in float32. On a Mac it turns off
nothing: where the code enables MPS autocast, that stays on in the region. It changes a result only
through the operators MPS autocast runs in another precision (rules/autocast_ops.toml, from torch's own
table): float16 for matmul, convolution and linear; float32 for norms, softmax, sums and most losses,
which on the half-precision inputs such a region may mean to keep (timm's fast_norm) it would widen. A
region whose every call is known to reach none of them (elementwise math, reshapes, pooling,
concatenation; einops' layout functions; modules `__init__` builds there from torch.nn classes that run
none) computes the same on a Mac with MPS autocast on or off, and the CUDA-only autocast there is no
porting problem. A function of the file the region calls is read the same way (`rotate_half(t)`: slices
and a stack), to two calls deep. A call the file cannot tell (a function of another module, a method of
an object of unknown kind, a module container) may run one: the region counts as casting, and the
autocast is reported as before.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, FrozenSet, Mapping, Optional, Tuple

import libcst as cst

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.context import FileContext
    from cudalint.python.semantic.scopes import Scope


@functools.lru_cache(maxsize=1)
def _tables() -> Mapping[str, FrozenSet[str]]:
    from cudalint.catalog import rules_sets

    return rules_sets("autocast_ops.toml")


@functools.lru_cache(maxsize=1)
def _api_ops() -> Mapping[str, dict]:
    from cudalint.coverage.api_ops import load_api_ops

    return load_api_ops()["apis"]


def turned_off_without_effect(enabled: Optional[cst.Arg], depth: int, ctx: "FileContext") -> bool:
    """The autocast call at `ctx.stack[depth]`, given `enabled` (its `enabled` argument, if any), is turned
    off (`enabled=False`) around a region that runs no operator MPS autocast casts."""
    if enabled is None or not (isinstance(enabled.value, cst.Name) and enabled.value.value == "False"):
        return False
    region = _region(ctx, depth)
    return region is not None and not _casts(*region, ctx)


def _region(ctx: "FileContext", depth: int) -> Optional[Tuple[cst.CSTNode, "Scope"]]:
    """The statements the autocast at stack[depth] covers, and their scope: a `with`'s body, or a
    decorated function's."""
    if depth < 2:
        return None
    holder, owner = ctx.stack[depth - 1], ctx.stack[depth - 2]
    if isinstance(holder, cst.WithItem) and isinstance(owner, cst.With):
        return owner.body, ctx.model.scope
    if isinstance(holder, cst.Decorator) and isinstance(owner, cst.FunctionDef) and id(owner) in ctx.model.scopes:
        return owner.body, ctx.model.scopes[id(owner)]
    return None


class _Calls(cst.CSTVisitor):
    """Every call and `@` the region runs itself (a function or class defined in it runs elsewhere)."""

    def __init__(self) -> None:
        self.calls: list = []
        self.multiplies = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.multiplies = self.multiplies or isinstance(node.operator, cst.MatrixMultiply)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.multiplies = self.multiplies or isinstance(node.operator, cst.MatrixMultiplyAssign)


MAX_HELPER_DEPTH = 2  # functions of the file followed from a region: the helper, and what it calls


def _casts(region: cst.CSTNode, scope: "Scope", ctx: "FileContext", depth: int = 0) -> bool:
    found = _Calls()
    region.visit(found)
    return found.multiplies or any(_may_cast(call, scope, ctx, depth) for call in found.calls)


def _may_cast(call: cst.Call, scope: "Scope", ctx: "FileContext", depth: int = 0) -> bool:
    func, model = call.func, ctx.model
    qualified = model.resolve(func, scope)
    if qualified is not None:
        return _api_casts(qualified)
    if isinstance(func, cst.Name):
        bindings = model.lookup(func.value, scope)
        if not bindings:
            return func.value not in _tables()["plain_calls"]
        return _helper_casts(bindings, ctx, depth)
    if not isinstance(func, cst.Attribute):
        return True
    owner = func.value
    if isinstance(owner, cst.Name):
        klass = model.self_class(owner.value, scope)
        if klass is not None:  # `self.pool(x)`: the module the class keeps there
            return _attribute_casts(klass, func.attr.value, ctx)
    if func.attr.value in _tables()["plain_methods"]:
        return False
    return _ops_cast(_api_ops().get(f"torch.Tensor.{func.attr.value}"))


def _helper_casts(bindings, ctx: "FileContext", depth: int) -> bool:
    """`rotate_half(t)`, a function of the file, bound once: what its own body runs (a helper of
    slices, elementwise math and reshapes casts nothing); anything else, or past MAX_HELPER_DEPTH, may."""
    if len(bindings) != 1 or bindings[0].kind != "def" or depth >= MAX_HELPER_DEPTH:
        return True
    definition = bindings[0].node
    inner = ctx.model.scopes.get(id(definition))
    if not isinstance(definition, cst.FunctionDef) or inner is None or definition.decorators:
        return True
    return _casts(definition.body, inner, ctx, depth + 1)


def _attribute_casts(klass, name: str, ctx: "FileContext") -> bool:
    """`self.<name>(...)`: what the modules the class binds there (`self.pool = nn.MaxPool2d(2)`) run."""
    bindings = ctx.model.class_attributes.bindings(klass, name)
    if not bindings:
        return True  # bound nowhere the file shows (a base class, a setattr): not known
    for binding in bindings:
        value = binding.value
        if not isinstance(value, cst.Call):
            return True
        qualified = ctx.model.resolve(value.func, binding.context)
        if qualified is None or _module_casts(qualified) is not False:
            return True
    return False


def _module_casts(qualified: str) -> Optional[bool]:
    """For a torch.nn module class, whether running it may reach a cast operator (a container runs what
    it holds); None for anything else."""
    if not (qualified.startswith("torch.nn.") and qualified.rpartition(".")[2][:1].isupper()):
        return None
    tables = _tables()
    return qualified in tables["casting_modules"] or qualified in tables["container_modules"]


def _api_casts(qualified: str) -> bool:
    tables = _tables()
    if qualified in tables["plain_calls"] or qualified.partition(".")[0] in tables["plain_modules"]:
        return False
    record = _api_ops().get(qualified)
    if record is not None:
        return _ops_cast(record)
    module = _module_casts(qualified)
    return module if module is not None else True  # building a module is judged as running it: no harm


def _ops_cast(record: Optional[dict]) -> bool:
    """An API's traced operators include one MPS autocast casts; an API not in the table may."""
    if record is None:
        return True
    tables = _tables()
    return any(name in tables["lower_precision"] or name in tables["float32"]
               for name in (op.partition("::")[2].partition(".")[0] for op in record.get("ops", ())))
