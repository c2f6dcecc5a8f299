"""The single pass: one libcst traversal per file, dispatching nodes to the checks.

Checks register handlers for node types (`on(cst.Call)`); the visitor keeps the
shared state they read — the import map, the node stack, whether the current
code only runs on a CUDA host — so no check walks the tree by itself.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Dict, List, Type

import libcst as cst

from cudalint.python import guards
from cudalint.python.context import FileContext

Handler = Callable[[cst.CSTNode, FileContext], None]
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


class Dispatcher(cst.CSTVisitor):
    def __init__(self, ctx: FileContext, visit: Dict[Type, List[Handler]], leave: Dict[Type, List[Handler]]):
        super().__init__()
        self.ctx = ctx
        self.visit_handlers = visit
        self.leave_handlers = leave
        self.pending: Dict[int, str] = {}  # id(If/IfExp) -> guarded branch name
        self.block_guards: List[int] = []  # per open block: guards added by early returns

    # -- traversal -----------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        ctx = self.ctx
        ctx.stack.append(node)
        kind = type(node)
        if kind in (cst.If, cst.IfExp, cst.While):
            branch = guards.guarded_branch(node.test, ctx.imports)
            if branch:
                self.pending[id(node)] = branch
        elif kind in (cst.Import, cst.ImportFrom):
            ctx.import_depth += 1
            if kind is cst.Import:
                ctx.imports.add_import(node)
            else:
                ctx.imports.add_import_from(node)
        elif kind in (cst.IndentedBlock, cst.Module):
            self.block_guards.append(0)
        elif kind in (cst.FunctionDef, cst.Lambda):
            ctx.scopes.append(id(node))
        for handler in self.visit_handlers.get(kind, ()):
            handler(node, ctx)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        ctx = self.ctx
        kind = type(original_node)
        for handler in self.leave_handlers.get(kind, ()):
            handler(original_node, ctx)
        if kind in (cst.Import, cst.ImportFrom):
            ctx.import_depth -= 1
        elif kind in (cst.IndentedBlock, cst.Module):
            ctx.guard_depth -= self.block_guards.pop()
        elif kind in (cst.FunctionDef, cst.Lambda):
            ctx.scopes.pop()
        elif kind is cst.If and self.block_guards:
            self._early_exit_guard(original_node)
        ctx.stack.pop()

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        ctx = self.ctx
        if attribute == "test" and type(node) in (cst.If, cst.IfExp, cst.While):
            ctx.test_depth += 1
        elif attribute in ("body", "orelse") and self.pending.get(id(node)) == attribute:
            ctx.guard_depth += 1
        elif attribute == "body" and type(node) is cst.Try and _catches_import_error(node):
            ctx.optional_import_depth += 1

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        ctx = self.ctx
        if attribute == "test" and type(original_node) in (cst.If, cst.IfExp, cst.While):
            ctx.test_depth -= 1
        elif attribute in ("body", "orelse") and self.pending.get(id(original_node)) == attribute:
            ctx.guard_depth -= 1
        elif attribute == "body" and type(original_node) is cst.Try and _catches_import_error(original_node):
            ctx.optional_import_depth -= 1

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
