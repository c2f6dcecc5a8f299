"""Where a tensor lives, as far as the code shows: "on the same device as that one".

`place(expr)` answers a key that two expressions share when the code proves they are on one
device, whatever device that is; None when it cannot tell. A view or a same-device method of a
tensor (`x.narrow(...)`, `x[i]`, `x.grad`, `x.detach()`) is where `x` is; a tensor made `like`
another, or with `device=t.device`, `device=d`, or moved `.to(t.device)`, `.to(d)`, `.to(t)`, is
where `t` (or the device `d`) is; a name is where every one of its bindings puts it, and a name
whose one binding says nothing more is its own place (the same object each time it is read).

`same_device_copy(call)`: `dst.copy_(src, ...)` or `x.to(target, ...)` between two places the
code proves to be one device, or `x.to(dtype)`, which casts where `x` is: a device-to-device (or host-to-host) copy, which touches no
pageable host memory and, on MPS, is ordered on the one command queue with what reads it.

`synchronized_after(stack, apis)`: the copy at the end of the walk's stack is waited for by the very
next statement, in a way that runs on a Mac, so nothing reads it before it has landed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Hashable, List, Optional, Sequence

import libcst as cst

from cudalint.python.children import DEFINITIONS, code_children, find_argument, nodes_in, path_to, reads_name
from cudalint.python.host_tests import speaks_of_device
from cudalint.python.host_types import HOST_BUILTINS, UNIONS, host_type
from cudalint.python.mps_fallback import true_on_mps
from cudalint.python.names import chain_root, is_cuda_device_string, is_none, string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Binding, Scope

MAX_DEPTH = 8
# Tensor methods whose result is on the receiver's device (views, copies, casts, reductions).
SAME_DEVICE_METHODS = frozenset({
    "narrow", "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "squeeze", "unsqueeze",
    "t", "transpose", "permute", "expand", "expand_as", "contiguous", "clone", "detach", "float", "half",
    "bfloat16", "double", "int", "long", "bool", "type_as", "chunk", "split", "select", "index_select",
    "masked_select", "flip", "roll", "abs", "neg", "sum", "mean", "norm", "zero_", "fill_", "add", "mul",
    "sub", "div", "pow", "sqrt", "rsqrt", "exp", "log", "sign", "square", "reciprocal", "clamp", "prod",
    "cumsum", "max", "min", "amax", "amin", "argmax", "argmin", "dot", "mv", "mm", "bmm", "matmul",
    "tanh", "sigmoid", "softmax", "log_softmax", "masked_fill", "gather",
    # elementwise math, in place or not, and reductions: computed where the tensor is
    "abs_", "neg_", "add_", "sub_", "mul_", "div_", "pow_", "sqrt_", "exp_", "log_", "log1p", "log1p_", "log2",
    "log10", "expm1", "expm1_", "sin", "cos", "tan", "sinh", "cosh", "sin_", "cos_", "atan2", "clamp_",
    "clamp_min", "clamp_max", "clamp_min_", "clamp_max_", "round", "floor", "ceil", "trunc", "remainder",
    "fmod", "erf", "relu", "repeat", "tile", "cumprod", "std", "var", "logsumexp", "diag", "triu", "tril",
    "outer", "conj", "angle", "diff",
})
# Modules of torch whose functions compute where their first tensor is (torch.fft, torch.linalg and
# torch.special take no device): like torch.sin and the other functions named as a SAME_DEVICE_METHODS method.
SAME_DEVICE_MODULES = ("torch.fft.", "torch.linalg.", "torch.special.")
# Tensor methods that build a new tensor on the receiver's device unless given `device=` (torch docs,
# Tensor.new_tensor and the rest: "By default, the returned Tensor has the same torch.dtype and
# torch.device as this tensor").
NEW_METHODS = frozenset({"new_tensor", "new_zeros", "new_ones", "new_empty", "new_full"})
SAME_DEVICE_ATTRIBUTES = frozenset({"grad", "data", "T", "mT", "real", "imag"})  # torch checks grad's device
LIKE_FACTORIES = frozenset({
    "torch.empty_like", "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.rand_like",
    "torch.randn_like", "torch.randint_like", "torch.clone",
})


# Factories that build a new tensor from sizes or ranges on the default device when given no `device=`
# (torch docs, every factory: "Default: if None, uses the current device for the default tensor type",
# the CPU unless torch.set_default_device says otherwise), and those that build one from data, which
# do the same for Python data (a list, tuple or number) but keep a tensor's own device.
SIZE_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.randint",
    "torch.randperm", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye", "torch.empty_strided",
    # also factories with a `device=` keyword (torch docs: tril_indices, triu_indices, the window functions)
    "torch.tril_indices", "torch.triu_indices", "torch.hann_window", "torch.hamming_window", "torch.blackman_window",
    "torch.bartlett_window", "torch.kaiser_window",
})
# torch.normal's overload with float mean and std takes a size and is the only one with `dtype=` and `device=`
# (torch docs, torch.normal): given a size, it is such a factory (the others follow their tensors' device).
SIZED_NORMAL = "torch.normal"
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray"})
# The legacy CPU tensor types, whose constructors build on the CPU whatever they are given (torch docs,
# torch.Tensor: torch.DoubleTensor is the CPU type of float64, torch.cuda.DoubleTensor the CUDA one), and
# torch.Tensor's own constructor, of the default tensor type (`torch.Tensor(range(n))`: on the CPU, even
# under torch.set_default_device, as measured with torch 2.13).
CPU_TENSOR_TYPES = frozenset({"torch.DoubleTensor", "torch.FloatTensor", "torch.HalfTensor", "torch.BFloat16Tensor",
                              "torch.LongTensor", "torch.IntTensor", "torch.ShortTensor", "torch.CharTensor",
                              "torch.ByteTensor", "torch.BoolTensor", "torch.Tensor"})
# Standard-library modules whose functions return Python numbers (or sequences of them), never a tensor:
# `torch.tensor(time.time(), dtype=torch.float64)` is Python data.
NUMBER_MODULES = frozenset({"time", "math", "random"})
# Calls that give a CPU tensor whatever they are given (torch docs: from_numpy shares the array's memory).
HOST_FACTORIES = frozenset({"torch.from_numpy"})
# Objects that make tensors only on the CPU, and the methods that make them (torch/quasirandom.py: SobolEngine
# keeps its state on `torch.device("cpu")` and draws there; it takes no device).
HOST_ENGINES = {"torch.quasirandom.SobolEngine": frozenset({"draw", "draw_base2"})}
# Functions that join tensors into one on their device (torch docs: cat, stack and their variants need every
# tensor on one device): given tensors written in a list or tuple, all on the host, they give a host tensor.
JOINING = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
                     "torch.dstack", "torch.column_stack", "torch.row_stack"})
# Methods that make a tensor state that moves with its owner: nn.Module.register_buffer and
# register_parameter (torch/nn/modules/module.py: Module.to moves buffers and parameters), and
# torchmetrics' Metric.add_state (a metric's states follow metric.to(device)). Their tensor argument:
# the second, or the keyword given here.
STATE_METHODS = {"register_buffer": "tensor", "register_parameter": "param", "add_state": "default"}
_PYTHON_DATA = (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float, cst.UnaryOperation)
# Builtins that return a Python list or tuple: torch.tensor of one is made on the default device (torch
# docs, torch.tensor: "If None and data is not a tensor then the result tensor is constructed on the
# current device"), whatever the sequence holds.
SEQUENCE_BUILTINS = frozenset({"list", "tuple", "sorted"})


def made_on_host(model: "SemanticModel", call: cst.Call, around: Sequence[cst.CSTNode] = ()) -> bool:
    """A factory call with no `device=` that builds its tensor on the default device, the CPU:
    `torch.linspace(0, 1, n, dtype=torch.float64)`, `torch.tensor([0.5, 0.25], dtype=torch.float64)`.
    `around`: the nodes that hold the call (the walk's stack), for the comprehensions it may sit in."""
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return False
    qualified = model.resolve(call.func)
    if qualified in SIZE_FACTORIES or qualified in CPU_TENSOR_TYPES:
        return True
    if qualified == SIZED_NORMAL and (len([arg for arg in call.args if arg.keyword is None]) >= 3
                                      or any(arg.keyword is not None and arg.keyword.value == "size" for arg in call.args)):
        return True
    if type(call.func) is cst.Attribute and _host_engine(model, call.func.value, call.func.attr.value):
        return True  # `torch.quasirandom.SobolEngine(d).draw(n, dtype=torch.float64)`: the engine draws on the CPU
    if qualified in DATA_FACTORIES:
        data = next((arg.value for arg in call.args if arg.keyword is None and not arg.star), None)
        return data is not None and _python_data(model, data, call, around)
    return False


def _host_engine(model: "SemanticModel", receiver: cst.BaseExpression, method: str) -> bool:
    """`receiver.method(...)` makes its tensor on the CPU: the receiver is made by a HOST_ENGINES class (as
    written, or a name every value of which is) whose tensor-making methods include `method`."""
    if not any(method in methods for methods in HOST_ENGINES.values()):
        return False
    if type(receiver) is cst.Call:
        return method in HOST_ENGINES.get(model.resolve(receiver.func) or "", ())
    if type(receiver) is not cst.Name:
        return False
    values = model.values(receiver)
    return bool(values) and all(value.kind == "result" and method in HOST_ENGINES.get(value.data, ()) for value in values)


def builds_on_default_device(model: "SemanticModel", call: cst.Call) -> bool:
    """A call of a function of this file, or of a function or class of the project (the project index:
    FileFacts.host_device_defaults), that takes a `device` parameter defaulting to None or "cpu" and is given
    none (nor arguments spread where one could hide): what the function builds from the dtype it is handed
    lands on the default device, the CPU, by torch's own convention for `device=None`
    (`change_basis(l, dtype=torch.float64)` after `def change_basis(l, dtype=None, device=None)`;
    `Simulator(net, dtype=torch.float64)` of the package's `Simulator(..., device="cpu")`)."""
    func = call.func
    if any(arg.star == "**" or (arg.keyword is not None and arg.keyword.value == "device") for arg in call.args):
        return False
    passed = sum(1 for arg in call.args if arg.keyword is None and not arg.star)
    defined = model.defined_function(func)
    if defined is not None:
        params = defined[0].params
        keyword_only = next((param for param in params.kwonly_params if param.name.value == "device"), None)
        if keyword_only is not None:
            return _host_default(keyword_only)
        ordered = [*params.posonly_params, *params.params]
        index = next((index for index, param in enumerate(ordered) if param.name.value == "device"), None)
        if index is None or any(arg.star == "*" for arg in call.args):
            return False
        return passed <= index and _host_default(ordered[index])
    project, qualified = model.project, model.resolve(func)
    if project is None or qualified is None or not project.is_own(qualified):
        return False
    position = project.host_device_default(qualified)
    if position is None:
        return False
    return position < 0 or (passed <= position and not any(arg.star == "*" for arg in call.args))


def _host_default(param: cst.Param) -> bool:
    default = param.default
    return (isinstance(default, cst.Name) and default.value == "None") or string_value(default) == "cpu"


def _python_data(model: "SemanticModel", node: cst.BaseExpression, call: cst.Call, around: Sequence[cst.CSTNode] = (),
                 depth: int = 0) -> bool:
    """A list, tuple or number written in the code, a NumPy array (`np.asarray(offset)`, `np.linspace(0,
    1, n) * 2`, `x.cpu().numpy()`), or a name every binding of which is one (`A = [[1 / 5], ...]` at module
    level, then `A = torch.tensor(A, dtype=torch.float64)`, whose own rebinding of the name does not count),
    or a comprehension's name over such data (`[torch.tensor(b, dtype=torch.float64) for b in B]`): data
    no device holds."""
    if depth > MAX_DEPTH:
        return False
    if type(node) is cst.IfExp:  # `n / secs if secs else 0.0`: data either way
        return all(_python_data(model, arm, call, around, depth + 1) for arm in (node.body, node.orelse))
    if not isinstance(node, cst.Name):
        return _literal_data(node) or _host_value(model, node, call, around, depth)
    source = _comprehension_source(node.value, around)
    if source is not None:
        return _python_data(model, source, call, depth=depth + 1)
    bindings = [binding for binding in model.bindings_of(node) if binding.value is not call]
    return bool(bindings) and all(
        (binding.kind == "assign" and binding.value is not None and _python_data(model, binding.value, call, (), depth + 1))
        or (binding.kind == "assign" and binding.value is None and type(binding.node) is cst.Assign  # `a, b = stats(df)`
            and type(binding.node.value) is cst.Call and _host_value(model, binding.node.value, call, (), depth + 1))
        or (binding.kind == "param" and host_annotation(model, binding.annotation, binding.context)) for binding in bindings)


def host_annotation(model: "SemanticModel", node: Optional[cst.BaseExpression], scope: "Scope", depth: int = 0) -> bool:
    """An annotation every type of which (None aside) is a host type (HOST_BUILTINS, HOST_TYPING with no
    tensor in its parameters, NumPy's): `tuple[npt.NDArray, npt.NDArray] | None`, `float`, `list[float]`."""
    if node is None or depth > 4:
        return False
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.BitOr:
        return all(is_none(side) or host_annotation(model, side, scope, depth + 1) for side in (node.left, node.right)) \
            and not (is_none(node.left) and is_none(node.right))
    if type(node) is cst.Subscript:
        qualified = model.resolve(node.value, scope)
        items = [item.slice.value for item in node.slice if isinstance(item.slice, cst.Index)]
        if qualified in UNIONS:
            return bool(items) and all(is_none(item) or host_annotation(model, item, scope, depth + 1) for item in items)
        return host_annotation(model, node.value, scope, depth + 1) and not any(_names_tensor(item) for item in items)
    if type(node) is cst.Name and node.value in HOST_BUILTINS and not model.lookup(node.value, scope):
        return True
    return host_type(model.resolve(node, scope))


def _names_tensor(node: cst.CSTNode) -> bool:
    pending = [node]
    while pending:
        current = pending.pop()
        if (type(current) is cst.Name and "Tensor" in current.value) or (
                type(current) is cst.Attribute and "Tensor" in current.attr.value):
            return True
        pending.extend(code_children(current))
    return False


def _host_value(model: "SemanticModel", node: cst.BaseExpression, call: cst.Call, around: Sequence[cst.CSTNode],
                depth: int) -> bool:
    """A value computed in host memory: a dataset read whole (`conf["energy"][()]`), a call of a `numpy`
    function (they return arrays or NumPy scalars) or of a NUMBER_MODULES function (`time.time()`), of `list`/`tuple`/`sorted` (a Python
    sequence), a NUMBER_MODULES constant (`math.pi`), a
    tensor's `.numpy()`, or arithmetic or a comparison every operand of which is host data or a string
    (an array times a tensor would be the tensor's, so one operand that is not host data is not enough)."""
    if isinstance(node, cst.Call):
        qualified = model.resolve(node.func)
        if qualified is not None and qualified.split(".")[0] in ("numpy", *NUMBER_MODULES):
            return True
        func = node.func
        if isinstance(func, cst.Name) and func.value in SEQUENCE_BUILTINS and not model.bindings_of(func):
            return True  # `list(d.values())`: a Python list, whatever it holds (a tensor of it is made on the CPU)
        defined = model.defined_function(func)
        if defined is not None and defined[0].returns is not None:  # `def f(x) -> float:` of the file
            return host_annotation(model, defined[0].returns.annotation, defined[1].parent or defined[1])
        if defined is None and model.project is not None and qualified is not None and model.project.is_own(qualified):
            return model.project.returns_host(qualified)  # the same of a function of another module of the project
        return isinstance(func, cst.Attribute) and func.attr.value in HOST_METHODS and not node.args
    if isinstance(node, cst.Subscript) and _python_data(model, node.value, call, around, depth + 1):
        return True  # `constraints[0]` of a parameter annotated as a tuple of arrays
    if isinstance(node, cst.Subscript) and _reads_whole(node):
        return True  # `conf["energy"][()]`, `mol["energies"][:]`: a dataset read off disk into a NumPy array
    if isinstance(node, cst.Attribute) and node.attr.value == "values":
        return True  # `df["mean"].values`: a pandas column's NumPy array (a tensor has no such attribute)
    if isinstance(node, cst.Attribute):  # math.pi; a class's constant (`self.HARTREE_TO_EV = 27.211`)
        qualified = model.resolve(node)
        if qualified is not None:
            return qualified.split(".")[0] in NUMBER_MODULES
        values = model.values(node)
        return bool(values) and all(value.kind in NUMBERS for value in values)
    if isinstance(node, cst.BinaryOperation):
        return all(_python_data(model, side, call, around, depth + 1) for side in (node.left, node.right))
    if isinstance(node, cst.UnaryOperation):
        return _python_data(model, node.expression, call, around, depth + 1)
    if isinstance(node, cst.Comparison):  # `labels == "*"` of an array: an array of bools, on the host
        operands = [node.left, *(part.comparator for part in node.comparisons)]
        return all(string_value(side) is not None or _python_data(model, side, call, around, depth + 1) for side in operands)
    return False


def _reads_whole(node: cst.Subscript) -> bool:
    """An entry of a mapping, by a string key, read whole: `conf["energy"][()]`, `f["forces"][...]`,
    `mol["energies"][:]`, `mol["energy"][conf][()]`, how an h5py (or zarr, npz) dataset is read into a NumPy array (h5py's docs:
    `dset[()]`, `dset[...]`, `dset[:]`). A tensor has no string keys, so the entry is no tensor of a
    batch dict read whole: it is data read off disk."""
    if len(node.slice) != 1 or not _keyed_by_string(node.value):
        return False
    index = node.slice[0].slice
    if isinstance(index, cst.Slice):
        return index.lower is None and index.upper is None and index.step is None
    value = index.value if isinstance(index, cst.Index) else None
    return (type(value) is cst.Tuple and not value.elements) or type(value) is cst.Ellipsis


def _keyed_by_string(node: cst.BaseExpression) -> bool:
    """A subscript chain one of whose indexes is a string (`mol["energy"][conf]`): an entry of a mapping."""
    while type(node) is cst.Subscript:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and string_value(node.slice[0].slice.value) is not None:
            return True
        node = node.value
    return False


NUMBERS = frozenset({"int", "float", "bool"})  # value kinds (semantic/values.py) that are Python numbers
HOST_METHODS = frozenset({"numpy", "to_numpy", "tolist"})  # a tensor's or a pandas object's data, on the host
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension_source(name: str, around: Sequence[cst.CSTNode]) -> Optional[cst.BaseExpression]:
    """What the innermost comprehension holding the call iterates over to bind `name` (None: none binds it)."""
    for node in reversed(around):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(node, _COMPREHENSIONS):
            clause = node.for_in
            while clause is not None:
                if isinstance(clause.target, cst.Name) and clause.target.value == name:
                    return clause.iter
                clause = clause.inner_for_in
    return None


def _literal_data(node: Optional[cst.BaseExpression]) -> bool:
    """A list, tuple, comprehension or number as written, or a list repeated (`[0] * 14`)."""
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.left, (cst.List, cst.Tuple))
    return isinstance(node, _PYTHON_DATA)


def names_host(model: "SemanticModel", node: cst.BaseExpression, scope: Optional["Scope"] = None) -> bool:
    """A device expression every value of which the value model knows to be "cpu" or "meta"
    (`"cpu"`, `torch.device("cpu")`, a name bound only to one): no move to an accelerator."""
    values = model.values(node, scope)
    return bool(values) and all(value.kind == "str" and value.text.split(":")[0] in ("cpu", "meta") for value in values)


def names_cuda(model: "SemanticModel", node: cst.BaseExpression, scope: Optional["Scope"] = None) -> bool:
    """A CUDA device: its string, a name or attribute every binding of which is such a string constant (`CUDA =
    "cuda"` here or in a module it imports from), or `torch.device` of one or of CUDA's current ordinal
    (`torch.device(torch.cuda.current_device())`)."""
    if is_cuda_device_string(node):
        return True
    if isinstance(node, (cst.Name, cst.Attribute)):
        values = model.values(node, scope)
        if values and all(value.kind == "str" and value.origin is not node for value in values):
            return all(value.is_cuda_device() for value in values)
    if not (isinstance(node, cst.Call) and node.args and model.resolve(node.func, scope) == "torch.device"):
        return False
    first = node.args[0].value
    return is_cuda_device_string(first) or (
        isinstance(first, cst.Call) and model.resolve(first.func, scope) == "torch.cuda.current_device")


def on_host(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
    """The tensor an expression gives is on the CPU, as the expression itself shows: `x.cpu()`,
    `x.to("cpu")`, `torch.from_numpy(a)` or a factory that builds on the host, a call told to put what
    it makes on the host (`torch.load(f, map_location="cpu")`, `load_model(f, device=torch.device("cpu"))`),
    a move to a device that is the CPU whenever it would be MPS (_host_for_mps; on a Mac) or wherever the
    host is a Mac (`DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")`), followed by any
    methods that keep the device (`x.cpu().detach().contiguous()`); a name every
    binding of which in its scope is such an expression (or one of these methods of the name itself:
    `m = m.double()`)."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not model.is_module_ref(node.func.value):
        name = node.func.attr.value
        if name == "cpu":
            return True
        if name == "to":
            target = _target(model, node, scope)
            if target is not None:
                return (place(model, target, scope) == ("device", "cpu") or _host_for_mps(model, target, scope)
                        or cpu_on_a_mac(model, target, scope))
        elif name not in SAME_DEVICE_METHODS:
            return False
        node = node.func.value
    if type(node) is cst.Name:
        return depth < MAX_DEPTH and _bound_on_host(model, node, scope, depth)
    if type(node) is cst.Subscript:  # a part of a host tensor, an entry of a checkpoint loaded on the host
        return depth < MAX_DEPTH and on_host(model, node.value, scope, depth + 1)
    if type(node) is cst.Attribute and type(node.value) is cst.Name and model.self_class(node.value.value, scope) is not None:
        return depth < MAX_DEPTH and _attribute_on_host(model, node, scope, depth)
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value != "self" \
            and not model.is_module_ref(node.value):  # `m.weight`, `x.grad` of a name on the host
        return depth < MAX_DEPTH and on_host(model, node.value, scope, depth + 1)
    if type(node) is cst.UnaryOperation:  # `-torch.ones(n)`
        return depth < MAX_DEPTH and on_host(model, node.expression, scope, depth + 1)
    if type(node) is cst.BinaryOperation:  # `torch.ones(n) * 2 + torch.zeros(n)`: host tensors and numbers
        sides = (node.left, node.right)
        return depth < MAX_DEPTH and _all_on_host(model, sides, scope, depth) and not all(map(_number, sides))
    if not isinstance(node, cst.Call):
        return False
    joined = _joined(model, node, scope)
    if joined is not None:  # `torch.cat((torch.eye(n), -torch.ones(1, n)))`
        return depth < MAX_DEPTH and bool(joined) and _all_on_host(model, joined, scope, depth)
    qualified = model.resolve(node.func, scope)
    if _computes_where_given(qualified) and find_argument(node, "device", None) is None:
        first = next((arg.value for arg in node.args if arg.keyword is None and not arg.star), None)
        return depth < MAX_DEPTH and first is not None and on_host(model, first, scope, depth + 1)  # `torch.sin(t)`
    return (qualified in HOST_FACTORIES or made_on_host(model, node) or _told_host(model, node, scope)
            or (depth < MAX_DEPTH and _returns_host(model, node, scope, depth)))


def _returns_host(model: "SemanticModel", call: cst.Call, scope: "Scope", depth: int) -> bool:
    """A call of a function of the file every `return` of which gives a tensor on the host
    (`def make(n): return torch.zeros(n, n, dtype=torch.double)`, then `make(n).to(torch.cdouble)`)."""
    defined = model.defined_function(call.func, scope)
    return defined is not None and bool(defined[1].returns) and all(
        on_host(model, value, defined[1], depth + 1) for value, _ in defined[1].returns)


# Words of a test that asks which device it runs on (`device.type == "cpu"`, `x.is_cuda`), beside the names
# that speak of a device (host_tests.speaks_of_device: `device`, `use_gpu`, `on_mps`), or what dtype the data
# already has (`output_dtype == torch.float64`: a float64 arm there keeps what could not be on MPS anyway)
DEVICE_QUESTION_WORDS = frozenset({"cpu", "mps", "type", "is_cuda", "is_mps", "is_cpu", "dtype", "float64", "double",
                                   "complex128"})


def asks_device(test: cst.BaseExpression) -> bool:
    """The test asks which device it runs on (`device.type == "cpu"`, `x.is_cuda`, `use_gpu`) or what dtype the
    data has (`x.dtype == torch.float64`): what its arms choose is chosen per device, or kept from the data; a
    precision flag (`if mixed_precision`) is not such a test."""
    for node in nodes_in(test):
        text = node.value if type(node) is cst.Name else node.attr.value if type(node) is cst.Attribute else \
            string_value(node) if isinstance(node, cst.BaseString) else None
        if text is not None and (speaks_of_device(text) or text.lower() in DEVICE_QUESTION_WORDS):
            return True
    return False


def default_arm(choice: cst.IfExp, model: "SemanticModel", scope: "Scope") -> Optional[cst.BaseExpression]:
    """The arm a choice takes where its test is a parameter left at its literal default (`torch.float64 if
    output_f64 else torch.float32` with `output_f64=False`: the float32 one; the other is what a caller opts
    into); None for any other test."""
    test, negated = choice.test, False
    if type(test) is cst.UnaryOperation and isinstance(test.operator, cst.Not):
        test, negated = test.expression, True
    bindings = model.lookup(test.value, scope) if type(test) is cst.Name else []
    param = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "param" else None
    default = param.default if isinstance(param, cst.Param) else None
    truth = {"True": True, "False": False, "None": False}.get(default.value) if type(default) is cst.Name else None
    if truth is None:
        return None
    return choice.body if truth != negated else choice.orelse


def _computes_where_given(qualified: Optional[str]) -> bool:
    """`torch.sin`, `torch.fft.fft`: a function that computes on its first tensor's device."""
    if qualified is None or not qualified.startswith("torch."):
        return False
    return qualified.startswith(SAME_DEVICE_MODULES) or (qualified.count(".") == 1 and qualified[6:] in SAME_DEVICE_METHODS)


def _joined(model: "SemanticModel", call: cst.Call, scope: "Scope") -> Optional[List[cst.BaseExpression]]:
    """The tensors a JOINING call joins, written in a list or tuple as its first argument; None for any
    other call (or one with a starred item, whose parts are not seen)."""
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or type(first.value) not in (cst.List, cst.Tuple) \
            or model.resolve(call.func, scope) not in JOINING:
        return None
    items = first.value.elements
    return [item.value for item in items] if all(type(item) is cst.Element for item in items) else None


def _number(node: cst.BaseExpression) -> bool:
    return type(node) in (cst.Integer, cst.Float)


def _all_on_host(model: "SemanticModel", parts, scope: "Scope", depth: int) -> bool:
    """Every part is a number or a tensor on the host."""
    return all(_number(part) or on_host(model, part, scope, depth + 1) for part in parts)


def cpu_on_a_mac(model: "SemanticModel", node: cst.BaseExpression, scope: Optional["Scope"] = None) -> bool:
    """A name every value of which is "cpu" but those taken only where the host is no Mac (`"cuda" if
    torch.cuda.is_available() else "cpu"`) and CUDA devices (`"cuda:" + str(gpu) if args.gpus else "cpu"`,
    which raise on a Mac, where they are written: CDL101's): a float64 tensor moved there stays on a Mac's
    CPU, where float64 exists, an operator runs on the CPU's kernel, and a copy there is no MPS copy."""
    if type(node) not in (cst.Name, cst.Attribute):
        return False
    cpu = False
    for value in model.values(node, scope):
        if value.off_mac or value.is_cuda_device():
            continue
        if value.kind == "str" and value.text == "cpu":
            cpu = True
            continue
        elsewhere = _device_elsewhere(model, value)  # a parameter, or what a function of another module returns
        if elsewhere is None:
            return False
        cpu = cpu or elsewhere
    return cpu


def _device_elsewhere(model: "SemanticModel", value) -> Optional[bool]:
    """What the project index knows of a device the file cannot see (project/device_flow.py): True where it
    is the CPU wherever the host is a Mac, False where a Mac never gets it, None where that is not known.
    A parameter's is what the project's calls of its function pass (`train_one_epoch(..., device=device)`
    with `device = init_device(rank)` from another module); what a call of a function of another module
    gives is what that function returns."""
    project = model.project
    if project is None:
        return None
    if value.kind == "result" and isinstance(value.data, str) and project.is_own(value.data):
        return project.returned_device(value.data)
    if value.kind != "unknown" or type(value.origin) is not cst.Param:
        return None
    found = _parameter_of(model, value.origin)
    return project.passed_device(*found) if found is not None else None


def _parameter_of(model: "SemanticModel", param: cst.Param) -> Optional[tuple]:
    """(the name its function's calls go by, the parameter, its position as written or -1, how calls pass
    it: device_flow's FUNCTION, METHOD, INIT) for a parameter of a module-level function or of a method of a
    module-level class; None for anything else (a nested function's, `*args`)."""
    from cudalint.project import device_flow

    for scope in model.scopes.values():
        function = scope.node
        if scope.kind != "function" or type(function) is not cst.FunctionDef:
            continue
        params = function.params
        positional = [*params.posonly_params, *params.params]
        if any(item is param for item in positional):
            position = next(at for at, item in enumerate(positional) if item is param)
        elif any(item is param for item in params.kwonly_params):
            position = -1
        else:
            continue
        owner = scope.parent
        name = function.name.value
        if owner is not None and owner.kind == "module":
            return name, param.name.value, position, device_flow.FUNCTION
        if owner is None or owner.kind != "class" or owner.parent is None or owner.parent.kind != "module":
            return None
        if name == "__init__":
            return owner.node.name.value, param.name.value, position, device_flow.INIT
        static = any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in function.decorators)
        return name, param.name.value, position, device_flow.FUNCTION if static else device_flow.METHOD
    return None


def _host_for_mps(model: "SemanticModel", target: cst.BaseExpression, scope: "Scope") -> bool:
    """A device chosen as the CPU whenever the device tested is MPS (`torch.device("cpu") if
    x.device.type == "mps" else x.device`, as written or bound to a name once): on a Mac, where MPS is
    the only accelerator, the other arm runs only off MPS, so the tensor moved there is on the CPU."""
    if type(target) is cst.Name:
        values = model.assigned(target, scope)
        return bool(values) and all(_host_for_mps(model, value, where) for value, where in values if type(value) is not cst.Name)
    return type(target) is cst.IfExp and true_on_mps(model, target.test) and place(model, target.body, scope) == ("device", "cpu")


def _told_host(model: "SemanticModel", call: cst.Call, scope: "Scope") -> bool:
    """A call whose placement argument names the host (or a device that is the host wherever the host is a
    Mac, cpu_on_a_mac): `map_location=` (torch.load and the loaders that pass it on) or `device=`; what it
    returns is made, or loaded, there."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword in ("map_location", "device"):
            return names_host(model, arg.value, scope) or cpu_on_a_mac(model, arg.value, scope)
    return False


def _bound_on_host(model: "SemanticModel", name: cst.Name, scope: "Scope", depth: int) -> bool:
    bindings = model.lookup(name.value, scope)
    if len(bindings) == 1 and bindings[0].kind == "param":
        return _passed_on_host(model, bindings[0], depth)
    if len(bindings) > 1:
        reaching = _reaching(bindings, name)
        if len(reaching) == 1 and reaching[0].kind == "assign" and reaching[0].value is not None:
            value = reaching[0].value
            if on_host(model, value, reaching[0].context, depth + 1):
                return True
            if not reads_name(value, name.value):
                return False
            # `x = x.reshape(...)` reaching: where x was before it, as all the bindings say
    if not bindings or any(binding.kind != "assign" or binding.value is None for binding in bindings):
        return False
    if _moved_in_place(bindings[0].scope.node, name.value):
        return False  # `model.to(device)` as a statement: a module moves itself
    found = False
    for binding in bindings:
        value = binding.value
        if _same_name_kept(value, name.value, model):
            continue  # `m = m.double()`: where m already was
        if path_to(value, name) is not None:
            continue  # `x = F.interpolate(x, ...)` asked about its own input: this binding comes after the read
        if _grown_on_host(model, value, name.value, binding.context, depth):
            continue  # `A = torch.cat((A, row))` with `row` on the host: where A already was
        if not on_host(model, value, binding.context, depth + 1):
            return False
        found = True
    return found


def _grown_on_host(model: "SemanticModel", value: cst.BaseExpression, name: str, scope: "Scope", depth: int) -> bool:
    """`A = torch.cat((A, m.unsqueeze(0)))`, `total = total + torch.ones(n)`: the name joined with (or
    combined with) tensors all on the host, or numbers: the result is where the name already was."""
    if depth >= MAX_DEPTH:
        return False
    if type(value) is cst.BinaryOperation:
        parts = [value.left, value.right]
    elif type(value) is cst.Call:
        parts = _joined(model, value, scope) or []
    else:
        return False
    others = [part for part in parts if not (type(part) is cst.Name and part.value == name)]
    return len(others) < len(parts) and bool(others) and _all_on_host(model, others, scope, depth)


LOOPS = (cst.For, cst.While)


def _reaching(bindings: List["Binding"], name: cst.Name) -> List["Binding"]:
    """The one binding of a function's local that reaches a read where the nearest statement before the read
    that binds it, in the read's block or a block around it, is a plain assignment (`w = torch.from_numpy(a)`
    then `w = w.double()` in one arm of an `if`, the other arms binding `w` otherwise); else all of them."""
    scope = bindings[0].scope
    if scope.kind != "function" or any(binding.scope is not scope for binding in bindings):
        return bindings
    path = path_to(scope.node.body, name)
    if path is None or any(type(node) in DEFINITIONS for node in path):
        return bindings  # a read in a nested function runs when that is called: any binding may reach it
    binders = {id(binding.node): binding for binding in bindings}
    for depth in range(len(path) - 2, -1, -1):  # each block around the read, innermost first
        block = path[depth]
        if type(block) in LOOPS and any(id(node) in binders for node in nodes_in(block)):
            return bindings  # a binding in the loop around the read reaches it from the turn before
        statements = getattr(block, "body", None)
        if not isinstance(statements, (list, tuple)) or type(block) not in (cst.IndentedBlock, cst.Module):
            continue
        held = path[depth + 1]
        at = next((index for index, statement in enumerate(statements) if statement is held), None)
        for statement in reversed(statements[:at] if at is not None else ()):
            if type(statement) is cst.SimpleStatementLine:
                found = [binders[id(small)] for small in statement.body if id(small) in binders]
                if found:
                    return found[-1:]
            elif any(id(node) in binders for node in nodes_in(statement)):
                return bindings  # bound inside a compound statement: which binding reaches depends on the flow
    return bindings


def _attribute_on_host(model: "SemanticModel", node: cst.Attribute, scope: "Scope", depth: int) -> bool:
    """`self.train_indices` where every assignment of the attribute in its class puts a host tensor there
    (`self.train_indices = torch.Tensor(range(n))`): nothing moves a plain attribute (a module's `.to()` moves
    its parameters and buffers, not its other attributes), so it stays where it was made."""
    bindings = model.bindings_of(node, scope)
    if not bindings or any(binding.kind != "assign" or binding.value is None for binding in bindings):
        return False
    return all(on_host(model, binding.value, binding.context, depth + 1) for binding in bindings)


def _passed_on_host(model: "SemanticModel", binding, depth: int) -> bool:
    """A parameter every call of its function passes host data for (`interpolate_pos_embed(model,
    torch.load(f, map_location="cpu"))`), where every caller is in sight (call_sites.in_sight)."""
    arguments = model.call_sites.in_sight(binding)
    return bool(arguments) and all(
        argument is not None and argument[0] is not None and on_host(model, argument[0], argument[1], depth + 1)
        for argument in arguments)


IN_PLACE_MOVES = frozenset({"to", "cuda", "mps", "xpu", "to_empty", "type"})
_STATEMENT_HOLDERS = (cst.BaseSuite, cst.BaseCompoundStatement, cst.SimpleStatementLine, cst.Else, cst.ExceptHandler, cst.Finally)


def _moved_in_place(owner: cst.CSTNode, name: str) -> bool:
    """A statement of the scope (not of a function nested in it) that moves `name` to a device in
    place, as a module's `.to(...)`, `.cuda()` do: `model.to(device)`."""
    pending = list(owner.body) if type(owner) is cst.Module else [owner.body] if type(owner) is cst.FunctionDef else []
    while pending:
        node = pending.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if type(node) is cst.Expr:
            call = node.value
            if (type(call) is cst.Call and type(call.func) is cst.Attribute and type(call.func.value) is cst.Name
                    and call.func.value.value == name and call.func.attr.value in IN_PLACE_MOVES):
                return True
            continue
        if isinstance(node, _STATEMENT_HOLDERS):  # statements only: an expression moves nothing in place
            pending.extend(code_children(node))
    return False


# torch functions whose result is where their first argument, a tensor, is.
SAME_DEVICE_FUNCTIONS = frozenset({
    "torch.atleast_1d", "torch.atleast_2d", "torch.atleast_3d", "torch.flatten", "torch.reshape",
    "torch.squeeze", "torch.unsqueeze", "torch.transpose", "torch.clone", "torch.detach",
})


def _same_name_kept(node: cst.BaseExpression, name: str, model: "SemanticModel") -> bool:
    """`m = m.double()`, `b = torch.atleast_1d(b)`: the name rebound where it already was."""
    while isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in SAME_DEVICE_METHODS and not model.is_module_ref(func.value):
            node = func.value
        elif node.args and node.args[0].keyword is None and not node.args[0].star and model.resolve(func) in SAME_DEVICE_FUNCTIONS:
            node = node.args[0].value
        else:
            break
    return type(node) is cst.Name and node.value == name


def same_device_copy(model: "SemanticModel", call: cst.Call, scope: "Scope") -> bool:
    func = call.func
    if not isinstance(func, cst.Attribute) or model.is_module_ref(func.value):
        return False
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if func.attr.value == "copy_" and positional:
        source = positional[0]
    elif func.attr.value == "to":
        source = _target(model, call, scope)
        if source is None:
            return True  # `.to(torch.float16)`: a cast where the tensor is
    else:
        return False
    here = place(model, func.value, scope)
    return here is not None and here == place(model, source, scope)


def place(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int = 0) -> Optional[Hashable]:
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, cst.Subscript):
        return place(model, node.value, scope, depth + 1)
    text = string_value(node)
    if text is not None:
        return ("device", text)  # "mps", "cuda:0": the same text names the same device in one process
    if isinstance(node, cst.Attribute) and (node.attr.value in SAME_DEVICE_ATTRIBUTES or node.attr.value == "device"):
        if not model.is_module_ref(node.value):
            return place(model, node.value, scope, depth + 1)
    if isinstance(node, cst.Call):
        return _call_place(model, node, scope, depth)
    if isinstance(node, cst.BinaryOperation):
        # An operator on tensors computes where its tensors are (they must share a device, a 0-dim
        # CPU tensor aside): the place of its left side, or of its right when the left is a number.
        left = place(model, node.left, scope, depth + 1)
        return left if left is not None else place(model, node.right, scope, depth + 1)
    if isinstance(node, (cst.Name, cst.Attribute)):
        return _bound_place(model, node, scope, depth)
    return None


def _call_place(model, call: cst.Call, scope, depth) -> Optional[Hashable]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return place(model, arg.value, scope, depth + 1)
    func = call.func
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if isinstance(func, cst.Attribute) and not model.is_module_ref(func.value):
        if func.attr.value in SAME_DEVICE_METHODS or func.attr.value in NEW_METHODS:
            return place(model, func.value, scope, depth + 1)
        if func.attr.value == "to":
            target = _target(model, call, scope)
            return place(model, func.value if target is None else target, scope, depth + 1)
        return None
    qualified = model.resolve(func, scope)
    if qualified == "torch.device" and positional:
        return place(model, positional[0], scope, depth + 1)
    if qualified in LIKE_FACTORIES and positional:
        return place(model, positional[0], scope, depth + 1)
    return None


def _target(model, call: cst.Call, scope) -> Optional[cst.BaseExpression]:
    """Where `.to(...)` moves a tensor: its device (or tensor) argument; None when it only casts."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("device", "other"):
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if not positional:
        return None
    qualified = model.resolve(positional[0], scope)
    if qualified is not None and qualified.startswith("torch.") and qualified != "torch.device":
        return None  # `.to(torch.float16)`: a dtype
    if names_dtype(model, positional[0], scope):
        return None  # `.to(x.dtype)`, `.to(input_dtype)` with `input_dtype = x.dtype`: a cast
    return positional[0]


def names_dtype(model: "SemanticModel", node: cst.BaseExpression, scope: Optional["Scope"] = None) -> bool:
    """A tensor's dtype read from it (`x.dtype`), as written or bound to a local name every binding of
    which is one: what `.to(...)` gets there casts, it moves nothing."""
    if type(node) is cst.Name:
        bindings = model.bindings_of(node, scope)
        if bindings and all(binding.kind == "param" and _annotated_dtype(model, binding) for binding in bindings):
            return True  # `def read(path, dtype: Optional[torch.dtype] = None)`
        values = model.assigned(node, scope)
        return bool(values) and all(_reads_dtype(model, value) or _returns_dtype(model, value) for value, _ in values)
    return _reads_dtype(model, node) or _returns_dtype(model, node)


def _annotated_dtype(model: "SemanticModel", binding) -> bool:
    """A parameter annotated as a dtype: `torch.dtype`, `Optional[torch.dtype]`, `torch.dtype | None`."""
    return _is_dtype_annotation(model, binding.annotation, binding.scope)


def _returns_dtype(model: "SemanticModel", node: Optional[cst.BaseExpression]) -> bool:
    """A call of a function of the file annotated to return a dtype (deepinv's `acc_dtype =
    _select_accumulator_dtype(dtype)` with `-> torch.dtype`)."""
    if type(node) is not cst.Call:
        return False
    defined = model.defined_function(node.func)
    return defined is not None and _is_dtype_annotation(model, defined[0].returns, defined[1].parent or defined[1])


def _is_dtype_annotation(model: "SemanticModel", annotation, scope) -> bool:
    if annotation is None:
        return False
    stack = [annotation.annotation if isinstance(annotation, cst.Annotation) else annotation]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)) and model.resolve(node, scope) == "torch.dtype":
            return True
        if isinstance(node, cst.Subscript):
            stack.extend(element.slice.value for element in node.slice if isinstance(element.slice, cst.Index))
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            stack.extend((node.left, node.right))
    return False


def _reads_dtype(model: "SemanticModel", node: Optional[cst.BaseExpression]) -> bool:
    return type(node) is cst.Attribute and node.attr.value == "dtype" and not model.is_module_ref(node.value)


def _bound_place(model, node, scope, depth) -> Optional[Hashable]:
    bindings = model.bindings_of(node, scope)
    if not bindings or any(binding.kind == "import" for binding in bindings):
        return None
    if type(node) is cst.Name and len(bindings) > 1:  # `b = torch.atleast_1d(b)` leaves b where it was
        bindings = [binding for binding in bindings
                    if not (binding.kind == "assign" and binding.value is not None and _same_name_kept(binding.value, node.value, model))]
    places = set()
    for binding in bindings:
        found = None
        if binding.kind == "assign" and binding.value is not None:
            found = place(model, binding.value, binding.context, depth + 1)
        if found is None and len(bindings) == 1 and binding.kind != "augassign":
            found = ("binding", id(binding))  # one object, whatever device it is on
        if found is None:
            return None
        places.add(found)
    return places.pop() if len(places) == 1 else None


MAX_SYNC_NESTING = 4  # if statements inside if statements searched for a synchronize (`if cuda: ... elif mps: ...`)


def synchronized_after(model: "SemanticModel", stack: Sequence[cst.CSTNode], apis: Collection[str]) -> bool:
    """The statement that holds the innermost node of `stack` (a copy) is followed at once, in its
    block, by a synchronize that runs on a Mac: a call of one of `apis` (`torch.mps.synchronize()`),
    a stream's or event's own `.synchronize()`, or a call of a name or attribute that may hold one
    of `apis` there (`self._sync()` after `self._sync = torch.mps.synchronize` in a branch a Mac can
    take; a local helper that returns it) — alone or as the first statement of a branch of an `if`
    right after the copy. The copy has then landed before anything reads it."""
    for depth in range(len(stack) - 1, 0, -1):
        line = stack[depth]
        if isinstance(line, cst.SimpleStatementLine):
            holder = stack[depth - 1]
            small = stack[depth + 1] if depth + 1 < len(stack) else None
            break
        if isinstance(line, (cst.BaseCompoundStatement, cst.Lambda)):
            return False  # in a compound statement's header, or a lambda's body: nothing follows in order
    else:
        return False
    following = line.body[line.body.index(small) + 1:] if small in line.body else []
    if following:
        return _synchronizes_small(model, following[0], apis)
    body = holder.body if isinstance(holder, (cst.IndentedBlock, cst.Module)) else ()
    index = next((i for i, statement in enumerate(body) if statement is line), None)
    return index is not None and index + 1 < len(body) and _synchronizes(model, body[index + 1], apis, 0)


# Methods whose result is a Python value or a host copy: on a device tensor they wait for the device's
# queue (MPS has one per process: aten/src/ATen/mps/MPSStream.mm), so for every copy queued before them.
HOST_READS = frozenset({"cpu", "item", "tolist", "numpy"})
# Reductions whose tensor an `if`/`while` tests: the test calls the tensor's `__bool__`, which reads its one
# element back (`Tensor.__bool__` is `item()` of a one-element tensor, torch/csrc/autograd/python_variable_methods.cpp
# THPVariable_bool_scalar), and torch.equal / torch.allclose answer a Python bool read from the device.
TESTED_READS = frozenset({"torch.any", "torch.all", "torch.equal", "torch.allclose"})
TESTED_METHODS = frozenset({"any", "all"})
VIEWS = frozenset({"detach", "view", "view_as"})  # methods that keep the storage they are called on


def _copy_method(model: "SemanticModel", call: cst.Call) -> Optional[cst.Attribute]:
    """`x.to(...)` / `x.cuda(...)` on a value (not a module's function): the callee, else None."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("to", "cuda") or model.is_module_ref(func.value):
        return None
    return func


def _to_host(model: "SemanticModel", call: cst.Call, scope: "Scope") -> bool:
    """`x.to(<the CPU>)`: a copy whose result is read on the host, so it must land first."""
    func = call.func
    return func.attr.value == "to" and place(model, _target(model, call, scope) or func.value, scope) == ("device", "cpu")


def read_back_in_place(model: "SemanticModel", stack: Sequence[cst.CSTNode], call: cst.Call) -> bool:
    """A non-blocking copy of a named tensor (`packed.to(dev, non_blocking=True)`, the name holding its
    source to the end of the statement at least) whose result the same expression reads back on the host
    (`_dequant(packed=packed.to(dev, non_blocking=True), ...).to("cpu")`, `.cpu()`, `.item()`): the read
    waits for the device's queue, the copy among it, before the statement ends."""
    func = _copy_method(model, call)
    if func is None or type(chain_root(func.value)) is not cst.Name:
        return False  # a temporary (`f(x).to(...)`) may be freed as soon as the copy is queued
    for depth in range(len(stack) - 2, 0, -1):  # the expressions around the copy, innermost first
        holder, parent = stack[depth], stack[depth - 1]
        if isinstance(holder, (cst.BaseStatement, cst.BaseSmallStatement)):
            return False
        if (type(holder) is cst.Attribute and holder.value is stack[depth + 1] and type(parent) is cst.Call
                and parent.func is holder and _reads_to_host(model, parent)):
            return True
    return False


def _reads_to_host(model: "SemanticModel", call: cst.Call) -> bool:
    name = call.func.attr.value
    if name in HOST_READS:
        return True
    target = _target(model, call, model.scope) if name == "to" else None
    return target is not None and names_host(model, target)


def held_until_waited(model: "SemanticModel", stack: Sequence[cst.CSTNode], call: cst.Call, apis: Collection[str]) -> bool:
    """A non-blocking `.to(...)`/`.cuda()` in a function whose source stays referenced for the whole call
    (a parameter, an entry or attribute of one, or of `self`, not replaced by the statement that copies,
    or a name bound only from those) and after which a statement line of the function's own body (not
    one inside an `if` or a loop, which may not run) reads a value back on the host (`loss.item()`, `l.detach().cpu().numpy()`) or synchronizes (`apis`): the
    copy has landed before the function returns and its caller can let the source go. nnunetv2's
    `train_step(self, batch)`: `data = batch["data"]; data = data.to(self.device, non_blocking=True)`
    ... `return {"loss": l.detach().cpu().numpy()}`."""
    func = _copy_method(model, call)
    scope = model.scope
    function = scope.node if scope.kind == "function" else None
    if func is None or type(function) is not cst.FunctionDef or type(function.body) is not cst.IndentedBlock:
        return False
    if _to_host(model, call, scope):
        return False  # the result is read there, and must land first
    body = function.body.body
    places = {id(statement): index for index, statement in enumerate(body)}
    index = next((places[id(node)] for node in stack if id(node) in places), None)
    if index is None or not _held(model, func.value, scope, stack, 0):
        return False
    later = body[index + 1:]
    # a statement line of the body itself, or the test of an `if` or `while` of it (`if not torch.any(mask):`
    # reads the reduction back to decide): a read inside an `if` or a loop may not run
    return any((type(node) is cst.SimpleStatementLine and _reads_back(model, node, apis))
               or (type(node) in (cst.If, cst.While) and (_tests_a_reduction(model, node.test)
                                                          or _reads_back(model, node.test, apis))) for node in later)


UNINITIALIZED = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided"})


def copies_uninitialized(model: "SemanticModel", call: cst.Call) -> bool:
    """A non-blocking `.to(...)`/`.cuda()` of a fresh uninitialized tensor (`torch.empty(K, D).to(device,
    non_blocking=True)`, `x.new_empty(...)`): what lands is garbage by design, to be overwritten, so a copy
    that reads it late changes nothing (solo-learn's k-means centroids, replaced at once)."""
    func = _copy_method(model, call)
    source = func.value if func is not None else None
    if type(source) is not cst.Call:
        return False
    inner = source.func
    if type(inner) is cst.Attribute and inner.attr.value == "new_empty" and not model.is_module_ref(inner.value):
        return True
    return model.resolve(inner) in UNINITIALIZED


def in_module_method(model: "SemanticModel", stack: Sequence[cst.CSTNode], call: cst.Call) -> bool:
    """A non-blocking move (`.to`, `.cuda`), not to the host, in a method of a `torch.nn.Module` subclass:
    what a module moves is its own state or an input its caller has already placed (`x.to(self.device,
    non_blocking=True)` in `forward`, a mask built on the input's device), so the copy is a same-device no-op or is ordered
    on the one MPS queue before the kernels that read it. The hazard of PyTorch issue 189690 is the
    caller's staging of host batches, reported where the caller copies. Blind reviews of real projects
    judged 40 of 43 such findings false. A move that replaces the object's own state (stored into an
    attribute or entry), moves a module (whose parameters' sources it frees) or copies a temporary (a
    computed value, released as soon as the copy is queued: unsloth's RoPE caches, `(emb.cos() *
    scale).to(device, non_blocking=True)` made on the CPU) is still reported, and so is `copy_` (into a
    buffer that may be on the host: FSDP's `param._cpu_grad.copy_(grad, non_blocking=True)`)."""
    scope = model.scope
    klass = scope.enclosing_class if scope.kind == "function" else None
    if klass is None or not isinstance(klass.node, cst.ClassDef):
        return False
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("to", "cuda"):
        return False  # `buf.copy_(src, non_blocking=True)`: into a buffer that may be the host's
    if func.attr.value == "to" and _to_host(model, call, scope):
        return False  # the result is read on the host, and must land first
    if _stored(stack, call):
        return False  # `self.w[k] = self.w[k].to(d, non_blocking=True)`: the object's own source is released
    if type(func.value) not in (cst.Name, cst.Attribute, cst.Subscript):
        return False  # `(emb.cos() * s).to(device, non_blocking=True)`: a temporary, released once the copy is queued
    if any(_module_value(model, value) for value in model.values(func.value, scope)):
        return False  # `net.to(device, non_blocking=True)`: a module's move frees each parameter's source
    return any(_module_class(model, base.value, klass.parent) for base in klass.node.bases if base.keyword is None)


def _module_class(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope") -> bool:
    """The expression names `torch.nn.Module` or a class deriving from it (a torch.nn class, or one of the
    project's whose bases reach one, as far as the project index holds them)."""
    qualified = model.resolve(node, scope)
    if qualified is None:
        return False
    project = model.project
    lineage = project.lineage(qualified) if project is not None else (qualified,)
    return any(name.startswith("torch.nn.") for name in lineage)


def _module_value(model: "SemanticModel", value) -> bool:
    """A value that is a module: an instance of a class of this file deriving from torch.nn.Module, or
    what a call of such a class of the project or of torch.nn returns."""
    if value.kind == "instance":
        klass = value.data[1]
        inner = model.scopes.get(id(klass))
        parent = inner.parent if inner is not None else model.module_scope
        return any(_module_class(model, base.value, parent) for base in klass.bases if base.keyword is None)
    if value.kind == "result" and isinstance(value.data, str):
        project = model.project
        lineage = project.lineage(value.data) if project is not None else (value.data,)
        return any(name.startswith("torch.nn.") and name.rpartition(".")[2][:1].isupper() for name in lineage)
    return False


def _stored(stack: Sequence[cst.CSTNode], call: cst.Call) -> bool:
    """`<attribute or subscript> = <call>`: the statement stores the call's result in place of something."""
    statement = stack[-2] if len(stack) >= 2 else None
    return (type(statement) is cst.Assign and statement.value is call
            and any(type(target.target) in (cst.Attribute, cst.Subscript) for target in statement.targets))


def kept_by_its_object(model: "SemanticModel", stack: Sequence[cst.CSTNode], call: cst.Call) -> bool:
    """A non-blocking `.to(...)`/`.cuda()`, not to the host, whose source is an object's own tensor: an
    attribute or entry of `self`, or a name bound only from those, that the copying statement does not
    replace. The object keeps the source after the copy is queued, so the copy never reads released
    memory (PyTorch issue 189690), and what reads the result on the device is queued after it (MPS runs
    one queue per process, aten/src/ATen/mps/MPSStream.mm). The result must be a local name the function
    neither returns nor stores: a copy that may go to the host (a device given as a parameter) and is
    handed on can be read there before it lands (fairscale's `_MultiDeviceReplicator.get`). rwkv's layer
    loop streams weights so: `w = self.w`; `kw = w[f"{att}key.weight"]`; `kw = kw.to(device=dev,
    non_blocking=True)`; then `kw` feeds the layer's kernels."""
    func = _copy_method(model, call)
    scope = model.scope
    function = scope.node if scope.kind == "function" else None
    if func is None or type(function) is not cst.FunctionDef:
        return False
    if _to_host(model, call, scope):
        return False  # the result is read there, and must land first
    result = _assigned_name(stack, call)
    if result is None or _escapes(function, result):
        return False
    return _held(model, func.value, scope, stack, 0, params=False)


def _assigned_name(stack: Sequence[cst.CSTNode], call: cst.Call) -> Optional[str]:
    """`name = <call>`: the local name the statement binds the call's result to."""
    if len(stack) < 2:
        return None
    statement = stack[-2]
    if type(statement) is cst.Assign and statement.value is call and len(statement.targets) == 1:
        target = statement.targets[0].target
        return target.value if type(target) is cst.Name else None
    return None


STORING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})  # into a container


def _escapes(function: cst.FunctionDef, name: str) -> bool:
    """The function returns or yields `name`, or stores it into an attribute, an entry or a container."""
    pending: list = [function.body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if kind in (cst.Return, cst.Yield) and node.value is not None and _hands_on(node.value, name):
            return True
        if kind is cst.Assign and _hands_on(node.value, name) and any(
                type(target.target) is not cst.Name for target in node.targets):
            return True
        if (kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in STORING_METHODS
                and any(_hands_on(arg.value, name) for arg in node.args)):
            return True
        pending.extend(code_children(node))
    return False


def _hands_on(node: cst.CSTNode, name: str) -> bool:
    """`node` hands on the tensor `name` holds as it is: the name itself, or an element of a tuple, list or
    set display (what a call computes from it is another tensor, queued after the copy)."""
    if type(node) is cst.Name:
        return node.value == name
    if type(node) in (cst.Tuple, cst.List, cst.Set):
        return any(_hands_on(element.value, name) for element in node.elements)
    return False


def _held(model: "SemanticModel", source: cst.BaseExpression, scope: "Scope", stack: Sequence[cst.CSTNode], depth: int,
          params: bool = True) -> bool:
    """The source stays referenced for the whole call: by `self`, or (with `params`) by a parameter."""
    while type(source) is cst.Call and type(source.func) is cst.Attribute and source.func.attr.value in VIEWS:
        source = source.func.value
    while type(source) is cst.Attribute and source.attr.value == "data":
        source = source.value
    if type(source) in (cst.Attribute, cst.Subscript):
        if any(_replaces(node, source) for node in stack):
            return False  # `batch["img"] = batch["img"].to(...)`: the only reference is dropped at once
        root = chain_root(source)
        return type(root) is cst.Name and _held(model, root, scope, stack, depth + 1, params)
    if type(source) is not cst.Name:
        return False
    if source.value == scope.self_name:
        return True
    if depth > 3:
        return False
    element = _comprehension_source(source.value, stack)
    if element is not None:  # `[i.to(device, non_blocking=True) for i in target]`: the list holds each
        return _held(model, element, scope, (), depth + 1, params)
    bindings = scope.bindings.get(source.value, [])
    if not bindings:
        return False
    for binding in bindings:
        if binding.kind == "param":
            if params:
                continue
            return False
        value = binding.value
        if binding.kind != "assign" or value is None:
            return False
        if _moves(value):
            continue  # `data = data.to(...)`, `target = [t.to(...) for t in target]`: a copy made here, not the source
        root = chain_root(value)
        if root is not value and type(root) is cst.Name and root.value == source.value:
            continue  # `target = target[0]`: a part of what the name held
        if _entry_got(value):
            value = value.func.value  # `mask = batch.get("mask")`: an entry the mapping still holds
        if type(value) not in (cst.Attribute, cst.Subscript, cst.Name) or not _held(model, value, scope, (), depth + 1, params):
            return False
    return True


def _entry_got(value: cst.BaseExpression) -> bool:
    """`batch.get("mask")`: an entry of a mapping, by a literal key (the default, if any, is another value)."""
    return (type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "get"
            and len(value.args) == 1 and value.args[0].keyword is None and string_value(value.args[0].value) is not None)


def _moves(value: cst.BaseExpression) -> bool:
    """A value that is a copy moved by `.to(...)`/`.cuda(...)`, or a comprehension of such copies."""
    if type(value) in (cst.ListComp, cst.GeneratorExp, cst.SetComp):
        value = value.elt
    return type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in ("to", "cuda")


def _replaces(node: cst.CSTNode, source: cst.BaseExpression) -> bool:
    """An assignment whose target is the copy's source, as written."""
    if type(node) is cst.Assign:
        return any(target.target.deep_equals(source) for target in node.targets)
    return type(node) in (cst.AnnAssign, cst.AugAssign) and node.target.deep_equals(source)


def _reads_back(model: "SemanticModel", statement: cst.CSTNode, apis: Collection[str]) -> bool:
    """A statement (not a function or class it defines) that calls a host read or one of `apis`."""
    pending = [statement]
    while pending:
        node = pending.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in HOST_READS and not model.is_module_ref(func.value):
                return True
            if model.resolve(func) in apis:
                return True
        pending.extend(code_children(node))
    return False


def _tests_a_reduction(model: "SemanticModel", test: cst.BaseExpression) -> bool:
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test = test.expression
    if type(test) is not cst.Call:
        return False
    func = test.func
    if type(func) is cst.Attribute and func.attr.value in TESTED_METHODS and not test.args:
        return not model.is_module_ref(func.value)
    return model.resolve(func) in TESTED_READS


def _synchronizes(model: "SemanticModel", statement: cst.CSTNode, apis: Collection[str], nesting: int) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return bool(statement.body) and _synchronizes_small(model, statement.body[0], apis)
    if isinstance(statement, cst.If) and nesting < MAX_SYNC_NESTING:
        branch: Optional[cst.CSTNode] = statement
        while isinstance(branch, cst.If):
            if _synchronizes_first(model, branch.body, apis, nesting):
                return True
            branch = branch.orelse
        return isinstance(branch, cst.Else) and _synchronizes_first(model, branch.body, apis, nesting)
    return False


def _synchronizes_first(model: "SemanticModel", suite: cst.BaseSuite, apis: Collection[str], nesting: int) -> bool:
    if isinstance(suite, cst.SimpleStatementSuite):
        return bool(suite.body) and _synchronizes_small(model, suite.body[0], apis)
    return bool(suite.body) and _synchronizes(model, suite.body[0], apis, nesting + 1)


def _synchronizes_small(model: "SemanticModel", small: cst.CSTNode, apis: Collection[str]) -> bool:
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    func = small.value.func
    if model.resolve(func) in apis:
        return True
    if isinstance(func, cst.Attribute) and func.attr.value == "synchronize" and not model.is_module_ref(func.value):
        made = func.value.func if isinstance(func.value, cst.Call) else None
        # `stream.synchronize()`, `event.synchronize()`: waits for the work queued on it (not a CUDA stream's)
        return made is None or not (model.resolve(made) or "").startswith("torch.cuda.")
    if not isinstance(func, (cst.Name, cst.Attribute)):
        return False
    return any(value.kind == "ref" and value.data in apis and not value.off_mac for value in model.values(func))
