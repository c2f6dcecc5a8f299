"""What an annotation may name for a value no device holds: Python numbers, strings and containers (whatever
they hold but tensors), and NumPy's arrays (`np.ndarray`, `npt.NDArray[np.float64]`). Read by the libcst
checks (placement.host_annotation) and, on CPython's tree, by the project index for the return annotations of
the project's functions (`def _factor_tables(a: int, d: int) -> tuple[tuple[int, ...], ...]:`), so that a
tensor another module makes of such a function's result is known to be made on the host."""

from __future__ import annotations

import ast
from typing import Callable, Optional

HOST_BUILTINS = frozenset({"float", "int", "bool", "complex", "str", "list", "tuple", "dict", "set", "range"})
HOST_TYPING = frozenset({"typing.List", "typing.Tuple", "typing.Sequence", "typing.Dict", "typing.Mapping",
                         "typing.Iterable", "collections.abc.Sequence", "collections.abc.Mapping", "collections.abc.Iterable"})
UNIONS = frozenset({"typing.Optional", "typing.Union"})
MAX_DEPTH = 4
MAX_STRING = 200  # the longest string annotation read as one


def host_type(qualified: Optional[str]) -> bool:
    """A resolved annotation name that is a host type (HOST_TYPING, or anything of NumPy's)."""
    return qualified is not None and (qualified in HOST_TYPING or qualified.split(".")[0] == "numpy")


def host_annotation_ast(node: Optional[ast.AST], resolve: Callable[[ast.AST], Optional[str]], bound=frozenset(),
                        depth: int = 0) -> bool:
    """placement.host_annotation on CPython's tree: every type of the annotation (None aside) is a host type.
    `resolve` gives an expression's qualified name through the module's imports; `bound`: names the module
    binds itself (a class `float` of its own is no builtin)."""
    if node is None or depth > MAX_DEPTH:
        return False
    if type(node) is ast.Constant and type(node.value) is str and len(node.value) <= MAX_STRING:
        try:  # a forward reference: `-> "npt.NDArray[np.float64] | None"`
            node = ast.parse(node.value.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    if type(node) is ast.BinOp and type(node.op) is ast.BitOr:
        sides = (node.left, node.right)
        return all(_none(side) or host_annotation_ast(side, resolve, bound, depth + 1) for side in sides) \
            and not all(_none(side) for side in sides)
    if type(node) is ast.Subscript:
        items = node.slice.elts if type(node.slice) is ast.Tuple else [node.slice]
        if resolve(node.value) in UNIONS:
            return bool(items) and all(_none(item) or host_annotation_ast(item, resolve, bound, depth + 1) for item in items)
        return host_annotation_ast(node.value, resolve, bound, depth + 1) and not any(_names_tensor(item) for item in items)
    if type(node) is ast.Name and node.id in HOST_BUILTINS and node.id not in bound:
        return True
    return host_type(resolve(node))


def _none(node: ast.AST) -> bool:
    return type(node) is ast.Constant and node.value is None


def _names_tensor(node: ast.AST) -> bool:
    return any((type(part) is ast.Name and "Tensor" in part.id) or (type(part) is ast.Attribute and "Tensor" in part.attr)
               for part in ast.walk(node))
