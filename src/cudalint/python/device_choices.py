"""CDL116: devices a program or library accepts, "cuda" among them and "mps" not.

    parser.add_argument("--device", choices=["cpu", "cuda"])
    assert device in ("cpu", "cuda")
    if device not in ALLOWED: raise ValueError(device)

    if self.device == "cuda":
        model = model.cuda()
    elif self.device == "cpu":
        model = model.cpu()
    else:
        raise ValueError("Please input cpu or cuda")

A list of device names (the choices of an option, a membership test that raises or an assert) is reported
where it is written. An `if`/`elif` chain whose tests compare one value with device names (`==`, or `in` a
written list of them) accepts those devices too: reported at the `raise` of its `else` (or the `raise` right
after a chain whose every arm returns: `if d == "cuda": return a` ... `raise ValueError(d)`), or, with no `else`,
at its first test when every arm sets one name or attribute nothing sets before it (`self.device`, left
unset for "mps"). A chain counts only in a file that imports torch and when an arm places something with
PyTorch (`.cuda()`, `.cpu()`, `.to(...)`, or any of torch's APIs: `torch.device(...)`, `torch.cuda.set_device`,
`torch.float16`), itself or through a function of the file it calls: one that hands the device to another
framework (NVIDIA Warp's devices, a C++ extension's device ordinal) maps onto what that framework has. Not
reported: a tensor's own placement (`x.device.type`: what a kernel supports), a list with the meta device
(a kernel's registrations), an assert of a test module, a `raise NotImplementedError` (an implementation
missing, said so).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set

import libcst as cst

from cudalint.python.children import assignments_in, earlier_statements, enclosing_block
from cudalint.python.context import FileContext
from cudalint.python.names import source_of, string_elements, string_value
from cudalint.python.visitor import Registry, ends_flow
from cudalint.python.project_checks import choice_default

# Calls of these methods in a chain's arm place a tensor or module with PyTorch.
PLACING_METHODS = frozenset({"cuda", "cpu", "to"})
MAX_CALL_DEPTH = 2  # calls of the file's functions followed from a chain's arm, to find torch's APIs


def device_choices(registry: Registry) -> None:
    registry.on(cst.Call, _device_choices_call)
    registry.on(cst.Assert, _device_choices_assert)
    registry.on(cst.If, _device_choices_if)


def _device_list(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> Optional[cst.BaseExpression]:
    """The list, tuple or set of device names (CDL116's `devices`, "cuda:0" as cuda) the expression is,
    written out or bound once to a name; None for anything else."""
    if isinstance(node, cst.Name) and depth == 0:
        bindings = ctx.model.lookup(node.value)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return _device_list(bindings[0].value, ctx, 1)
        return None
    if not isinstance(node, (cst.List, cst.Tuple, cst.Set)) or len(node.elements) < 2:
        return None
    return node if _device_names([element.value for element in node.elements], ctx) is not None else None


def _device_names(nodes: Sequence[cst.BaseExpression], ctx: FileContext) -> Optional[List[str]]:
    """The device names the nodes write ("cuda:0" is "cuda"); None unless every node is a string naming one
    (CDL116's `devices`)."""
    devices = ctx.rules["CDL116"].match["devices"]
    names = [text.split(":")[0] if text is not None else None for text in map(string_value, nodes)]
    return names if all(name in devices for name in names) else None


def _without_mps(names: Sequence[str]) -> bool:
    """The names have cuda and not mps, nor "meta": a list with the meta device (shapes only, no data)
    names the implementations a kernel has, not devices a user may pick."""
    return "cuda" in names and "mps" not in names and "meta" not in names


def _listed_without_mps(node: Optional[cst.BaseExpression]) -> bool:
    return node is not None and _without_mps([name.split(":")[0] for name in string_elements(node)])


BRACKETS = {cst.List: "[]", cst.Tuple: "()", cst.Set: "{}"}


def _written_list(node: cst.BaseExpression) -> str:
    """The list on one line (`["cpu", "cuda"]`), however it is laid out in the file."""
    opening, closing = BRACKETS[type(node)]
    return opening + ", ".join(f'"{name}"' for name in string_elements(node)) + closing


def _report_device_list(found: cst.BaseExpression, ctx: FileContext, where: cst.BaseExpression) -> None:
    """Reported where the list is written; where it is bound to a name, the test or call that reads it
    is the related location."""
    related = () if found is where else ((where, f"{source_of(where)} accepts only these devices"),)
    ctx.report("CDL116", found, ctx.rules["CDL116"].match["message"].format(found=_written_list(found)), None, related)


def _device_choices_call(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
        choices = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "choices"), None)
    elif node.args and node.args[0].keyword is None and ctx.imports.resolve(func) in ctx.rules["CDL116"].match["choice_calls"]:
        choices = node.args[0].value
    else:
        return
    found = _device_list(choices, ctx) if choices is not None else None
    if _listed_without_mps(found):
        _report_device_list(found, ctx, choices)


def _accepted(test: cst.BaseExpression, ctx: FileContext, membership) -> Optional[cst.BaseExpression]:
    """The device list of a test `X in LIST` (membership cst.In) or `X not in LIST` (cst.NotIn), X not
    a tensor's own placement (`x.device.type`)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, membership)):
        return None
    if _tensor_placement(test.left, ctx) or _choice_parameter(test.left, ctx):
        return None
    found = _device_list(test.comparisons[0].comparator, ctx)
    return found if _listed_without_mps(found) else None


def _choice_parameter(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A parameter of the function around the test whose "cuda" default the project index judged to hold no
    device (`backend: str = "cuda"` only compared and named in an error: project/device_params.py)."""
    if type(node) is not cst.Name:
        return False
    function = next((held for held in reversed(ctx.stack) if isinstance(held, (cst.FunctionDef, cst.Lambda))), None)
    return isinstance(function, cst.FunctionDef) and choice_default(function, node.value, ctx)


def _tensor_placement(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """`x.device.type`, or a local name every binding of which is one (`device_type = input.device.type`):
    where a tensor is, which a kernel launcher tests against the devices it has kernels for."""
    if isinstance(node, cst.Name):
        values = ctx.model.assigned(node)
        return bool(values) and all(type(value) is not cst.Name and _tensor_placement(value, ctx) for value, _ in values)
    return (isinstance(node, cst.Attribute) and node.attr.value == "type" and isinstance(node.value, cst.Attribute)
            and node.value.attr.value == "device")


def _device_choices_assert(node: cst.Assert, ctx: FileContext) -> None:
    if ctx.model.in_tests:
        return  # a test's assert checks a result (`assert config["device"] in {"cpu", "cuda"}`), no user's choice
    found = _accepted(node.test, ctx, cst.In)
    if found is not None:
        _report_device_list(found, ctx, node.test.comparisons[0].comparator)


def _device_choices_if(node: cst.If, ctx: FileContext) -> None:
    _device_chain(node, ctx)
    test, negated = node.test, False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negated = test.expression, True  # `if not device in {"cpu", "cuda"}: raise ...`
    if type(test) is not cst.Comparison:
        return  # the cheap test first: this runs on every `if`
    rejecting, accepting = (cst.In, cst.NotIn) if negated else (cst.NotIn, cst.In)
    found = _accepted(test, ctx, rejecting) if ends_flow(node.body, ctx.model) == "raise" else None
    if found is None and isinstance(node.orelse, cst.Else) and ends_flow(node.orelse.body, ctx.model) == "raise":
        found = _accepted(test, ctx, accepting)
    if found is not None:
        _report_device_list(found, ctx, test.comparisons[0].comparator)


def _device_chain(node: cst.If, ctx: FileContext) -> None:
    """An `if`/`elif` chain over one value's device names (see the module docstring)."""
    if type(node.test) is not cst.Comparison:
        return  # the cheap test first: this runs on every `if`
    parent = ctx.parent
    if type(parent) is cst.If and parent.orelse is node:
        return  # an `elif`: judged with the chain it belongs to
    if not ctx.model.imports_under("torch"):
        return  # a file without torch checks some other framework's devices
    arms: List[cst.If] = []
    current: Optional[cst.CSTNode] = node
    subject: Optional[str] = None
    names: List[str] = []
    while type(current) is cst.If:
        tested = _compared(current.test, ctx)
        if tested is None:
            return
        if subject is None:
            subject = tested[0]
        elif tested[0] != subject:
            return  # a chain over two values checks no one device
        names.extend(tested[1])
        arms.append(current)
        current = current.orelse
    if "cpu" not in names or not _without_mps(names) or not any(_works_with_torch(arm.body, ctx) for arm in arms):
        return
    accepted = _or_list(names)
    match = ctx.rules["CDL116"].match
    if current is None and all(ends_flow(arm.body, ctx.model) == "return" for arm in arms):
        after = _statement_after(ctx)  # `if d == "cuda": return a` ... `raise ValueError(d)`: the chain's else
        if after is not None and _raises_invalid(cst.IndentedBlock(body=[after]), ctx):
            ctx.report("CDL116", after, match["message_chain"].format(value=subject, accepted=accepted))
    elif current is None:
        target = _set_by_every_arm(arms)
        if target is not None and not any(target in _assigned_in(statement) for statement in earlier_statements(ctx.stack)):
            ctx.report("CDL116", node.test, match["message_unset"].format(target=target, value=subject, accepted=accepted))
    elif type(current) is cst.Else and _raises_invalid(current.body, ctx):
        ctx.report("CDL116", current.body.body[-1], match["message_chain"].format(value=subject, accepted=accepted))


def _statement_after(ctx: FileContext) -> Optional[cst.CSTNode]:
    """The statement right after the one being visited, in its block; None at the block's end."""
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    if found is None:
        return None
    body, index = found
    return body[index + 1] if index + 1 < len(body) else None


def _compared(test: cst.BaseExpression, ctx: FileContext) -> Optional[tuple]:
    """(the value's source, the device names) of `value == "cuda"` or `value in ("cpu", "cuda")`, every string
    a device name and the value no tensor's own placement; None for another test."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or _tensor_placement(test.left, ctx):
        return None
    operator, right = type(test.comparisons[0].operator), test.comparisons[0].comparator
    if operator is cst.Equal:
        written = [right]
    elif operator is cst.In and type(right) in (cst.Tuple, cst.List, cst.Set):
        written = [element.value for element in right.elements]
    else:
        return None
    names = _device_names(written, ctx)
    return (source_of(test.left), names) if names is not None else None


def _or_list(names: Sequence[str]) -> str:
    written = [f'"{name}"' for name in dict.fromkeys(names)]
    return written[0] if len(written) == 1 else ", ".join(written[:-1]) + " or " + written[-1]


def _raises_invalid(block: cst.BaseSuite, ctx: FileContext) -> bool:
    """The block ends by raising, other than `raise NotImplementedError` (an implementation missing, said so)."""
    if ends_flow(block, ctx.model) != "raise" or not block.body:
        return False
    last = block.body[-1]
    final = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else last
    if type(final) is cst.Raise and final.exc is not None:
        raised = final.exc.func if type(final.exc) is cst.Call else final.exc
        return not (type(raised) is cst.Name and raised.value == "NotImplementedError")
    return True


def _works_with_torch(block: cst.CSTNode, ctx: FileContext, depth: int = 0) -> bool:
    """The block works with PyTorch: a `.cuda()`, `.cpu()` or `.to(...)` call, or any API of torch's
    (`torch.device(...)`, `torch.cuda.set_device`, the dtype it picks: `return torch.float16`); or calls a
    function of the file whose body does, to MAX_CALL_DEPTH (`return get_available_bytes_cuda(device)`)."""
    stack: List[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Call:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in PLACING_METHODS and not ctx.model.is_module_ref(func.value):
                return True
            defined = ctx.model.defined_function(func) if depth < MAX_CALL_DEPTH else None
            if defined is not None and _works_with_torch(defined[0].body, ctx, depth + 1):
                return True
        elif kind is cst.Attribute or kind is cst.Name:
            if (ctx.model.resolve(node) or "").startswith("torch."):
                return True
            if kind is cst.Attribute:
                stack.append(node.value)
            continue
        stack.extend(node.children)
    return False


def _set_by_every_arm(arms: Sequence[cst.If]) -> Optional[str]:
    """The name or attribute (as written) every arm of the chain assigns, somewhere in it."""
    common: Optional[Set[str]] = None
    for arm in arms:
        common = _assigned_in(arm.body) if common is None else common & _assigned_in(arm.body)
        if not common:
            return None
    return min(common) if common else None


def _assigned_in(block: cst.CSTNode) -> Set[str]:
    """The names and attributes (as written) the block's assignments bind."""
    return {source_of(target.target) for assign in assignments_in(block) for target in assign.targets
            if type(target.target) in (cst.Name, cst.Attribute)}
