"""The single pass: one read-only walk per file, dispatching nodes to the checks.

Checks register handlers for node types (`on(cst.Call)`); the visitor keeps the
shared state they read — the import map, the node stack, whether the current
code only runs on a CUDA host — so no check walks the tree by itself.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from typing import Callable, Dict, List, Optional, Tuple, Type

import libcst as cst

from cudalint.python import guards
from cudalint.python.context import FileContext

Handler = Callable[[cst.CSTNode, FileContext], None]
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


# Fields that hold only layout (whitespace, brackets, commas, operators): no check reads them as nodes.
TRIVIA_FIELDS = frozenset(
    {
        "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "dot", "semicolon", "colon",
        "equal", "operator", "newline", "header", "footer", "leading_lines", "lines_after_decorators",
        "trailing_whitespace", "relative", "asynchronous", "star_tok", "first_line",
    }
)  # fmt: skip
GUARDED_FIELDS = ("body", "orelse")
BRANCHING = (cst.If, cst.IfExp, cst.While)


@functools.lru_cache(maxsize=None)
def child_fields(kind: Type[cst.CSTNode]) -> Tuple[str, ...]:
    """The fields of a node class that can hold child nodes, in declaration order (which for
    libcst's classes follows the source where it matters: test before body before orelse)."""
    return tuple(
        field.name
        for field in dataclasses.fields(kind)
        if field.name not in TRIVIA_FIELDS and not field.name.startswith("whitespace")
    )


class Walker:
    """A read-only depth-first walk over a libcst tree.

    libcst's own `visit` rebuilds every node it passes (even for a visitor that changes
    nothing) and enters every comma and space; this walk reads the fields that can hold
    code, and keeps the state the checks share: the node stack, the import map, whether
    the code runs only on CUDA, whether it is an if-test or an optional import.
    """

    def __init__(self, ctx: FileContext, visit: Dict[Type, List[Handler]], leave: Dict[Type, List[Handler]]):
        self.ctx = ctx
        self.visit_handlers = visit
        self.leave_handlers = leave
        self.block_guards: List[int] = []  # per open block: guards added by early returns

    def walk(self, node: cst.CSTNode) -> None:
        ctx = self.ctx
        kind = type(node)
        ctx.stack.append(node)
        self._enter(node, kind)
        for handler in self.visit_handlers.get(kind, ()):
            handler(node, ctx)
        branch = guards.guarded_branch(node.test, ctx.imports) if kind in BRANCHING else None
        optional = kind is cst.Try and _catches_import_error(node)
        for name in child_fields(kind):
            value = getattr(node, name)
            if value is None or isinstance(value, str):
                continue
            state = self._field_state(kind, name, branch, optional)
            self._adjust(state, +1)
            if isinstance(value, cst.CSTNode):
                self.walk(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, cst.CSTNode):
                        self.walk(item)
            self._adjust(state, -1)
        for handler in self.leave_handlers.get(kind, ()):
            handler(node, ctx)
        self._leave(node, kind)
        ctx.stack.pop()

    def _enter(self, node: cst.CSTNode, kind: Type) -> None:
        ctx = self.ctx
        if kind is cst.Import:
            ctx.import_depth += 1
            ctx.imports.add_import(node)
        elif kind is cst.ImportFrom:
            ctx.import_depth += 1
            ctx.imports.add_import_from(node)
        elif kind in (cst.IndentedBlock, cst.Module):
            self.block_guards.append(0)
        elif kind in (cst.FunctionDef, cst.Lambda):
            ctx.scopes.append(id(node))

    def _leave(self, node: cst.CSTNode, kind: Type) -> None:
        ctx = self.ctx
        if kind in (cst.Import, cst.ImportFrom):
            ctx.import_depth -= 1
        elif kind in (cst.IndentedBlock, cst.Module):
            ctx.guard_depth -= self.block_guards.pop()
        elif kind in (cst.FunctionDef, cst.Lambda):
            ctx.scopes.pop()
        elif kind is cst.If and self.block_guards:
            self._early_exit_guard(node)

    @staticmethod
    def _field_state(kind: Type, name: str, branch: Optional[str], optional: bool) -> Optional[str]:
        if kind in BRANCHING:
            if name == "test":
                return "test_depth"
            if name in GUARDED_FIELDS and name == branch:
                return "guard_depth"
        elif optional and name == "body":
            return "optional_import_depth"
        return None

    def _adjust(self, state: Optional[str], step: int) -> None:
        if state is not None:
            setattr(self.ctx, state, getattr(self.ctx, state) + step)

    def _early_exit_guard(self, node: cst.If) -> None:
        """`if not torch.cuda.is_available(): return` guards the rest of the block."""
        if node.orelse is None and guards.negated_guard(node.test, self.ctx.imports):
            if guards.ends_flow(node.body) == "return":
                self.block_guards[-1] += 1
                self.ctx.guard_depth += 1


def _catches_import_error(node: cst.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
        for kind in kinds:
            name = kind.value if isinstance(kind, cst.Element) else kind
            if isinstance(name, cst.Name) and name.value in IMPORT_ERRORS:
                return True
    return False


class Registry:
    """Handlers by node type, built from the checks that have a selected rule."""

    def __init__(self) -> None:
        self.visit: Dict[Type, List[Handler]] = defaultdict(list)
        self.leave: Dict[Type, List[Handler]] = defaultdict(list)

    def on(self, kind: Type, handler: Handler) -> None:
        self.visit[kind].append(handler)

    def on_leave(self, kind: Type, handler: Handler) -> None:
        self.leave[kind].append(handler)
