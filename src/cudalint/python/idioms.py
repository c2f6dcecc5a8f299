"""Checks that need more than a lookup: data flow of device strings, device-selection
idioms, guards that raise, and a few APIs whose misuse depends on how they are called.

A rule opts into one of these with `check = "<name>"` in its `[rule.match]` table;
the names are the keys of CHECKS. Each check registers handlers on the shared
single-pass visitor and may report several codes; the context drops codes that are
not selected.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from cudalint.catalog import Rule
from cudalint.device_text import DEVICE_KEY_RE
from cudalint.project.availability import libraries_of, library_of
from cudalint.project import saved_files
from cudalint.project.device_params import DEVICE_NAME_RE
from cudalint.python import device_choices, device_index, device_tables, extension_ops, host_copies, numba_launches, oom_messages, op_coverage, program_runs, project_checks, selection_use, shipped_files, type_strings
from cudalint.python.children import assignments_in, code_children, earlier_statements, enclosing_block, find_argument, nodes_in, path_to, reads_name, unused_default
from cudalint.python.context import FileContext
from cudalint.python.host_tests import speaks_of_device
from cudalint.findings import Safety
from cudalint.python.fixplan import DEVICE, DEVICE_TYPE, TORCH, FixPlan, render
from cudalint.python.mac_failures import falsy_constant
from cudalint.python.names import conjuncts, disjuncts, dotted, is_cuda_device_string, is_cuda_string, is_none, is_true, mentions_mac_path, source_of, string_value
from cudalint.python.placement import names_cuda
from cudalint.python.semantic import guard_facts
from cudalint.python.semantic.guards import literal_guard
from cudalint.python.visitor import Registry, asserted_at_import, ends_flow
from cudalint.versions import INT_DEVICE_ACCELERATOR

BACKEND_QUERY_RE = re.compile(r"\b(cuda|xpu|npu|hpu|mlu)\b.*is_available")
_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


# -- CDL101: a CUDA device reaching a device argument ------------------------------
def _device_sink(node: cst.BaseExpression, ctx: FileContext, as_string: bool = False, whole: Optional[cst.Call] = None) -> None:
    """Every value the argument can take (a literal here, a constant, an option default, an
    attribute set in __init__, an f-string) that names CUDA, reported where it is written."""
    for value in ctx.model.values(node):
        if value.off_mac:
            continue  # the value is only chosen where CUDA is there: a selection, judged as one
        if value.is_cuda_device():
            origin = value.origin
            if value.where is not None:  # a constant of another module of the project
                path, line, column = value.where
                message = f"{source_of(node)} is {value.data!r} (set in {path}:{line}), a CUDA-only device"
                ctx.report("CDL101", node, message, None, ((value.where, f"{value.data!r} is set here"),))
            elif origin is node:
                message = f"device {source_of(node)} is CUDA-only; choose the device at run time"
                ctx.report("CDL101", node, message, _literal_fix(node, as_string, whole))
            else:
                if _checked_default(origin, ctx):
                    continue  # the parameter is rebound through a helper that picks a Mac's device
                message = f"{source_of(origin)} reaches a device argument ({source_of(node)}); CUDA-only"
                related = ((node, f"{source_of(origin)} reaches this device argument"),)
                ctx.report("CDL101", origin, message, _literal_fix(origin, as_string=True), related)
        elif value.may_be_index() and ctx.torch_version < INT_DEVICE_ACCELERATOR:
            ctx.report(
                "CDL101",
                node,
                f"device {source_of(node)} is an integer index, which means cuda:N before torch 2.5; "
                "name the device (torch.device(DEVICE.type, index))",
            )
            return


def _checked_default(origin: cst.CSTNode, ctx: FileContext) -> bool:
    """The value is the default of a parameter of a function around the node that checks it for a Mac
    first (_checked_for_mac)."""
    for holder in reversed(ctx.stack):
        if type(holder) is cst.FunctionDef:
            params = holder.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.default is origin:  # the index's choice defaults: an implementation, or resolved for a Mac
                    name = param.name.value
                    return project_checks.choice_default(holder, name, ctx) or _checked_for_mac(holder, name, ctx)
    return False


def _literal_fix(value: cst.BaseExpression, as_string: bool, whole: Optional[cst.Call] = None) -> Optional[FixPlan]:
    """"cuda" -> the accelerator in use (safe: CUDA hosts get "cuda"); "cuda:1" names an index (unsafe).
    A string stays a string (`DEVICE.type`) where the code may treat it as one; `torch.device("cuda")`
    as a whole becomes the device."""
    literal = string_value(value)
    if literal is None:
        return None
    safety = Safety.SAFE if literal == "cuda" else Safety.UNSAFE
    if whole is not None and literal == "cuda":
        return FixPlan(safety, "use the accelerator in use, else CPU", [(whole, DEVICE)])
    return FixPlan(safety, "use the accelerator in use, else CPU", [(value, DEVICE_TYPE if as_string else DEVICE)])


# Torch APIs whose device parameter is compared as a string (GradScaler: `device == "cuda"`).
STRING_DEVICE_APIS = {"torch.amp.GradScaler", "torch.GradScaler"}


def _takes_device_object(call: cst.Call, ctx: FileContext) -> bool:
    """A torch API (or `.to()`) takes a torch.device where a string was; any other callee (a config
    `dict(device="cuda")`, the project's own class) keeps a string."""
    qualified = ctx.model.resolve(call.func) or ""
    if qualified in STRING_DEVICE_APIS:
        return False
    if qualified.startswith("torch."):
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and not ctx.model.is_module_ref(call.func.value)


CUDA_API = "torch.cuda."  # calls whose own rules report them: a device given to one is their finding


def _device_call(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    qualified = ctx.model.resolve(func) or ""
    if qualified.startswith(CUDA_API) or (qualified == "torch.device" and _argument_of_cuda_api(ctx)):
        return  # `torch.cuda.max_memory_allocated(device="cuda:1")`: the CUDA call is the finding, by its own rule
    rule = ctx.rules.get("CDL101")
    if rule is not None and qualified.partition(".")[0] in rule.match.get("foreign_devices", ()):
        return  # `sounddevice.InputStream(device=2)`: a sound card's index, no torch device
    as_string = not _takes_device_object(node, ctx)
    keywords = rule.match.get("device_keywords", ("device",)) if rule is not None else ("device",)
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            _device_sink(arg.value, ctx, as_string)
        elif arg.keyword is not None and arg.keyword.value == "type" and qualified == "torch.device":
            _device_sink(arg.value, ctx, True)  # `torch.device(type="cuda", index=rank)`
    position = rule.match.get("device_positions", {}).get(qualified) if rule is not None else None
    if position is None and isinstance(func, cst.Attribute) and func.attr.value == "to":
        position = None if ctx.model.is_module_ref(func.value) else 0
    if position is None and type(func) is cst.Name:
        position = _device_parameter(func, ctx)
    if position is not None and not (qualified == "torch.device" and _only_compared(ctx, len(ctx.stack) - 1)):
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) > position:
            whole = node if qualified == "torch.device" and len(node.args) == 1 else None
            if qualified == "torch.device" and len(node.args) > 1:
                as_string = True  # torch.device(type, index): the type must be a string
            _device_sink(positional[position].value, ctx, as_string, whole)


def _device_parameter(func: cst.Name, ctx: FileContext) -> Optional[int]:
    """The position of the `device` parameter of a function or class the file defines once under the called
    name (`CLIP("cuda", ...)` for `class CLIP` whose `__init__(self, device, ...)`), where the body hands it
    to torch as a device (_places_with): an argument passed there is a device argument, as `device=` is."""
    bindings = ctx.model.lookup(func.value)
    if len(bindings) != 1 or bindings[0].kind not in ("def", "class"):
        return None
    definition = bindings[0].node
    skip = 0
    if type(definition) is cst.ClassDef:
        definition = next((statement for statement in definition.body.body if type(statement) is cst.FunctionDef
                           and statement.name.value == "__init__"), None)
        skip = 1  # `self`
    if definition is None:
        return None
    params = [*definition.params.posonly_params, *definition.params.params][skip:]
    position = next((at for at, param in enumerate(params) if param.name.value == "device"), None)
    return position if position is not None and _places_with(definition, "device", ctx) else None


def _places_with(function: cst.FunctionDef, name: str, ctx: FileContext) -> bool:
    """The function hands its parameter `name` to torch as a device: `.to(name)`, `torch.device(name)`,
    `device=name` of a torch call or a `.to`, or it keeps it as `self.<attr>` for its methods; not where it
    only reaches another library's devices (a sound card's index for sounddevice)."""
    pending: List[cst.CSTNode] = [function.body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Call:
            func = node.func
            to = type(func) is cst.Attribute and func.attr.value == "to"
            torch_call = to or (ctx.model.resolve(func) or "").startswith("torch.")
            for at, arg in enumerate(node.args):
                if type(arg.value) is not cst.Name or arg.value.value != name:
                    continue
                if arg.keyword is not None and arg.keyword.value == "device" and torch_call:
                    return True
                if arg.keyword is None and at == 0 and (to or ctx.model.resolve(func) == "torch.device"):
                    return True
        elif kind is cst.Assign and type(node.value) is cst.Name and node.value.value == name:
            if any(type(target.target) is cst.Attribute and type(target.target.value) is cst.Name
                   and target.target.value.value == "self" for target in node.targets):
                return True
        pending.extend(code_children(node))
    return False


def _argument_of_cuda_api(ctx: FileContext) -> bool:
    """The call being visited is an argument of a torch.cuda call (`torch.cuda.set_device(torch.device("cuda:1"))`)."""
    stack = ctx.stack
    return (len(stack) >= 3 and isinstance(stack[-2], cst.Arg) and isinstance(stack[-3], cst.Call)
            and (ctx.model.resolve(stack[-3].func) or "").startswith(CUDA_API))


def _only_compared(ctx: FileContext, depth: int) -> bool:
    """`device.type == torch.device("cuda").type`, `if d != torch.device("cuda"):`, `if scope != {"device":
    "cuda:0"}`: a value (the node at `depth` of the stack) built only to compare with (itself, or its type or
    index), or bound to a name only ever compared with, places nothing anywhere."""
    stack = ctx.stack
    node = stack[depth]
    holder = stack[depth - 1] if depth >= 1 else None
    if isinstance(holder, cst.Attribute) and holder.value is node and holder.attr.value in ("type", "index"):
        depth -= 1
    if ctx.compared(depth):
        return True
    # `cuda1 = torch.device("cuda:1")`, then only `get_device("cuda:1") == cuda1`: an expected value of a test
    if not (type(holder) is cst.Assign and len(holder.targets) == 1 and type(holder.targets[0].target) is cst.Name):
        return False
    reads = 0
    for path in ctx.model.scope.name_paths(holder.targets[0].target.value):
        read = len(path) - 1
        if read >= 1 and type(path[read - 1]) is cst.Attribute and path[read - 1].value is path[read] and path[read - 1].attr.value in ("type", "index"):
            read -= 1
        operand_of = path[read - 1] if read >= 1 else None
        if not isinstance(operand_of, (cst.Comparison, cst.ComparisonTarget)):
            return False  # held, handed on, stored: it may be a placement
        reads += 1
    return reads > 0


def _in_class_body(ctx: FileContext) -> bool:
    """An attribute of a class's own body (Assign -> SimpleStatementLine -> IndentedBlock -> ClassDef),
    not of a class whose constructor raises off a Mac (Composer's `DeviceGPU`, whose `dist_backend =
    "nccl"` only its instances read, and those exist only where CUDA is)."""
    return (len(ctx.stack) >= 4 and type(ctx.stack[-4]) is cst.ClassDef
            and not ctx.model.guards.constructed_off_mac(ctx.model.scope))


def _device_dict_entry(node: cst.DictElement, ctx: FileContext) -> None:
    """A config literal's device entry (`{"device": "cuda"}`): data that names where tensors go. Not one of
    a literal only compared (`if scope != {"device": "cuda:0", ...}`, or bound to a name read only so):
    what a record of a CUDA run is expected to hold, which places nothing."""
    key = string_value(node.key)
    if key is not None and DEVICE_KEY_RE.search(key) and not (type(ctx.parent) is cst.Dict and _only_compared(ctx, len(ctx.stack) - 2)):
        _device_sink(node.value, ctx, as_string=True)


def _device_attribute(node: cst.Assign, ctx: FileContext) -> None:
    """A device stored on an object or in a mapping under a device's name (`config.init_device = "cuda:0"`,
    `cfg["device"] = "cuda"`), as a config literal's entry is: data that names where tensors go, for the code
    (often a library's) that reads it back. Where the module itself reads that name back (`.to(self.device)`),
    the value is judged where it reaches the device argument, which says which argument it is; a call
    (`torch.device("cuda", rank)`) is judged as the call it is."""
    if type(node.value) is cst.Call:
        return
    for target in node.targets:
        name = _stored_name(target.target)
        if name is not None and DEVICE_KEY_RE.search(name):
            if not _read_in_module(name, ctx):
                _device_sink(node.value, ctx, as_string=True)
            return


def _read_in_module(name: str, ctx: FileContext) -> bool:
    """The module reads an attribute `name` (`x.name`) or names the key (`x["name"]`, `x.get("name")`) other
    than where an assignment stores it."""
    counts = ctx.check_state.get("device-names")
    if counts is None:
        counts = ctx.check_state["device-names"] = _device_name_counts(ctx.model.module)
    return counts.get(name, 0) > 0


def _device_name_counts(module: cst.Module) -> Dict[str, int]:
    """Per device-like name (DEVICE_KEY_RE), its attribute reads and string mentions, less its stores."""
    counts: Dict[str, int] = {}
    pending: List[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Attribute and DEVICE_KEY_RE.search(node.attr.value):
            counts[node.attr.value] = counts.get(node.attr.value, 0) + 1
        elif kind is cst.SimpleString:
            text = string_value(node)
            if text is not None and DEVICE_KEY_RE.search(text):
                counts[text] = counts.get(text, 0) + 1
        elif kind is cst.Assign:
            for target in node.targets:
                name = _stored_name(target.target)
                if name is not None and DEVICE_KEY_RE.search(name):
                    counts[name] = counts.get(name, 0) - 1
        pending.extend(code_children(node))
    return counts


def _stored_name(target: cst.BaseExpression) -> Optional[str]:
    """The attribute (`x.device`) or string key (`x["device"]`) an assignment stores to; None for a name."""
    if type(target) is cst.Attribute:
        return target.attr.value
    if type(target) is cst.Subscript and len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index:
        return string_value(target.slice[0].slice.value)
    return None


def device_sink(registry: Registry) -> None:
    registry.on(cst.Call, _device_call)
    registry.on(cst.DictElement, _device_dict_entry)
    registry.on(cst.Assign, _device_attribute)


# -- CDL104 / CDL107: device selection that forgets MPS, or collapses the type ------
def _chooses_cuda(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A CUDA arm, or an expression every value of which is one (`return cuda_device()` of a local
    helper that returns `torch.device("cuda", index=rank)`)."""
    if names_cuda(ctx.model, node):
        return True
    if not isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
        return False
    values = ctx.model.values(node)
    return bool(values) and all(value.origin is not node and (value.is_cuda_device() or names_cuda(ctx.model, value.origin)) for value in values)


@functools.lru_cache(maxsize=1)
def _legacy_cuda_types() -> FrozenSet[str]:
    """torch's legacy CUDA tensor types (CDL212's catalog entry: `torch.cuda.FloatTensor`, ...)."""
    from cudalint.catalog import load_catalog

    catalog = load_catalog()
    return frozenset(ref["name"] for ref in catalog["CDL212"].match.get("refs", ())) if "CDL212" in catalog else frozenset()


def _legacy_type(node: cst.BaseExpression, ctx: FileContext, cuda: bool) -> bool:
    """`torch.cuda.FloatTensor` (cuda) or its CPU counterpart `torch.FloatTensor`: a selection of the tensor type
    (`torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor`) chooses the device with it."""
    if type(node) not in (cst.Attribute, cst.Name):
        return False
    qualified = ctx.model.resolve(node) or ""
    if cuda:
        return qualified in _legacy_cuda_types()
    return qualified.startswith("torch.") and f"torch.cuda.{qualified[len('torch.'):]}" in _legacy_cuda_types()


def _is_cpu_arm(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """"cpu" (or "cpu:0", the same device), as it is or as `torch.device(...)`; or -1, the CPU of Hugging Face's
    pipelines (transformers/pipelines/base.py: `device=-1` runs on the CPU), beside a CUDA ordinal."""
    if _names_cpu(string_value(node)) or (type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus
                                          and type(node.expression) is cst.Integer and node.expression.value == "1"):
        return True
    if _legacy_type(node, ctx, cuda=False):
        return True
    named = _named_strings(node, ctx)
    if named:
        return all(_names_cpu(value.text) for value in named)
    return (
        isinstance(node, cst.Call)
        and ctx.imports.resolve(node.func) == "torch.device"
        and bool(node.args)
        and _names_cpu(string_value(node.args[0].value))
    )


def _named_strings(node: cst.BaseExpression, ctx: FileContext) -> tuple:
    """The string values of a name or attribute every binding of which is a string constant
    (`CUDA = "cuda"` here or in a module it imports from); empty for anything else."""
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return ()
    values = ctx.model.values(node)
    if not values or not all(value.kind == "str" and value.origin is not node for value in values):
        return ()
    return values


def _names_cpu(text: Optional[str]) -> bool:
    return text in ("cpu", "cpu:0")


def _is_device_argument(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """The expression is what a device parameter receives: `torch.device(<it>)`, `device=<it>`, `.to(<it>)`,
    or what is assigned to a device (`device = <it>`, `self.device = <it>`, `kwargs["device"] = <it>`)."""
    stack = ctx.stack
    arg = stack[-2] if len(stack) >= 2 else None
    call = stack[-3] if len(stack) >= 3 else None
    if type(arg) is cst.Assign and arg.value is node and len(arg.targets) == 1:
        target = arg.targets[0].target
        key = target.slice[0].slice.value if type(target) is cst.Subscript and _chosen_name(target) else None
        name = string_value(key) if key is not None else _chosen_name(target).rpartition(".")[2]
        return name == "device"
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.value is not node:
        return False
    if arg.keyword is not None:
        return arg.keyword.value == "device"
    if call.args[0] is not arg:
        return False
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "to":
        return not ctx.model.is_module_ref(func.value)
    return ctx.model.resolve(func) == "torch.device"


def _is_cuda_ordinal(arm: cst.BaseExpression, test: cst.BaseExpression, ctx: FileContext) -> bool:
    """`torch.device(0 if torch.cuda.is_available() else "cpu")`: an index chosen because CUDA is there."""
    return isinstance(arm, cst.Integer) and ctx.model.guard(test).when_true


def _is_accelerator_choice(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """The expression is an accelerator's name: `accelerator=<it>` (Lightning's Trainer, Fabric), or the
    value of a name or attribute called so (`accelerator = <it>`, `self.accelerator = <it>`)."""
    stack = ctx.stack
    holder = stack[-2] if len(stack) >= 2 else None
    if isinstance(holder, cst.Arg) and holder.value is node:
        return holder.keyword is not None and holder.keyword.value == "accelerator"
    if isinstance(holder, cst.Assign) and holder.value is node and len(holder.targets) == 1:
        return _chosen_name(holder.targets[0].target).rpartition(".")[2] == "accelerator"
    return False


def _is_gpu_under_cuda(arm: cst.BaseExpression, test: cst.BaseExpression, ctx: FileContext) -> bool:
    """`accelerator="gpu" if torch.cuda.is_available() else "cpu"`: Lightning's GPU, which on a Mac is MPS,
    chosen only where CUDA is there."""
    return string_value(arm) == "gpu" and ctx.model.guard(test).when_true


def _compares_to_cuda(test: cst.BaseExpression) -> bool:
    """A test of a device's (or a tensor's) type against CUDA: `"cuda" in str(device)`, `device.type ==
    "cuda"`, `x.is_cuda`."""
    if type(test) is cst.Attribute and test.attr.value == "is_cuda":
        return True
    if isinstance(test, cst.Comparison):
        return is_cuda_string(test.left) or any(is_cuda_string(t.comparator) for t in test.comparisons)
    if isinstance(test, cst.Call) and (dotted(test.func) or "").endswith("startswith"):
        return bool(test.args) and is_cuda_string(test.args[0].value)
    return False


def _after_a_mac_test(ctx: FileContext) -> bool:
    """The node lies in the `else` (or an `elif`) of an `if` of its function whose test names MPS or the
    accelerator API: the code picks a Mac's device first, and comes here where that was not chosen."""
    stack = ctx.stack
    for index in range(len(stack) - 2, 0, -1):
        holder, child = stack[index], stack[index + 1]
        if isinstance(holder, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if type(holder) is cst.If and holder.orelse is child and mentions_mac_path(holder.test):
            return True
    return False


def _mark_arm(node: cst.BaseExpression, ctx: FileContext) -> None:
    ctx.handled.add(id(node))
    if isinstance(node, cst.Call) and node.args:
        ctx.handled.add(id(node.args[0].value))


def _selection_expression(node: cst.IfExp, ctx: FileContext) -> None:
    parent = ctx.parent
    if isinstance(parent, cst.IfExp) and parent.orelse is node:
        return  # a later link of a chain already judged at its head
    tests: List[cst.BaseExpression] = []
    arms: List[cst.BaseExpression] = []
    link: cst.BaseExpression = node
    while isinstance(link, cst.IfExp):
        tests.append(link.test)
        arms.append(link.body)
        link = link.orelse
    arms.append(link)
    ordinal = _is_device_argument(node, ctx)
    accelerator = _is_accelerator_choice(node, ctx)
    typed = any(_legacy_type(arm, ctx, cuda=False) for arm in arms)  # `torch.cuda.FloatTensor if ... else torch.FloatTensor`
    cuda_arms = [
        arm for index, arm in enumerate(arms)
        if names_cuda(ctx.model, arm) or (typed and _legacy_type(arm, ctx, cuda=True)) or (index < len(tests) and (
            (ordinal and _is_cuda_ordinal(arm, tests[index], ctx)) or (accelerator and _is_gpu_under_cuda(arm, tests[index], ctx))))
    ]
    if len(tests) == 1 and _moved_or_kept(arms[0], arms[1], ctx):
        _conditional_move(node, tests[0], ctx)  # `x.cuda() if torch.cuda.is_available() else x`
        return
    if not cuda_arms:
        chosen = _chosen_unless_cuda_missing(tests, arms, ctx)
        if chosen is not None and not selection_use.is_not_a_porting_problem(node, ctx):
            ctx.report(
                "CDL104",
                node,
                f"{source_of(chosen)} is replaced by the CPU wherever CUDA is missing, so a Mac never gets "
                "'mps' even when asked for it; keep the chosen device (test that its own backend is available)",
            )
        return
    for arm in cuda_arms:
        _mark_arm(arm, ctx)
    if any(mentions_mac_path(part) for part in tests + arms):
        return  # a selection with an MPS/XPU/accelerator arm is portable
    if not any(_is_cpu_arm(arm, ctx) for arm in arms):
        return
    if _after_a_mac_test(ctx):
        return  # `if use_device is None and torch.backends.mps.is_available(): device = "mps"` / `else: <this>`
    if all(index < len(tests) and _bound_false(tests[index], ctx) for index, arm in enumerate(arms) if arm in cuda_arms):
        return  # `"cuda" if ON_GPU else "cpu"` with `ON_GPU = False`: the CPU, everywhere
    if all(_compares_to_cuda(test) for test in tests):
        ctx.report(
            "CDL107",
            node,
            "device type collapses to 'cuda' or 'cpu': an 'mps' device becomes 'cpu' (autocast and "
            "friends silently run on CPU); pass the device's own type",
        )
    elif not selection_use.is_not_a_porting_problem(node, ctx):
        ctx.report(
            "CDL104",
            node,
            "device selection falls back to CPU and forgets MPS and other accelerators; pick the "
            "available accelerator, then CPU",
            _selection_fix(node, tests, arms, ctx),
            covers=tuple(cuda_arms),  # `"cpu" if gpu is None else f"cuda:{gpu}"` in a call: CDL101 reported there first
        )


def _bound_false(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name every binding of which assigns False (or None, 0): the test never holds."""
    if type(test) is not cst.Name:
        return False
    values = ctx.model.assigned(test)
    return bool(values) and all(falsy_constant(value) for value, _ in values)


def _chosen_unless_cuda_missing(tests, arms, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """`device if torch.cuda.is_available() else "cpu"` (or `"cpu" if not torch.cuda.is_available() else
    device`): a device the caller chose (a name, or an attribute, named for a device) kept only where CUDA
    is available, the CPU everywhere else. The chosen arm, or None."""
    if len(tests) != 1 or not (_is_cpu_arm(arms[0], ctx) or _is_cpu_arm(arms[1], ctx)):
        return None  # (the shape first: the guard evaluator only for a choice with a CPU arm)
    outcome = _cuda_outcome(tests[0], ctx)
    if outcome is None:
        return None
    kept, cpu = (arms[0], arms[1]) if outcome else (arms[1], arms[0])
    if not _is_cpu_arm(cpu, ctx):
        return None
    name = kept.value if type(kept) is cst.Name else kept.attr.value if type(kept) is cst.Attribute else None
    return kept if name is not None and DEVICE_NAME_RE.search(name) is not None else None


def _cuda_outcome(test: cst.BaseExpression, ctx: FileContext) -> Optional[bool]:
    """Which outcome of a test only a CUDA host sees (`torch.cuda.is_available()`, a name bound to it, `device
    is None or not use_cuda`: the guard evaluator's answer), or None: neither, or a test that names a path a Mac
    takes or the platform (`sys.platform == "darwin"`), where keeping the CPU on a Mac is the author's choice."""
    guard = ctx.model.guard(test)
    if guard.when_true == guard.when_false or mentions_mac_path(test) or ctx.model.guards.tests_platform(test, ctx.model.scope):
        return None
    # not a test of a device's type (`self.device.type == "cuda"`), which keeps the CPU for a part the author
    # runs on CUDA alone
    return guard.when_true if _asks_host(test, ctx) else None


def _kept_unless_cuda_missing(node: cst.If, ctx: FileContext) -> Optional[str]:
    """The statement form of _chosen_unless_cuda_missing: `if not torch.cuda.is_available(): self.device =
    "cpu"`, with an `else:` that keeps a device the caller chose (`self.device = device`) or with none (the
    target keeps what it held); also `if torch.cuda.is_available(): target = device` / `else: target = "cpu"`.
    The device kept is named for one (a name, or an attribute; with no `else`, the target itself). The kept
    device's source, or None."""
    if node.orelse is not None and type(node.orelse) is not cst.Else:
        return None  # an elif chain chooses among more than two
    missing, other = node.body, node.orelse.body if node.orelse is not None else None
    if not any(target and _is_cpu_arm(value, ctx) for block in (missing, other) if block is not None
               for target, value in _chosen(block)):
        return None  # (the shape first: the guard evaluator only for an `if` that sets the CPU somewhere)
    outcome = _cuda_outcome(node.test, ctx)
    if outcome is None or (outcome and other is None):
        return None
    if outcome:
        missing, other = other, missing
    kept_values = {name: value for name, value in _chosen(other) if name} if other is not None else {}
    for target, value in _chosen(missing):
        if not target or not _is_cpu_arm(value, ctx) or target.rpartition(".")[2] == "map_location":
            continue  # (a return; where torch.load puts a checkpoint, the CPU is the portable place to load to)
        if other is None:
            if DEVICE_NAME_RE.search(target.rpartition(".")[2]) is not None:
                return target  # what the target held before: the caller's choice
            continue
        kept = kept_values.get(target)
        if kept is not None and type(kept) in (cst.Name, cst.Attribute) and DEVICE_NAME_RE.search(
                kept.value if type(kept) is cst.Name else kept.attr.value) is not None:
            return source_of(kept)
    return None


def _selection_fix(node: cst.IfExp, tests, arms, ctx: FileContext) -> Optional[FixPlan]:
    """`"cuda" if torch.cuda.is_available() else "cpu"` (either arm may be torch.device(...)) -> the
    available accelerator, else "cpu"; safe because CUDA hosts still get "cuda"."""
    if len(tests) != 1 or not _is_availability_query(tests[0], ctx):
        return None
    if not (names_cuda(ctx.model, arms[0]) and _is_cpu_arm(arms[1], ctx)):
        return None
    if not (string_value(arms[0]) == "cuda" or _plain_device_call(arms[0])):
        return None  # "cuda:1" names a device index: no safe rewrite
    stack = ctx.stack
    holder = stack[-3] if len(stack) >= 3 and isinstance(stack[-2], cst.Arg) else None
    if isinstance(holder, cst.Call) and len(holder.args) == 1 and ctx.model.resolve(holder.func) == "torch.device":
        node = holder  # torch.device("cuda" if ... else "cpu") as a whole: the device, not a device of its type
    text = DEVICE if isinstance(arms[0], cst.Call) or node is holder else DEVICE_TYPE
    return FixPlan(Safety.SAFE, "pick the available accelerator, else CPU", [(node, text)])


def _plain_device_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and len(node.args) == 1 and string_value(node.args[0].value) == "cuda"


def _branches(node: cst.If):
    """(test, body) pairs of an if/elif chain, then the else body (or None)."""
    pairs = []
    link: Optional[cst.BaseSuite] = node
    while isinstance(link, cst.If):
        pairs.append((link.test, link.body))
        link = link.orelse
    return pairs, (link.body if isinstance(link, cst.Else) else None)


def _chosen(block: cst.BaseSuite) -> List[Tuple[Optional[str], cst.BaseExpression]]:
    """(name, value) of each `name = value` (also `args.device = value`) and (None, value) of each `return
    value` among the simple statements directly in a block (`x = ...` lines, `else: return ...`); "" names any
    other target."""
    if isinstance(block, cst.SimpleStatementSuite):
        return _chosen_by(block.body)
    return _chosen_by([small for line in block.body if isinstance(line, cst.SimpleStatementLine) for small in line.body])


def _chosen_by(smalls) -> List[Tuple[Optional[str], cst.BaseExpression]]:
    chosen: List[Tuple[Optional[str], cst.BaseExpression]] = []
    for small in smalls:
        if isinstance(small, cst.Return) and small.value is not None:
            chosen.append((None, small.value))
        elif isinstance(small, cst.Assign):
            target = small.targets[0].target if len(small.targets) == 1 else None
            chosen.append((_chosen_name(target), small.value))
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            chosen.append((_chosen_name(small.target), small.value))
    return chosen


def _chosen_name(target) -> str:
    """A name, an attribute of a name (`args.device`, `self.device`) or a string key of either
    (`params["device"]`, `self.nn_params["device"]`) as written; "" for any other target."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return source_of(target)
    if (isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)
            and string_value(target.slice[0].slice.value) is not None and _chosen_name(target.value)):
        return source_of(target)
    return ""


def _chosen_in_branches(block: cst.BaseSuite, depth: int = 0):
    """_chosen of a block and of the branches of the if statements in it (`if distributed: device =
    f"cuda:{rank}" else: device = "cuda:0"` inside the CUDA branch), with the tests of those ifs."""
    chosen = _chosen(block)
    tests: List[cst.BaseExpression] = []
    if isinstance(block, cst.IndentedBlock) and depth < 4:
        for statement in block.body:
            if isinstance(statement, cst.If):
                pairs, else_body = _branches(statement)
                for test, body in pairs:
                    tests.append(test)
                    inner, inner_tests = _chosen_in_branches(body, depth + 1)
                    chosen += inner
                    tests += inner_tests
                if else_body is not None:
                    inner, inner_tests = _chosen_in_branches(else_body, depth + 1)
                    chosen += inner
                    tests += inner_tests
    return chosen, tests


def _assigned_values(block: cst.BaseSuite) -> List[cst.BaseExpression]:
    """Values assigned or returned by the simple statements directly in a block."""
    return [value for _, value in _chosen(block)]


def _beside(node: cst.If, ctx: FileContext, names: Set[Optional[str]]) -> Tuple[List[Tuple[Optional[str], cst.BaseExpression]], List[Tuple[Optional[str], cst.BaseExpression]]]:
    """What comes around an `if` in its block: the nearest simple statement before it that assigns each
    of `names` (`device = torch.device("cpu")`, then seeding, then the `if`), looking back over simple
    statements only (a compound one may choose again), and what the statement right after it assigns or
    returns."""
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    if found is None:
        return [], []
    body, index = found
    before: List[Tuple[Optional[str], cst.BaseExpression]] = []
    seen: Set[str] = set()
    for earlier in reversed(body[max(0, index - LOOK_BACK):index]):
        if not isinstance(earlier, cst.SimpleStatementLine):
            break
        found = [(name, value) for name, value in _chosen_by(earlier.body) if name and name in names and name not in seen]
        before += found  # the nearest assignment of each name (`args.pin_memory = False` right before the device's)
        seen.update(name for name, _ in found)
        if seen >= {name for name in names if name}:
            break
    after = body[index + 1] if index + 1 < len(body) else None
    if isinstance(after, cst.SimpleStatementLine) and _chosen_by(after.body):
        return before, _chosen_by(after.body)
    fallen = _fall_through_return(ctx)
    return before, [(None, fallen)] if fallen is not None else []


QUIET_STATEMENTS = (cst.Expr, cst.Pass)  # a log line, a warning, `pass`: nothing chosen, nothing left


def _fall_through_return(ctx: FileContext) -> Optional[cst.BaseExpression]:
    """What the function returns where the `if` at the end of the walk's stack does not return: the first
    statement after it, past log lines and out of the `if`/`else` branches around it, when that is a
    `return` (`if device_type == "gpu": if torch.cuda.is_available(): return cuda / logger.info(...)`,
    then `return torch.device("cpu")` at the end of the function). None where another statement, a loop
    or the function's end comes first."""
    stack = ctx.stack
    at = len(stack) - 1
    while at >= 2:
        found = enclosing_block(stack, at) if isinstance(stack[at - 1], cst.IndentedBlock) else None
        if found is None:
            return None
        body, index = found
        for statement in body[index + 1:]:
            if not isinstance(statement, cst.SimpleStatementLine):
                return None
            for small in statement.body:
                if isinstance(small, cst.Return):
                    return small.value
                if not isinstance(small, QUIET_STATEMENTS):
                    return None
        holder = stack[at - 2]
        if isinstance(holder, cst.Else):  # the else of an `if`: out of the `if` itself
            at -= 3
        elif isinstance(holder, cst.If):
            at -= 2
        else:
            return None  # a loop, a `with`, a `try`, the function's end
        while at >= 1 and isinstance(stack[at - 1], cst.If) and stack[at - 1].orelse is stack[at]:
            at -= 1  # an `elif` is the `else` of the `if` before it: out to the head of the chain
    return None


LOOK_BACK = 8  # simple statements between a CPU choice and the `if` that may replace it


def _returned_last(node: cst.If, ctx: FileContext) -> Optional[cst.IndentedBlock]:
    """The statement that ends the function whose body holds `node` (an `if` with no else), as a block of
    its own, when it is a `return` and nothing between them names a path that works on a Mac: what the
    function returns wherever the `if` did not return first."""
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    if found is None or len(ctx.stack) < 3 or not isinstance(ctx.stack[-3], cst.FunctionDef):
        return None
    body, index = found
    last = body[-1]
    if index == len(body) - 1 or not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Return)):
        return None
    if any(mentions_mac_path(statement) for statement in body[index + 1:]):
        return None
    return cst.IndentedBlock(body=[last])


def _ends_in_return(block: cst.BaseSuite) -> bool:
    last = block.body[-1] if block.body else None
    if isinstance(block, cst.SimpleStatementSuite):
        return isinstance(last, cst.Return)
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)


def _is_chain_head(node: cst.If, ctx: FileContext) -> bool:
    parent = ctx.parent
    return not (isinstance(parent, cst.If) and parent.orelse is node)


def _selection_statement(node: cst.If, ctx: FileContext) -> None:
    """`if <CUDA>: device = "cuda"` / `else: device = "cpu"`, and the same with returns; or with no
    else, a CPU choice around the `if`: `device = "cpu"` just before it (the same name), or `return
    "cpu"` just after an `if` whose body returns the CUDA choice. The CPU choice is looked for first:
    it is plain syntax, and most if statements have none, so the guard and the values are asked
    about the few that do. A test written as a constant (`if False:  # torch.cuda.is_available()`) chooses
    nothing at run time."""
    if literal_guard(node.test) is not None:
        return
    kept = _kept_unless_cuda_missing(node, ctx)
    if kept is not None:
        ctx.report(
            "CDL104",
            node,
            f"{kept} is replaced by the CPU wherever CUDA is missing, so a Mac never gets 'mps' even when asked "
            "for it; keep the chosen device (test that its own backend is available)",
        )
        return
    if (_moves_to_cuda(node.body, ctx) and (node.orelse is None or _other_hosts_only(node.orelse, ctx))) or (
            _else_moves_nothing(node) and _some_move_to_cuda(node.body, ctx)):
        if not any(mentions_mac_path(test) for test in _earlier_tests(node, ctx)) and not _mac_path_after(node, ctx):
            _conditional_move(node, node.test, ctx, other_branch=node.orelse is not None)  # the head, or the last `elif` of a chain that never picks MPS
        return
    kept = _kept_unless_available(node, ctx)
    if kept is not None:
        _conditional_move(node, kept, ctx)  # `if not torch.cuda.is_available(): return batch`, then `batch.cuda()`
        return
    head = _is_chain_head(node, ctx)
    if not head and node.orelse is None:
        return
    pairs, else_body = _branches(node)
    negated = head and len(pairs) == 1 and any(_is_cpu_arm(value, ctx) for value in _assigned_values(pairs[0][1]))
    returned = _returned_last(node, ctx) if negated and else_body is None and _ends_in_return(pairs[0][1]) else None
    negated = negated and (else_body is not None or returned is not None) and _false_only_off_mac(node.test, ctx)
    if negated and else_body is None:  # `if <no CUDA>: return "cpu"`, then the function returns the other choice
        else_body = returned
    if negated:  # `if <no CUDA>: device = "cpu"` / `else: device = "cuda"`: the same selection, its arms swapped
        pairs, else_body = [(node.test, else_body)], pairs[0][1]
    first, nested_tests = _chosen_in_branches(pairs[0][1])
    if not first:
        return
    if not head and not (any(_chooses_cuda(value, ctx) for _, value in first) and _first_cuda_test(node, ctx)):
        return  # an `elif` is judged as a chain of its own only where it is the chain's CUDA test choosing CUDA
    names = {name for name, _ in first}
    if not any(_is_cpu_arm(value, ctx) for value in _other_choices(node, pairs, else_body, names, ctx)):
        return
    if any(mentions_mac_path(part) for part in [test for test, _ in pairs] + nested_tests + [value for _, value in first]):
        return
    if not negated and not ctx.model.guard(node.test).when_true and not _cuda_or_raise(pairs[0][1], ctx):
        return
    cuda_names = {name for name, value in first if _chooses_cuda(value, ctx)}
    if not cuda_names:
        return
    other = _other_choices(node, pairs, else_body, cuda_names, ctx)
    if any(mentions_mac_path(value) for value in other) or not any(_is_cpu_arm(v, ctx) for v in other):
        return
    if any(type(value) is cst.IfExp and _chooses_cuda(value.body, ctx) and _is_cpu_arm(value.orelse, ctx) for value in other):
        return  # `elif device is None: d = "cuda" if available else "cpu"`: that selection is reported where it is
    if selection_use.keyed_on_backend(node.test, ctx):
        return  # `if backend == "nccl": return cuda_device()` / `else: return cpu`: gloo, a Mac's only backend, takes CPU tensors
    if selection_use.serves_collectives(ctx, cuda_names):
        return  # the tensors of a collective: gloo, a Mac's only backend, takes CPU tensors
    if selection_use.fallback_never_runs(ctx):
        return  # fills a device parameter every call in the project passes
    if selection_use.names_never_read(cuda_names, ctx):
        return  # `self._device` (or a local) that nothing reads: the choice changes nothing
    if None in cuda_names and selection_use.returns_mac_elsewhere(ctx, node):
        return  # a return of the function picks MPS before (or beside) this choice
    if selection_use.loads_only_after(node, cuda_names, ctx):
        return  # only where a load puts a checkpoint before `load_state_dict` copies it into the model
    if else_body is None and len(pairs) == 1 and _mac_path_after(node, ctx):
        return  # `device = "cpu"`, `if cuda: device = "cuda"`, then `if mps: device = "mps"`: a choice in steps
    if _mac_chosen_before(node, cuda_names, ctx):
        return  # `try: torch.mps.current_allocated_memory(); name = "mps"`, then `if name is None:` this: a step
    ctx.report(
        "CDL104",
        node,
        "device selection falls back to CPU and forgets MPS and other accelerators; pick the "
        "available accelerator, then CPU",
    )


def _false_only_off_mac(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """A test whose falsehood means CUDA: `not torch.cuda.is_available()`, `device_type == "cpu" or not
    use_cuda`; its else branch is the CUDA one."""
    guard = ctx.model.guard(test)
    return guard.when_false and not guard.when_true


def _cuda_or_raise(block: cst.BaseSuite, ctx: FileContext) -> bool:
    """The branch takes CUDA or stops: `if torch.cuda.is_available(): device = "cuda"` / `else: raise
    ValueError(...)` (simpletransformers' `if use_cuda:` branch), or `if not torch.cuda.is_available():
    raise ...` before its choice. Whatever picks the branch (a `use_cuda` switch), it never picks MPS."""
    if not isinstance(block, cst.IndentedBlock):
        return False
    for statement in block.body:
        if type(statement) is not cst.If:
            continue
        guard = ctx.model.guard(statement.test)
        if guard.when_true and isinstance(statement.orelse, cst.Else) and ends_flow(statement.orelse.body, ctx.model) == "raise":
            return True
        if guard.when_false and statement.orelse is None and ends_flow(statement.body, ctx.model) == "raise":
            return True
    return False


def _other_hosts_only(orelse: cst.CSTNode, ctx: FileContext) -> bool:
    """`elif torch.npu.is_available(): model = model.npu()` and the like, with no `else`: every later
    branch of the chain runs only on a host that is not a Mac (the guard evaluator's answer), so on a
    Mac none runs and the values stay on the CPU."""
    while type(orelse) is cst.If:
        if mentions_mac_path(orelse.test) or not ctx.model.guard(orelse.test).when_true:
            return False
        orelse = orelse.orelse
    return orelse is None


def _mac_chosen_before(node: cst.If, names: Set[Optional[str]], ctx: FileContext) -> bool:
    """An assignment of one of the selection's names, earlier in its function (in the order the code runs),
    picks a Mac's device (`accelerator_name = "mps"` after a successful MPS probe): the selection is a later
    step of a detection in steps, which has already offered MPS."""
    function = next((held for held in reversed(ctx.stack) if isinstance(held, (cst.FunctionDef, cst.Module))), None)
    wanted = {name for name in names if name}
    if function is None or not wanted:
        return False
    pending: List[cst.CSTNode] = [function.body if isinstance(function, cst.FunctionDef) else function]
    while pending:
        current = pending.pop()
        if current is node:
            return False
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and current is not function:
            continue
        if type(current) is cst.Assign and any(
                type(target.target) is cst.Name and target.target.value in wanted for target in current.targets) \
                and mentions_mac_path(current.value):
            return True
        pending.extend(reversed(code_children(current)))
    return False


def _mac_path_after(node: cst.If, ctx: FileContext) -> bool:
    """The statement right after the `if` is an `if` (or a chain) that tests for MPS: `if
    torch.cuda.is_available(): return x.cuda()` then `if torch.backends.mps.is_available(): return
    x.to("mps")` picks the Mac's GPU too."""
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    after = found[0][found[1] + 1] if found is not None and found[1] + 1 < len(found[0]) else None
    while type(after) is cst.If:
        if mentions_mac_path(after.test):
            return True
        after = after.orelse
    return False


def _first_cuda_test(node: cst.If, ctx: FileContext) -> bool:
    """An `elif` whose test is the chain's first CUDA guard, after branches that neither test for nor pick
    MPS (`if local_rank != -1: <distributed CUDA>` / `elif torch.cuda.is_available(): device = "cuda"` /
    `else: device = "cpu"`): the selection a Mac runs starts there."""
    if not ctx.model.guard(node.test).when_true:
        return False
    earlier = _earlier_holders(node, ctx)
    return not any(mentions_mac_path(holder.test) or mentions_mac_path(holder.body) or ctx.model.guard(holder.test).when_true
                   for holder in earlier)


def _earlier_holders(node: cst.If, ctx: FileContext) -> List[cst.If]:
    """The branches before an `elif` in its chain, nearest first (none for the chain's head)."""
    holders: List[cst.If] = []
    stack, current = ctx.stack, node
    for index in range(len(stack) - 2, -1, -1):
        holder = stack[index]
        if type(holder) is not cst.If or holder.orelse is not current:
            break
        holders.append(holder)
        current = holder
    return holders


def _earlier_tests(node: cst.If, ctx: FileContext) -> List[cst.BaseExpression]:
    """The tests of the branches before an `elif` in its chain (none for the chain's head):
    `if device: model.to(device)` / `elif torch.cuda.is_available(): model.to("cuda")`."""
    return [holder.test for holder in _earlier_holders(node, ctx)]


PLACING_METHODS = frozenset({"to", "cuda", "xpu", "npu", "mps"})  # methods that put a value on a device other than the CPU


def _else_moves_nothing(node: cst.If) -> bool:
    """The `if` has a plain `else` that places nothing (`net.load_state_dict(torch.load(path,
    map_location="cpu"))`): no `.cuda()`/`.to(...)` call, no `device=`, and no word of MPS."""
    orelse = node.orelse
    if not isinstance(orelse, cst.Else) or mentions_mac_path(orelse.body):
        return False
    for call in _calls_in(orelse.body):
        if type(call.func) is cst.Attribute and call.func.attr.value in PLACING_METHODS:
            return False
        if any(arg.keyword is not None and "device" in arg.keyword.value for arg in call.args):
            return False
    return True


def _some_move_to_cuda(block: cst.BaseSuite, ctx: FileContext) -> bool:
    """A statement directly in the block moves a module to CUDA in place, or returns a value moved there,
    as `_moves_to_cuda` reads one (`net.to(torch.device("cuda"))` after loading its weights; voicefixer's
    `return tensor.cuda()` / `else: return tensor.cpu()`), and none tests for MPS. An assignment
    (`F_prev = torch.tensor(nan).cuda()` / `else: F_prev = torch.tensor(nan)`) makes a value in each
    branch: a choice of values, not a placement left undone."""
    if not isinstance(block, cst.IndentedBlock) or mentions_mac_path(block):
        return False
    return any(_statement_moves_to_cuda(statement, ctx, (cst.Expr, cst.Return)) for statement in block.body)


def _moved_or_kept(moved: cst.BaseExpression, kept: cst.BaseExpression, ctx: FileContext) -> bool:
    """`x.cuda()` (or `x.to("cuda")`) beside `x` itself: the arms of a move made under a condition."""
    return _moved_to_cuda(moved, ctx) and source_of(moved.func.value) == source_of(kept)


def _conditional_move(node: cst.CSTNode, test: cst.BaseExpression, ctx: FileContext, *, other_branch: bool = False) -> None:
    """`if torch.cuda.is_available(): model = model.cuda()` with no other branch (`other_branch`: an
    `else` that moves nothing), `x.cuda() if torch.cuda.is_available() else x`, or `if not
    torch.cuda.is_available(): return x` before `x.cuda()`: where the test fails, a Mac included, the values
    stay where they were made, on the CPU. The same selection as a device chosen "cuda" else "cpu", written
    as a move."""
    if mentions_mac_path(test):
        return
    if not other_branch and any(host_copies.tests_cuda_device(part) for part in conjuncts(test)) and not _asks_host(test, ctx):
        ctx.report(  # `if self.device == "cuda": model.cuda()`: a device of another type leaves it on the CPU
            "CDL107",
            node,
            "moved to the device only where its type is 'cuda': with 'mps' (or any other accelerator) the value "
            "stays on the CPU; move it with .to(device) whatever the type",
        )
        return
    if not _asks_host(test, ctx) or not ctx.model.guard(test).when_true:
        return
    if selection_use.serves_collectives(ctx) or selection_use.in_test_variant(ctx):
        return
    ctx.report(
        "CDL104",
        node,
        "moved to CUDA only when it is available, else left on the CPU: a Mac's GPU is never used; move "
        "to the available accelerator",
    )


def _asks_host(test: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """One part of the test (of an `and` or an `or`, under `not`) is an availability query
    (`torch.cuda.is_available()`, `device_count() > 0`), or a name (or `self.<flag>` the file's classes bind)
    bound to one: a question about the host, not about where a value already is (`y.is_cuda`) nor what a
    caller passed (a parameter)."""
    for part in _operands(test):
        if _is_availability_query(part, ctx):
            return True
        if (type(part) is cst.Name or type(part) is cst.Attribute) and depth < 4:
            bindings = ctx.model.bindings_of(part)
            if not bindings or not all(binding.kind == "assign" and binding.value is not None for binding in bindings):
                continue
            if any(_asks_host(binding.value, ctx, depth + 1) for binding in bindings):
                return True
            if _set_only_where_cuda_is(bindings, ctx):
                return True
    return False


def _operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands of a test's `and`s and `or`s, each with any `not` taken off."""
    found: List[cst.BaseExpression] = []
    pending = [test]
    while pending:
        part = pending.pop()
        if type(part) is cst.UnaryOperation and type(part.operator) is cst.Not:
            pending.append(part.expression)
        elif type(part) is cst.BooleanOperation:
            pending.extend((part.right, part.left))
        else:
            found.append(part)
    return found


def _set_only_where_cuda_is(bindings, ctx: FileContext) -> bool:
    """A flag bound to False, and to True only under a CUDA guard (`self.cuda = False`, then `if
    torch.cuda.is_available(): self.cuda = True`): the availability query in two steps."""
    constants = [binding.value.value == "True" if type(binding.value) is cst.Name and binding.value.value in ("True", "False")
                 else None for binding in bindings]
    if None in constants or True not in constants or False not in constants:
        return False
    return all(ctx.model.guards.binding_off_mac(binding, 1) for binding, constant in zip(bindings, constants) if constant)


def _kept_unless_available(node: cst.If, ctx: FileContext) -> Optional[cst.BaseExpression]:
    """`if not torch.cuda.is_available(): return batch` and a later statement of the block moves `batch` to
    CUDA (`batch = batch.cuda()`, `return batch.cuda()`, also under a test of its kind): a helper that moves
    its argument to CUDA, else hands it back where it is. The availability query is returned (the test
    whose truth means the move)."""
    test = node.test
    if node.orelse is not None or type(test) is not cst.UnaryOperation or type(test.operator) is not cst.Not:
        return None
    body = node.body.body  # the statements of a block, or the small statements of a one-line suite
    last = body[-1] if len(body) == 1 else None
    small = last.body[0] if type(last) is cst.SimpleStatementLine and len(last.body) == 1 else last
    if type(small) is not cst.Return or type(small.value) is not cst.Name:
        return None
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    if found is None:
        return None
    statements, index = found
    name = small.value.value
    for statement in statements[index + 1:]:
        for call in _calls_in(statement):
            if _moved_to_cuda(call, ctx) and type(call.func.value) is cst.Name and call.func.value.value == name:
                return test.expression
    return None


def _moves_to_cuda(block: cst.BaseSuite, ctx: FileContext) -> bool:
    """Every statement of the block moves a value to CUDA (`x = x.cuda()`, `model.cuda()`, `x =
    x.to("cuda")`, `return x.cuda()`), and there is at least one."""
    if not isinstance(block, cst.IndentedBlock) or not block.body:
        return False
    return all(_statement_moves_to_cuda(statement, ctx, (cst.Expr, cst.Assign, cst.Return)) or _moves_if_it_is(statement, ctx)
               for statement in block.body)


def _moves_if_it_is(statement: cst.CSTNode, ctx: FileContext) -> bool:
    """`if isinstance(x, torch.Tensor): x = x.to("cuda")` (or `if x is not None:`), no `else`: a move of
    what is there to move, which a move of the block's other values may sit beside."""
    if type(statement) is not cst.If or statement.orelse is not None:
        return False
    test = statement.test
    typed = (type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "isinstance") or (
        type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.IsNot
        and is_none(test.comparisons[0].comparator))
    return typed and _moves_to_cuda(statement.body, ctx)


def _statement_moves_to_cuda(statement: cst.CSTNode, ctx: FileContext, kinds: Tuple[type, ...]) -> bool:
    """One simple statement of one of `kinds` whose value is `E.cuda()` or `E.to(<CUDA>)`, or a tuple of
    such moves (`x, y = x.cuda(), y.cuda()`)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = small.value if type(small) in kinds else None
    if type(value) is cst.Tuple and type(small) is not cst.Expr:
        return bool(value.elements) and all(_moved_to_cuda(element.value, ctx) for element in value.elements)
    return _moved_to_cuda(value, ctx)


def _moved_to_cuda(value: Optional[cst.BaseExpression], ctx: FileContext) -> bool:
    """`E.cuda()` or `E.to(<CUDA>)`."""
    if not (type(value) is cst.Call and type(value.func) is cst.Attribute) or ctx.imports.is_module_ref(value.func.value):
        return False
    method = value.func.attr.value
    return method == "cuda" or (method == "to" and bool(value.args) and value.args[0].keyword is None
                                and names_cuda(ctx.model, value.args[0].value))


def _other_choices(node: cst.If, pairs, else_body, names, ctx: FileContext) -> List[cst.BaseExpression]:
    """What the rest of a selection chooses when its first branch chooses `names` (None: a return):
    the later branches, else the statement before (the same name) or after (a return: the branch's return
    may sit in an `if` of its own, `if info["available"]: return "cuda"`, and the function falls through to
    it wherever that does not return)."""
    other = [value for _, body in pairs[1:] for value in _assigned_values(body)]
    if else_body is not None:
        other += _assigned_values(else_body)
    elif len(pairs) == 1:
        before, after = _beside(node, ctx, names)
        other += [value for _, value in before]
        if None in names:
            other += [value for name, value in after if name is None]
    return other


def device_selection(registry: Registry) -> None:
    registry.on(cst.IfExp, _selection_expression)
    registry.on(cst.If, _selection_statement)


# -- CDL108: "cuda" as a default -----------------------------------------------------
def _default_param(node: cst.Param, ctx: FileContext) -> None:
    if node.default is not None and is_cuda_device_string(node.default):
        function = next((held for held in reversed(ctx.stack) if isinstance(held, (cst.FunctionDef, cst.Lambda))), None)
        if isinstance(function, cst.FunctionDef) and project_checks.choice_default(function, node.name.value, ctx):
            return  # `impl="cuda"`: a choice of implementation the body compares or hands on, no device
        if isinstance(function, cst.FunctionDef) and _checked_for_mac(function, node.name.value, ctx):
            return  # `device = _validate_get_device(device)` first: "cuda" becomes "mps" or "cpu" off CUDA
        if isinstance(function, cst.FunctionDef) and unused_default(function, node.name.value):
            return  # `device = detect_accelerator()` before any read: the default is never used
        if isinstance(function, cst.FunctionDef) and _read_only_with_cuda(function, node.name.value, ctx):
            return  # `if not torch.cuda.is_available(): self.device = "cpu"` / `else: self.device = device`
        ctx.report("CDL108", node.default, f"parameter {node.name.value!r} defaults to a CUDA device")


def _read_only_with_cuda(function: cst.FunctionDef, name: str, ctx: FileContext) -> bool:
    """The body's first statement that reads the parameter is an `if` on CUDA's availability that reads it
    only in the branch taken where CUDA is available, and no later statement reads it: wherever the default
    would be used off CUDA, the code has already put something else in its place (CDL104 judges that
    choice)."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for index, statement in enumerate(body):
        if not reads_name(statement, name):
            continue
        if type(statement) is not cst.If or not isinstance(statement.orelse, cst.Else) or reads_name(statement.test, name):
            return False
        guard = ctx.model.guard(statement.test)
        if guard.when_true and not guard.when_false:
            kept, other = statement.body, statement.orelse.body
        elif guard.when_false and not guard.when_true:
            kept, other = statement.orelse.body, statement.body
        else:
            return False
        return (reads_name(kept, name) and not reads_name(other, name)
                and not any(reads_name(later, name) for later in body[index + 1:]))
    return False


def _checked_for_mac(function: cst.FunctionDef, name: str, ctx: FileContext) -> bool:
    """Before anything else reads the parameter, the body rebinds it to what a function of this file makes
    of it (`device = _validate_get_device(device)`), a function whose own code picks a Mac's device
    ("mps", `torch.backends.mps.is_available()`): the default is checked, not used as it is."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
        if (type(small) is cst.Assign and len(small.targets) == 1 and type(small.targets[0].target) is cst.Name
                and small.targets[0].target.value == name and type(small.value) is cst.Call
                and any(type(arg.value) is cst.Name and arg.value.value == name for arg in small.value.args)):
            scope = ctx.model.scopes.get(id(function))
            callees = ctx.model.values(small.value.func, scope) if scope is not None else []
            return bool(callees) and all(
                callee.kind == "func" and type(callee.data) is cst.FunctionDef and mentions_mac_path(callee.data)
                for callee in callees)
        if reads_name(statement, name):
            return False
    return False


def _default_keyword(node: cst.Call, ctx: FileContext) -> None:
    for arg in node.args:
        if arg.keyword is None or arg.keyword.value != "default":
            continue
        if is_cuda_device_string(arg.value):
            ctx.report("CDL108", arg.value, "option defaults to a CUDA device")
        elif type(arg.value) in (cst.Name, cst.Attribute):
            _default_through_name(arg.value, ctx)


def _default_through_name(default: cst.BaseExpression, ctx: FileContext) -> None:
    """`add_argument("--device", default=DEFAULT_DEVICE)` with `DEFAULT_DEVICE = "cuda"` in this module
    (reported where the constant is written) or in another of the project (reported here, with it)."""
    for value in ctx.model.values(default):
        if value.off_mac or not value.is_cuda_device() or value.origin is default:
            continue
        if value.where is not None:
            path, line, _ = value.where
            ctx.report("CDL108", default, f"option defaults to {source_of(default)} = {value.data!r} (set in {path}:{line}), "
                       "a CUDA device", None, ((value.where, f"{value.data!r} is set here"),))
        else:
            ctx.report("CDL108", value.origin, f"{source_of(value.origin)} reaches an option default "
                       f"({source_of(default)}): a CUDA device", None,
                       ((default, f"{source_of(value.origin)} is this option's default"),))
        return


def _default_field(node: cst.CSTNode, ctx: FileContext) -> None:
    if node.value is not None and _in_class_body(ctx) and is_cuda_device_string(node.value):
        klass = ctx.stack[-4].name.value.lower()
        if not (any(speaks_of_device(name) for name in _field_names(node)) or "device" in klass or "accelerat" in klass):
            return  # `QUANT_TYPE = "cuda"` of `QuantLinear`, `name = "cuda"` of `CudaTypeNN`: a label, no device
        if not _is_enum(ctx.stack[-4], ctx):  # `class Backend(Enum): CUDA = "cuda"` names a member, not a default
            ctx.report("CDL108", node.value, "class attribute defaults to a CUDA device")


def _field_names(node: cst.CSTNode) -> List[str]:
    """The names a class body's assignment binds (`device: str = ...`, `a = b = ...`)."""
    targets = [node.target] if type(node) is cst.AnnAssign else [target.target for target in node.targets]
    return [target.value for target in targets if type(target) is cst.Name]


ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})


def _is_enum(klass: cst.ClassDef, ctx: FileContext, depth: int = 0) -> bool:
    """The class derives from enum.Enum, directly, through classes of this file, or through the project's
    own (the index's classes and re-exports: a compatibility module's `StrEnum`)."""
    if depth > 4:
        return False
    project = ctx.model.project
    for base in klass.bases:
        qualified = ctx.model.resolve(base.value)
        if qualified in ENUM_BASES:
            return True
        if qualified and project is not None and project.derives_from(qualified, ENUM_BASES):
            return True
        if isinstance(base.value, cst.Name):
            for binding in ctx.model.lookup(base.value.value, ctx.model.module_scope):
                if binding.kind == "class" and _is_enum(binding.node, ctx, depth + 1):
                    return True
    return False


def default_device(registry: Registry) -> None:
    registry.on(cst.Param, _default_param)
    registry.on(cst.Call, _default_keyword)
    registry.on(cst.Assign, _default_field)
    registry.on(cst.AnnAssign, _default_field)


# -- CDL706: a backend no Mac has as a default ------------------------------------------
def _backend_values(ctx: FileContext) -> frozenset:
    rule = ctx.rules.get("CDL706")
    return frozenset(rule.match.get("values", ())) if rule is not None else frozenset()


def _backend_default(value: Optional[cst.BaseExpression], what: str, ctx: FileContext) -> None:
    found = string_value(value) if value is not None else None
    if found is not None and found in _backend_values(ctx):
        ctx.report("CDL706", value, f"{what} defaults to the {found!r} backend, which needs NVIDIA GPUs")


def _backend_param(node: cst.Param, ctx: FileContext) -> None:
    if node.default is None or string_value(node.default) not in _backend_values(ctx):
        return
    function = next((holder for holder in reversed(ctx.stack) if type(holder) in (cst.FunctionDef, cst.Lambda)), None)
    if type(function) is cst.FunctionDef and unused_default(function, node.name.value):
        return  # `def __init__(self, ..., backend="nccl")` that never reads it: the default reaches nothing
    _backend_default(node.default, f"parameter {node.name.value!r}", ctx)


def _backend_keyword(node: cst.Call, ctx: FileContext) -> None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "default":
            _backend_default(arg.value, "option", ctx)


def _backend_field(node: cst.CSTNode, ctx: FileContext) -> None:
    if _in_class_body(ctx) and not _is_enum(ctx.stack[-4], ctx):
        _backend_default(node.value, "class attribute", ctx)


def default_backend(registry: Registry) -> None:
    registry.on(cst.Param, _backend_param)
    registry.on(cst.Call, _backend_keyword)
    registry.on(cst.Assign, _backend_field)
    registry.on(cst.AnnAssign, _backend_field)


# -- CDL109: torch.load without a map_location that works off CUDA -------------------
def _torch_load(node: cst.Call, ctx: FileContext) -> None:
    loader = ctx.imports.resolve(node.func) or ""
    saver = selection_use.loaders().get(loader)
    downloaded = loader in selection_use.downloaders()
    if saver is None and not downloaded:
        return
    positional = [arg for arg in node.args if arg.keyword is None]
    if any(arg.star for arg in node.args):
        return
    location = _load_location(node, 2 if downloaded else 1)
    if downloaded:  # published weights: only a CUDA map_location is the code's own choice
        if location is not None:
            _report_cuda_location(location, ctx)
        return
    unmapped = location is None or _maps_nothing(location, ctx)
    if unmapped and positional and (_saved_here(positional[0].value, saver, ctx) or _temporary(positional[0].value, ctx)):
        return  # a file this code saved itself (a round-trip test) loads onto the device it came from
    if unmapped and positional and _class_cache(positional[0].value, saver, ctx):
        return  # a class reading back its own cache (processed data, an id table): written on this host, no model state
    if unmapped and positional and _dataset_file(positional[0].value, ctx):
        return  # a dataset reading the files under its own root: the CPU data a DataLoader hands out
    if unmapped and _written_earlier(node, saver, ctx):
        return  # a function that saves, then loads: a round trip on the machine that runs it
    if unmapped and _locates_other_loads(node, ctx):
        return  # the function maps the loads that hold tensors: the others hold host-side state by choice
    if unmapped and _restores_rng_state(node, ctx):
        return  # generator states are CPU byte tensors, whichever device's generator they were taken from
    if unmapped and _restores_host_state(node, ctx):
        return  # a scheduler's or gradient scaler's state: Python numbers, no tensors to map
    if unmapped and positional and _ships_cpu_storages(positional[0].value, ctx):
        return  # a file the project ships beside this module, saved from the CPU
    if unmapped and positional and _saved_on_host(positional[0].value, saver, ctx):
        return  # a file of the project's own format, which its saves fill with host values only
    if location is None:
        # On a CUDA host map_location=None is torch.load's own default (tensors return to the device they
        # were saved from, a CPU-saved checkpoint stays on the CPU): identical there; elsewhere the device.
        location = cst.parse_expression(f"None if {TORCH}.cuda.is_available() else {DEVICE}")
        with_location = node.with_changes(
            args=[*node.args, cst.Arg(keyword=cst.Name("map_location"), value=location, equal=_EQUAL)]
        )
        ctx.report(
            "CDL109",
            node,
            f"{loader} without map_location restores tensors to the device they were saved from; "
            "a checkpoint saved on CUDA fails to load on MPS or CPU",
            FixPlan(Safety.SAFE, "load onto the accelerator in use", [(node, render(with_location))]),
        )
    elif unmapped:
        written = type(location) is cst.Name and location.value == "None"
        ctx.report(
            "CDL109",
            node,
            f"{loader} with map_location={source_of(location)}, which "
            + ("maps nothing" if written else "is None where the caller passes none (the default)")
            + ", restores tensors to the device they were saved from; a checkpoint saved on CUDA fails to load on MPS or CPU",
            FixPlan(Safety.SAFE, "load onto the accelerator in use",
                    [(location, f"None if {TORCH}.cuda.is_available() else {DEVICE}")]) if written else None,
        )
    else:
        _report_cuda_location(location, ctx)


def _report_cuda_location(location: cst.BaseExpression, ctx: FileContext) -> None:
    """A map_location that is a CUDA device (written there or reaching it) or a function that moves each storage
    with `.cuda(...)`."""
    if any(value.is_cuda_device() and not value.off_mac for value in ctx.model.values(location)):
        for value in ctx.model.values(location):
            if not value.is_cuda_device() or value.off_mac:
                continue
            origin = value.origin
            if origin is location:
                ctx.report("CDL109", location, f"map_location={source_of(location)} loads onto CUDA only", _literal_fix(location, as_string=False))
            else:
                ctx.report(
                    "CDL109",
                    origin,
                    f"{source_of(origin)} reaches map_location={source_of(location)}: loads onto CUDA only",
                    _literal_fix(origin, as_string=True),
                    ((location, f"{source_of(origin)} reaches this map_location"),),
                )
    elif isinstance(location, cst.Lambda) and ".cuda(" in source_of(location):
        ctx.report("CDL109", location, f"map_location={source_of(location)} loads onto CUDA only")


def _maps_nothing(location: cst.BaseExpression, ctx: FileContext) -> bool:
    """`map_location=None`, written there or as the default of a parameter that some call leaves out and
    the function does not replace: torch.load's own default, which restores each tensor to the device it
    was saved from. (A local name set to None and replaced under a test, `if not torch.cuda.is_available():
    map_location = "cpu"`, is the author's choice per host.)"""
    if type(location) is cst.Name and location.value == "None":
        return True
    if type(location) is not cst.Name or location.value == "map_location":
        return False  # a wrapper that forwards torch.load's own parameter, default and all: its callers choose
    params = [binding for binding in ctx.model.bindings_of(location) if binding.kind == "param" and binding.value is not None]
    function = params[0].scope.node if params else None
    if not isinstance(function, cst.FunctionDef) or _tested(function.body, location.value):
        return False  # `if device is None: device = ...` (or `else:` loads with it): not the default as given
    passed = ctx.model.call_sites.seen(params[0])
    if passed and all(argument is not None for argument in passed):
        return False  # a helper its file calls with a device each time: its callers choose
    defaults = {id(binding.value) for binding in params}
    return any(value.kind == "none" and not value.off_mac and id(value.origin) in defaults
               for value in ctx.model.values(location))


def _tested(body: cst.CSTNode, name: str) -> bool:
    """The name is part of a test in the body: an if, while or conditional expression's, an operand of
    `and`/`or`/`not`, or a comparison."""
    return any((isinstance(node, (cst.If, cst.While, cst.IfExp)) and reads_name(node.test, name))
               or (isinstance(node, (cst.BooleanOperation, cst.Comparison, cst.UnaryOperation)) and reads_name(node, name))
               for node in nodes_in(body))


def _ships_cpu_storages(path: cst.BaseExpression, ctx: FileContext) -> bool:
    """The path, built from `__file__`, names a torch archive of the project whose every storage the
    pickle records on the CPU (shipped_files)."""
    project = ctx.model.project
    if project is None:
        return False
    found = shipped_files.shipped_path(path, ctx.model, ctx.path, project.root)
    return found is not None and shipped_files.holds_cpu_storages_only(found)


def _saved_on_host(path: cst.BaseExpression, saver: str, ctx: FileContext) -> bool:
    """The file name the path gives (saved_files.file_key: its last string literal, through local names
    assigned once) is one the project's saves write with host values only (ProjectIndex.saved_on_host)."""
    project = ctx.model.project
    if project is None:
        return False
    key = saved_files.file_key(_string_fragments(path, ctx, 0))
    if key is None:
        return False
    return project.saved_on_host(saver, key, ctx.model.in_tests)


def _string_fragments(node: cst.CSTNode, ctx: FileContext, depth: int) -> List[str]:
    """The string pieces of an expression in source order, through a local name assigned once."""
    if depth > saved_files.MAX_DEPTH:
        return []
    if type(node) is cst.Name:
        values = ctx.model.assigned(node)
        if not values:  # `with open(path, "rb") as f:`: the file `f` stands for is `path`
            bindings = ctx.model.bindings_of(node)
            values = [(opened, None) for binding in bindings for opened in (_opened_path(binding, node.value),) if opened is not None]
            if len(values) != len(bindings):
                return []
        return _string_fragments(values[0][0], ctx, depth + 1) if len(values) == 1 else []
    if type(node) is cst.SimpleString:
        value = node.evaluated_value
        return [value] if isinstance(value, str) else []
    if type(node) is cst.FormattedStringText:
        return [node.value]
    found: List[str] = []
    for child in code_children(node):
        found += _string_fragments(child, ctx, depth + 1)
    return found


def _opened_path(binding, name: str) -> Optional[cst.BaseExpression]:
    """The path of `open(path, ...)` that a with-item binds to `name`, for a `with` binding."""
    if binding.kind != "with" or type(binding.node) is not cst.With:
        return None
    for item in binding.node.items:
        call = item.item
        if (item.asname is not None and type(item.asname.name) is cst.Name and item.asname.name.value == name
                and type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "open" and call.args):
            return call.args[0].value
    return None


def _restores_host_state(node: cst.Call, ctx: FileContext) -> bool:
    """The load is handed straight to `x.load_state_dict(...)` where every value `x` may hold is made by
    one of CDL109's `host_state_factories` (a learning-rate scheduler, a gradient scaler): what those
    objects save is numbers, so there is no storage to map (`scheduler.pt` beside `optimizer.pt`)."""
    factories = ctx.rules["CDL109"].match.get("host_state_factories", ())
    stack = ctx.stack
    if not (factories and isinstance(ctx.parent, cst.Arg) and len(stack) >= 3 and isinstance(stack[-3], cst.Call)):
        return False
    func = stack[-3].func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict"):
        return False
    values = ctx.model.values(func.value)
    return bool(values) and all(
        isinstance(value.origin, cst.Call)
        and any(fnmatch.fnmatchcase(ctx.model.resolve(value.origin.func) or "", pattern) for pattern in factories)
        for value in values
    )


MAX_RESTORE_NODES = 5000  # the largest function body searched for the reads of a loaded state


def _restores_rng_state(node: cst.Call, ctx: FileContext) -> bool:
    """What the load returns only goes back into random number generators (CDL109's `restorers`:
    `torch.set_rng_state`, `torch.cuda.set_rng_state_all`, `random.setstate`, `numpy.random.set_state`):
    handed to one directly, or bound to a name every read of which, in the same function, is an argument
    of one (`states["cuda"]`, `states.get("cpu")`) or a test (`"cuda" in states`, `states is None`).
    `torch.get_rng_state()` and `torch.cuda.get_rng_state()` both return CPU byte tensors (torch/random.py,
    torch/cuda/random.py), so such a file holds no device storage to map."""
    restorers = frozenset(ctx.rules["CDL109"].match.get("restorers", ()))
    if not restorers:
        return False
    parent, model = ctx.parent, ctx.model
    if isinstance(parent, cst.Arg) and len(ctx.stack) >= 3 and isinstance(ctx.stack[-3], cst.Call):
        return model.resolve(ctx.stack[-3].func) in restorers
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return False
    if model.scope.kind != "function" or not isinstance(model.scope.node, cst.FunctionDef):
        return False
    name = parent.targets[0].target.value
    restored, pending, seen = False, [(model.scope.node.body, ())], 0
    while pending:
        current, around = pending.pop()
        seen += 1
        if seen > MAX_RESTORE_NODES or isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False  # too large to follow, or a nested function that may read the state later
        if isinstance(current, cst.AssignTarget) and isinstance(current.target, cst.Name):
            continue
        if isinstance(current, cst.Attribute):
            pending.append((current.value, (*around, current)))
            continue  # the attribute's own name is no read of a local
        if isinstance(current, cst.Name) and current.value == name:
            use = _state_use(around, restorers, model)
            if use is None:
                return False
            restored = restored or use
            continue
        pending.extend((child, (*around, current)) for child in code_children(current))
    return restored


def _state_use(around: Tuple[cst.CSTNode, ...], restorers: FrozenSet[str], model) -> Optional[bool]:
    """A read of a loaded state, from the innermost node out: True where it (an item of it, a method's
    result on it) is an argument of a restorer, False where it is only tested, None otherwise."""
    child: Optional[cst.CSTNode] = None
    for holder in reversed(around):
        if isinstance(holder, cst.Subscript) and (child is None or holder.value is child):
            child = holder
        elif isinstance(holder, cst.Attribute) and (child is None or holder.value is child):
            child = holder
        elif isinstance(holder, cst.Call) and child is not None and holder.func is child:
            child = holder  # `states.get("cpu")`
        elif isinstance(holder, cst.Arg):
            child = holder
        elif isinstance(holder, cst.Call) and isinstance(child, cst.Arg):
            return True if model.resolve(holder.func) in restorers else None
        elif isinstance(holder, (cst.Comparison, cst.ComparisonTarget)):
            return False
        else:
            return None
    return None


def _locates_other_loads(node: cst.Call, ctx: FileContext) -> bool:
    """Another torch.load of the same function passes a map_location: its author chose the device for
    the checkpoints that hold tensors and left it out where the state is host-side (a scheduler's or
    sampler's numbers). Not when a load of the same file maps it to a device of the code's choosing
    (`except KeyError:` reloading `model_filename` the other way): the file holds tensors, and this
    load forgot where they go. Worked out once per function."""
    frame = next((holder for holder in reversed(ctx.stack) if isinstance(holder, (cst.FunctionDef, cst.Module))), None)
    if frame is None:
        return False
    known = ctx.check_state.setdefault("located loads", {})
    if id(frame) not in known:
        known_loaders = selection_use.loaders()
        loads = [(call, _load_location(call)) for call in _calls_in(frame.body) if ctx.model.resolve(call.func) in known_loaders]
        # a load mapped only in the arm a host without CUDA takes (`if torch.cuda.is_available(): torch.load(f)` /
        # `else: torch.load(f, map_location="cpu")`) says its file holds CUDA tensors, not that others hold none
        located = [(call, location) for call, location in loads if location is not None and not _in_arm_without_cuda(frame, call, ctx)]
        # the files some load maps to a device of the code's choosing (not the CPU: "cpu" says nothing of what the file
        # holds: transformers maps its scheduler's numbers there on one path and not on the others)
        to_device = {_load_source(call) for call, location in located if string_value(location) != "cpu"}
        known[id(frame)] = (bool(located), to_device)
    any_located, to_device = known[id(frame)]
    return any_located and _load_source(node) not in to_device


def _in_arm_without_cuda(frame: cst.CSTNode, call: cst.Call, ctx: FileContext) -> bool:
    """The call sits in the arm of an `if` that runs where CUDA is missing (the else of an availability
    test, or the body of its negation), or in the arm a test of the device takes for the CPU (`if DEVICE ==
    "cpu":`, whose other arm runs with any other device, MPS on a Mac)."""
    from cudalint.python.children import path_to

    path = path_to(frame, call) or []
    for index, holder in enumerate(path[:-1]):
        if type(holder) is not cst.If:
            continue
        inner = path[index + 1]
        cpu_arm = _cpu_arm(holder)
        if cpu_arm is not None and inner is cpu_arm:
            return True
        guard = ctx.model.guard(holder.test)
        if (inner is holder.orelse and guard.when_true) or (inner is holder.body and guard.when_false):
            return True
    return False


def _cpu_arm(node: cst.If) -> Optional[cst.CSTNode]:
    """The arm an `if` takes for the CPU where its test compares a device with "cpu": the body of `x == "cpu"`,
    the else of `x != "cpu"`; None for another test."""
    test = node.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    operator = type(test.comparisons[0].operator)
    if "cpu" not in (string_value(test.left), string_value(test.comparisons[0].comparator)):
        return None
    return node.body if operator is cst.Equal else node.orelse if operator is cst.NotEqual else None


def _load_source(call: cst.Call) -> str:
    """The file argument of a torch.load, as written ("" when it has none)."""
    argument = next((arg.value for arg in call.args if arg.keyword is None or arg.keyword.value == "f"), None)
    return source_of(argument) if argument is not None else ""


def _load_location(call: cst.Call, index: int = 1) -> Optional[cst.BaseExpression]:
    """The map_location of a load: by keyword, or the positional argument at `index` (torch.load's second)."""
    location = next((arg.value for arg in call.args if arg.keyword and arg.keyword.value == "map_location"), None)
    positional = [arg for arg in call.args if arg.keyword is None]
    return location if location is not None or len(positional) <= index else positional[index].value


def _calls_in(body) -> List[cst.Call]:
    """The calls in a body, outside nested functions and classes."""
    found: List[cst.Call] = []
    stack = list(body) if isinstance(body, (list, tuple)) else [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Call):
            found.append(node)
        stack.extend(code_children(node))
    return found


def _saved_here(path: cst.BaseExpression, saver: str, ctx: FileContext) -> bool:
    """The function (or module) holding the load also saves to the same path with the loader's saver (a
    round trip); saving what was loaded somewhere else (a conversion) does not make the load safe, nor
    does a save in another arm of an `if` the load is in (`if if_save: torch.save(x, path)` / `elif
    exists: x = torch.load(path)`: a save-or-resume function, which reads what an earlier run wrote)."""
    written = _spelling(path)
    for call in ctx.model.scope.called:
        if ctx.model.resolve(call.func) != saver:
            continue
        target = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "f"), None)
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if target is None and len(positional) >= 2:
            target = positional[1]
        if target is not None and _spelling(target) == written and (
                not _in_another_arm(call, ctx.stack) or _caches_loaded_name(call, ctx)):
            return True
    return False


def _caches_loaded_name(save: cst.Call, ctx: FileContext) -> bool:
    """The load binds a name that the save in the other arm writes (`if os.path.exists(cached):
    features = torch.load(cached)` / `else: features = convert(examples); torch.save(features,
    cached)`): the function's cache of what it computes, made on the host that runs it. A name some
    binding of which holds a module's state (`.state_dict()`), or that is bound other than by assignment
    (a parameter), is a checkpoint brought from anywhere, and is still reported."""
    parent = ctx.parent
    if not (type(parent) is cst.Assign and len(parent.targets) == 1):
        return False
    target = parent.targets[0].target
    saved = next((arg.value for arg in save.args if arg.keyword is None and not arg.star), None)
    if type(target) is cst.Name:
        names, values = [target], [saved]
    elif type(target) is cst.Tuple and type(saved) is cst.Tuple and len(target.elements) == len(saved.elements):
        # `self.itos, self.vectors = torch.load(path)` / `torch.save((self.itos, self.vectors), path)`
        names, values = [element.value for element in target.elements], [element.value for element in saved.elements]
    else:
        return False
    if not all(type(name) in (cst.Name, cst.Attribute) and value is not None and _spelling(value) == _spelling(name)
               for name, value in zip(names, values)):
        return False
    if not _loaded_when_present(save, ctx):
        return False  # `if if_save: torch.save(x, path)` / `elif exists: x = torch.load(path)`: save or resume
    return all(_cached_value(name, parent, save, ctx) for name in names)


def _cached_value(name: cst.BaseExpression, load: cst.Assign, save: cst.Call, ctx: FileContext) -> bool:
    """What a cache binds holds no module's or optimizer's state: each binding of the name (a name
    unpacked from a call: the statement that binds it is looked at), or for `self.x`, each assignment to
    it in the function's arm that saves."""
    if type(name) is cst.Name:
        bindings = ctx.model.bindings_of(name)
        return bool(bindings) and all(
            binding.kind == "assign" and (binding.value is load.value or not _holds_state(
                binding.value if binding.value is not None else binding.node, ctx.model.scope, False, ctx))
            for binding in bindings)
    spelled = _spelling(name)
    arm = next((arm for holder in reversed(ctx.stack) if type(holder) is cst.If for arm in (holder.body, holder.orelse)
                if arm is not None and any(call is save for call in _calls_in(arm))), None)
    if arm is None:
        return False
    assigned = [statement.value for statement in assignments_in(arm) if any(
        _spelling(target.target) == spelled for target in statement.targets)]
    return bool(assigned) and not any(_holds_state(value, ctx.model.scope, False, ctx) for value in assigned)


EXISTENCE_TESTS = frozenset({"os.path.exists", "os.path.isfile", "exists", "is_file", "isfile"})


def _loaded_when_present(save: cst.Call, ctx: FileContext) -> bool:
    """The load sits in the body of an `if` that tests whether its file exists, and the save in what runs
    when the test is false (its `else`, or an `elif` of it): a cache filled where it is missing."""
    stack = ctx.stack
    for depth in range(len(stack) - 1):
        holder = stack[depth]
        if type(holder) is not cst.If or holder.orelse is None:
            continue
        test, negated = holder.test, False
        # `if not os.path.isfile(path) or refresh: ... save` / `else: load`: the else runs only when it exists
        absent = next((part.expression for part in disjuncts(test)
                       if type(part) is cst.UnaryOperation and type(part.operator) is cst.Not), None)
        if absent is not None:
            test, negated = absent, True
        if stack[depth + 1] is not (holder.orelse if negated else holder.body):
            continue
        tested = any((ctx.model.resolve(call.func) or "") in EXISTENCE_TESTS or (
            type(call.func) is cst.Attribute and call.func.attr.value in EXISTENCE_TESTS) for call in _calls_in(test))
        if tested and any(call is save for call in _calls_in(holder.body if negated else holder.orelse)):
            return True
    return False


def _in_another_arm(node: cst.Call, stack) -> bool:
    """The call lies in another arm of an `if` around the top of the stack: never run in the same pass."""
    for depth in range(len(stack) - 1):
        holder = stack[depth]
        if type(holder) is not cst.If or stack[depth + 1] is holder.test:
            continue
        other = holder.orelse if stack[depth + 1] is holder.body else holder.body
        if other is not None and any(call is node for call in _calls_in(other)):
            return True
    return False


def _spelling(node: cst.BaseExpression) -> str:
    return "".join(source_of(node).split())


def _class_cache(path: cst.BaseExpression, saver: str, ctx: FileContext) -> bool:
    """A method loads a file that a method of the same class writes with torch.save, and what it writes
    holds no module's state (`torch.save(self.collate(data_list), self.processed_paths[0])` then
    `torch.load(self.processed_paths[idx])`; an id table), at a path made from the instance's own
    attributes: the class's own cache, made and read on the host that runs it. The same file is the
    same path expression, indexing left out (`self.processed_paths[i]`), as written or as each binding
    of a local name gives it (_path_forms).
    A checkpoint the class saves (`self.state_dict()`, `{"model": model.state_dict()}`, the instance of a
    Module class) may come from a CUDA machine and is still reported."""
    klass = ctx.model.scope.enclosing_class
    if klass is None or not isinstance(klass.node, cst.ClassDef):
        return False
    scope = ctx.model.scope
    forms = _path_forms(ctx.model, path, scope)
    if not all(_object_path(form, scope, ctx) for form in forms):
        return False  # a path the caller passes may be a checkpoint brought from any machine
    known = ctx.check_state.setdefault("class caches", {})
    caches = known.get((id(klass.node), saver))
    if caches is None:
        caches = known[(id(klass.node), saver)] = _cache_paths(klass.node, saver, ctx)
    # the same spelling (a local name the class hands to the method that saves under that name), or
    # the same file by every binding of the name
    return bool(caches) and (_path_key(path) in caches or all(_path_key(form) in caches for form in forms))


def _dataset_file(path: cst.BaseExpression, ctx: FileContext) -> bool:
    """A method of a dataset loads a file under the object's own storage (a path with an attribute of
    `self` in it: `osp.join(self.root, "split", name)`): the dataset's data, which a DataLoader hands its
    workers and pins on the host, so CPU tensors (ogb's split and edge files). A dataset is a class that
    implements the map-style protocol (`__getitem__` and `__len__`, torch/utils/data/dataset.py) or
    derives from one of CDL109's `dataset_bases`. A path its caller hands it (a feature extractor's
    checkpoint) is still reported."""
    scope = ctx.model.scope
    klass = scope.enclosing_class
    if klass is None or type(klass.node) is not cst.ClassDef or not _mentions_self(ctx.model, path, scope):
        return False
    known = ctx.check_state.setdefault("datasets", {})
    key = id(klass.node)
    if key not in known:
        known[key] = _is_dataset(klass.node, klass, ctx)
    return known[key]


def _mentions_self(model, path: cst.BaseExpression, scope, depth: int = 0) -> bool:
    """The expression reads an attribute of `self`, itself or through a local name bound only from such
    expressions (`path = osp.join(self.root, "split", name)`)."""
    pending = [path]
    while pending:
        node = pending.pop()
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == scope.self_name:
            return True
        if type(node) is cst.Name and depth < 2:
            values = model.assigned(node, scope)
            if values and all(_mentions_self(model, value, scope, depth + 1) for value, _ in values):
                return True
            continue
        pending.extend(code_children(node))
    return False


def _is_dataset(node: cst.ClassDef, klass, ctx: FileContext) -> bool:
    methods = {statement.name.value for statement in node.body.body if type(statement) is cst.FunctionDef}
    if {"__getitem__", "__len__"} <= methods:
        return True
    bases = frozenset(ctx.rules["CDL109"].match.get("dataset_bases", ()))
    project = ctx.model.project
    for base in node.bases:
        qualified = ctx.model.resolve(base.value, klass.parent) if base.keyword is None else None
        if qualified is None:
            continue
        if qualified in bases or (project is not None and project.derives_from(qualified, bases)):
            return True
    return False


def _object_path(path: cst.BaseExpression, scope, ctx: FileContext, depth: int = 0) -> bool:
    """A path made from the instance's own attributes, with module-level names and constants only
    (`self.processed_paths[i]`, `osp.join(self.processed_dir, "pre_filter.pt")`), or local names bound
    only to such paths (`root = Path(self.root)`, then `root / self.filename`): the object's storage, not
    a location its caller hands it."""
    found_self = False
    pending = [path]
    while pending:
        node = pending.pop()
        if type(node) in (cst.Attribute, cst.Subscript):  # `self.processed_paths[idx]`: which of the object's files
            pending.append(node.value)
            continue
        if type(node) is cst.Name:
            if node.value == scope.self_name:
                found_self = True
                continue
            bindings = ctx.model.lookup(node.value, scope)
            if all(binding.scope is ctx.model.module_scope for binding in bindings):
                continue
            if depth >= 2 or not bindings or not all(
                    binding.kind == "assign" and binding.value is not None and binding.scope is scope
                    and _object_path(binding.value, scope, ctx, depth + 1) for binding in bindings):
                return False
            found_self = True
            continue
        if isinstance(node, (cst.Lambda, cst.BaseComp)):
            return False
        pending.extend(code_children(node))
    return found_self


def _cache_paths(klass: cst.ClassDef, saver: str, ctx: FileContext) -> FrozenSet[str]:
    """The path keys of the class's calls of `saver` (torch.save) whose value holds no module state."""
    module_class = any((dotted(base.value) or "").endswith("Module") for base in klass.bases)
    found: Set[str] = set()
    for method in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
        scope = ctx.model.scopes.get(id(method)) if isinstance(method, cst.FunctionDef) else None
        if scope is None:
            continue
        for call in _calls_in(method.body):
            if ctx.model.resolve(call.func, scope) != saver:
                continue
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            target = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "f"), None)
            target = target if target is not None else positional[1] if len(positional) >= 2 else None
            if target is None or not positional or _holds_state(positional[0], scope, module_class, ctx):
                continue
            if _placed_attribute(positional[0], scope, klass):
                continue  # `torch.save(self.net, path)`: a model the class puts on a device, saved whole
            found.update(_path_key(form) for form in _path_forms(ctx.model, target, scope))
    return frozenset(found)


MODULE_METHODS = frozenset({"to", "cuda", "parameters", "named_parameters", "train", "eval", "state_dict", "load_state_dict"})


def _placed_attribute(value: cst.BaseExpression, scope, klass: cst.ClassDef) -> bool:
    """`self.<name>` that the class treats as a module somewhere: moves it (`self.net.to(device)`, `.cuda()`)
    or reads its parameters or training mode; what it saves there is a model, made on any machine."""
    if not (type(value) is cst.Attribute and type(value.value) is cst.Name and value.value.value == scope.self_name):
        return False
    name, owner = value.attr.value, value.value.value
    pending: List[cst.CSTNode] = [klass.body]
    while pending:
        node = pending.pop()
        if (type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in MODULE_METHODS
                and type(node.func.value) is cst.Attribute and node.func.value.attr.value == name
                and type(node.func.value.value) is cst.Name and node.func.value.value.value == owner):
            return True  # the methods' own first parameter, as the saving method spells it
        pending.extend(code_children(node))
    return False


def _holds_state(value: cst.BaseExpression, scope, module_class: bool, ctx: FileContext) -> bool:
    """A saved value that carries a module's or optimizer's state: a `.state_dict()` call in it (or in
    what the one local name it is bound to holds), or the instance of a Module class itself."""
    binding = ctx.model.assigned_once(value, scope)
    for node in (value, binding.value if binding is not None else None):
        if node is None:
            continue
        if module_class and type(node) is cst.Name and node.value == scope.self_name:
            return True
        pending = [node]
        while pending:
            current = pending.pop()
            if type(current) is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value == "state_dict":
                return True
            pending.extend(code_children(current))
    return False


def _path_forms(model, path: cst.BaseExpression, scope) -> List[cst.BaseExpression]:
    """What a file argument stands for: itself, or for a local name, what each of its bindings gives
    it: an assigned value, or an element of what a `for` loop walks (`for raw, done in zip(self.raw_paths,
    self.processed_paths)` gives `done` an element of `self.processed_paths`)."""
    bindings = scope.bindings.get(path.value, []) if type(path) is cst.Name and scope is not None else []
    forms = []
    for binding in bindings:
        if binding.kind == "assign" and binding.value is not None:
            forms.append(binding.value)
        elif binding.kind == "loop" and type(binding.node) is cst.For:
            walked = _walked(model, binding.node, path.value, scope)
            if walked is None:
                return [path]
            forms.append(walked)
        else:
            return [path]
    return forms or [path]


def _walked(model, loop: cst.For, name: str, scope) -> Optional[cst.BaseExpression]:
    """The sequence whose elements a loop binds `name` to: its iterable, or the one of `zip(...)` (or
    the second of `enumerate(...)`) at the name's place in the target tuple; through a local name bound
    once to the iterable (`it = zip(...)`)."""
    target, walked = loop.target, loop.iter
    binding = model.assigned_once(walked, scope)
    walked = binding.value if binding is not None else walked
    if type(target) is cst.Name:
        return walked if target.value == name else None
    names = [element.value.value if type(element.value) is cst.Name else None for element in getattr(target, "elements", ())]
    if name not in names or type(walked) is not cst.Call or type(walked.func) is not cst.Name:
        return None
    place, arguments = names.index(name), [arg.value for arg in walked.args if arg.keyword is None and not arg.star]
    if walked.func.value == "zip" and place < len(arguments):
        return arguments[place]
    if walked.func.value == "enumerate" and place == 1 and arguments:
        return arguments[0]
    return None


def _path_key(node: cst.BaseExpression) -> str:
    while type(node) is cst.Subscript:
        node = node.value
    return _spelling(node)


def _written_earlier(node: cst.Call, saver: str, ctx: FileContext) -> bool:
    """A load after a statement of the same function that saves with the loader's saver (files exchanged
    through the disk by one job: written, then read back), or, in a test function of a test module,
    that calls a method the catalog names a writer (`trainer.save(...)`, `model.save_pretrained(...)`), or
    after a call of a function of the file (or a method of its own class, on `self`) that saves so itself.
    What is loaded was most likely written there, on the machine that runs it. A conversion loads
    first and saves after: its load is still reported."""
    model = ctx.model
    function = model.scope.node
    if model.scope.kind != "function" or not isinstance(function, cst.FunctionDef):
        return False  # a script's own statements: a checkpoint it loads after saving something else is still one
    in_test = function.name.value.startswith("test") and model.in_tests
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    writers = tuple(ctx.rules["CDL109"].match.get("writers", ())) if in_test else ()
    inside = {id(holder) for holder in ctx.stack}
    while body:
        holding = None
        for statement in body:
            if id(statement) in inside:
                holding = statement  # the statement holding the load: what comes before it in its own block
                break
            for call in _calls_in(statement):
                callee = call.func
                if model.resolve(callee) == saver or (writers and isinstance(callee, cst.Attribute) and callee.attr.value.startswith(writers)):
                    return True
                defined = _own_callee(callee, model)
                if defined is not None and any(model.resolve(inner.func) == saver and not _into_memory(inner, defined, model)
                                               for inner in _calls_in(defined.node.body)):
                    return True  # a function of the file, or a method of the class, that saves (`self.export(...)`)
        # `with io.BytesIO() as buffer: torch.save(m, buffer); return torch.load(...)`: the block of the
        # compound statement that holds the load, down to it
        body = next((block for block in _blocks(holding) if any(id(inner) in inside for inner in block)), ()) if holding is not None else ()
    return False


MEMORY_FILES = frozenset({"io.BytesIO"})


def _into_memory(save: cst.Call, function, model) -> bool:
    """A save into an in-memory buffer (`torch.save(state, buf)` with `buf = io.BytesIO()` in the saving
    function's scope): what it writes stays in that function, for its own load, and reaches no file a
    caller reads."""
    target = next((arg.value for arg in save.args if arg.keyword is not None and arg.keyword.value == "f"), None)
    positional = [arg.value for arg in save.args if arg.keyword is None and not arg.star]
    target = target if target is not None else positional[1] if len(positional) > 1 else None
    if type(target) is cst.Call:
        return model.resolve(target.func) in MEMORY_FILES
    if type(target) is not cst.Name:
        return False
    bindings = function.bindings.get(target.value, [])
    return bool(bindings) and all(binding.kind in ("assign", "with") and type(binding.value) is cst.Call
                                  and model.resolve(binding.value.func) in MEMORY_FILES for binding in bindings)


def _own_callee(callee: cst.BaseExpression, model):
    """The scope of the function a call runs where the file shows it: a function it defines once under the
    called name, or a method of the class the calling method belongs to, called on its own `self`."""
    if type(callee) is cst.Name:
        defined = model.defined_function(callee)
        return defined[1] if defined is not None else None
    klass = model.scope.enclosing_class
    if (klass is None or type(callee) is not cst.Attribute or type(callee.value) is not cst.Name
            or callee.value.value != model.scope.self_name):
        return None
    found = [item for item in klass.node.body.body if type(item) is cst.FunctionDef and item.name.value == callee.attr.value]
    return model.scopes.get(id(found[0])) if len(found) == 1 else None


def _blocks(statement: cst.CSTNode) -> List[Sequence[cst.CSTNode]]:
    """The statement lists of a compound statement's suites (its body, `else`, handlers, `finally`)."""
    found = []
    for child in code_children(statement):
        suite = child.body if isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally)) else child
        if isinstance(suite, cst.IndentedBlock):
            found.append(suite.body)
    return found


TEMPORARY_FIXTURES = {"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory"}  # pytest's own fixtures


def _temporary(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """A path under pytest's temporary folder or from tempfile: a file the run itself wrote on this host."""
    if depth > 3:
        return False
    if isinstance(node, cst.Name):
        for binding in ctx.model.lookup(node.value):
            if binding.kind == "param" and node.value in TEMPORARY_FIXTURES:
                return True
            if binding.kind == "assign" and binding.value is not None and _temporary(binding.value, ctx, depth + 1):
                return True
            if binding.kind == "with" and isinstance(binding.node, cst.With) and any(
                item.asname is not None and isinstance(item.asname.name, cst.Name) and item.asname.name.value == node.value
                and _temporary(item.item, ctx, depth + 1) for item in binding.node.items
            ):
                return True  # `with tempfile.TemporaryFile() as f:`
        return False
    if isinstance(node, cst.Call):
        qualified = ctx.model.resolve(node.func) or ""
        if qualified.startswith("tempfile."):
            return True
        return any(_temporary(arg.value, ctx, depth + 1) for arg in node.args) or _temporary(node.func, ctx, depth + 1)
    if isinstance(node, cst.Attribute):
        return _temporary(node.value, ctx, depth + 1)
    if isinstance(node, cst.BinaryOperation):
        return _temporary(node.left, ctx, depth + 1) or _temporary(node.right, ctx, depth + 1)
    if isinstance(node, cst.FormattedString):
        return any(
            _temporary(part.expression, ctx, depth + 1) for part in node.parts if isinstance(part, cst.FormattedStringExpression)
        )
    return False


def torch_load(registry: Registry) -> None:
    registry.on(cst.Call, _torch_load)


# -- CDL216 / CDL403: a value that is None off CUDA, used as if it never were --------------
def _none_names(ctx: FileContext) -> Tuple[Dict[str, Rule], FrozenSet[str]]:
    """Qualified name -> the rule that watches it (`names` of the rules naming this check), and the
    last parts of those names (a cheap first test), once per file."""
    state = ctx.check_state.get("none-misuse")
    if state is None:
        names = {name: rule for rule in ctx.rules.values() if rule.match.get("check") == "none-misuse" for name in rule.match["names"]}
        state = ctx.check_state["none-misuse"] = (names, frozenset(name.rsplit(".", 1)[-1] for name in names))
    return state


def _none_misuse(node: cst.CSTNode, ctx: FileContext) -> None:
    """Only what fails on None is reported: an attribute or item of it, a None-intolerant call with it
    (a rule's `parsers`: `float(...)`, `os.path.join(...)`), arithmetic (`+`, `/`) and, where the rule
    says `ordering`, an ordering comparison. A test (`is None`, `if X:`), an assignment or a message
    asks nothing of it."""
    names, ends = _none_names(ctx)
    if (node.attr.value if type(node) is cst.Attribute else node.value) not in ends:
        return
    parent = ctx.parent
    if isinstance(parent, cst.Attribute) and parent.value is not node:
        return  # the `.attr` Name of a longer chain
    qualified = ctx.imports.resolve(node)
    rule = names.get(qualified)
    if rule is None:
        return
    match = rule.match
    short = qualified.rsplit(".", 1)[-1] if isinstance(node, cst.Name) else qualified
    if isinstance(parent, cst.Attribute):
        misuse = f"{short}.{parent.attr.value}"
    elif isinstance(parent, cst.Subscript) and parent.value is node:
        misuse = f"{short}[...]"
    elif isinstance(parent, cst.Arg) and parent.value is node and isinstance(ctx.stack[-3], cst.Call):
        call = ctx.stack[-3]
        callee = dotted(call.func) or ""
        parsers = match.get("parsers", ())
        if callee not in parsers and callee.split(".")[-1] not in parsers and (ctx.imports.resolve(call.func) or "") not in parsers:
            return
        misuse = f"{callee}({short})"
    elif isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Divide)):
        misuse = f"{short} {'+' if isinstance(parent.operator, cst.Add) else '/'} ..."
    elif match.get("ordering") and isinstance(parent, cst.Comparison) and any(isinstance(t.operator, ORDERING) for t in parent.comparisons):
        misuse = f"an ordering comparison with {short}"
    else:
        return
    ctx.report(rule.code, node, match["message"].format(found=misuse))


def none_misuse(registry: Registry) -> None:
    registry.on(cst.Attribute, _none_misuse)
    registry.on(cst.Name, _none_misuse)


# -- CDL115: a count that is 0 off CUDA, divided by ------------------------------------
DIVISIONS = (cst.Modulo, cst.Divide, cst.FloorDivide)


def _zero_divisor(node: cst.BinaryOperation, ctx: FileContext) -> None:
    """`rank % torch.cuda.device_count()`, also through a name bound to the call: the count is 0
    wherever CUDA is missing, so the division raises ZeroDivisionError; reported at the call."""
    if not isinstance(node.operator, DIVISIONS) or string_value(node.left) is not None:
        return  # `"%d GPUs" % n` formats a string
    rule = ctx.rules.get("CDL115")
    if rule is not None:
        _zero_count(node.right, node, rule.match["message"], "divides here", ctx)


def _zero_processes(node: cst.Call, ctx: FileContext) -> None:
    """`mp.spawn(train, nprocs=world_size)` with `world_size = torch.cuda.device_count()`: on a Mac no
    process starts and the call returns at once; reported at the count, with the start as the related place."""
    rule = ctx.rules.get("CDL115")
    func = node.func
    last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
    starts = rule.match.get("starts", ()) if rule is not None and last is not None else ()
    if not any(name.endswith("." + last) for name in starts):
        return  # the cheap test first (this runs on every call): the callee's last name, then what it resolves to
    if ctx.imports.resolve(func) not in starts:
        return
    arg = find_argument(node, "nprocs", 2)
    if arg is not None:
        _zero_count(arg.value, node, rule.match["starts_message"], "processes start here", ctx)


def _zero_count(used: cst.BaseExpression, use: cst.CSTNode, message: str, what: str, ctx: FileContext) -> None:
    """Each CUDA device count (CDL115's `names`) that `used` can be, not replaced when zero: reported where
    it is counted, with `use` as the related place when that is elsewhere."""
    names = ctx.rules["CDL115"].match["names"]
    for value in ctx.model.values(used):
        if value.kind != "result" or value.data not in names or value.off_mac:
            continue
        origin = value.origin
        path = path_to(ctx.stack[0], origin)
        if path is not None and (_zero_replaced(path, source_of(used), ctx) or _or_replaced(path)):
            continue
        related = () if origin is used else ((use, f"{source_of(origin)} {what}"),)
        ctx.report("CDL115", origin, message.format(found=source_of(origin)), None, related)


def _zero_replaced(path: List[cst.CSTNode], divisor: str, ctx: FileContext) -> bool:
    """The count (`path`: the nodes from the module down to it) is stored (`args.nproc =
    torch.cuda.device_count()`) and a later statement of a block around the store replaces a zero (`if
    args.nproc == 0: args.nproc = 1`, `if not n:`, `if n < 1:`), or stops where the count, or the divisor it
    reaches (`args.gpus = min(args.gpus, n)`), is zero: `if args.gpus <= 0: return`."""
    for depth in range(len(path) - 1, 0, -1):
        if type(path[depth]) is cst.Assign:
            targets = [source_of(target.target) for target in path[depth].targets]
            break
    else:
        return False
    for depth in range(depth, 0, -1):
        found = enclosing_block(path, depth)
        if found is None:
            return False
        body, index = found
        for statement in body[index + 1:]:
            if type(statement) is not cst.If:
                continue
            if _tests_zero(statement.test, targets) and _stores(statement.body, targets):
                return True
            if _tests_zero(statement.test, [*targets, divisor]) and ends_flow(statement.body, ctx.model):
                return True
    return False


def _or_replaced(path: List[cst.CSTNode]) -> bool:
    """The count (`path`'s last node) is the left operand of an `or` (`torch.cuda.device_count() or 1`): a
    zero count is never the value; the operand after it is."""
    holder = path[-2] if len(path) >= 2 else None
    return type(holder) is cst.BooleanOperation and type(holder.operator) is cst.Or and holder.left is path[-1]


def _tests_zero(test: cst.BaseExpression, targets: List[str]) -> bool:
    """`n == 0`, `n < 1`, `n <= 0`, `not n` of one of the targets."""
    if type(test) is cst.UnaryOperation and isinstance(test.operator, cst.Not):
        return source_of(test.expression) in targets
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and source_of(test.left) in targets:
        target = test.comparisons[0]
        bound = target.comparator.value if type(target.comparator) is cst.Integer else None
        return (type(target.operator), bound) in ((cst.Equal, "0"), (cst.LessThan, "1"), (cst.LessThanEqual, "0"))
    return False


def _stores(body: cst.BaseSuite, targets: List[str]) -> bool:
    return any(
        type(small) is cst.Assign and any(source_of(target.target) in targets for target in small.targets)
        for line in body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body
    )


def zero_divisor(registry: Registry) -> None:
    registry.on(cst.BinaryOperation, _zero_divisor)
    registry.on(cst.Call, _zero_processes)


# -- CDL111: MPS chosen because it is built, not because it is available -----------
def _mps_built(node: cst.Call, ctx: FileContext) -> None:
    if not ctx.test_depth or ctx.imports.resolve(node.func) not in ("torch.backends.mps.is_built",):
        return
    for holder in reversed(ctx.stack):
        if isinstance(holder, (cst.If, cst.IfExp, cst.While)):
            if "is_available" not in source_of(holder.test) and not _asks_mps_available(holder.test, ctx) and not _mps_checked_before(ctx):
                ctx.report(
                    "CDL111",
                    node,
                    "torch.backends.mps.is_built() is True on any macOS build, even where MPS cannot run "
                    "(old macOS, no Metal device); test torch.backends.mps.is_available()",
                    _is_available_fix(node),
                )
            return


def _mps_checked_before(ctx: FileContext) -> bool:
    """An earlier statement of a block around the test leaves unless MPS is available (`if not
    torch.backends.mps.is_available(): raise ...`), or the test sits in the body of an `if` that asks
    for it (`if torch.backends.mps.is_available():` then `if torch.backends.mps.is_built():`,
    happytransformer): the build test there chooses nothing."""
    stack = ctx.stack
    if any(type(holder) is cst.If and stack[at + 1] is holder.body and _asks_mps_available(holder.test, ctx)
           for at, holder in enumerate(stack[:-1])):
        return True
    return any(
        type(statement) is cst.If and statement.orelse is None and ends_flow(statement.body, ctx.model)
        and _asks_mps_available(statement.test, ctx)
        for statement in earlier_statements(ctx.stack)
    )


def _asks_mps_available(test: cst.BaseExpression, ctx: FileContext) -> bool:
    return any(ctx.imports.resolve(call.func) == "torch.backends.mps.is_available" for call in _calls_in(test))


def _is_available_fix(call: cst.Call) -> Optional[FixPlan]:
    """is_built() -> is_available(): same answer wherever MPS can run, so safe."""
    if not isinstance(call.func, cst.Attribute):
        return None
    return FixPlan(Safety.SAFE, "test is_available()", [(call.func.attr, "is_available")])


def mps_built(registry: Registry) -> None:
    registry.on(cst.Call, _mps_built)


# -- CDL112: code that requires CUDA and stops everywhere else ---------------------
def _cuda_required_if(node: cst.If, ctx: FileContext) -> None:
    if "CDL112" not in ctx.rules or not _is_chain_head(node, ctx):
        return  # (the check runs for CDL117 alone too, which no `if` reports)
    guard = ctx.model.guard(node.test)
    if guard.when_false and not guard.when_true and ends_flow(node.body, ctx.model) == "raise":
        if not _tests_device_package(node.test, ctx):
            ctx.report("CDL112", node, "stops when CUDA is missing: MPS and CPU hosts cannot run this code")
        return
    if not guard.when_true:
        return
    pairs, else_body = _branches(node)
    if any(mentions_mac_path(test) for test, _ in pairs[:1]):
        return
    if else_body is not None and ends_flow(else_body, ctx.model) == "raise" and not any(
        mentions_mac_path(test) for test, _ in pairs
    ):
        ctx.report("CDL112", node, "the branch for hosts without CUDA raises: MPS and CPU hosts cannot run this code")
    elif else_body is None and len(pairs) > 1 and not any(mentions_mac_path(test) for test, _ in pairs[1:]):
        if all(BACKEND_QUERY_RE.search(source_of(test)) for test, _ in pairs) and not _only_housekeeping(pairs, ctx):
            ctx.report(
                "CDL112",
                node,
                "backend chain has no MPS and no CPU branch: on a Mac nothing is selected",
            )


def _tests_device_package(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """`if not _XLA_AVAILABLE: raise`: the code asks for the package of another device type (torch_xla,
    rules/guards.toml off_mac_libraries), which is no demand for CUDA."""
    packages = guard_facts().off_mac_libraries
    parts = libraries_of(ctx.model.availability.tested(test)[1])
    return bool(parts) and all(library_of(part, packages) is not None for part in parts)


def _only_housekeeping(pairs, ctx: FileContext) -> bool:
    """Every branch only frees memory, synchronises or seeds: a Mac doing none of it loses nothing."""
    harmless = set(ctx.rules["CDL112"].match.get("housekeeping", ()))
    for _, body in pairs:
        for line in body.body:
            smalls = line.body if isinstance(line, cst.SimpleStatementLine) else [line]
            for small in smalls:
                if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
                    return False
                name = dotted(small.value.func) or ""
                if name.rsplit(".", 1)[-1] not in harmless:
                    return False
    return True


def _is_availability_query(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """`torch.cuda.is_available()`, `torch.cuda.device_count() > 0`: a question about the host."""
    if isinstance(test, cst.Comparison):
        test = test.left
    return isinstance(test, cst.Call) and ctx.model.resolve(test.func) in guard_facts().queries


def _cuda_required_assert(node: cst.Assert, ctx: FileContext) -> None:
    test = node.test
    if ctx.model.guard(test).when_true and not (isinstance(test, cst.Attribute) and test.attr.value == "is_cuda"):
        if asserted_at_import(ctx.stack, ctx.model):
            if "CDL117" in ctx.rules:
                ctx.report("CDL117", node, ctx.rules["CDL117"].match["message"])
        else:
            ctx.report("CDL112", node, "asserts a CUDA host: MPS and CPU hosts stop here")


def cuda_required(registry: Registry) -> None:
    registry.on(cst.If, _cuda_required_if)
    registry.on(cst.Assert, _cuda_required_assert)


# -- CDL402: JIT-compiled CUDA sources ------------------------------------------------
def _jit_extension(node: cst.Call, ctx: FileContext) -> None:
    qualified = ctx.imports.resolve(node.func)
    if qualified == "torch.utils.cpp_extension.load":
        sources = next((a.value for a in node.args if a.keyword and a.keyword.value == "sources"), None)
        positional = [a for a in node.args if a.keyword is None]
        if sources is None and len(positional) >= 2:
            sources = positional[1].value
        if sources is not None and _names_cuda_sources(sources, ctx):
            ctx.report("CDL402", node, "cpp_extension.load compiles .cu sources with nvcc: no CUDA toolkit on a Mac")
    elif qualified == "torch.utils.cpp_extension.load_inline":
        for arg in node.args:
            name = arg.keyword.value if arg.keyword else None
            if (name == "cuda_sources" and not _empty(arg.value)) or (name == "with_cuda" and is_true(arg.value)):
                ctx.report("CDL402", node, "load_inline with CUDA sources needs nvcc: no CUDA toolkit on a Mac")
                return


CUDA_SOURCE_RE = re.compile(r"\.cuh?['\"]")


def _names_cuda_sources(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """The sources name a .cu file: as written, or through the local names they are built from
    (exllamav2: `sources = [os.path.join(sources_dir, s) for s in sources_]`, `sources_` a list of files)."""
    if CUDA_SOURCE_RE.search(source_of(node)):
        return True
    if depth >= 3:
        return False
    pending = [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.Name:
            if any(_names_cuda_sources(value, ctx, depth + 1) for value, _ in ctx.model.assigned(current)):
                return True
            continue
        pending.extend(code_children(current))
    return False


def _empty(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value == "None") or (isinstance(node, (cst.List, cst.Tuple)) and not node.elements)


def jit_extension(registry: Registry) -> None:
    registry.on(cst.Call, _jit_extension)


# -- CDL217: NVIDIA's Multi-Process Service control daemon -------------------------
def _mps_daemon(node: cst.SimpleString, ctx: FileContext) -> None:
    value = string_value(node)
    if value and "nvidia-cuda-mps-control" in value and not isinstance(ctx.parent, cst.Expr):
        ctx.report(
            "CDL217",
            node,
            "nvidia-cuda-mps-control is NVIDIA's Multi-Process Service daemon, which shares only the "
            "letters with Apple's MPS backend; it does not exist off NVIDIA hosts",
        )


def mps_daemon(registry: Registry) -> None:
    registry.on(cst.SimpleString, _mps_daemon)


# Checks whose trigger words depend on the target release (the file prefilter adds them).
def _int_device_words(torch_version: Tuple[int, ...]) -> FrozenSet[str]:
    """Before torch 2.5 any `.to(n)` or `device=n` can be an integer CUDA index: every such file is read."""
    return frozenset({"to", "device"}) if torch_version < INT_DEVICE_ACCELERATOR else frozenset()


RELEASE_WORDS: Dict[str, Callable[[Tuple[int, ...]], FrozenSet[str]]] = {
    "op-coverage": op_coverage.trigger_words,
    "device-sink": _int_device_words,
}
# Of a check's release words, those that are methods of any value (a tensor's): with the check's `roots`,
# these count anywhere in a file importing one, the others only as part of a name resolving under one.
RELEASE_METHODS: Dict[str, Callable[[Tuple[int, ...]], FrozenSet[str]]] = {"op-coverage": op_coverage.method_words}
# Of a check's release words, those whose calls the gates judge by their arguments (op_cases.py).
RELEASE_ARGUED: Dict[str, Callable[[Tuple[int, ...]], Mapping[str, Mapping[str, object]]]] = {
    "op-coverage": op_coverage.argued_words}


@dataclass(frozen=True)
class Check:
    """A named check: how it registers on the walk, and the only codes it may report."""

    register: Callable[[Registry], None]
    codes: FrozenSet[str]
    # Modules every name the check acts on resolves under (it asks resolve() for torch.load, ...): its
    # words then count only in a file that imports one of them. Empty: its words count anywhere.
    roots: FrozenSet[str] = frozenset()
    # Its words are parts of those names (not, say, a method of any tensor): a word then counts only
    # where it is part of a name that can resolve under `roots`.
    names: bool = False
    # Methods it reads only where they are called (`b.type(a.type())`, not `device.type`): they count
    # only as the attribute a call calls (analyze._mentions' `called`).
    called: FrozenSet[str] = frozenset()


CHECKS: Dict[str, Check] = {
    "device-sink": Check(device_sink, frozenset({"CDL101"})),
    "device-selection": Check(device_selection, frozenset({"CDL104", "CDL107"})),
    "default-device": Check(default_device, frozenset({"CDL108"})),
    "default-backend": Check(default_backend, frozenset({"CDL706"})),
    "torch-load": Check(torch_load, frozenset({"CDL109"}), frozenset({"torch"}), names=True),
    "none-misuse": Check(none_misuse, frozenset({"CDL216", "CDL403"}), frozenset({"torch"}), names=True),
    "mps-built": Check(mps_built, frozenset({"CDL111"}), frozenset({"torch"}), names=True),
    "zero-divisor": Check(zero_divisor, frozenset({"CDL115"}), frozenset({"torch"}), names=True),
    "cuda-required": Check(cuda_required, frozenset({"CDL112", "CDL117"})),
    "device-choices": Check(device_choices.device_choices, frozenset({"CDL116"})),
    "jit-extension": Check(jit_extension, frozenset({"CDL402"}), frozenset({"torch"}), names=True),
    "mps-daemon": Check(mps_daemon, frozenset({"CDL217"})),
    "oom-message": Check(oom_messages.oom_message, frozenset({"CDL218"})),
    "type-string": Check(type_strings.type_string, frozenset({"CDL219"}), called=frozenset({"type"})),
    "program-run": Check(program_runs.program_runs, frozenset({"CDL220"})),
    "numba-launch": Check(numba_launches.numba_launches, frozenset({"CDL222"})),
    "device-index": Check(device_index.device_index, frozenset({"CDL118"}), called=frozenset({"get_device"})),
    "device-table": Check(device_tables.device_tables, frozenset({"CDL119"})),
    "host-copy": Check(host_copies.host_copies, frozenset({"CDL120"})),
    "op-coverage": Check(op_coverage.register, frozenset({"CDL604", "CDL605", "CDL606", "CDL607", "CDL608", "CDL609"}),
                         op_coverage.ROOTS),
    "extension-ops": Check(extension_ops.register, frozenset({"CDL610"}), extension_ops.ROOTS, names=True),
    "cuda-default-call": Check(project_checks.cuda_default_call, frozenset({"CDL113"})),
    "extension-import": Check(project_checks.extension_import, frozenset({"CDL406"})),
    "import-chain": Check(project_checks.import_chain, frozenset({"CDL407"})),
}


def validate(rules) -> None:
    """Each rule that names a check is one the check may report, and each code a check may report
    is a catalog rule naming that check (so a check cannot report a code the catalog gave another)."""
    from cudalint.catalog import CatalogError

    named = {}
    for rule in rules:
        check = rule.match.get("check")
        if check is None:
            continue
        if check not in CHECKS:
            raise CatalogError(f"{rule.code}: unknown check {check!r}")
        if rule.code not in CHECKS[check].codes:
            raise CatalogError(f"{rule.code}: check {check!r} does not report it")
        named[rule.code] = check
    for name, check in CHECKS.items():
        for code in check.codes:
            if named.get(code) != name:
                raise CatalogError(f"check {name!r} may report {code}, but the catalog's {code} does not name it")
