"""The child nodes of a libcst node that can hold code, read straight from its fields.

libcst's `children` property rebuilds the node through a visitor to collect them, which costs more
than the walk itself; the walk, fix planning and the subtree searches of the checks read these
fields instead.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Type

import libcst as cst

from cudalint.python.names import is_none

# `try:` statements, with the `try: ... except*` form where this libcst parses it.
TRY_KINDS = tuple(kind for kind in (getattr(cst, "Try", None), getattr(cst, "TryStar", None)) if kind is not None)

# Fields that hold only layout (whitespace, brackets, commas, operators): no check reads them as nodes.
TRIVIA_FIELDS = frozenset(
    {
        "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "dot", "semicolon", "colon",
        "equal", "operator", "newline", "header", "footer", "leading_lines", "lines_after_decorators",
        "trailing_whitespace", "relative", "asynchronous", "star_tok", "first_line",
    }
)  # fmt: skip


# The classes of field values met so far, libcst nodes or not (isinstance with libcst's abstract base
# class goes through ABCMeta.__instancecheck__, several times the cost of a set lookup).
NODE_KINDS: set = set()
OTHER_KINDS: set = {type(None), str}


def is_node(value) -> bool:
    """A libcst node, not None, a string, a sentinel (its class noted in NODE_KINDS or OTHER_KINDS)."""
    found = isinstance(value, cst.CSTNode)
    (NODE_KINDS if found else OTHER_KINDS).add(type(value))
    return found


@functools.lru_cache(maxsize=None)
def child_fields(kind: Type[cst.CSTNode]) -> Tuple[str, ...]:
    """The fields of a node class that can hold child nodes, in declaration order (which for
    libcst's classes follows the source where it matters: test before body before orelse)."""
    return tuple(
        field.name
        for field in dataclasses.fields(kind)
        if field.name not in TRIVIA_FIELDS and not field.name.startswith("whitespace")
    )


def code_children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The node's children that can hold code, in source order."""
    found: List[cst.CSTNode] = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind in NODE_KINDS:
            found.append(value)
        elif kind is list or kind is tuple:
            found.extend(item for item in value if type(item) in NODE_KINDS or is_node(item))
        elif kind not in OTHER_KINDS and is_node(value):
            found.append(value)
    return found


DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)  # their bodies run at another time


def nodes_in(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `root` (itself first) that runs with it: the functions, classes and lambdas it holds
    are met, their insides are not."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        if type(node) not in DEFINITIONS:
            pending.extend(code_children(node))


def arm_statements(node: cst.If) -> List[cst.CSTNode]:
    """The statements directly in every arm of an if/elif/else chain, in source order."""
    found: List[cst.CSTNode] = []
    branch: Optional[cst.CSTNode] = node
    while isinstance(branch, (cst.If, cst.Else)):
        body = branch.body
        found.extend(body.body if isinstance(body, cst.IndentedBlock) else (body,))
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return found


def enclosing_block(stack: Sequence[cst.CSTNode], depth: int) -> Optional[Tuple[List[cst.CSTNode], int]]:
    """The statements of the innermost block around `stack[depth]` (not beyond the function, class or
    lambda it is in) and the index of the one that holds it; None when there is none."""
    for at in range(depth, 0, -1):
        line, block = stack[at], stack[at - 1]
        if isinstance(line, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            body = list(block.body)
            return body, next(index for index, statement in enumerate(body) if statement is line)
    return None


def earlier_statements(stack: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The statements before the one holding the node at the end of `stack`, in its own block and in each
    block around it up to its function, class or lambda: the innermost block first, each in order."""
    for at in range(len(stack) - 1, 0, -1):
        line, block = stack[at], stack[at - 1]
        if isinstance(line, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            for statement in block.body:
                if statement is line:
                    break
                yield statement


def path_to(root: cst.CSTNode, node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """The nodes from `root` down to `node`, `node` last; None when it is not under `root`."""
    stack = [(root, 0)]
    path: List[cst.CSTNode] = []
    while stack:
        current, depth = stack.pop()
        del path[depth:]
        path.append(current)
        if current is node:
            return path
        stack.extend((child, depth + 1) for child in reversed(code_children(current)))
    return None


def parent_map(root: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    """id(node) -> its parent, for every node under `root` that can hold code: one walk, after which
    path_from answers each node's path without walking again."""
    parents: Dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        current = stack.pop()
        children = code_children(current)
        for child in children:
            parents[id(child)] = current
        stack.extend(children)
    return parents


def path_from(root: cst.CSTNode, node: cst.CSTNode, parents: Dict[int, cst.CSTNode]) -> Optional[List[cst.CSTNode]]:
    """path_to's answer read from `root`'s parent_map."""
    path = [node]
    while node is not root:
        node = parents.get(id(node))
        if node is None:
            return None
        path.append(node)
    path.reverse()
    return path


def comes_after(root: cst.CSTNode, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`second` starts after `first` in a walk of `root` (source order)."""
    stack, seen_first = [root], False
    while stack:
        current = stack.pop()
        if current is first:
            seen_first = True
        elif current is second:
            return seen_first
        stack.extend(reversed(code_children(current)))
    return False


def assignments_in(node: cst.CSTNode) -> Iterator[cst.Assign]:
    """The assignments a statement (or block) makes, in order, in its own blocks (not in the functions,
    classes and lambdas it defines, nor inside expressions)."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return
    if type(node) is cst.Assign:
        yield node
        return
    if isinstance(node, cst.BaseExpression):
        return
    for child in node.children:
        yield from assignments_in(child)


# Builtins that read every name of their scope: a name is read wherever one of them is named.
SCOPE_READERS = frozenset({"locals", "vars", "eval", "exec"})


def reads_name(node: cst.CSTNode, name: str, limit: Optional[int] = None) -> bool:
    """The code reads the name somewhere: not as an attribute's or a keyword argument's own name, nor as
    the target of `name = ...` (which binds it; `x[name] = ...` and `a, name = ...` count as reads), and
    wherever `locals()`, `vars()`, `eval` or `exec` is named. Past `limit` nodes the answer is yes."""
    pending = [node]
    seen = 0
    while pending:
        current = pending.pop()
        seen += 1
        if limit is not None and seen > limit:
            return True
        kind = type(current)
        if kind is cst.Name and (current.value == name or current.value in SCOPE_READERS):
            return True
        if kind is cst.AssignTarget and type(current.target) is cst.Name:
            continue
        if kind is cst.Attribute or kind is cst.Arg:
            pending.append(current.value)
            continue
        pending.extend(code_children(current))
    return False


def unused_default(function: cst.FunctionDef, name: str) -> bool:
    """Whatever the parameter's default, the function never uses it: no statement of its body reads the
    parameter before one of them rebinds it (`device = detect_accelerator()`, not under any test), or none
    reads it at all."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
        if type(small) is cst.Assign and any(type(target.target) is cst.Name and target.target.value == name
                                             for target in small.targets):
            return not reads_name(small.value, name)
        if reads_name(statement, name):
            return False
    return bool(body)


def replaces_none(function: cst.FunctionDef, name: str) -> bool:
    """The body replaces the parameter where it is None before anything else reads it: `if device is
    None: device = ...` (or `if not device:`), `device = device or ...`, `device = ... if device is None
    else device`; a None default then reaches no later statement."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if type(statement) is cst.If and _tests_none(statement.test, name):
            return any(_assigns(line, name) for line in statement.body.body)
        if type(statement) is cst.If and statement.orelse is None and ends_in_raise(statement.body):
            continue  # `if device not in (None, "cpu"): raise ValueError(...)`: a check, the value unchanged
        if _assigns(statement, name):
            value = statement.body[0].value
            if type(value) is cst.BooleanOperation and type(value.operator) is cst.Or:
                return type(value.left) is cst.Name and value.left.value == name
            if type(value) is cst.IfExp:
                return _tests_none(value.test, name) and not reads_name(value.body, name)
            return False
        if reads_name(statement, name):
            return False
    return False


def ends_in_raise(block: cst.BaseSuite) -> bool:
    """The block's last statement is a `raise`."""
    last = block.body[-1] if block.body else None
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) is cst.Raise


def _tests_none(test: cst.BaseExpression, name: str) -> bool:
    """`name is None`, `name == None`, `not name`."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return type(test.expression) is cst.Name and test.expression.value == name
    return (type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.left) is cst.Name
            and test.left.value == name and type(test.comparisons[0].operator) in (cst.Is, cst.Equal)
            and is_none(test.comparisons[0].comparator))


def _assigns(statement: cst.CSTNode, name: str) -> bool:
    """A one-statement line `name = ...`."""
    small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
    return type(small) is cst.Assign and any(type(target.target) is cst.Name and target.target.value == name
                                             for target in small.targets)


def positional_params(function: cst.FunctionDef) -> List[str]:
    """The names of the parameters a call may pass by position (positional-only, then the others)."""
    return [param.name.value for param in (*function.params.posonly_params, *function.params.params)]


def find_argument(call: cst.Call, keyword: Optional[str], position: Optional[int]) -> Optional[cst.Arg]:
    """The argument a call passes for a parameter (by keyword, or at its position); None where it passes none, or
    where a spread before that position hides it."""
    positional = 0
    for arg in call.args:
        if arg.keyword is not None:
            if keyword is not None and arg.keyword.value == keyword:
                return arg
        elif arg.star:
            return None
        else:
            if position is not None and positional == position:
                return arg
            positional += 1
    return None
