"""CDL604-CDL608: torch calls whose ATen operators do not run on MPS in the target
release, and float64 tensors that reach the device.

Which operators a call reaches comes from the coverage data (rules/api_ops.json,
rules/module_ops.toml), what each does on MPS from rules/mps_coverage.json. Both are
read once per process, and the verdicts of an API are computed once per target release
(cached), so a call to anything else costs a name lookup.

Precision first: an API whose operators depend on its arguments (interpolate's `mode`,
grid_sample's input rank) is reported only when every case the call can be in has a
gap. `F.interpolate(x, scale_factor=2)` may be 2-D or 3-D, so nothing is said until the
mode or the input's visible rank pins the case down.

Tensors are recognised without type inference: a name bound, in the same function, to
the result of a torch factory or torch function (or of a tensor method on such a value),
or a parameter annotated `torch.Tensor`. The same small record carries what is visible of
the tensor's dtype and rank, and of NumPy arrays on their way into torch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from cudalint.coverage import CoverageDB
from cudalint.coverage.api_ops import UNKNOWN, api_arguments, load_api_ops
from cudalint.op_cases import TENSOR, Case, call_spec, case_gaps, possible_cases, visible_sizes
from cudalint.coverage.module_table import load_module_table
from cudalint.coverage.names import op_key, qualified
from cudalint.coverage.status import RUNS_ON_MPS
from cudalint.coverage.target import RANGE_NOTE
from cudalint.coverage.versions import version_tuple
from cudalint.coverage.xfail import UNIMPLEMENTED_LIST
from cudalint.python.children import path_to
from cudalint.python.context import FileContext
from cudalint.python.names import source_of, string_value
from cudalint.python.mps_fallback import moved_off_mps
from cudalint.python.placement import STATE_METHODS, asks_device, cpu_on_a_mac, default_arm, made_on_host, names_dtype, names_host, on_host
from cudalint.python.visitor import Registry

CHECK = "op-coverage"
RETURNS = "op-coverage returns"  # check_state keys: the returns of the functions the walk has left, and of
PENDING_RETURNS = "op-coverage pending returns"  # those it is in
RAISES, ON_CPU = "raises", "cpu"
KIND_OF_CODE = {"E": RAISES, "X": RAISES, "F": ON_CPU, "B": ON_CPU}  # other codes: runs, or undecided
PUBLIC_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.Tensor.",
                     "torch.optim.", "torchvision.ops.")
WIDE_DTYPES = frozenset({"float64", "complex128"})

ROOTS = frozenset({"torch", "torchvision"})  # the modules of every API checked here (and of every tensor's maker)


# Operators an API ("*": any) reaches only when an argument is visibly given (keyword, position,
# the values that bring the operator in; None: any value but None). The OpInfo samples that
# reached them happened to pass it.
NEEDS_ARGUMENT: Dict[Tuple[str, str], Tuple[str, Optional[int], Optional[FrozenSet[object]]]] = {
    ("*", "aten::round.decimals"): ("decimals", None, None),
    ("*", "aten::embedding_renorm_"): ("max_norm", 3, None),
    ("torch.linalg.matrix_norm", "aten::_linalg_svd"): ("ord", 1, frozenset({"nuc", 2, -2})),
}
# Adaptive pooling to size 1 is a mean, which runs everywhere: (keyword, position for functions).
GLOBAL_POOL_OPS = {"aten::_adaptive_avg_pool3d": ("output_size", 1)}

TORCH_DTYPES = {
    "float64": "float64", "double": "float64", "complex128": "complex128", "cdouble": "complex128",
    "float32": "float32", "float": "float32", "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    "complex64": "complex64", "cfloat": "complex64", "int64": "int64", "long": "int64", "int32": "int32",
    "int": "int32", "int16": "int16", "short": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}
NUMPY_DTYPES = {"float64": "float64", "double": "float64", "float_": "float64", "complex128": "complex128",
                "cdouble": "complex128", "float32": "float32", "single": "float32", "float16": "float16"}
CONVERSIONS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
               "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
               "cfloat": "complex64", "cdouble": "complex128"}
SAME_TENSOR_METHODS = frozenset({"cuda", "cpu", "contiguous", "clone", "detach", "requires_grad_", "pin_memory"})
SIZED_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})
TORCH_FACTORIES = SIZED_FACTORIES | {"randint", "full", "tensor", "as_tensor", "asarray", "from_numpy", "arange",
                                     "linspace", "eye", "stack", "cat"}
FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.from_numpy"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})  # a module moves its parameters
# NumPy calls that make float64 without a dtype, and how many positional arguments they take before dtype.
NUMPY_FLOAT_CALLS = {"zeros": 1, "ones": 1, "empty": 1, "eye": 1, "identity": 1, "linspace": 3,
                     "random.rand": None, "random.randn": None, "random.random": None, "random.uniform": None,
                     "random.normal": None, "random.standard_normal": None, "random.random_sample": None}
# NumPy's float64 scalar types, called to make a value (`np.double(c)`); and the Python floats NumPy and math
# name (`np.pi` is a Python float: `2 * np.pi` is one, and a tensor made of it is float32).
NUMPY_FLOAT64_SCALARS = frozenset({"float64", "double", "float_"})
PYTHON_FLOAT_CONSTANTS = frozenset({"numpy.pi", "numpy.e", "numpy.inf", "math.pi", "math.e", "math.tau", "math.inf"})
ARRAY_KEEPS_DTYPE = frozenset({"reshape", "copy", "ravel", "flatten", "squeeze", "transpose"})
# NumPy functions whose result keeps the float64 (complex128) of their first argument: elementwise math and
# reshaping (NumPy's type promotion: a float64 input gives a float64 output; `np.meshgrid`: _grids).
NUMPY_KEEPS_DTYPE = frozenset({"exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "abs", "absolute", "square", "negative",
                               "reshape", "ravel", "squeeze", "transpose", "flip", "fft.fftshift", "fft.ifftshift"})


# -- what the database says, once per API and release --------------------------------
@functools.lru_cache(maxsize=16)
def release_for(version: Tuple[int, ...]) -> Optional[str]:
    return CoverageDB.load().nearest_release(".".join(str(part) for part in version[:2]))


@functools.lru_cache(maxsize=None)
def _module_names() -> FrozenSet[str]:
    return frozenset(case.name for case in load_module_table())


@functools.lru_cache(maxsize=16)
def older_allowed(version: Tuple[int, ...]) -> Tuple[str, ...]:
    """The covered releases before the target that the project also allows (its floor on), oldest first."""
    floor = getattr(version, "floor", None)
    target = release_for(version)
    if floor is None or target is None:
        return ()
    releases = CoverageDB.load().versions()
    return tuple(r for r in releases[: releases.index(target)] if version_tuple(r)[:2] >= floor[:2])


@functools.lru_cache(maxsize=16)
def trigger_words(version: Tuple[int, ...]) -> FrozenSet[str]:
    """Last names of the public APIs with an MPS gap at the target release, or at an older allowed one
    (`interpolate`, `Conv3d`): a file that mentions none of them cannot get CDL604-606 or CDL609 and
    need not be parsed for them."""
    release = release_for(version)
    if release is None:
        return frozenset()
    apis = [*load_api_ops()["apis"], *_module_names()]
    return frozenset(
        api.rsplit(".", 1)[-1] for api in apis if is_public(api) and _has_gap(api, release, older_allowed(version))
    )


@functools.lru_cache(maxsize=16)
def method_words(version: Tuple[int, ...]) -> FrozenSet[str]:
    """The trigger words that are tensor methods with a gap (`x.log_softmax()`): they count on any value;
    every other trigger word only as part of a name that resolves to the API (`F.interpolate`)."""
    release = release_for(version)
    if release is None:
        return frozenset()
    return frozenset(
        api.rsplit(".", 1)[-1] for api in load_api_ops()["apis"]
        if api.startswith("torch.Tensor.") and is_public(api) and _has_gap(api, release, older_allowed(version))
    )


@functools.lru_cache(maxsize=16)
def argued_words(version: Tuple[int, ...]) -> Mapping[str, Mapping[str, object]]:
    """The trigger words whose calls the file gates can judge by their arguments (op_cases.py):
    word -> {"calls": a call_spec per API of that last name, "dtypes": the words that can make a tensor
    of a dtype CDL606 reports for one of them}. A word of an API that every call reaches a gap with
    (`torch.linalg.svd`, whatever its arguments) is left out: any mention counts."""
    release = release_for(version)
    if release is None:
        return {}
    older = older_allowed(version)
    releases = (release, *older)
    by_word: Dict[str, List[str]] = {}
    for api in (*load_api_ops()["apis"], *_module_names()):
        if is_public(api) and _has_gap(api, release, older):
            by_word.setdefault(api.rsplit(".", 1)[-1], []).append(api)
    argued = {}
    for word, apis in by_word.items():
        if all(_always_reached(api, releases) for api in apis):
            continue
        dtypes = {dtype for api in apis for variant in opinfo_variants(api) for dtype in dtype_gaps(api, release, variant)}
        argued[word] = {
            "calls": [call_spec(api_arguments(api), [api_cases(api, r) for r in releases], _needs(api, releases),
                                _pools(api, releases)) for api in sorted(apis)],
            "dtypes": sorted(_dtype_words(dtypes)),
        }
    return argued


def _always_reached(api: str, releases: Sequence[str]) -> bool:
    """Every call of the API reaches a gap at the target release: one case, for any arguments, and no
    operator that only an argument brings in."""
    cases = api_cases(api, releases[0])
    return (len(cases) == 1 and not cases[0].when and bool(cases[0].gaps)
            and not any(_needed_argument(api, op) or op in GLOBAL_POOL_OPS for op, _ in cases[0].gaps))


def _gap_ops(api: str, releases: Sequence[str]) -> List[str]:
    return sorted({op for r in releases for case in api_cases(api, r) for op, _ in case.gaps})


def _needs(api: str, releases: Sequence[str]) -> Dict[str, Tuple[str, Optional[int], Optional[FrozenSet[object]]]]:
    """The API's gap operators that only an argument brings in (see _reached)."""
    return {op: needed for op in _gap_ops(api, releases) if (needed := _needed_argument(api, op)) is not None}


def _pools(api: str, releases: Sequence[str]) -> Dict[str, Tuple[str, Optional[int]]]:
    """The API's adaptive-pool gap operators, reached only with a visible size other than 1 (see _reached)."""
    return {op: (GLOBAL_POOL_OPS[op][0], 0 if api in _module_names() else GLOBAL_POOL_OPS[op][1])
            for op in _gap_ops(api, releases) if op in GLOBAL_POOL_OPS}


def _dtype_words(dtypes: Set[str]) -> Set[str]:
    """The names by which a file can give a tensor one of these dtypes (fact_of: `torch.int64`, `.long()`,
    a NumPy dtype, `torch.randint`)."""
    words = {name for table in (TORCH_DTYPES, NUMPY_DTYPES, CONVERSIONS) for name, dtype in table.items() if dtype in dtypes}
    return words | ({"randint"} if "int64" in dtypes else set())


def _has_gap(api: str, release: str, older: Sequence[str]) -> bool:
    return bool(api_cases(api, release) or any(dtype_gaps(api, release, v) for v in opinfo_variants(api))
                or any(api_cases(api, r) for r in older))


def _known_api(api: str) -> bool:
    return api in load_api_ops()["apis"] or api in _module_names()


def is_public(api: str) -> bool:
    """torch.<fn>, torch.nn.functional/linalg/fft/special.<fn>, torch.Tensor.<method>, torch.nn.<Module>,
    torch.optim.<Optimizer>, torchvision.ops.<fn or Module>."""
    parts = api.split(".")
    if parts[0] not in ROOTS or any(part.startswith("_") for part in parts):
        return False
    return len(parts) == 2 or api.startswith(PUBLIC_NAMESPACES) or (len(parts) == 3 and parts[1] == "nn")


def _raw_cases(api: str) -> List[Tuple[Mapping[str, object], Tuple[str, ...], Tuple[str, ...], bool]]:
    """(when, entry ops, reached ops, the default case) per case of an API or nn.Module class."""
    if api in _module_names():
        return [(case.when, case.entry, case.ops, False) for case in load_module_table() if case.name == api]
    record = load_api_ops()["apis"][api]
    entries = (record["entry"],) if record.get("entry") else ()
    cases = record.get("cases") or [{"when": {}, "ops": record["ops"]}]
    return [(case["when"], entries, tuple(case["ops"]), bool(case.get("otherwise"))) for case in cases]


@functools.lru_cache(maxsize=None)
def api_cases(api: str, release: str) -> Tuple[Case, ...]:
    """The API's cases with their gaps at ``release``; empty when no case has one."""
    db = CoverageDB.load()
    cases = []
    for when, entries, ops, otherwise in _raw_cases(api):
        if any(db.code(op, release) in RUNS_ON_MPS for op in entries):
            cases.append(Case(when, (), otherwise))  # the API's own composite takes an MPS path
            continue
        gaps = {}
        for op in entries + ops:
            kind = KIND_OF_CODE.get(db.code(op, release))
            if kind is not None:
                gaps[qualified(op_key(op))] = kind
        cases.append(Case(when, tuple(sorted(gaps.items())), otherwise))
    return tuple(cases) if any(case.gaps for case in cases) else ()


def _opinfo_base(api: str) -> str:
    return api.split(".", 2)[-1] if api.startswith("torch.Tensor.") else api[len("torch."):]


def opinfo_variants(api: str) -> Tuple[str, ...]:
    """The API's OpInfo variant names: "" for the OpInfo named after it, "bicubic" for
    nn.functional.interpolatebicubic (a variant is named after the argument value it tests)."""
    record = load_api_ops()["apis"].get(api) or {}
    base = _opinfo_base(api)
    return tuple(key[len(base):] for key in record.get("opinfo", ()) if key.startswith(base))


@functools.lru_cache(maxsize=None)
def dtype_gaps(api: str, release: str, variant: str = "") -> Mapping[str, str]:
    """dtype -> reason, for dtypes PyTorch's MPS test list marks unimplemented for this API at ``release``.

    The OpInfo named after the API counts, or its ``variant`` (``interpolate`` + ``bicubic``) for a
    call that passes that argument value; float32 entries concern a particular sample, float64 is
    CDL601's, and reasons about float64 outputs are skipped.
    """
    if variant not in opinfo_variants(api):
        return {}
    gaps = {}
    for failure in CoverageDB.load().known_failures(_opinfo_base(api) + variant, release):
        if failure.grad or failure.condition or failure.list_name != UNIMPLEMENTED_LIST or failure.dtypes is None:
            continue
        if "float64" in failure.reason:
            continue
        for dtype in failure.dtypes:
            if dtype != "float32" and dtype not in WIDE_DTYPES:
                gaps[dtype] = failure.reason
    return gaps


def _short(release: str) -> str:
    return ".".join(release.split(".")[:2])


def _first_supported(ops: Sequence[str], release: str) -> Optional[str]:
    """First release after ``release`` where all ``ops`` run on MPS (None: none so far)."""
    db = CoverageDB.load()
    firsts = [db.first_supported(op, after=release) for op in ops]
    if any(first is None for first in firsts):
        return None
    return max(firsts, key=version_tuple)  # type: ignore[arg-type]


# -- what the source shows about tensors and arrays ----------------------------------
@dataclass(frozen=True)
class Fact:
    kind: str  # "tensor" or "ndarray"
    dtype: Optional[str] = None  # None: not visible
    ndim: Optional[int] = None
    from_numpy: bool = False  # float64 because NumPy's default float is
    origin: Tuple[cst.CSTNode, ...] = ()  # the nodes that made it float64 (dtype argument, `.double`)


Branches = Tuple[Tuple[int, bool], ...]  # the `if` statements around a node: (id of the if, in its body)


def _facts(ctx: FileContext) -> Dict[Tuple[int, str], List[Tuple[Branches, Optional[Fact]]]]:
    return ctx.check_state.setdefault(CHECK, {})  # type: ignore[return-value]


def _branches(stack: Sequence[cst.CSTNode]) -> Branches:
    return tuple((id(node), stack[i + 1] is node.body) for i, node in enumerate(stack[:-1]) if type(node) is cst.If)


def _exclusive(one: Branches, other: Branches) -> bool:
    """Two places in opposite arms of one `if`: what is bound in one is not there in the other."""
    arms = dict(one)
    return any(arms.get(key, arm) != arm for key, arm in other)


def _remember(ctx: FileContext, name: str, fact: Optional[Fact]) -> None:
    """Bind a name's fact where the walk is; a binding here hides the earlier ones it follows on every path
    (those made at this place or inside branches of it), not those of an `if`'s other arm."""
    facts = _facts(ctx)
    key = (ctx.scope_key, name)
    if fact is None and key not in facts:
        return  # nothing known, nothing to hide: most bindings
    entries = facts.setdefault(key, [])
    here = _branches(ctx.stack)
    entries[:] = [entry for entry in entries if entry[0][:len(here)] != here]
    entries.append((here, fact))


def _recalled(ctx: FileContext, name: str) -> Optional[Fact]:
    entries = _facts(ctx).get((ctx.scope_key, name))
    if not entries:
        return _module_constant(ctx, name)
    if len(entries) == 1 and not entries[0][0]:
        return entries[0][1]
    here = _branches(ctx.stack)
    return next((fact for where, fact in reversed(entries) if not _exclusive(where, here)), None)


def _module_constant(ctx: FileContext, name: str) -> Optional[Fact]:
    """A function's read of a module-level name bound once, by an assignment the walk has read
    (`C = torch.tensor([...], dtype=torch.float64)` above `def get(device): return C.to(device)`)."""
    model = ctx.model
    if model.scope is model.module_scope:
        return None
    bindings = model.lookup(name)
    if len(bindings) != 1 or bindings[0].scope is not model.module_scope or bindings[0].kind != "assign":
        return None
    entries = _facts(ctx).get((id(model.module_scope), name))
    return entries[0][1] if entries and len(entries) == 1 and not entries[0][0] else None


def _keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def _positional(call: cst.Call) -> List[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def _has_star(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def _argument(call: cst.Call, name: str, position: Optional[int]) -> Optional[cst.BaseExpression]:
    arg = _keyword(call, name)
    if arg is not None:
        return arg.value
    positional = _positional(call)
    return positional[position] if position is not None and 0 <= position < len(positional) else None


def _argument_value(call: cst.Call, keyword: str, position: Optional[int], ctx: FileContext,
                    default: object = UNKNOWN) -> object:
    """The value of one argument of ``call`` (by keyword, else at ``position``; None or -1: keyword only):
    a literal Python value (str, int, float, bool, None, or a tuple of those), TENSOR for a value known to
    be a tensor, ``default`` when the call leaves the argument out, UNKNOWN when the source does not show
    it. The one place this check reads argument values, so that a value model can answer for names here."""
    node = _argument(call, keyword, position)
    if node is None:
        return UNKNOWN if _has_star(call) else default
    value = _literal(node)
    if value is UNKNOWN:
        fact = fact_of(node, ctx)
        return TENSOR if fact is not None and fact.kind == "tensor" else UNKNOWN
    return value


def _torch_dtype(node: cst.BaseExpression, ctx: FileContext) -> Optional[str]:
    """The dtype a torch call is given: `torch.float64`, or a NumPy dtype (see CDL603), also through a name
    every value of which is that one torch dtype (a constant of another module, `self.dtype` set once);
    None if not one."""
    module, _, attr = (ctx.imports.resolve(node) or "").rpartition(".")
    if module == "torch":
        return TORCH_DTYPES.get(attr)
    if module == "numpy":
        return NUMPY_DTYPES.get(attr, "other")
    if type(node) not in (cst.Name, cst.Attribute):
        return None
    found = {TORCH_DTYPES.get(value.data[len("torch."):]) if value.kind == "ref" and isinstance(value.data, str)
             and value.data.startswith("torch.") else None for value in ctx.model.values(node)}
    if len(found) > 1 and None not in found and _chosen_by_a_flag(node, ctx):
        return next((dtype for dtype in found if dtype in WIDE_DTYPES), None)  # the flag's float64 arm runs on a Mac too
    return found.pop() if len(found) == 1 else None


def _chosen_by_a_flag(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """`sink_dtype = torch.float32 if mixed_precision else torch.float64`: a name bound once to a choice
    whose test does not ask which device it runs on (placement.asks_device): each arm is what the tensor
    gets wherever the flag takes it, a Mac included."""
    assigned = ctx.model.assigned(node) if type(node) is cst.Name else []
    if len(assigned) != 1 or type(assigned[0][0]) is not cst.IfExp or asks_device(assigned[0][0].test):
        return False
    taken = default_arm(assigned[0][0], ctx.model, assigned[0][1])
    # not a caller's opt-in (`f64=False`); the arm read as written, not through names (no cycle of bindings)
    return taken is None or (type(taken) is cst.Attribute and _torch_dtype(taken, ctx) in WIDE_DTYPES)


def _numpy_dtype(node: cst.BaseExpression, ctx: FileContext) -> Optional[str]:
    """The dtype a NumPy call is given: `np.float64`, `float`, `"float64"`; None when not visible."""
    module, _, attr = (ctx.imports.resolve(node) or "").rpartition(".")
    if module == "numpy":
        return NUMPY_DTYPES.get(attr, "other")
    if isinstance(node, cst.Name) and node.value in ("float", "complex"):
        return "float64" if node.value == "float" else "complex128"
    value = string_value(node)
    return NUMPY_DTYPES.get(value, "other") if value is not None else None


def _literal_rank(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        return len(node.elements)
    return 1 if isinstance(node, cst.Integer) else None


def _size_rank(call: cst.Call) -> Optional[int]:
    size = _keyword(call, "size")
    if size is not None:
        return _literal_rank(size.value)
    positional = _positional(call)
    if _has_star(call) or not positional:
        return None
    return len(positional) if len(positional) > 1 else _literal_rank(positional[0])


def _has_float(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Float):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _has_float(node.expression)
    if isinstance(node, (cst.List, cst.Tuple)):
        return any(_has_float(element.value) for element in node.elements)
    return False


def _python_number(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """A number as Python computes it: literals, `math.pi`, `np.pi` (a Python float), and arithmetic of those."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if depth > 8:
        return False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _python_number(node.expression, ctx, depth + 1)
    if isinstance(node, cst.BinaryOperation):
        return _python_number(node.left, ctx, depth + 1) and _python_number(node.right, ctx, depth + 1)
    if isinstance(node, cst.Attribute):
        return ctx.imports.resolve(node) in PYTHON_FLOAT_CONSTANTS
    if isinstance(node, cst.Name):  # a parameter annotated as one (`temperature: float = 0.1`)
        bindings = ctx.model.lookup(node.value)
        return (len(bindings) == 1 and bindings[0].kind == "param" and isinstance(bindings[0].annotation, cst.Name)
                and bindings[0].annotation.value in ("float", "int") and not ctx.model.lookup(bindings[0].annotation.value))
    return False


def _data_fact(data: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> Optional[Fact]:
    """What `torch.tensor([...])` reads from a list written out: a float64 NumPy value among its elements
    (`[np.log(2 * np.pi)]`, `[np.double(c)]`) makes the whole tensor float64 (torch infers the widest dtype
    of a list's NumPy scalars, as of its arrays), unless a tensor is among them; None otherwise."""
    if not isinstance(data, (cst.List, cst.Tuple)) or depth > 4:
        fact = fact_of(data, ctx)
        return fact if fact is not None and fact.kind == "ndarray" and fact.dtype in WIDE_DTYPES else None
    found = None
    for element in data.elements:
        if not isinstance(element, cst.Element):
            return None
        inner = fact_of(element.value, ctx) if not isinstance(element.value, (cst.List, cst.Tuple)) else None
        if inner is not None and inner.kind == "tensor":
            return None
        inner = _data_fact(element.value, ctx, depth + 1)
        found = found or inner
    return Fact("ndarray", found.dtype) if found is not None else None


def fact_of(node: cst.BaseExpression, ctx: FileContext) -> Optional[Fact]:
    """What is visible about the value of ``node``: a tensor or NumPy array, its dtype and rank."""
    if isinstance(node, cst.Name):
        return _recalled(ctx, node.value)
    if isinstance(node, cst.BinaryOperation) or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus))):
        return _wide_array_math(node, ctx)
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and not ctx.imports.is_module_ref(func.value):
        receiver = fact_of(func.value, ctx)
        if receiver is None and func.attr.value == "astype" and node.args:
            # `points.astype(float)` of anything: NumPy's (or pandas') astype makes an array of that dtype,
            # whatever it was; a tensor has no astype
            dtype = _numpy_dtype(node.args[0].value, ctx)
            return Fact("ndarray", dtype) if dtype in WIDE_DTYPES else None
        return _method_fact(receiver, func.attr, node, ctx) if receiver is not None else None
    name = ctx.imports.resolve(func)
    if name is None:
        return _returned_fact(node, ctx)
    if name.startswith("numpy."):
        return _numpy_fact(name[len("numpy."):], node, ctx)
    if name.startswith("torch."):
        return _torch_fact(name, node, ctx)
    return None


def _returned_fact(call: cst.Call, ctx: FileContext) -> Optional[Fact]:
    """What a function of the file returns, where the walk has read all of it and every return gives the
    same fact (`def cosine_beta_schedule(n): return torch.linspace(0, 1, n, dtype=torch.float64)`)."""
    defined = ctx.model.defined_function(call.func)
    if defined is None:
        return None
    facts = _returns(ctx).get(id(defined[0]))
    if not facts or any(fact is None for fact in facts):
        return None
    first = facts[0]
    if any((fact.kind, fact.dtype, fact.from_numpy) != (first.kind, first.dtype, first.from_numpy) for fact in facts):
        return None
    return first if all(fact.ndim == first.ndim for fact in facts) else replace(first, ndim=None)


def _returns(ctx: FileContext) -> Dict[int, List[Optional[Fact]]]:
    """id of each function the walk has left -> the facts of its returns, in order (None: not visible)."""
    return ctx.check_state.setdefault(RETURNS, {})  # type: ignore[return-value]


def _explicit_dtype(call: cst.Call, ctx: FileContext, position: Optional[int] = None) -> Optional[Fact]:
    """A tensor whose dtype the call spells out (`dtype=torch.float64`, also in a dict of keywords spread
    into it: `torch.arange(n, **params)` after `params = {"device": device, "dtype": torch.double}`), else None."""
    arg = _keyword(call, "dtype")
    value = arg.value if arg is not None else _argument(call, "dtype", position)
    if value is None:
        value = _spread_keyword(call, "dtype", ctx)
        arg = None
    if value is None:
        return None
    dtype = _torch_dtype(value, ctx)
    origin = (arg, value) if arg is not None else (value,)
    return Fact("tensor", dtype, origin=origin if dtype in WIDE_DTYPES else ())


def _torch_fact(name: str, call: cst.Call, ctx: FileContext) -> Optional[Fact]:
    short = name[len("torch."):]
    if short not in TORCH_FACTORIES and not (is_public(name) and name in load_api_ops()["apis"]):
        return None
    explicit = _explicit_dtype(call, ctx)
    if name in FROM_DATA:
        data = _positional(call)[:1]
        source = fact_of(data[0], ctx) if data else None
        if explicit is None and source is None and data and name != "torch.from_numpy":
            source = _data_fact(data[0], ctx) if isinstance(data[0], (cst.List, cst.Tuple)) else None
        if explicit is None and source is not None and source.kind == "ndarray":
            return replace(source, kind="tensor", from_numpy=True)
        rank = _nesting(data[0]) if data and name == "torch.tensor" else None
        return replace(explicit, ndim=rank) if explicit is not None else Fact("tensor", ndim=rank)
    rank = _factory_rank(short, call)
    if explicit is not None:
        return replace(explicit, ndim=rank)
    return Fact("tensor", "int64" if short == "randint" else None, rank)


def _factory_rank(short: str, call: cst.Call) -> Optional[int]:
    if short in SIZED_FACTORIES:
        return _size_rank(call)
    if short == "randint":
        size = _keyword(call, "size")
        positional = _positional(call)
        if size is not None or positional:
            return _literal_rank(size.value if size is not None else positional[-1])
        return None
    return {"arange": 1, "linspace": 1, "eye": 2}.get(short)


def _nesting(node: cst.BaseExpression) -> Optional[int]:
    """Rank of a nested list of number literals (0 for a number), else None."""
    depth = 0
    while isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        depth += 1
        node = node.elements[0].value
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return depth if isinstance(node, (cst.Integer, cst.Float)) else None


def _method_fact(receiver: Fact, attr: cst.Name, call: cst.Call, ctx: FileContext) -> Optional[Fact]:
    method = attr.value
    if receiver.kind == "ndarray":
        if method == "astype" and call.args:
            return Fact("ndarray", _numpy_dtype(call.args[0].value, ctx))
        return receiver if method in ARRAY_KEEPS_DTYPE else None
    if method in CONVERSIONS and not call.args:
        dtype = CONVERSIONS[method]
        return Fact("tensor", dtype, receiver.ndim, origin=(attr,) if dtype in WIDE_DTYPES else ())
    if method == "to":
        for position in (0, 1):
            converted = _explicit_dtype(call, ctx, position)
            if converted is not None and converted.dtype is not None:
                return replace(converted, ndim=receiver.ndim)
        first = _argument(call, "dtype", 0)
        if first is not None and _bound_to_dtypes(first, ctx) and _torch_dtype(first, ctx) is None:
            return Fact("tensor", ndim=receiver.ndim)  # `.to(self.torch_dtype)`: cast, to a dtype chosen at run time
        return receiver
    if method in SAME_TENSOR_METHODS:
        return receiver
    return Fact("tensor") if "torch.Tensor." + method in load_api_ops()["apis"] else None


def _wide_array_math(node: cst.BaseExpression, ctx: FileContext) -> Optional[Fact]:
    """Arithmetic with a float64 (complex128) NumPy array: `x * np.exp(-(x**2 + y**2))` stays float64 whatever
    the other operand is (NumPy's promotion), unless that is a tensor (torch then does the arithmetic)."""
    operands = [node.expression] if isinstance(node, cst.UnaryOperation) else [node.left, node.right]
    facts = [fact_of(operand, ctx) for operand in operands]
    if any(fact is not None and fact.kind == "tensor" for fact in facts):
        return None
    wide = next((fact for fact in facts if fact is not None and fact.kind == "ndarray" and fact.dtype in WIDE_DTYPES), None)
    if wide is None and isinstance(node, cst.BinaryOperation) and _scaled_range(node, ctx):
        return Fact("ndarray", "float64")
    return Fact("ndarray", wide.dtype) if wide is not None else None


def _scaled_range(node: cst.BinaryOperation, ctx: FileContext) -> bool:
    """`np.arange(n) * dt`: NumPy's arange gives int64 (or float64) and a Python float, or any float array,
    promotes that to float64 (an int literal keeps int64, a tensor makes torch do the arithmetic)."""
    if not isinstance(node.operator, (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)):
        return False
    for side, other in ((node.left, node.right), (node.right, node.left)):
        if type(side) is cst.Call and ctx.imports.resolve(side.func) == "numpy.arange" and type(other) is not cst.Integer \
                and (isinstance(node.operator, cst.Divide) or type(other) is cst.Float or isinstance(other, (cst.Name, cst.Attribute))):
            return True
    return False


def _numpy_fact(short: str, call: cst.Call, ctx: FileContext) -> Optional[Fact]:
    dtype_arg = _keyword(call, "dtype")
    if dtype_arg is not None:
        return Fact("ndarray", _numpy_dtype(dtype_arg.value, ctx))
    if short in NUMPY_FLOAT64_SCALARS:  # `np.float64(c)`, `np.double(c)`
        return Fact("ndarray", "float64", ndim=0) if len(call.args) == 1 and not call.args[0].star else None
    if short in NUMPY_KEEPS_DTYPE:
        data = _positional(call)[:1]
        if data and len(call.args) == 1 and _python_number(data[0], ctx):
            return Fact("ndarray", "float64", ndim=0)  # `np.log(2 * np.pi)`: a NumPy float64 scalar
        source = fact_of(data[0], ctx) if data else None
        return Fact("ndarray", source.dtype) if source is not None and source.kind == "ndarray" and source.dtype in WIDE_DTYPES else None
    if short in ("array", "asarray"):
        data = _positional(call)[:1]
        return Fact("ndarray", "float64") if data and _has_float(data[0]) else None
    if short not in NUMPY_FLOAT_CALLS or _has_star(call):
        return None
    before_dtype = NUMPY_FLOAT_CALLS[short]
    if before_dtype is not None and len(_positional(call)) > before_dtype:
        return None  # a positional dtype, or arguments this check does not read
    return Fact("ndarray", "float64")


def _bind(node: cst.CSTNode, ctx: FileContext) -> None:
    """`x = <expr>`: remember what is visible about x (after the value's own calls were checked)."""
    if isinstance(node, cst.Assign):
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
    else:
        target = node.target
    if isinstance(target, cst.Name) and node.value is not None:
        _remember(ctx, target.value, fact_of(node.value, ctx))
    elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
        grids = _grids(node.value, ctx)
        for element in target.elements:
            if isinstance(element, cst.Element) and isinstance(element.value, cst.Name):
                _remember(ctx, element.value.value, grids)


def _grids(call: cst.Call, ctx: FileContext) -> Optional[Fact]:
    """What each array `x, y = np.meshgrid(a, b)` unpacks is: float64 where every input is a float64 array."""
    inputs = _positional(call)
    if ctx.imports.resolve(call.func) != "numpy.meshgrid" or not inputs or _has_star(call) or _keyword(call, "copy") is not None:
        return None
    facts = [fact_of(value, ctx) for value in inputs]
    if all(fact is not None and fact.kind == "ndarray" and fact.dtype == "float64" for fact in facts):
        return Fact("ndarray", "float64")
    return None


def _bind_param(node: cst.Param, ctx: FileContext) -> None:
    annotation = node.annotation
    if annotation is not None and ctx.imports.resolve(annotation.annotation) == "torch.Tensor":
        _remember(ctx, node.name.value, Fact("tensor"))


# -- CDL604 / CDL605: operators without an MPS kernel, or with a CPU fallback --------
def _called_api(call: cst.Call, ctx: FileContext) -> Tuple[Optional[str], Optional[cst.BaseExpression]]:
    """(public API, its input expression) of a call; a method counts only on a known tensor."""
    func = call.func
    if isinstance(func, cst.Attribute) and not ctx.imports.is_module_ref(func.value):
        api = "torch.Tensor." + func.attr.value
        return (api, func.value) if api in load_api_ops()["apis"] else (None, None)
    name = ctx.imports.resolve(func)
    if name is None or not is_public(name) or not _known_api(name):
        return None, None
    if name in _module_names():
        return name, None
    positional = _positional(call)
    source = positional[0] if positional else _argument(call, "input", None)
    return name, source


def _literal(node: Optional[cst.BaseExpression]) -> object:
    if node is None:
        return UNKNOWN
    value = string_value(node)
    if value is not None:
        return value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = _literal(node.expression)
        return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN
    if isinstance(node, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in node.elements):
        items = tuple(_literal(element.value) for element in node.elements)
        return UNKNOWN if any(item is UNKNOWN for item in items) else items
    return UNKNOWN


def _argument_values(api: str, call: cst.Call, keys: FrozenSet[str], ctx: FileContext) -> Dict[str, object]:
    """Visible value of each case-selecting argument: the literal, the default when left out, or UNKNOWN."""
    known = api_arguments(api)
    values: Dict[str, object] = {}
    for key in keys:
        position, default = known.get(key, (None, UNKNOWN))
        values[key] = _argument_value(call, key, position, ctx, default)
    return values


def _needed_argument(api: str, op: str):
    return NEEDS_ARGUMENT.get((api, op)) or NEEDS_ARGUMENT.get(("*", op))


def _reached(op: str, api: str, call: cst.Call, ctx: FileContext) -> bool:
    needed = _needed_argument(api, op)
    if needed is not None:
        keyword, position, values = needed
        value = _argument_value(call, keyword, position, ctx, default=None)
        return value is not None and value is not UNKNOWN and (values is None or value in values)
    if op in GLOBAL_POOL_OPS:
        keyword, position = GLOBAL_POOL_OPS[op]
        size = _argument_value(call, keyword, 0 if api in _module_names() else position, ctx, default=None)
        return size is not None and visible_sizes(size) not in (None, {1})
    return True


def _gaps(api: str, release: str, call: cst.Call, ndim: Optional[int], ctx: FileContext
          ) -> Optional[Tuple[str, Tuple[str, ...], Dict]]:
    """(kind, operators, deciding values) when every case the call can be in has a gap, else None."""
    cases = api_cases(api, release)
    if not cases:
        return None
    keys = frozenset(key for case in cases for key in case.when if key != "ndim")
    values = _argument_values(api, call, keys, ctx)
    # an operator that an argument brings in is reached whatever the case (`x.round(decimals=1)`)
    reached = {gap for case in cases for gap in case.gaps if _reached(gap[0], api, call, ctx)}
    forced = {gap for gap in reached if _needed_argument(api, gap[0])}
    gaps = case_gaps(cases, values, ndim, api_arguments(api), reached, forced)
    if gaps is None:
        return None
    possible = possible_cases(cases, values, ndim, api_arguments(api))
    kind = RAISES if all(any(k == RAISES for _, k in case) for case in gaps) else ON_CPU
    ops = tuple(sorted({op for case in gaps for op, k in case if k == kind}))
    known = api_arguments(api)
    given = {key for key in values if _argument(call, key, known.get(key, (None, None))[0]) is not None}
    deciding = {key: value for key, value in values.items()
                if value is UNKNOWN or (key in given and len(possible) < len(cases))}
    return kind, ops, deciding


def _describe(api: str, deciding: Mapping[str, object], ndim: Optional[int], selected: bool) -> str:
    """The API and the argument values that decided its case; an argument the source does not show is named
    as such (every case it could select has the gap)."""
    shown = [f"{key}={value!r}" if value is not UNKNOWN else f"{key} not visible, every case"
             for key, value in sorted(deciding.items())]
    if ndim is not None and selected:
        shown.append(f"{ndim}-D input")
    return f"{api} ({', '.join(shown)})" if shown else api


def _target(ctx: FileContext) -> str:
    return ".".join(str(part) for part in ctx.torch_version[:2])


def _support(ops: Sequence[str], release: str, ctx: FileContext) -> str:
    first = _first_supported(ops, release)
    if first is None:
        newest = _short(CoverageDB.load().newest())
        return f"no torch release up to {newest} runs it on MPS"
    paired = CoverageDB.load().torchvision()["pairs"].get(_short(first))
    with_torchvision = f" (torchvision {paired})" if paired and any(op.startswith("torchvision::") for op in ops) else ""
    return f"supported on MPS from torch {_short(first)}{with_torchvision}, you target {_target(ctx)}"


def _check_ops(api: str, call: cst.Call, fact: Optional[Fact], release: str, ctx: FileContext) -> None:
    ndim = fact.ndim if fact is not None else None
    found = _gaps(api, release, call, ndim, ctx)
    if found is None:
        _check_range(api, call, ndim, release, ctx)
        return
    kind, ops, deciding = found
    label = _describe(api, deciding, ndim, any("ndim" in case.when for case in api_cases(api, release)))
    reaches = f"{label} reaches {', '.join(ops)}, which"
    support = _support(ops, release, ctx)
    if kind == RAISES:
        ctx.report(
            "CDL604", call,
            f"{reaches} {'have' if len(ops) > 1 else 'has'} no MPS kernel in torch {_target(ctx)}: it raises "
            f"NotImplementedError on MPS unless PYTORCH_ENABLE_MPS_FALLBACK=1; {support}",
        )
    else:
        ctx.report(
            "CDL605", call,
            f"{reaches} {'run' if len(ops) > 1 else 'runs'} on the CPU in torch {_target(ctx)} (MPS falls back "
            f"silently, slowly, with a one-time warning); {support}",
        )


# -- CDL609: runs at the target, fails in an older release the project allows -----------
def _spans(releases: Sequence[str], within: Sequence[str]) -> str:
    """"2.0-2.2" for consecutive releases of ``within``, comma-separated runs otherwise."""
    runs: List[List[str]] = []
    for release in releases:
        if runs and within.index(release) == within.index(runs[-1][-1]) + 1:
            runs[-1].append(release)
        else:
            runs.append([release])
    return ", ".join(_short(run[0]) if len(run) == 1 else f"{_short(run[0])}-{_short(run[-1])}" for run in runs)


def _check_range(api: str, call: cst.Call, ndim: Optional[int], release: str, ctx: FileContext) -> None:
    older = older_allowed(ctx.torch_version)
    failing = {r: found for r in older if (found := _gaps(api, r, call, ndim, ctx)) is not None}
    if not failing:
        return
    ops = tuple(sorted({op for _, found_ops, _ in failing.values() for op in found_ops}))
    seen = ctx.check_state.setdefault(CHECK + ":range", set())
    if ops in seen:
        return  # one note per operator
    seen.add(ops)  # type: ignore[union-attr]
    allowed = (*older, release)
    first = allowed[allowed.index(max(failing, key=version_tuple)) + 1]
    raises = any(kind == RAISES for kind, _, _ in failing.values())
    deciding = next(iter(failing.values()))[2]
    label = _describe(api, deciding, ndim, any("ndim" in case.when for case in api_cases(api, max(failing))))
    plural = len(ops) > 1
    verb = (("have" if plural else "has") + " no MPS kernel") if raises else ("run" if plural else "runs") + " on the CPU"
    ctx.report("CDL609", call, RANGE_NOTE.format(
        reaches=f"{label} reaches {', '.join(ops)}, which", verb=verb, failing=_spans(sorted(failing, key=version_tuple), allowed),
        allowed=f"{_short(allowed[0])}-{_short(allowed[-1])}", first=_short(first)))


# -- CDL606: a dtype the operator lacks on MPS -----------------------------------------
def _check_dtype(api: str, call: cst.Call, fact: Optional[Fact], release: str, ctx: FileContext) -> None:
    if fact is None or fact.kind != "tensor" or fact.dtype is None:
        return
    values = _argument_values(api, call, frozenset(api_arguments(api)), ctx)
    variants = [""] + [value for value in values.values() if isinstance(value, str)]
    variant = next((v for v in variants if fact.dtype in dtype_gaps(api, release, v)), None)
    if variant is None:
        return
    reason = dtype_gaps(api, release, variant)[fact.dtype]
    later = _dtype_listed_until(api, fact.dtype, release, variant)
    label = f"{api} ({variant})" if variant else api
    ctx.report(
        "CDL606", call,
        f"{label} on a tensor of dtype {fact.dtype} is listed as not implemented on MPS in torch {_target(ctx)} "
        f"(PyTorch's MPS test list: {reason!r}); {later}",
    )


def _dtype_listed_until(api: str, dtype: str, release: str, variant: str = "") -> str:
    db = CoverageDB.load()
    releases = db.versions()
    for later in releases[releases.index(release) + 1:]:
        if db.release_info(later).get("xfail") == "release" and dtype not in dtype_gaps(api, later, variant):
            return f"no longer listed from torch {_short(later)}, you target {_short(release)}"
    return f"still listed in torch {_short(releases[-1])}; use a float32 tensor"


# -- CDL607 / CDL608: float64 and complex128 tensors reaching the device ---------------
def _is_device(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """An argument that names a device other than the CPU (a literal, a variable, torch.device(...))."""
    value = _literal(node)
    if value is not UNKNOWN:
        return isinstance(value, str) and value.split(":")[0] not in ("cpu", "meta")
    if ctx.imports.resolve(node) is not None:
        return False  # torch.float32 and friends: a conversion, not a move
    if names_host(ctx.model, node):
        return False  # torch.device("cpu"), a name bound only to "cpu"
    if names_dtype(ctx.model, node) or _bound_to_dtypes(node, ctx):
        return False  # `.to(x.dtype)`, or a name bound to one or to torch's dtypes: a cast
    if cpu_on_a_mac(ctx.model, node):
        return False  # `device = "cuda" if torch.cuda.is_available() else "cpu"`: the CPU on a Mac (CDL104's)
    return fact_of(node, ctx) is None  # x.to(other_tensor) follows another tensor


def _bound_to_dtypes(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """A name (or `self.<attr>` in a method) every binding of which is a torch dtype, or a conditional
    choice between such: `self.torch_dtype = torch.float16 if fp16 else torch.float32` (lama-cleaner's
    MAT), so `.to(self.torch_dtype)` casts and moves nothing."""
    if _torch_dtype(node, ctx) in TORCH_DTYPES.values():
        return True
    if type(node) is cst.IfExp:
        return depth < 4 and _bound_to_dtypes(node.body, ctx, depth + 1) and _bound_to_dtypes(node.orelse, ctx, depth + 1)
    if depth >= 4 or type(node) not in (cst.Name, cst.Attribute):
        return False
    bindings = ctx.model.bindings_of(node)
    return bool(bindings) and all(binding.kind == "assign" and binding.value is not None
                                  and _bound_to_dtypes(binding.value, ctx, depth + 1) for binding in bindings)


def moved_value(call: cst.Call, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """The expression a call moves to a device: `E.cuda()`, `E.to(device)`, or `register_buffer(name, E)`,
    the other state methods (placement.STATE_METHODS) and `nn.Parameter(E)`: E moves with its module;
    None otherwise."""
    func = call.func
    if ctx.imports.resolve(func) in PARAMETER_CLASSES:
        return None if _free_parameter(call, ctx) else _argument(call, "data", 0)
    if not isinstance(func, cst.Attribute) or ctx.imports.is_module_ref(func.value):
        return None
    if func.attr.value in STATE_METHODS:
        return None if _handed_module(func.value, ctx) else _argument(call, STATE_METHODS[func.attr.value], 1)
    if func.attr.value == "cuda":
        return func.value
    if func.attr.value != "to" or _explicit_dtype(call, ctx, position=1) or _keyword(call, "dtype"):
        return None
    target = _argument(call, "device", 0)
    return func.value if target is not None and _is_device(target, ctx) else None


# Calls that make what they are handed a module's state (or may: `setattr(module, name, p)`, a list that
# becomes a ParameterList); an optimizer, a loss or the module's own call only read a parameter.
STATE_TAKERS = frozenset({*STATE_METHODS, "setattr", "ParameterList", "ParameterDict", "add_module", "append", "extend",
                          "update", "insert", "__setattr__"})


def _free_parameter(call: cst.Call, ctx: FileContext) -> bool:
    """`X = nn.Parameter(torch.as_tensor(points))` bound to a name that is never stored on an object, handed to a
    call that registers it, nor returned: a leaf tensor an optimizer updates where it was made, which no module
    moves (torch-topological's example scripts); `self.w = nn.Parameter(...)` is a module's state."""
    scope = ctx.model.scope
    held = scope.path_to(call) or []
    parent = held[-2] if len(held) >= 2 else None
    if type(parent) is cst.Assign and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:
        name = parent.targets[0].target.value
    elif type(parent) is cst.AnnAssign and type(parent.target) is cst.Name:
        name = parent.target.value
    else:
        return False
    for path in scope.name_paths(name):
        for holder, inner in zip(reversed(path[:-1]), reversed(path[1:])):
            if type(holder) is cst.Return:
                return False
            if type(holder) is cst.Call and inner is not holder.func:
                func = holder.func
                if (func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else "") in STATE_TAKERS:
                    return False
            if type(holder) in (cst.Assign, cst.AnnAssign, cst.AugAssign) and inner is holder.value:
                targets = [target.target for target in holder.targets] if type(holder) is cst.Assign else [holder.target]
                if any(type(target) in (cst.Attribute, cst.Subscript) for target in targets):
                    return False
            if isinstance(holder, cst.BaseStatement):
                break
    return True


def _handed_module(receiver: cst.BaseExpression, ctx: FileContext) -> bool:
    """A module the function was handed (a parameter, not `self`): thop's `add_hooks(m)` registers its
    counters on modules already placed, and registering moves nothing; state a module gives itself
    (`self.register_buffer`) or one the code builds goes wherever the module is moved next."""
    if type(receiver) is not cst.Name:
        return False
    scope = ctx.model.scope
    if receiver.value == scope.self_name:
        return False
    bindings = ctx.model.bindings_of(receiver)
    return bool(bindings) and all(binding.kind == "param" for binding in bindings)


def _created_on_device(call: cst.Call, ctx: FileContext) -> bool:
    device = _keyword(call, "device")
    value = device.value if device is not None else _spread_keyword(call, "device", ctx)
    return value is not None and _is_device(value, ctx) and ctx.imports.resolve(call.func) is not None


def _spread_keyword(call: cst.Call, name: str, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """The value a `**kwargs` spread into the call gives keyword `name`, where the spread name holds one dict
    literal (`params = {"device": device, "dtype": torch.double}`) that writes that key; else None."""
    for arg in call.args:
        if arg.star != "**":
            continue
        held = ctx.model.values(arg.value)
        if len(held) != 1 or held[0].kind != "dict" or type(held[0].data[0]) is not cst.Dict:
            continue
        for element in held[0].data[0].elements:
            if type(element) is cst.DictElement and string_value(element.key) == name:
                return element.value
    return None


def _check_wide_move(call: cst.Call, ctx: FileContext) -> None:
    moved = moved_value(call, ctx)
    if type(moved) is cst.Call and moved_value(moved, ctx) is not None:
        return  # `x.to(a).to(b)`: the first move is the one reported, once
    if moved is not None:
        fact = fact_of(moved, ctx)
    elif _created_on_device(call, ctx):
        fact = fact_of(call, ctx)
    else:
        return
    if fact is None or fact.kind != "tensor" or fact.dtype not in WIDE_DTYPES:
        return
    if fact.from_numpy:
        ctx.report(
            "CDL607", call,
            "float64 NumPy data (NumPy's default float) becomes a float64 tensor that moves to the device: "
            "MPS has no float64 and raises; convert with .float() or .astype(np.float32) first",
        )
    else:
        state = (isinstance(call.func, cst.Attribute) and call.func.attr.value in STATE_METHODS) or (
            ctx.imports.resolve(call.func) in PARAMETER_CLASSES)
        narrow = "float32" if fact.dtype == "float64" else "complex64"
        if moved is None:  # `torch.zeros(..., dtype=torch.float64, device=device)`
            message = (f"a {fact.dtype} tensor is made on the device: MPS has no {fact.dtype} and raises; make it "
                       f"{narrow} there, or make it on the CPU where precision needs {fact.dtype}")
        else:
            message = (f"a {fact.dtype} tensor {'becomes state that moves with its module' if state else 'moves'} to the "
                       f"device: MPS has no {fact.dtype} and raises; make it {narrow} before the {'registration' if state else 'move'}")
        written = fact.origin[-1] if fact.origin else None
        if moved is None and written is not None and not any(arg.value is written for arg in call.args):
            # the dtype of a dict of keywords spread into the call: reported once, where the dict writes it (in
            # place of CDL601's finding there, which CDL608 supersedes; the first call is the related place)
            ctx.report("CDL608", written, message, None, ((call, f"{source_of(call.func)}(...) makes it on the device here"),))
            return
        origin = written if written is not None and path_to(call, written) is None else None
        related = ((origin, f"it is made {fact.dtype} here"),) if origin is not None else ()
        ctx.report("CDL608", call, message, None, related)  # where it became float64, when that is not in the move
        if ctx.hits and ctx.hits[-1].node is call and ctx.hits[-1].code == "CDL608":
            _supersede(fact.origin, ctx)


def _supersede(origin: Tuple[cst.CSTNode, ...], ctx: FileContext) -> None:
    """One finding per float64 tensor: CDL608 at the move replaces CDL601-603 at its dtype."""
    ctx.hits[:] = [hit for hit in ctx.hits if not any(hit.node is node for node in origin)]
    ctx.handled.update(id(node) for node in origin)


# -- registration ------------------------------------------------------------------------
def _on_call(call: cst.Call, ctx: FileContext) -> None:
    if ctx.guard_depth:
        return  # runs only on CUDA hosts
    _check_wide_move(call, ctx)  # its reports in a branch that never runs on a Mac are silenced by report()
    release = release_for(ctx.torch_version)
    if release is None:
        return
    api, source = _called_api(call, ctx)
    if api is None or not _has_gap(api, release, older_allowed(ctx.torch_version)) or ctx.guarded():
        return  # (guarded: before CDL609's one note per operator is spent on code a Mac never runs)
    if made_on_host(ctx.model, call, ctx.stack):
        return  # `torch.logspace(..., dtype=torch.double)` with no device: its operator runs on the CPU
    if _read_by_numpy(call, ctx) or (source is not None and on_host(ctx.model, source, ctx.model.scope)):
        return  # the input is made on the host where the code shows it (`torch.linalg.qr(torch.randn(n, n))`,
        # a name bound to one, `x.cpu()`): the operator runs where its input is
    if source is not None and moved_off_mps(ctx.model, ctx.stack, source):
        return  # `if x.device.type == "mps": x = x.cpu()` before: the code already runs it on the CPU there
    fact = fact_of(source, ctx) if source is not None else None
    if api.startswith("torch.Tensor.") and (fact is None or fact.kind != "tensor"):
        return
    _check_ops(api, call, fact, release, ctx)
    _check_dtype(api, call, fact, release, ctx)


def _read_by_numpy(call: cst.Call, ctx: FileContext) -> bool:
    """The call's result is read at once with `.numpy()`, which raises for a tensor on any device but
    the CPU (torch docs, Tensor.numpy), so the code itself says its operator runs there:
    `x.unique(dim=1).numpy()`. `.numpy(force=True)` copies from anywhere, so it proves nothing."""
    stack = ctx.stack
    if len(stack) < 3:
        return False
    read, reader = stack[-2], stack[-3]
    return (isinstance(read, cst.Attribute) and read.value is call and read.attr.value == "numpy"
            and isinstance(reader, cst.Call) and reader.func is read and not reader.args)


def _bind_return(node: cst.Return, ctx: FileContext) -> None:
    """Note what a return of a function gives (its fact where the return is), for calls of the function
    after the walk has left it (_returned_fact)."""
    scope = ctx.model.scope
    if scope.kind == "function" and isinstance(scope.node, cst.FunctionDef):
        pending = ctx.check_state.setdefault(PENDING_RETURNS, {})
        pending.setdefault(id(scope.node), []).append(fact_of(node.value, ctx) if node.value is not None else None)


def _leave_function(node: cst.FunctionDef, ctx: FileContext) -> None:
    """The function is read whole: its returns' facts may answer for its calls."""
    found = ctx.check_state.get(PENDING_RETURNS, {}).pop(id(node), None)
    if found is not None:
        _returns(ctx)[id(node)] = found


def register(registry: Registry) -> None:
    registry.on(cst.Call, _on_call)
    registry.on_leave(cst.Return, _bind_return)
    registry.on_leave(cst.FunctionDef, _leave_function)
    registry.on(cst.Param, _bind_param)
    registry.on_leave(cst.Assign, _bind)
    registry.on_leave(cst.AnnAssign, _bind)
