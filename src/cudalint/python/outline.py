"""The statements of CPython's tree, as much as positions need: where each starts, and the statements
of its block. Built from the tree the gates parse (without libcst), so that tree can be freed before
libcst parses the file; positions.py reads it."""

from __future__ import annotations

import ast
from collections.abc import Sequence


class Statement:
    """A statement of CPython's tree, as much as positions need: where it starts, and the statements
    of its (first) block."""

    __slots__ = ("lineno", "col_offset", "body")

    def __init__(self, lineno: int, col_offset: int, body: list["Statement"] | None):
        self.lineno = lineno
        self.col_offset = col_offset
        self.body = body


def outline(tree: ast.Module) -> list[Statement]:
    """The statements of a module, each with the statements of its block (a few per cent of the tree's nodes)."""
    return _outline(tree.body)


def _outline(body: Sequence[ast.stmt]) -> list[Statement]:
    return [
        Statement(node.lineno, node.col_offset, _outline(node.body) if isinstance(getattr(node, "body", None), list) else None)
        for node in body
    ]
