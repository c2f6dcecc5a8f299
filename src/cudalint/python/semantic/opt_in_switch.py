"""A switch that puts data on CUDA only when someone asks: `if cuda: x = x.cuda()`.

`placement_switch(model, node, scope)`: an `if` (or a conditional expression) whose test is off unless
a caller or the command line turns it on, and whose branch does nothing but put values on CUDA. Its
test is a parameter whose default is False or None that no caller in sight passes anything but a
false constant or another such switch (`def batch(x, cuda=False)`), `self.flag` bound only to those
(`self.use_cuda = use_cuda` in `__init__`) or to False/None, or a command-line option that is off
unless given (`add_argument("--cuda", action="store_true")`, a false default). The branch: assignments
and calls whose every value is a `.cuda()` call, a `.to()` of a CUDA device string, `torch.device` of
one or the string itself, or a tuple of those. Such a branch runs only where someone asked for CUDA
placement, which nobody running on a Mac does; the switch being off is the portable default (the
porting reviewer's reading of an opt-in: bench/labels, gpytorch's `if cuda:` and unsloth's
`use_cuda = False`). Nothing here reads how the switch is spelled: a switch guarding anything but
placement (`if fp16: scaler = torch.cuda.amp.GradScaler()`) is an option a Mac user may turn on, and
it stays a question for the guard evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

import libcst as cst

from cudalint.python.guard_facts import guard_facts
from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

MAX_DEPTH = 6
OFF_CONSTANTS = ("False", "None")


def placement_switch(model: "SemanticModel", node: Union[cst.If, cst.IfExp], scope: "Scope") -> bool:
    """The branch of `node` taken when its test holds runs only where someone asked for CUDA placement."""
    kind = type(node.test)  # libcst's classes are ABCs: exact types are the cheap test, on every `if`
    if kind is not cst.Name and kind is not cst.Attribute:
        return False
    if type(node) is cst.IfExp:
        placed = _places_on_cuda(model, node.body, scope)
    else:
        placed = _block_places_on_cuda(model, node.body, scope)
    return placed and opt_in(model, node.test, scope)


def opt_in(model: "SemanticModel", test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
    """`test` is false unless a caller or the command line turns it on (see the module's docstring)."""
    if depth > MAX_DEPTH or not isinstance(test, (cst.Name, cst.Attribute)):
        return False
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and model.self_class(test.value.value, scope) is None:
        options = model.options.get(test.attr.value)
        return bool(options) and model.evaluator.may_hold_options(test.value, scope, depth) and all(
            _off_unless_given(call) for call, _ in options)
    bindings = model.bindings_of(test, scope)
    asked = False
    for binding in bindings:
        if binding.kind == "param":
            if not _off(binding.value) or not _callers_leave_it_off(model, binding, depth):
                return False
            asked = True
        elif binding.kind == "assign" and binding.value is not None:
            if _off(binding.value):
                continue
            if not opt_in(model, binding.value, binding.context, depth + 1):
                return False
            asked = True
        else:
            return False
    return asked


def _callers_leave_it_off(model: "SemanticModel", binding, depth: int) -> bool:
    """No call in this file passes the parameter anything but a false constant or another switch, nor
    does one the project index knows of in another module (a test base class's `self._fit(cuda=...)`);
    callers out of sight ask for it, or leave the default."""
    for argument in model.call_sites.seen(binding):
        if argument is None:
            return False  # `f(**options)`: what it passes is not visible
        value, where, _ = argument
        if value is not None and not _off(value) and not opt_in(model, value, where, depth + 1):
            return False
    elsewhere = model.call_sites.elsewhere(binding) or ()
    return all(summary is None or (summary[0] == "c" and summary[1] is False) for _, summary in elsewhere)


def _off(node) -> bool:
    return isinstance(node, cst.Name) and node.value in OFF_CONSTANTS


def _off_unless_given(call: cst.Call) -> bool:
    """`add_argument("--cuda", action="store_true")` or a False/None default: off unless given."""
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "default" in keywords:
        return _off(keywords["default"])
    return string_value(keywords.get("action", cst.Name("x"))) == "store_true"


SIMPLE_LINES = (cst.SimpleStatementLine, cst.SimpleStatementSuite)
PLACING_STATEMENTS = (cst.Assign, cst.AnnAssign, cst.Expr)


def _block_places_on_cuda(model: "SemanticModel", body: cst.BaseSuite, scope: "Scope") -> bool:
    statements = body.body if type(body) is cst.IndentedBlock else (body,)
    if not statements:
        return False
    for statement in statements:
        if type(statement) not in SIMPLE_LINES:
            return False
        for small in statement.body:
            if type(small) not in PLACING_STATEMENTS or small.value is None or not _places_on_cuda(model, small.value, scope):
                return False
    return True


def _places_on_cuda(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope") -> bool:
    """`x.cuda()`, `x.to("cuda:0")`, `torch.device("cuda")`, `"cuda"`, or a tuple of those."""
    kind = type(node)
    if kind is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value not in ("cuda", "to", "device"):
            return False  # most calls in a branch: not a placement
    elif kind is cst.Tuple:
        return bool(node.elements) and all(_places_on_cuda(model, element.value, scope) for element in node.elements)
    else:
        text = string_value(node)
        return text is not None and guard_facts().names_off_mac_device(text)
    positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    if type(func) is cst.Attribute and not model.is_module_ref(func.value):
        if func.attr.value == "cuda":
            return True
        if func.attr.value == "to":
            target = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "device"),
                          positional[0] if positional else None)
            return target is not None and string_value(target) is not None and _places_on_cuda(model, target, scope)
        return False
    return model.resolve(func, scope) == "torch.device" and bool(positional) and _places_on_cuda(model, positional[0], scope)
