"""A switch that puts data on CUDA only when someone asks: `if cuda: x = x.cuda()`.

`OptInSwitches.placement_switch(node, scope)`: an `if` (or a conditional expression) whose test is off unless
a caller or the command line turns it on, and whose branch does nothing but put values on CUDA. Its
test is a parameter whose default is False or None that no caller in sight passes anything but a
false constant or another such switch (`def batch(x, cuda=False)`), `self.flag` bound only to those
(`self.use_cuda = use_cuda` in `__init__`) or to False/None, or a command-line option that is off
unless given (`add_argument("--cuda", action="store_true")`, a false default). The branch: assignments
and calls whose every value is a `.cuda()` call, a `.to()` of a CUDA device string, `torch.device` of
one or the string itself, a tuple or list of those or a comprehension making them (`[y.cuda() for y in
ys]`); under `if not switch:`, the `else` branch. Such a branch runs only where someone asked for CUDA
placement, which nobody running on a Mac does; the switch being off is the portable default (the
porting reviewer's reading of an opt-in: bench/labels, gpytorch's `if cuda:` and unsloth's
`use_cuda = False`). Nothing here reads how the switch is spelled: a switch guarding anything but
placement (`if fp16: scaler = torch.cuda.amp.GradScaler()`) is an option a Mac user may turn on, and
it stays a question for the guard evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Union

import libcst as cst

from cudalint.python.children import code_children
from cudalint.python.guard_facts import guard_facts
from cudalint.python.names import conjuncts, string_value
from cudalint.python.semantic.values import UNSET, reads_environment

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

MAX_DEPTH = 6
MAX_FORWARDS = 256  # parameters forwarded through one another that one question reads
OFF_CONSTANTS = ("False", "None")


class OptInSwitches:
    """The model's answers, one per parameter: a parameter's callers are read once, and a cycle of
    functions forwarding the switch to each other (`f(cuda=cuda)` in g, `g(cuda=cuda)` in f) ends at the
    first repeat."""

    def __init__(self, model: "SemanticModel"):
        self.model = model
        self.params: Dict[int, bool] = {}  # id(parameter) -> off unless a caller turns it on

    def placement_switch(self, node: Union[cst.If, cst.IfExp], scope: "Scope") -> Optional[str]:
        """The field of `node` ("body" or "orelse") whose branch runs only where someone asked for CUDA
        placement: the body under `if switch:`, the else under `if not switch:`; None for neither."""
        test, field = node.test, "body"
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, field = test.expression, "orelse"
        kind = type(test)  # libcst's classes are ABCs: exact types are the cheap test, on every `if`
        if kind is not cst.Name and kind is not cst.Attribute:
            return None
        branch = getattr(node, field)
        if type(node) is cst.IfExp:
            placed = _places_on_cuda(self.model, branch, scope)
        elif field == "body":
            placed = _block_places_on_cuda(self.model, branch, scope)
        else:
            placed = type(branch) is cst.Else and _block_places_on_cuda(self.model, branch.body, scope)
        return field if placed and self.opt_in(test, scope) else None

    def kernel_switch(self, node: cst.If, scope: "Scope") -> bool:
        """`if os.getenv("BUILD_CUDA_EXTENSIONS", "0") == "1":` around a build of CUDA kernels: a test that is
        false where the environment variables it reads are not set (any operand of an `and`), guarding a
        branch that builds native code (rules/guards.toml kernel_builders: cpp_extension.load, CUDAExtension).
        The kernels are built only where someone asked for them, which nobody installing or running the
        project on a Mac does: fairscale's setup.py, rwkv's `RWKV_CUDA_ON`. Only environment switches: a
        parameter or option may be turned on by the project itself."""
        model = self.model
        if not any(reads_environment(operand, model, scope) and _false(model.evaluator.unset_environment(operand, scope))
                   for operand in conjuncts(node.test)):
            return False
        return _builds_kernels(model, node.body, scope)

    def opt_in(self, test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
        """`test` is false unless a caller or the command line turns it on (see the module's docstring)."""
        model = self.model
        if depth > MAX_DEPTH or not isinstance(test, (cst.Name, cst.Attribute)):
            return False
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and model.self_class(test.value.value, scope) is None:
            options = model.options.get(test.attr.value)
            return bool(options) and model.evaluator.may_hold_options(test.value, scope, depth) and all(
                _off_unless_given(call) for call, _ in options)
        asked = False
        for binding in model.bindings_of(test, scope):
            if binding.kind == "param":
                if not self._param_off(binding, depth):
                    return False
                asked = True
            elif binding.kind == "assign" and binding.value is not None:
                if _off(binding.value):
                    continue
                if not self.opt_in(binding.value, binding.context, depth + 1):
                    return False
                asked = True
            else:
                return False
        return asked

    def _param_off(self, binding, depth: int) -> bool:
        """The parameter is off unless a caller turns it on: every parameter it is forwarded from
        (`f(x, cuda=cuda)` inside `def g(x, cuda=False)`) is read too, each once, without recursion; a
        cycle of forwards adds no caller that turns it on."""
        key = id(binding.node)
        known = self.params.get(key)
        if known is not None:
            return known
        todo, seen, read = [binding], {key}, []
        off = True
        while todo and off:
            current = todo.pop()
            read.append(id(current.node))
            if not _off(current.value):
                off = False
                break
            for forwarded in self._forwarded(current, depth):
                if forwarded is None or self.params.get(id(forwarded.node)) is False:
                    off = False
                    break
                if id(forwarded.node) not in seen and id(forwarded.node) not in self.params:
                    seen.add(id(forwarded.node))
                    todo.append(forwarded)
            if len(seen) > MAX_FORWARDS:
                off = False  # forwarded through more parameters than one question reads: not known
        if off:
            for each in read:
                self.params[each] = True
        else:
            self.params[key] = False
        return off

    def _forwarded(self, binding, depth: int):
        """What the calls of the parameter's function pass for it: for each call that forwards another
        parameter, that parameter's binding; None for one that passes anything but a false constant or
        another switch (or spreads arguments). The project index's calls from other modules count too."""
        model = self.model
        for argument in model.call_sites.seen(binding):
            if argument is None:
                yield None  # `f(**options)`: what it passes is not visible
                return
            value, where, _ = argument
            if value is None or _off(value):
                continue
            bindings = model.bindings_of(value, where) if isinstance(value, cst.Name) else []
            if bindings and all(each.kind == "param" for each in bindings):
                yield from bindings
            elif not self.opt_in(value, where, depth + 1):
                yield None
                return
        elsewhere = model.call_sites.elsewhere(binding) or ()
        if not all(summary is None or (summary[0] == "c" and summary[1] is False) for _, summary in elsewhere):
            yield None


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
    """`x.cuda()`, `x.to("cuda:0")`, `torch.device("cuda")`, `"cuda"`, a tuple or list of those, or a
    comprehension making them."""
    kind = type(node)
    if kind is cst.Call:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value not in ("cuda", "to", "device"):
            return False  # most calls in a branch: not a placement
    elif kind is cst.Tuple or kind is cst.List:
        return bool(node.elements) and all(_places_on_cuda(model, element.value, scope) for element in node.elements)
    elif kind is cst.ListComp or kind is cst.GeneratorExp or kind is cst.SetComp:
        return _places_on_cuda(model, node.elt, scope)  # `[y.cuda() for y in ys]`
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


def _false(value: object) -> bool:
    """What unset_environment said is false: an unset variable (`os.environ.get("X")`), "" or 0, not
    None (not known)."""
    return value is UNSET or (value is not None and not value)


def _builds_kernels(model: "SemanticModel", body: cst.BaseSuite, scope: "Scope") -> bool:
    """The branch calls a builder of native code: not in a function or class it defines, nor under an
    `if` of its own (`if os.environ.get("V7_ON") == "1":` around a model whose kernels an inner switch
    builds selects the model, not the kernels)."""
    builders = guard_facts().kernel_builders
    pending = [body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda or kind is cst.If:
            continue
        if kind is cst.Call and model.resolve(node.func, scope) in builders:
            return True
        pending.extend(code_children(node))
    return False
