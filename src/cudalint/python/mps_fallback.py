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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, Set

import libcst as cst

from cudalint.python import placement  # the module, not its names: placement imports this module too
from cudalint.python.names import chain_root, string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def moved_off_mps(model: "SemanticModel", stack: Sequence[cst.CSTNode], source: cst.BaseExpression) -> bool:
    """The tensor `source` reads (its chain's first name) was moved off MPS by the code before the node at
    the end of `stack`, or is derived from one that was."""
    root = chain_root(source)
    if type(root) is not cst.Name:
        return False
    moved: Set[str] = set()
    for statement in _earlier_statements(stack):
        for small in _assignments(statement):
            _follow(model, small, moved, type(statement) is cst.SimpleStatementLine)
        if type(statement) is cst.If and _tests_mps(model, statement.test):
            for small in _assignments(statement.body):
                name = _own_cpu_copy(small)
                if name is not None:
                    moved.add(name)
    return root.value in moved


def _earlier_statements(stack: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The statements before the node's own, in each block around it up to its function, outermost first."""
    blocks = []
    for depth in range(len(stack) - 1, 0, -1):
        line, block = stack[depth], stack[depth - 1]
        if isinstance(line, _DEFINITIONS):
            break
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            blocks.append((block, line))
    for block, line in reversed(blocks):
        for statement in block.body:
            if statement is line:
                break
            yield statement


def _assignments(node: cst.CSTNode) -> Iterator[cst.Assign]:
    """The assignments a statement makes, in order, in its own blocks (not in functions it defines)."""
    if isinstance(node, _DEFINITIONS):
        return
    if type(node) is cst.Assign:
        yield node
        return
    if isinstance(node, cst.BaseExpression):
        return
    for child in node.children:
        yield from _assignments(child)


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
