"""Code that already sends MPS tensors to the CPU itself, before an operator MPS lacks.

    def fit(self, x):
        if x.device.type == "mps":     # linalg_svd has no MPS kernel: run it on the CPU
            x = x.cpu()
        x_filled = torch.where(torch.isnan(x), torch.zeros_like(x), x)
        u, s, vh = torch.linalg.svd(x_filled)      # on a Mac, x_filled is on the CPU

An `if` that tests for MPS (a device type compared with "mps", `.is_mps`, `torch.backends.mps.
is_available()`) and whose body rebinds a name to its own CPU copy (`x = x.cpu()`, `x = x.to("cpu")`)
moves that tensor off MPS on a Mac; so does `x = x.cpu() if x.device.type == "mps" else x`, and so,
everywhere, does a name bound to a CPU copy with no test at all (`votes = votes.data.cpu()`). After it,
in the statements that follow it in the enclosing blocks, every name bound from an expression that
reads a moved name (`x_filled` above) is derived from that CPU tensor, and an operator given one runs
where the code put it. Names are followed in statement order only; a later rebinding from something
else ends the name's derivation.

A test that shows a tensor is not on MPS keeps it off MPS where the test decides (not moved, but
where the code already is): the body of `if x.device.type != "mps":` (or `== "cpu"`, `not x.is_mps`,
`x.is_cuda`, a part of an `and`), the `else` of `if x.is_mps:`, the statements after `if x.device.type
== "mps": return ...` (or `raise`, `continue`, `break`) and after `assert x.device.type != "mps"`, and
the same through a function of the file that returns such a test of its parameter
(`if not _supports_float64(x.device): return ...` with `def _supports_float64(device): return
device.type != "mps"`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, Set

import libcst as cst

from cudalint.python import placement  # the module, not its names: placement imports this module too
from cudalint.python.children import assignments_in, positional_params
from cudalint.python.names import chain_root, string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def moved_off_mps(model: "SemanticModel", stack: Sequence[cst.CSTNode], source: cst.BaseExpression) -> bool:
    """The tensor `source` reads (its chain's first name) was moved off MPS by the code before the node at
    the end of `stack`, or is derived from one that was, or a test around the node or an early exit
    before it shows it is not on MPS."""
    root = chain_root(source)
    if type(root) is not cst.Name:
        return False
    moved: Set[str] = set()
    for parent, child in _path(stack):
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            for statement in parent.body:
                if statement is child:
                    break
                _after(model, statement, moved)
        elif type(parent) is cst.If or type(parent) is cst.IfExp:
            if child is parent.body:
                moved |= off_mps(model, parent.test, True)
            elif child is parent.orelse:
                moved |= off_mps(model, parent.test, False)
    return root.value in moved


def _path(stack: Sequence[cst.CSTNode]) -> Iterator[tuple]:
    """(parent, child) down the stack from the innermost function (or the module) to the node."""
    start = 0
    for depth in range(len(stack) - 1, -1, -1):
        if isinstance(stack[depth], _DEFINITIONS):
            start = depth
            break
    for depth in range(start, len(stack) - 1):
        yield stack[depth], stack[depth + 1]


def _ends_flow(block: cst.BaseSuite, model: "SemanticModel"):
    from cudalint.python.visitor import ends_flow  # the walk's own rule (the walk imports this module)

    return ends_flow(block, model)


def _after(model: "SemanticModel", statement: cst.CSTNode, moved: Set[str]) -> None:
    """What a statement before the node does to the names known off MPS."""
    for small in assignments_in(statement):
        _follow(model, small, moved, type(statement) is cst.SimpleStatementLine)
    if type(statement) is cst.If:
        if _tests_mps(model, statement.test):
            for small in assignments_in(statement.body):
                name = _own_cpu_copy(small)
                if name is not None:
                    moved.add(name)
        if statement.orelse is None and _ends_flow(statement.body, model) is not None:
            moved |= off_mps(model, statement.test, False)  # `if x.is_mps: return ...`: not on MPS after it
    elif type(statement) is cst.SimpleStatementLine:
        for small in statement.body:
            if type(small) is cst.Assert:
                moved |= off_mps(model, small.test, True)


MAX_HELPERS = 2  # functions returning a device test, inside functions returning one


def off_mps(model: "SemanticModel", test: cst.BaseExpression, truth: bool, given=None, depth: int = 0) -> Set[str]:
    """The names of the tensors that `test`, when its value is `truth`, shows are not on MPS. `given` maps
    the parameters of a function whose returned test this is to the arguments of the call."""
    kind = type(test)
    if kind is cst.UnaryOperation and isinstance(test.operator, cst.Not):
        return off_mps(model, test.expression, not truth, given, depth)
    if kind is cst.BooleanOperation:
        left = off_mps(model, test.left, truth, given, depth)
        right = off_mps(model, test.right, truth, given, depth)
        return left | right if isinstance(test.operator, cst.And) == truth else left & right
    if kind is cst.Comparison and len(test.comparisons) == 1:
        return _compared_off_mps(test, truth, given)
    if kind is cst.Attribute and test.attr.value in _DEVICE_FLAGS:
        name = _tensor_name(test.value, given)
        return {name} if name is not None and _DEVICE_FLAGS[test.attr.value] is truth else set()
    if kind is cst.Call and depth < MAX_HELPERS:
        return _helper_off_mps(model, test, truth, depth)
    return set()


# Tensor attributes that say where it is, and the value of each that shows it is not on MPS.
_DEVICE_FLAGS = {"is_mps": False, "is_cuda": True, "is_cpu": True, "is_xpu": True, "is_meta": True}


def _compared_off_mps(test: cst.Comparison, truth: bool, given) -> Set[str]:
    """`x.device.type == "cpu"`, `!= "mps"`, `in ("cpu", "cuda")`, `not in ("mps",)`, either side for `==`/`!=`."""
    target = test.comparisons[0]
    operator = type(target.operator)
    if operator in (cst.Equal, cst.NotEqual):
        sides = ((test.left, target.comparator), (target.comparator, test.left))
        for subject, other in sides:
            name, text = _type_subject(subject, given), string_value(other)
            if name is not None and text is not None:
                is_mps = text.split(":")[0] == "mps"
                holds_off_mps = (operator is cst.Equal) != is_mps  # `== "cpu"` or `!= "mps"`
                return {name} if holds_off_mps is truth else set()
        return set()
    if operator in (cst.In, cst.NotIn) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
        name = _type_subject(test.left, given)
        texts = [string_value(element.value) for element in target.comparator.elements]
        if name is None or any(text is None for text in texts):
            return set()
        lists_mps = any(text.split(":")[0] == "mps" for text in texts)
        holds_off_mps = (operator is cst.In) != lists_mps
        return {name} if holds_off_mps is truth else set()
    return set()


def _type_subject(node: cst.BaseExpression, given) -> "str | None":
    """NAME of `NAME.device.type`, or of `device.type` where a call passed `NAME.device` as `device`."""
    if type(node) is not cst.Attribute or node.attr.value != "type":
        return None
    device = node.value
    if type(device) is cst.Name and given is not None:
        device, given = given.get(device.value), None  # the argument, read where the call is
    if type(device) is cst.Attribute and device.attr.value == "device":
        return _tensor_name(device.value, given)
    return None


def _tensor_name(node: cst.BaseExpression, given) -> "str | None":
    """The name a tensor is read by; inside a function's returned test (`given`), only a parameter's,
    as the call passes it (a name the function reads from elsewhere is not the caller's name)."""
    if type(node) is not cst.Name:
        return None
    if given is None:
        return node.value
    passed = given.get(node.value)
    return passed.value if type(passed) is cst.Name else None


def _helper_off_mps(model: "SemanticModel", call: cst.Call, truth: bool, depth: int) -> Set[str]:
    """A call of a function of the file whose one return is a device test of its parameters."""
    defined = model.defined_function(call.func)
    if defined is None:
        return set()
    function, inner = defined
    if len(inner.returns) != 1 or inner.returns[0][1]:
        return set()
    parameters = positional_params(function)
    given = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return set()
        if arg.keyword is not None:
            given[arg.keyword.value] = arg.value
        elif position < len(parameters):
            given[parameters[position]] = arg.value
    return off_mps(model, inner.returns[0][0], truth, given, depth + 1)


def _follow(model: "SemanticModel", assign: cst.Assign, moved: Set[str], always: bool) -> None:
    """`x = x.cpu() if x.device.type == "mps" else x` moves x, and so does `x = x.cpu()` where it always
    runs (`always`: a statement of a block around the node, not inside one of theirs); `y = f(x)` with x
    moved derives y, unless it moves a tensor to a device; a rebinding from nothing moved ends a name's
    derivation."""
    targets = [target.target.value for target in assign.targets if type(target.target) is cst.Name]
    if not targets:
        return
    value = assign.value
    chosen = type(value) is cst.IfExp and _tests_mps(model, value.test) and _cpu_copy(value.body) is not None
    derived = chosen or (always and _cpu_copy(value) is not None) or (any(name in moved for name in _names(value)) and not _moves(value))
    for target in targets:
        if derived:
            moved.add(target)
        else:
            moved.discard(target)


def _own_cpu_copy(assign: cst.Assign) -> "str | None":
    """NAME of `NAME = NAME.cpu()` / `NAME = NAME.to("cpu")` (with more methods after, as in `.cpu().float()`)."""
    if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name:
        return None
    name = assign.targets[0].target.value
    copied = _cpu_copy(assign.value)
    return name if copied == name else None


def _cpu_copy(node: cst.BaseExpression) -> "str | None":
    """The name a `NAME....cpu()` / `NAME....to("cpu")` chain copies to the CPU (through attributes that
    keep the device: `votes.data.cpu()`), with no move to a device after the copy, else None."""
    to_cpu = False
    while True:
        if type(node) is cst.Call and type(node.func) is cst.Attribute:
            method = node.func.attr.value
            if method == "cpu" or (method == "to" and node.args and string_value(node.args[0].value) == "cpu"):
                to_cpu = True
            elif method in placement.IN_PLACE_MOVES and not to_cpu:
                return None  # `x.cpu().cuda()`: moved again after the copy
            node = node.func.value
        elif type(node) is cst.Attribute and node.attr.value in placement.SAME_DEVICE_ATTRIBUTES:
            node = node.value
        else:
            return node.value if to_cpu and type(node) is cst.Name else None


def _moves(node: cst.CSTNode) -> bool:
    """The expression moves a tensor to a device (`x.to(device)`, `x.cuda()`; not `x.to("cpu")` nor a
    cast, `x.to(torch.float32)`, `x.type(torch.float64)`): what it gives is not where its input was."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value in placement.IN_PLACE_MOVES:
            first = current.args[0] if current.args else None
            if current.func.attr.value not in ("to", "type") or (first is not None and first.keyword is None and not _stays(first.value)):
                return True
        if not isinstance(current, _DEFINITIONS):
            stack.extend(current.children)
    return False


def _stays(target: cst.BaseExpression) -> bool:
    """A `.to(...)` / `.type(...)` target that is the CPU or a dtype of torch's (`torch.float32`)."""
    root = chain_root(target)
    return string_value(target) == "cpu" or (type(target) is cst.Attribute and type(root) is cst.Name and root.value == "torch")


def _tests_mps(model: "SemanticModel", test: cst.BaseExpression) -> bool:
    """The test holds only for MPS: a comparison with "mps" (`==`, `in`), `.is_mps`, an MPS availability
    query, alone or as a part of an `and`."""
    if type(test) is cst.BooleanOperation and isinstance(test.operator, cst.And):
        return _tests_mps(model, test.left) or _tests_mps(model, test.right)
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, (cst.Equal, cst.In)):
            return any(_names_mps(side) for side in (test.left, target.comparator))
        return False
    if type(test) is cst.Attribute:
        return test.attr.value == "is_mps"
    if type(test) is cst.Call:  # rules/guards.toml mac_queries: torch.backends.mps.is_available()
        return model.resolve(test.func) in model.guards.facts.mac_queries
    return False


def true_on_mps(model: "SemanticModel", test: cst.BaseExpression) -> bool:
    """The test holds whenever the device tested is MPS: a comparison with "mps" (`==`, `in`), `.is_mps`,
    an MPS availability query, or an `or` one of whose sides is one (unlike `and`, which may fail on MPS)."""
    if type(test) is cst.BooleanOperation and isinstance(test.operator, cst.Or):
        return true_on_mps(model, test.left) or true_on_mps(model, test.right)
    if type(test) is cst.BooleanOperation:
        return False
    return _tests_mps(model, test)


def _names_mps(node: cst.BaseExpression) -> bool:
    text = string_value(node)
    if text is not None:
        return text.split(":")[0] == "mps"
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return any(string_value(element.value) == "mps" for element in node.elements)
    return False


def _names(node: cst.CSTNode) -> Iterable[str]:
    """The names an expression reads (not attribute names nor keywords)."""
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name:
            yield current.value
        elif kind is cst.Attribute:
            stack.append(current.value)
        elif kind is cst.Arg:
            stack.append(current.value)
        elif not isinstance(current, _DEFINITIONS):
            stack.extend(current.children)
