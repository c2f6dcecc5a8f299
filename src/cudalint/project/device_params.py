"""Whether a parameter whose default names CUDA holds a device, judged from its function's body.

`def upfirdn2d(x, f, up=1, impl="cuda")` names CUDA in a default, but `impl` picks a kernel
implementation: the function compares it (`impl == "cuda" and x.device.type == "cuda"`), hands it on
under its own name (`upfirdn2d(x, f, impl=impl)`) or never reads it. One the body compares with a
string no device is spelled as (`backend in ["cuda", "triton"]`) picks an implementation wherever its
value goes then (`self.backend = backend`, `os.environ.get("FLA_CONV_BACKEND", backend)`). Nothing is placed on CUDA by
that default, and what the chosen implementation does is reported where it does it. A parameter holds
a device when its name says so (`device`, `map_location`, `gpu_id`: the contract its callers read) and
the body reads it, or when some read of it may carry the value somewhere a device is taken: a positional argument
(`.to(p)`, `torch.device(p)`), a device keyword (`device=p`), a store (`self.p = p`), a return, an
f-string, a container, an operand of `or`/`if`-`else`. A function that reads its locals as a mapping
(`locals()`, `vars()`) may hand any parameter on: every parameter holds a device there.
"""

from __future__ import annotations

import ast
import re
from typing import Iterator, Tuple

# A parameter, keyword or option whose name says it takes a device: `device`, `eval_device`, `devices`,
# `map_location`, `gpu`, `gpu_id`, `dev`.
DEVICE_NAME_RE = re.compile(r"(^|_)(device|devices|dev|map_location|location|gpu|gpus|gpu_id|gpu_ids|cuda_device)(_|$)", re.IGNORECASE)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# What a device or device type is spelled as (`cuda:1` by its type), and the words that stand for a device
# choice (`"auto"`, `"gpu"`): a parameter compared with any other string chooses something else.
DEVICE_WORDS = frozenset({"cuda", "cpu", "mps", "xpu", "hpu", "npu", "mtia", "meta", "xla", "lazy", "ipu", "ve",
                          "vulkan", "metal", "maia", "fpga", "hip", "privateuseone", "mlu", "musa", "tpu", "gpu",
                          "auto", ""})


def with_defaults(args: ast.arguments):
    """(position, parameter, default) of each parameter with a default; keyword-only ones at position -1."""
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for index, default in enumerate(args.defaults):
        yield offset + index, positional[offset + index], default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            yield -1, arg, default


def parameter_names(args: ast.arguments) -> set:
    """Every name a function's parameters bind (`*args` and `**kwargs` too)."""
    return {arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if arg is not None}


def is_cuda_device(value: object) -> bool:
    """"cuda" or "cuda:<index>": a string that names a CUDA device."""
    return isinstance(value, str) and (value == "cuda" or (value.startswith("cuda:") and value[5:].isdigit()))


def holds_device(function: ast.AST, name: str) -> bool:
    """Whether parameter `name` of `function` (a def or lambda) may hold a device (see the module's doc).
    One the body never reads holds nothing, whatever its name (`def __init__(self, device="cuda"):` of an
    HTTP client or a NumPy evaluator that keeps the parameter for a common signature)."""
    if DEVICE_NAME_RE.search(name):
        return next(_reads(function, name), None) is not None
    if _compared_with_other_words(function, name):
        return False  # `backend in ("cuda", "triton")`: it picks an implementation, whatever else reads it
    for read, holder in _reads(function, name):
        if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) and holder.func.id in ("locals", "vars"):
            return True
        if _carries(read, holder):
            return True
    return False


def _compared_with_other_words(function: ast.AST, name: str) -> bool:
    """The body compares the parameter with a string no device is spelled as (`backend == "triton"`,
    `impl in ["cuda", "ref"]`): its values name implementations, so "cuda" among them is one of those."""
    for read, holder in _reads(function, name):
        if isinstance(holder, ast.Compare):
            for operand in (holder.left, *holder.comparators):
                values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else (operand,)
                if any(isinstance(value, ast.Constant) and isinstance(value.value, str)
                       and value.value.split(":", 1)[0].lower() not in DEVICE_WORDS for value in values):
                    return True
    return False


def _carries(read: ast.Name, holder: ast.AST) -> bool:
    """A read of the parameter, in the node that holds it, may carry its value on."""
    if isinstance(holder, ast.Compare):
        return False  # `impl == "cuda"`, `impl in ("cuda", "ref")`: a choice, not a placement
    if isinstance(holder, ast.keyword):
        return holder.arg is None or bool(DEVICE_NAME_RE.search(holder.arg))  # `impl=impl` hands on a choice
    if isinstance(holder, (ast.If, ast.While, ast.Assert, ast.IfExp)) and holder.test is read:
        return False  # `if impl:` tests it
    if isinstance(holder, ast.UnaryOp) and isinstance(holder.op, ast.Not):
        return False
    if isinstance(holder, ast.Attribute):
        return False  # `impl.lower()`, `impl.startswith("cuda")`: the text of a choice
    if isinstance(holder, ast.Subscript):
        return False  # `KERNELS[impl]` reads a table by it; `impl[0]` reads its text
    if isinstance(holder, ast.Expr):
        return False  # a bare `impl` statement
    return True


def _reads(function: ast.AST, name: str) -> Iterator[Tuple[ast.Name, ast.AST]]:
    """Every load of `name` in the function's body (nested functions included, unless they bind the
    name themselves) and the node that holds it; also each `locals()`/`vars()` call, held by itself."""
    body = function.body if isinstance(function.body, list) else [function.body]
    stack = [(node, function) for node in reversed(body)]
    while stack:
        node, holder = stack.pop()
        if isinstance(node, ast.Name):
            if node.id == name and isinstance(node.ctx, ast.Load):
                yield node, holder
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("locals", "vars") and not node.args:
            yield node.func, node
        if isinstance(node, SCOPES) and node is not function and _binds(node, name):
            continue  # a nested function or class with its own `name`
        if isinstance(node, ast.Raise):
            continue  # `raise ValueError(f"not {backend!r}")`: the message of an error places nothing
        for child in ast.iter_child_nodes(node):
            stack.append((child, node))


def _binds(scope: ast.AST, name: str) -> bool:
    if isinstance(scope, ast.ClassDef):
        return False  # a class body's names do not hide the function's from its methods' reads
    arguments = scope.args
    return any(arg.arg == name for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                           arguments.vararg, arguments.kwarg) if arg is not None)


def resolved_for_mac(function: ast.AST, name: str) -> bool:
    """The body's first statements that read the parameter are `if`s that test it and rebind it, and one of
    them picks MPS for it (`if device == "cuda" and not torch.cuda.is_available(): device = "mps"`): the
    default is a preference the function resolves on each host, not a device it uses as it is."""
    picks_mps = False
    for statement in getattr(function, "body", ()):
        if not any(_is_name(node, name) for node in ast.walk(statement)):
            continue
        if not (isinstance(statement, ast.If) and any(_is_name(node, name) for node in ast.walk(statement.test))
                and any(_is_name(target, name) for inner in statement.body if isinstance(inner, ast.Assign)
                        for target in inner.targets)):
            break
        picks_mps = picks_mps or any(_names_mps(node) for inner in statement.body for node in ast.walk(inner))
    return picks_mps


def _names_mps(node: ast.AST) -> bool:
    """"mps" (or "mps:0") written, or torch's `mps` namespace (`torch.backends.mps.is_available()`) or its
    `accelerator` API (`torch.accelerator.current_accelerator()`), as names.mentions_mac_path reads them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.split(":", 1)[0] == "mps"
    return isinstance(node, ast.Attribute) and node.attr in ("mps", "accelerator")


def filled_when_omitted(function: ast.AST, name: str) -> bool:
    """Parameter `name` (default None) of a device is given a value of the function's choosing when a
    call leaves it out: a statement of the function's body tests `name is None` (or `is not None`), as
    the test of an `if` or of a conditional expression it assigns (`device = x if device is None else
    device`), or assigns `name or ...`. The body's statements are looked at, and those of its `if` blocks."""
    if not DEVICE_NAME_RE.search(name):
        return False
    statements = list(function.body)
    while statements:
        statement = statements.pop()
        if isinstance(statement, ast.If):
            if _tests_none(statement.test, name):
                return True
            statements.extend(statement.body)
            statements.extend(statement.orelse)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            value = statement.value
            if isinstance(value, ast.IfExp) and _tests_none(value.test, name):
                return True
            if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and _is_name(value.values[0], name):
                return True
    return False


def _tests_none(test: ast.AST, name: str) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and _is_name(test.left, name) and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
