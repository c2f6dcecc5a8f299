"""Code that runs only off a Mac because of where the project uses it.

A class or function of the project whose every call (at least one) sits under a CUDA
guard, or inside another class or function that is itself reached only that way, runs
only on a host that is not a Mac: DeepSpeed constructs its CUDA accelerator only under
`if accelerator_name == "cuda":`. Its body is then judged as if it were under that guard.

Two halves. `collect_uses` reads one file's CPython tree in the index's single pass and
records, per qualified name, whether a reference lets it escape and where its calls sit
(under a guard, or in which class or function). `cuda_only` resolves the fixed point over
the whole project. A name that escapes (listed in `__all__`, passed or stored as a value,
subclassed, used as a bare decorator, referenced other than by calling it) may be called
from anywhere and is never CUDA-only.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.project.index import ProjectIndex

MAX_ROUNDS = 32  # the fixed point grows one call depth per round; deeper chains stay unknown
EXITS = {"sys.exit", "os._exit", "pytest.skip", "pytest.exit", "pytest.fail", "unittest.SkipTest"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
TRIES = tuple(kind for kind in (ast.Try, getattr(ast, "TryStar", None)) if kind is not None)

# A raw use: (dotted name as written, is a call, under a CUDA guard, enclosing definition path).
RawUse = Tuple[str, bool, bool, str]


def collect_uses(tree: ast.Module, reader) -> None:
    """Fill reader.facts.uses and .decorators (reader: the facts reader, for names and guards)."""
    _Uses(reader).run(tree)


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


@functools.lru_cache(maxsize=None)
def _child_fields(kind: type) -> Tuple[str, ...]:
    """The fields of a node class that hold code (not its load/store context or its annotations)."""
    return tuple(name for name in kind._fields if name not in ("ctx", "annotation", "returns", "type_comment"))


class _Uses:
    """An explicit-stack walk (a left-deep expression of any depth cannot overflow it)."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self.aliases: Dict[str, str] = dict(reader.aliases)  # module-level imports, then any nested one
        self.raw: Dict[RawUse, None] = {}
        self.decorated: Dict[str, List[str]] = {}  # definition path -> its decorators, as written
        self.stack: List[tuple] = []

    def run(self, tree: ast.Module) -> None:
        self._block(tree.body, False, "", None)
        stack = self.stack
        while stack:
            node, guarded, context, function = stack.pop()
            if isinstance(node, ast.stmt):
                self._statement(node, guarded, context, function)
            else:
                self._expression(node, guarded, context, function)
        self._finish()

    def _guard(self, test: ast.AST, function) -> Tuple[bool, bool]:
        return self.reader._guard(test, function)

    def _push(self, node: Optional[ast.AST], guarded: bool, context: str, function) -> None:
        if node is not None and not isinstance(node, ast.expr_context):
            self.stack.append((node, guarded, context, function))

    # -- statements ---------------------------------------------------------------------
    def _block(self, body, guarded: bool, context: str, function) -> None:
        for node in body:
            self._push(node, guarded, context, function)
            if guarded or not isinstance(node, ast.If):
                continue
            true, false = self._guard(node.test, function)
            body_exits, else_exits = self._leaves(node.body), bool(node.orelse) and self._leaves(node.orelse)
            if (false and body_exits and not else_exits) or (true and else_exits and not body_exits):
                guarded = True  # `if not torch.cuda.is_available(): return` guards the rest of the block

    def _leaves(self, body) -> bool:
        last = body[-1] if body else None
        if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            return self.reader.resolve(last.value.func) in EXITS
        return False

    def _statement(self, node: ast.stmt, guarded: bool, context: str, function) -> None:
        push = self._push
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            inner = f"{context}.{node.name}" if context else node.name
            for decorator in node.decorator_list:
                push(decorator, guarded, context, function)
            if isinstance(node, ast.ClassDef):
                for base in [*node.bases, *(keyword.value for keyword in node.keywords)]:
                    push(base, guarded, context, function)
            else:
                for default in [*node.args.defaults, *node.args.kw_defaults]:
                    push(default, guarded, context, function)
            skipped = self._decorators(inner, node.decorator_list)
            self._block(node.body, guarded or skipped, inner, node if isinstance(node, FUNCTIONS) else function)
        elif isinstance(node, (ast.If, ast.While)):
            push(node.test, guarded, context, function)
            true, false = self._guard(node.test, function)
            self._block(node.body, guarded or true, context, function)
            self._block(node.orelse, guarded or (false and isinstance(node, ast.If)), context, function)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            push(node.iter, guarded, context, function)
            self._block(node.body, guarded, context, function)
            self._block(node.orelse, guarded, context, function)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                push(item.context_expr, guarded, context, function)
            self._block(node.body, guarded, context, function)
        elif isinstance(node, TRIES):
            for handler in node.handlers:
                push(handler.type, guarded, context, function)
                self._block(handler.body, guarded, context, function)
            for body in (node.body, node.orelse, node.finalbody):
                self._block(body, guarded, context, function)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not context and any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                self._exported(node.value)
            push(node.value, guarded, context, function)
            for target in targets:
                if not isinstance(target, ast.Name):
                    push(target, guarded, context, function)
        elif type(node).__name__ == "Match":
            push(node.subject, guarded, context, function)
            for case in node.cases:
                push(case.guard, guarded, context, function)
                self._block(case.body, guarded, context, function)
        else:
            self._children(node, guarded, context, function)

    def _children(self, node: ast.AST, guarded: bool, context: str, function) -> None:
        stack = self.stack
        for name in _child_fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append((value, guarded, context, function))
            elif isinstance(value, list):
                stack.extend((item, guarded, context, function) for item in value if isinstance(item, ast.AST))

    def _import(self, node) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                self.aliases.setdefault(local, alias.name if alias.asname else local)
            return
        base = self.reader.absolute(node.level, node.module)
        for alias in node.names:
            if alias.name != "*":
                self.aliases.setdefault(alias.asname or alias.name, f"{base}.{alias.name}")

    def _exported(self, value) -> None:
        """`__all__ = ["A", ...]`: every listed name is public, so it escapes."""
        for item in getattr(value, "elts", []) or []:
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.isidentifier():
                self.raw[(item.value, False, False, "")] = None

    def _decorators(self, path: str, decorators) -> bool:
        """Whether a decorator skips the definition off CUDA (judged here when this file says so);
        the rest are kept, as written, for the index to judge (a project's `@require_cuda`)."""
        written = []
        for decorator in decorators:
            if self._skips(decorator, 0):
                return True
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = _dotted(target)
            if name is not None:
                written.append(name)
        if written:
            self.decorated[path] = written
        return False

    def _skips(self, decorator, depth: int) -> bool:
        reader = self.reader
        if isinstance(decorator, ast.Name) and depth < 2:
            if decorator.id in reader.pending:  # requires_cuda = pytest.mark.skipif(...)
                return self._skips(reader.pending[decorator.id], depth + 1)
            if decorator.id in reader.functions:
                return reader._skips_off_cuda(reader.functions[decorator.id])
            return False
        if not isinstance(decorator, ast.Call) or not decorator.args:
            return False
        qualified = reader.resolve(decorator.func)
        true, false = self._guard(decorator.args[0], None)
        return (qualified in reader.skip_if and false) or (qualified in reader.skip_unless and true)

    # -- expressions ---------------------------------------------------------------------
    def _expression(self, node: ast.AST, guarded: bool, context: str, function) -> None:
        push = self._push
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name is not None:
                self.raw[(name, True, guarded, context)] = None
            else:
                push(node.func, guarded, context, function)
            for arg in node.args:
                push(arg, guarded, context, function)
            for keyword in node.keywords:
                push(keyword.value, guarded, context, function)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = _dotted(node)
            if name is None:
                push(node.value, guarded, context, function)
            elif isinstance(node.ctx, ast.Load):
                self.raw[(name, False, False, "")] = None
        elif isinstance(node, ast.BoolOp):
            current = guarded
            for value in node.values:
                push(value, current, context, function)
                if not current:
                    true, false = self._guard(value, function)
                    current = true if isinstance(node.op, ast.And) else false
        elif isinstance(node, ast.IfExp):
            push(node.test, guarded, context, function)
            true, false = self._guard(node.test, function)
            push(node.body, guarded or true, context, function)
            push(node.orelse, guarded or false, context, function)
        elif not isinstance(node, ast.Constant):
            self._children(node, guarded, context, function)

    # -- the file's facts ------------------------------------------------------------------
    def _resolve(self, name: str) -> Iterator[str]:
        head, _, rest = name.partition(".")
        targets = []
        if head in self.aliases:
            targets.append(self.aliases[head])
        if head in self.reader.functions or head in self.reader.classes:
            targets.append(f"{self.reader.module}.{head}" if self.reader.module else head)
        for target in targets:
            yield f"{target}.{rest}" if rest else target

    def _finish(self) -> None:
        uses: Dict[str, list] = {}
        for name, call, guarded, context in self.raw:
            for qualified in self._resolve(name):
                entry = uses.setdefault(qualified, [0, 0, []])
                if not call:
                    entry[0] = 1
                elif guarded:
                    entry[1] += 1
                elif context not in entry[2]:
                    entry[2].append(context)
        contexts = {context for entry in uses.values() for context in entry[2]}
        needed = {".".join(c.split(".")[:end]) for c in contexts if c for end in range(1, c.count(".") + 2)}
        decorators = {}
        for path in sorted(needed & set(self.decorated)):
            resolved = [q for name in self.decorated[path] for q in self._resolve(name)]
            if resolved:
                decorators[path] = resolved
        for entry in uses.values():
            entry[2].sort()
        self.reader.facts.uses = uses
        self.reader.facts.decorators = decorators


# -- the project ------------------------------------------------------------------------------
def cuda_only(index: "ProjectIndex") -> Set[str]:
    """The project's classes and functions that run only off a Mac (qualified names)."""
    sites: Dict[str, List[Optional[str]]] = {}  # target -> contexts of its unguarded calls (None: guarded)
    escaped: Set[str] = set()
    decorators: Dict[str, List[str]] = {}  # qualified definition path -> its decorators (qualified)
    for path, facts in index.facts.items():
        module = index.paths.get(path)
        if module is None:
            continue
        for local, names in facts.decorators.items():
            decorators[f"{module}.{local}"] = names
        for name, (escapes, guarded, contexts) in facts.uses.items():
            found = index.origin(name)
            if found is None:
                continue
            target, rest = found
            if escapes or rest:
                escaped.add(target)
                continue
            places = sites.setdefault(target, [])
            if guarded:
                places.append(None)
            for context in contexts:
                place = f"{module}.{context}" if context else module
                if place != target and not place.startswith(target + "."):  # a call from itself reaches nothing new
                    places.append(place)
    skipping: Dict[str, bool] = {}

    def skips(decorator: str) -> bool:
        if decorator not in skipping:
            skipping[decorator] = index.skips_off_cuda(decorator)
        return skipping[decorator]

    def off_mac(context: Optional[str], only: Set[str]) -> bool:
        if context is None:
            return True
        parts = context.split(".")
        for end in range(len(parts), 0, -1):
            prefix = ".".join(parts[:end])
            if prefix in only or any(skips(d) for d in decorators.get(prefix, ())):
                return True
        return False

    unread: Set[str] = {word for facts in index.facts.values() for word in facts.words}
    if "*" in unread:
        return set()  # a file too large to read may use any name
    only: Set[str] = set()
    candidates = {
        target: places for target, places in sites.items()
        if places and target not in escaped and target.rpartition(".")[2] not in unread  # an unread file may use it
    }
    for _ in range(MAX_ROUNDS):
        grown = {t for t, places in candidates.items() if t not in only and all(off_mac(p, only) for p in places)}
        if not grown:
            break
        only |= grown
    return only
