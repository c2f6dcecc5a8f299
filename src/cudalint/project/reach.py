"""Code that runs only off a Mac because of where the project uses it.

A class or function of the project whose every call (at least one) sits under a CUDA
guard, or inside another class or function that is itself reached only that way, runs
only on a host that is not a Mac: DeepSpeed constructs its CUDA accelerator only under
`if accelerator_name == "cuda":`. Its body is then judged as if it were under that guard.

Two halves. `collect_uses` reads one file's CPython tree in the index's single pass and
records, per qualified name, whether a reference lets it escape and where its calls sit
(under a guard, or in which class or function). `cuda_only` resolves the fixed point over
the whole project. A name that escapes (listed in `__all__`, passed or stored as a value,
subclassed, used as a bare decorator, referenced other than by calling it or handing it to a
call) may be called from anywhere and is never CUDA-only. A name handed to a call as an argument
(a callback registered, a function mapped) counts as called where it is handed over. A string that names a module (`"pkg.ops.hpu"` for
importlib, or an f-string pattern of names) is a load of it from where the string is written.

A module that cannot load on a Mac (ProjectIndex.cuda_chain: an unguarded import of a CUDA-only
library at its top, itself or through the project's modules) runs its body only where it loads: only
its imports count, not its name used as a value, and an import in a `try:` that catches ImportError
is one whose failure is handled there, as good as a guard (the `tried` facts; for a module that loads
on a Mac such an import is a plain one).
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple


if TYPE_CHECKING:  # pragma: no cover
    from cudalint.project.index import ProjectIndex

STAR_EXPORTED = 2  # a use's escapes: listed in a private module's `__all__`, public only if star-imported
MAX_ROUNDS = 32  # the fixed point grows one call depth per round; deeper chains stay unknown
EXITS = {"sys.exit", "os._exit", "pytest.skip", "pytest.exit", "pytest.fail", "unittest.SkipTest"}
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})
TRIES = tuple(kind for kind in (ast.Try, getattr(ast, "TryStar", None)) if kind is not None)
DEFINITIONS = (*FUNCTIONS, ast.ClassDef)
# Statements whose parts are all expressions that sit where the statement does: their children, as is.
PLAIN = frozenset({ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Delete, ast.Pass, ast.Break, ast.Continue,
                   ast.Global, ast.Nonlocal})

# Where a use sits: True (under a CUDA guard), or the tests of other modules' names it sits under,
# as (test, polarity) pairs (a guard once the index knows those names); () for neither.
Guarded = object
# A raw use: (dotted name as written, is a call, where it sits, enclosing definition path).
RawUse = Tuple[str, bool, Guarded, str]
MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
# The methods unittest and pytest call on a test class themselves (setUp and its kin, pytest's xunit-style
# setup_method and teardown_method, and the hooks of IsolatedAsyncioTestCase).
TEST_HOOKS = frozenset({
    "setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown", "setup_method",
    "teardown_method", "setup_class", "teardown_class", "setup", "teardown", "run", "debug", "id",
    "shortDescription", "subTest", "addCleanup", "doCleanups", "skipTest",
})
MAX_CONDITIONS = 4  # tests of other modules' names kept per use (the innermost are dropped)


def collect_uses(tree: ast.Module, reader) -> None:
    """Fill reader.facts.uses and .decorators (reader: the facts reader, for names and guards)."""
    _Uses(reader).run(tree)


def test_helper(name: str) -> bool:
    """A method of a test module's class that the test runner does not call itself (`run_test_locally`,
    not `test_*` nor a fixture hook such as setUp): only its class's own methods call it."""
    return not name.startswith(("test", "__")) and name not in TEST_HOOKS


def _private(name: str) -> bool:
    """`_helper`: internal to its class by Python's naming convention (PEP 8), unlike a public method a
    framework or a user may call through an instance the index cannot follow; never a dunder."""
    return name.startswith("_") and not name.startswith("__")


def _dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None (the facts reader uses it too)."""
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
        self.loads: Dict[Tuple[str, bool, str], None] = {}  # (module it may load, under a guard, context)
        self.tried: Dict[Tuple[str, bool, str], None] = {}  # the same, for imports whose ImportError is caught
        self.catching: Set[int] = set()  # the import statements (and strings naming modules) of `try:` bodies that
        # catch ImportError
        self.private: Set[str] = set()  # `_name` attributes read other than by a method of their own class
        self.factories: Set[str] = set()  # "Class.method": classmethods that call `cls(...)`
        self.stack: List[tuple] = []
        self.mentions: Dict[Tuple[str, Guarded, str], None] = {}  # strings naming a module (or "pkg.ops.*_op"), where
        self.conditions: List[list] = []
        self.condition_of: Dict[int, Optional[int]] = {}  # id(test) -> its index in conditions
        self.guard_of: Dict[int, Tuple[bool, bool]] = {}  # id(test) -> the reader's answer (an if asks for both arms)
        self.leaves_of: Dict[int, list] = {}  # id(test) -> the names of other modules (leaves) its judgement met
        self.classes: Set[str] = set()  # definition paths of the classes met so far
        self.switches: Set[str] = set()  # the last names of switches checked against CUDA (_switch_check)
        self.switched_on: Set[str] = set()  # keywords a call passes a literal True (`use_cuda=True`)
        self.listed_private: Set[str] = set()  # names a private module's `__all__` lists (_exported)
        self.stored: Dict[str, int] = {}  # attribute name -> how many assignments store it (`x.name = ...`,
        # or `name = ...` in a class body): what FileFacts.attribute_guards is checked against

    def run(self, tree: ast.Module) -> None:
        self._block(tree.body, (), "", None)
        stack = self.stack
        while stack:
            node, guarded, context, function = stack.pop()
            if isinstance(node, ast.stmt):
                self._statement(node, guarded, context, function)
            else:
                self._expression(node, guarded, context, function)
        self._finish()

    def _guard(self, test: ast.AST, function) -> Tuple[bool, bool]:
        """The reader's answer for a test, noting the names of other modules it met on the way (the
        leaves of its table, should `_condition` need one)."""
        key = id(test)
        if key not in self.guard_of:
            reader = self.reader
            tracking = reader.leaves is None
            if tracking:
                reader.leaves = []
            try:
                with reader.local_imports(function):  # `import torch` inside the function names its tests
                    self.guard_of[key] = reader._guard(test, function)
                if tracking:
                    self.leaves_of[key] = list(dict.fromkeys(reader.leaves))
            finally:
                if tracking:
                    reader.leaves = None
        return self.guard_of[key]

    def _under(self, guarded: Guarded, test: ast.AST, polarity: bool, function) -> Guarded:
        """Where code sits that runs only when `test` is `polarity`, inside code that sits at `guarded`."""
        if guarded is True:
            return True
        true, false = self._guard(test, function)
        if (polarity and true) or (not polarity and false):
            return True
        condition = self._condition(test, function)
        if condition is None or len(guarded) >= MAX_CONDITIONS:
            return guarded
        return (*guarded, (condition, polarity))

    def _condition(self, test: ast.AST, function) -> Optional[int]:
        """A test that is a guard only through names of other modules: its table, by position."""
        key = id(test)
        if key not in self.condition_of:
            reader = self.reader
            judge = lambda: reader._known(reader._guard(test, function))  # noqa: E731
            leaves = self.leaves_of.get(key)
            with reader.local_imports(function):
                entry = reader.table_of(judge) if leaves is None else reader.tabulate(judge, leaves)
            self.condition_of[key] = len(self.conditions) if entry is not None else None
            if entry is not None:
                self.conditions.append(entry)
        return self.condition_of[key]

    def _push(self, node: Optional[ast.AST], guarded: bool, context: str, function) -> None:
        if node is not None and not isinstance(node, ast.expr_context):
            self.stack.append((node, guarded, context, function))

    # -- statements ---------------------------------------------------------------------
    def _block(self, body, guarded: Guarded, context: str, function, trying: bool = False) -> None:
        """`trying`: the body of a `try:` (an import that fails there is caught, not reported)."""
        for node in body:
            self._push(node, guarded, context, function)
            if node.__class__ is ast.If:
                self._switch_check(node, function)
            if guarded is True:
                continue
            if self._needs_library(node, trying):  # the rest of the block runs only where the library imports
                guarded = True
                continue
            kind = node.__class__  # CPython's parser makes no subclasses: told apart without a call
            if kind is ast.Expr and self._requires_cuda(node, function):  # `_require_cuda()` first: it raises on a Mac
                guarded = True
                continue
            if kind is ast.Assert:  # `assert device.type == "cuda"`: the rest runs where it holds
                if context or self.reader.testing:  # at a module's top (not a test suite's): no guard, CDL117
                    guarded = self._under(guarded, node.test, True, function)
                continue
            if kind is not ast.If:
                continue
            body_exits, else_exits = self._leaves(node.body), bool(node.orelse) and self._leaves(node.orelse)
            if body_exits != else_exits:  # `if not torch.cuda.is_available(): return` guards the rest of the block
                guarded = self._under(guarded, node.test, else_exits, function)

    def _requires_cuda(self, node: ast.Expr, function) -> bool:
        """A call of a function of the file that raises wherever CUDA is missing (`def _require_cuda(): if not
        torch.cuda.is_available(): raise ...`): the statements after it run only off a Mac."""
        with self.reader.local_imports(function):
            return self.reader.requires_cuda(node, function)

    def _switch_check(self, node: ast.If, function) -> None:
        """`if args.use_cuda: assert torch.cuda.is_available()` (or `if not torch.cuda.is_available(): raise`
        first in its body), `if args.cuda and not torch.cuda.is_available(): raise ...` (or `sys.exit`), whatever
        its `else:` does: the program stops where the switch is on without CUDA, so the switch is on only
        off a Mac. Its last name joins FileFacts.checked_switches (ProjectIndex.checked_switch)."""
        test = node.test
        if isinstance(test, (ast.Name, ast.Attribute)):
            first = node.body[0]
            checked = (isinstance(first, ast.Assert) and self._guard(first.test, function)[0]) or (
                isinstance(first, ast.If) and not first.orelse and self._stops(first.body)
                and self._guard(first.test, function)[1])
            own = test if checked else None
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and self._stops(node.body):
            switches = [part for part in test.values if isinstance(part, (ast.Name, ast.Attribute))]
            others = [part for part in test.values if part not in switches]
            own = switches[0] if len(switches) == 1 and others and all(
                self._guard(part, function)[1] for part in others) else None
        else:
            return
        name = _dotted(own) if own is not None else None
        if name:
            self.switches.add(name.rpartition(".")[2])

    def _stops(self, body) -> bool:
        """The block ends the program (or the test): `raise`, `sys.exit(...)`, `pytest.skip(...)`."""
        last = body[-1] if body else None
        if isinstance(last, ast.Raise):
            return True
        return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and self.reader.resolve(last.value.func) in EXITS

    def _needs_library(self, node: ast.stmt, trying: bool) -> bool:
        """In a `try:` body, an import of a CUDA-only library (rules/packages.toml); anywhere, a `try:` that
        imports one and whose every handler leaves the block: the statements after it never run on a Mac.
        (After an import nothing catches, the import itself is the finding: each module that needs the
        library keeps its own.)"""
        if isinstance(node, TRIES):
            handled = node.handlers and all(self._leaves(handler.body) for handler in node.handlers)
            return bool(handled) and not node.finalbody and any(self._needs_library(inner, True) for inner in node.body)
        if not trying:
            return False
        if isinstance(node, ast.Import):
            return any(self.reader._cuda_library(alias.name) for alias in node.names)
        return isinstance(node, ast.ImportFrom) and not node.level and self.reader._cuda_library(node.module or "")

    def _leaves(self, body) -> bool:
        last = body[-1] if body else None
        if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
            return self.reader.resolve(last.value.func) in EXITS
        return False

    def _statement(self, node: ast.stmt, guarded: bool, context: str, function) -> None:
        if type(node) in PLAIN:
            self._children(node, guarded, context, function)
            return
        push = self._push
        if isinstance(node, DEFINITIONS):
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
            if isinstance(node, ast.ClassDef):
                self.classes.add(inner)
            elif context in self.classes and node.name in _off_mac_overrides():
                skipped = True  # `def cuda(self)` of a class: runs only where the caller's `.cuda()` can
            body = True if skipped else self._backend(node, guarded) if isinstance(node, ast.ClassDef) else guarded
            self._block(node.body, body, inner, node if isinstance(node, FUNCTIONS) else function)
        elif isinstance(node, (ast.If, ast.While)):
            push(node.test, guarded, context, function)
            self._block(node.body, self._under(guarded, node.test, True, function), context, function)
            orelse = self._under(guarded, node.test, False, function) if isinstance(node, ast.If) else guarded
            self._block(node.orelse, orelse, context, function)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            push(node.iter, guarded, context, function)
            stop = _range_stop(node.iter)  # `for i in range(torch.cuda.device_count()):`
            self._block(node.body, guarded if stop is None else self._under(guarded, stop, True, function), context, function)
            self._block(node.orelse, guarded, context, function)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                push(item.context_expr, guarded, context, function)
            self._block(node.body, guarded, context, function)
        elif isinstance(node, TRIES):
            for handler in node.handlers:
                push(handler.type, guarded, context, function)
                self._block(handler.body, guarded, context, function)
            if any(_catches_import_error(handler) for handler in node.handlers):
                self.catching.update(_loads_in(node.body))
            self._block(node.body, guarded, context, function, trying=bool(node.handlers))
            for body in (node.orelse, node.finalbody):
                self._block(body, guarded, context, function)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node, guarded, context)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not context and any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                self._exported(node.value)
            push(node.value, guarded, context, function)
            for target in targets:
                if not isinstance(target, ast.Name):
                    push(target, guarded, context, function)
                    self._stores(target)
                elif context in self.classes:
                    self.stored[target.id] = self.stored.get(target.id, 0) + 1
        elif type(node).__name__ == "Match":
            push(node.subject, guarded, context, function)
            for case in node.cases:
                push(case.guard, guarded, context, function)
                self._block(case.body, guarded, context, function)
        else:
            self._children(node, guarded, context, function)

    def _backend(self, node: ast.ClassDef, guarded: Guarded) -> Guarded:
        """Where the body of a class sits: under its own `is_available()` when that returns a CUDA query
        (the CUDA backend of a device abstraction; the libcst guard evaluator's backend_class, on
        CPython's tree), a query of another module's helper included (`return num_cuda_devices() > 0`
        with num_cuda_devices imported: a condition the index judges)."""
        for item in node.body:
            if isinstance(item, FUNCTIONS) and item.name == "is_available":
                returns = [inner.value for inner in item.body if isinstance(inner, ast.Return) and inner.value is not None]
                if len(returns) == 1 and len(item.body) == 1 + _has_docstring(item):
                    return self._under(guarded, returns[0], True, item)
                found = self.reader._function_guard(item)
                return True if found is not None and found[0] else guarded
        return guarded

    def _children(self, node: ast.AST, guarded: bool, context: str, function) -> None:
        stack = self.stack
        for name in _child_fields(type(node)):
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                stack.append((value, guarded, context, function))
            elif isinstance(value, list):
                stack.extend((item, guarded, context, function) for item in value if isinstance(item, ast.AST))

    def _import(self, node, guarded: bool, context: str) -> None:
        """Aliases for the names it binds, and an import site for every module it may load
        (`import a.b.c` loads a, a.b and a.b.c; `from a.b import c` loads a, a.b and maybe a.b.c)."""
        if isinstance(node, ast.Import):
            sibling = self.reader.sibling
            loaded = [sibling(alias.name) for alias in node.names]
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                self.aliases.setdefault(local, sibling(alias.name if alias.asname else local))
        else:
            base = self.reader.absolute(node.level, node.module)
            loaded = [f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*"]
            loaded.append(base)
            for alias in node.names:
                if alias.name != "*":
                    self.aliases.setdefault(alias.asname or alias.name, f"{base}.{alias.name}")
        loads = self.tried if id(node) in self.catching and guarded is not True else self.loads
        for name in loaded:
            parts = name.split(".") if name else []
            for end in range(1, len(parts) + 1):
                loads[(".".join(parts[:end]), guarded, context)] = None

    def _mention(self, node: ast.AST, text: str, guarded: Guarded, context: str) -> None:
        """A string naming a module (or a pattern of names) is a load of it here; in a `try:` that catches
        ImportError, one whose failure is handled there (as an import statement's would be)."""
        held = self.tried if id(node) in self.catching and guarded is not True else self.mentions
        held[(text, guarded, context)] = None

    def _exported(self, value) -> None:
        """`__all__ = ["A", ...]`: every listed name is public, so it escapes; in a private module
        (`pkg/_cuda.py`) only where a module of the project star-imports it (`cuda_only` judges that):
        its `__all__` then says what `from ._cuda import *` re-exports, and otherwise only what the
        package's own modules may import from it."""
        module = self.reader.module or ""
        private = _private(module.rpartition(".")[2])
        for item in getattr(value, "elts", []) or []:
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.isidentifier():
                if private:
                    self.listed_private.add(item.value)
                else:
                    self.raw[(item.value, False, (), "")] = None

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
        kind = type(node)  # CPython's parser makes no subclasses of its node types: `is` tells the kind
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                self.raw[(node.id, False, (), "")] = None
        elif kind is ast.Attribute:
            name = self._chain(node)
            if name is None:
                self.stack.append((node.value, guarded, context, function))
            elif type(node.ctx) is ast.Load:
                self.raw[(name, False, (), "")] = None
        elif kind is ast.Call:
            self._call(node, guarded, context, function)
        elif kind is ast.Constant:
            value = node.value
            if type(value) is str and "." in value and MODULE_RE.fullmatch(value):
                self._mention(node, value, guarded, context)  # import_module("pkg.mod") loads what no import shows
        elif kind is ast.BoolOp:
            push = self._push
            current = guarded
            for value in node.values:  # `a and b`: b runs only when a is true
                push(value, current, context, function)
                current = self._under(current, value, isinstance(node.op, ast.And), function)
        elif kind is ast.IfExp:
            push = self._push
            push(node.test, guarded, context, function)
            for arm, polarity in ((node.body, True), (node.orelse, False)):
                under = self._under(guarded, node.test, polarity, function)
                arm_kind = type(arm)
                name = arm.id if arm_kind is ast.Name else self._chain(arm) if arm_kind is ast.Attribute else None
                if name is not None:
                    # `measure = _measure_cuda if device == "cuda" else _wall_clock`: the function is
                    # picked, so it can run, only where its arm's test holds: a call from this place.
                    self.raw[(name, True, under, context)] = None
                else:
                    push(arm, under, context, function)
        elif kind in COMPREHENSIONS:
            self._comprehension(node, guarded, context, function)
        else:
            if kind is ast.JoinedStr and node.values and type(node.values[0]) is ast.Constant:
                parts = [part.value if type(part) is ast.Constant else "*" for part in node.values]
                pattern = "".join(part for part in parts if isinstance(part, str))
                if "." in pattern and MODULE_RE.fullmatch(pattern.replace("*", "x")):
                    self._mention(node, pattern, guarded, context)  # f"pkg.ops.{name}_op": any module that fits
            self._children(node, guarded, context, function)

    def _comprehension(self, node: ast.AST, guarded: Guarded, context: str, function) -> None:
        """`[name(i) for i in range(torch.cuda.device_count())]`, `(f(x) for x in xs if use_cuda)`: the
        element runs once per item, only when the loops' ranges are not empty and their filters hold, as
        the body of the `for` statement it stands for."""
        push = self._push
        current = guarded
        for generator in node.generators:
            push(generator.target, current, context, function)
            push(generator.iter, current, context, function)
            stop = _range_stop(generator.iter)
            if stop is not None:
                current = self._under(current, stop, True, function)
            for test in generator.ifs:
                push(test, current, context, function)
                current = self._under(current, test, True, function)
        if isinstance(node, ast.DictComp):
            push(node.key, current, context, function)
            push(node.value, current, context, function)
        else:
            push(node.elt, current, context, function)

    def _stores(self, target: ast.AST) -> None:
        """Count the attributes an assignment's target stores (`self.a, obj.b = ...`)."""
        stored = self.stored
        pending = [target]
        while pending:
            node = pending.pop()
            if type(node) is ast.Attribute and type(node.ctx) is ast.Store:
                stored[node.attr] = stored.get(node.attr, 0) + 1
            elif type(node) in (ast.Tuple, ast.List, ast.Starred):
                pending.extend(node.elts if type(node) is not ast.Starred else (node.value,))

    def _call(self, node: ast.Call, guarded: Guarded, context: str, function) -> None:
        raw, stack = self.raw, self.stack
        func = node.func
        method = self._own_method(func, context, function) if type(func) is ast.Attribute else None
        if type(func) is ast.Name and function is not None and func.id == "cls":
            self._note_factory(func, context, function)
        name = method or self._chain(func)
        if name is not None:
            raw[(name, True, guarded, context)] = None
        else:
            stack.append((func, guarded, context, function))
        for keyword in node.keywords:
            if keyword.arg is not None and type(keyword.value) is ast.Constant and keyword.value.value is True:
                self.switched_on.add(keyword.arg)  # `_load(path, use_cuda=True)`: a switch a caller turns on itself
        # `Process(target=run, args=(rank, train_epochs))`: the names of a tuple or list handed over too
        handed = [item for value in (*node.args, *(keyword.value for keyword in node.keywords))
                  for item in (value.elts if type(value) in (ast.Tuple, ast.List) else (value,))]
        for value in handed:
            kind = type(value)
            name = value.id if kind is ast.Name else (
                self._own_method(value, context, function) or self._chain(value)) if kind is ast.Attribute else None
            if name is not None:
                # `add_event_handler(event, empty_cuda_cache)`, `elastic_launch(config, entrypoint=self._run)`,
                # `mp.spawn(_worker, ...)`: a callback handed over here runs
                # only where it was handed over, so it counts as a call from this place.
                raw[(name, True, guarded, context)] = None
            else:
                stack.append((value, guarded, context, function))

    def _chain(self, node: ast.AST) -> Optional[str]:
        """`a.b.c` for a Name/Attribute chain, else None (as _dotted), noting on the way every private
        attribute the chain reads (`x._cache.clear`: `_cache`)."""
        parts = []
        while type(node) is ast.Attribute:
            attr = node.attr
            if _private(attr):
                self.private.add(attr)
            parts.append(attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        parts.append(node.id)
        return ".".join(reversed(parts))

    def _own_method(self, func: ast.AST, context: str, function) -> Optional[str]:
        """`self._helper()`, `cls._helper()`, `__class__._helper()` or `Class._helper()` in a method of
        module-level Class that defines _helper: "Class._helper"."""
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        if not (_private(func.attr) or (self.reader.testing and test_helper(func.attr))):
            return None
        owner, _, method = context.partition(".")
        if not method or "." in method or owner not in self.reader.classes:
            return None
        receivers = {"cls", "__class__", owner}
        arguments = getattr(function, "args", None)
        if arguments is not None and (arguments.posonlyargs or arguments.args):
            receivers.add((arguments.posonlyargs or arguments.args)[0].arg)
        path = f"{owner}.{func.attr}"
        return path if func.value.id in receivers and path in self.reader.methods else None

    def _note_factory(self, func: ast.Name, context: str, function) -> None:
        """`cls(...)` in a classmethod of a module-level class: the method is a factory of its class."""
        owner, _, method = context.partition(".")
        if not method or "." in method or owner not in self.reader.classes:
            return
        arguments = function.args
        first = (arguments.posonlyargs or arguments.args or [None])[0]
        if first is not None and first.arg == func.id and any(
                type(decorator) is ast.Name and decorator.id == "classmethod" for decorator in function.decorator_list):
            self.factories.add(context)

    # -- the file's facts ------------------------------------------------------------------
    def _resolve(self, name: str) -> Iterator[str]:
        head, _, rest = name.partition(".")
        targets = []
        if head in self.aliases:
            targets.append(self.aliases[head])
        if head in self.reader.functions or head in self.reader.classes or head in self.reader.api_aliases:
            targets.append(f"{self.reader.module}.{head}" if self.reader.module else head)
        for target in targets:
            yield f"{target}.{rest}" if rest else target

    def _finish(self) -> None:
        uses: Dict[str, list] = {}  # qualified -> [escapes, *_places()]
        loads: Dict[str, list] = {}  # what an import may load -> _places()
        for name, call, guarded, context in self.raw:
            for qualified in self._resolve(name):
                entry = uses.setdefault(qualified, [0, [], [], []])
                if call:
                    _place(entry, guarded, context)
                else:
                    entry[0] = 1
        for name in self.listed_private:
            for qualified in self._resolve(name):
                entry = uses.setdefault(qualified, [0, [], [], []])
                entry[0] = entry[0] or STAR_EXPORTED
        for module, guarded, context in self.loads:
            _place(loads.setdefault(module, [[], [], []]), guarded, context)
        tried: Dict[str, list] = {}  # what an import whose ImportError is caught may load -> _places()
        for module, guarded, context in self.tried:
            _place(tried.setdefault(module, [[], [], []]), guarded, context)
        mentions: Dict[str, list] = {}  # a string naming modules -> _places(), as if it imported them there
        for text, guarded, context in self.mentions:
            _place(mentions.setdefault(text, [[], [], []]), guarded, context)
        places = [*uses.values(), *loads.values(), *tried.values(), *mentions.values()]
        contexts = {c for entry in places for c in [*entry[-2], *(c for c, _ in entry[-1])]}
        needed = {".".join(c.split(".")[:end]) for c in contexts if c for end in range(1, c.count(".") + 2)}
        decorators = {}
        for path in sorted(needed & set(self.decorated)):
            resolved = [q for name in self.decorated[path] for q in self._resolve(name)]
            if resolved:
                decorators[path] = resolved
        for entry in places:
            entry[-3].sort()
            entry[-2].sort()
        facts = self.reader.facts
        facts.conditions = self.conditions
        facts.uses = uses
        facts.factories = sorted(self.factories)
        facts.loads = loads
        facts.tried = tried
        facts.decorators = decorators
        facts.private = sorted(self.private)
        facts.mentions = mentions
        facts.bound_attributes = sorted(self.stored)
        facts.checked_switches = sorted(self.switches)
        facts.switched_on = sorted(self.switched_on)
        self.reader.stored_attributes = self.stored


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException",
                           "builtins.ImportError", "builtins.ModuleNotFoundError", "builtins.Exception", "builtins.BaseException"})


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    """`except:`, `except ImportError:`, `except (OSError, ImportError) as e:`, `except Exception:`."""
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(_dotted(kind) in IMPORT_ERRORS for kind in kinds)


def _loads_in(body) -> Iterator[int]:
    """The import statements of a block, and its strings (and f-strings), which may name a module it loads
    (`importlib.import_module(f"pkg._triton.{op}.op")`): not those of its functions, classes or lambdas, which
    run at another time."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Constant, ast.JoinedStr)):
            yield id(node)
        elif not isinstance(node, (*DEFINITIONS, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _has_docstring(function) -> bool:
    first = function.body[0] if function.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _range_stop(node: ast.AST) -> Optional[ast.AST]:
    """The stop of `range(stop)`, `range(start, stop[, step])` with a literal start >= 0 and step > 0:
    the loop's body runs only when the stop is positive (the libcst guard evaluator's rule)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
        return None
    args = node.args
    if not 1 <= len(args) <= 3 or node.keywords or any(isinstance(arg, ast.Starred) for arg in args):
        return None
    if len(args) == 1:
        return args[0]
    start = args[0].value if isinstance(args[0], ast.Constant) else None
    step = (args[2].value if isinstance(args[2], ast.Constant) else None) if len(args) == 3 else 1
    numbers = all(isinstance(n, int) and not isinstance(n, bool) for n in (start, step))
    return args[1] if numbers and start >= 0 and step > 0 else None


def _place(entry: list, guarded: Guarded, context: str) -> None:
    """Add a use to [contexts under a guard, contexts of the others, [context, tests] under tests]."""
    if guarded is True:
        target = entry[-3]
    elif guarded:
        target, context = entry[-1], [context, [list(pair) for pair in guarded]]
    else:
        target = entry[-2]
    if context not in target:
        target.append(context)


# -- the project ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _off_mac_overrides() -> frozenset:
    """The methods whose override runs only where CUDA is (rules/overrides.toml `off_mac`: `cuda`)."""
    from cudalint.python.overrides import load_overrides

    return frozenset(method for method, override in load_overrides().items() if override.off_mac)


def cuda_only(index: "ProjectIndex") -> Set[str]:
    """The project's modules, classes, functions and private methods that run only off a Mac."""
    sites: Dict[str, List[Optional[str]]] = {}  # target -> contexts of its unguarded uses (None: guarded)
    escaped: Set[str] = set()
    decorators: Dict[str, List[str]] = {}  # qualified definition path -> its decorators (qualified)
    methods: Set[str] = set()
    private: Set[str] = set()
    factories: Set[str] = set()  # classmethods that build their class (`cls(...)`)
    for path, facts in index.facts.items():
        module = index.paths.get(path)
        if module is not None:
            methods.update(f"{module}.{name}" for name in facts.definitions if "." in name)
            private.update(facts.private)
            if facts.script:
                escaped.add(module)  # run as a program, not only imported
            factories.update(f"{module}.{path}" for path in facts.factories)
    star_imported = {source for facts in index.facts.values() if facts.star for source in facts.star[2]}
    matches: Dict[str, List[str]] = {}

    def unloadable(name: str) -> bool:
        return name in index.modules and index.cuda_chain(name) is not None

    def mentioned(text: str) -> List[str]:
        """The project's modules a string names: itself, or every module that fits its pattern."""
        if text not in matches:
            if "*" in text:
                prefix = text.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]  # what every match starts with
                matches[text] = [module for module in index.modules if module.startswith(prefix) and fnmatch.fnmatchcase(module, text)]
            else:
                matches[text] = [text] if text in index.modules else []
        return matches[text]

    used_outside_tests: Set[str] = set()  # targets some module that is no test uses

    def in_tests(target: str) -> bool:
        """The definition lies in a test module (a test's helper, a fixture's class)."""
        module = index.split(target)[0] if target not in index.modules else target
        return module is not None and index.test_module(module)

    for path, facts in index.facts.items():
        module = index.paths.get(path)
        if module is None:
            continue
        testing = facts.testing
        for local, names in facts.decorators.items():
            decorators[f"{module}.{local}"] = names
        # A module that cannot load on a Mac (an unguarded import of a CUDA-only library at its top) runs
        # its body only where an import loads it: only its loads count, not the uses of its name as a value.
        # A test module that cannot load on a Mac tests CUDA code (its import is its one finding): what it
        # loads and calls it reaches only off a Mac, so none of it is a use that counts either way.
        if unloadable(module) and testing:
            continue
        used = [(name, *entry) for name, entry in facts.uses.items() if not unloadable(name)]
        used.extend((name, 0, *entry) for name, entry in facts.loads.items() if name in index.modules)
        for text, entry in facts.tried.items():  # a module an import names, or those a string names
            for name in mentioned(text):
                if not unloadable(name):
                    used.append((name, 0, *entry))  # it loads on a Mac: an import as any other
                else:  # it cannot load on a Mac, and this import's failure is caught: its code never runs there
                    used.append((name, 0, [*entry[0], *entry[1], *(c for c, _ in entry[2])], [], []))
        used.extend((name, 0, *entry) for text, entry in facts.mentions.items() for name in mentioned(text))
        for name, escapes, guarded, unguarded, tested in used:
            if escapes == STAR_EXPORTED and module not in star_imported:
                escapes = 0  # a private module's `__all__` that no module star-imports exports nothing
            found = (name, "") if name in index.modules else index.origin(name)
            if found is None:
                continue
            target, rest = found
            if rest and f"{target}.{rest}" in methods:
                target, rest = f"{target}.{rest}", ""
            elif rest and f"{target}.{rest}" in factories and not escapes and "." not in rest:
                rest = ""  # `Engine.from_args(...)`: the class is built where its factory is called
            if escapes or rest:
                escaped.add(target)
                continue
            if not testing:
                used_outside_tests.add(target)
            places = sites.setdefault(target, [])
            listed = [(c, True) for c in guarded] + [(c, False) for c in unguarded]
            listed.extend((c, _satisfied(index, facts.conditions, tests)) for c, tests in tested)
            for context, is_guarded in listed:
                place = f"{module}.{context}" if context else module
                if place != target and not place.startswith(target + "."):  # a use from itself reaches nothing new
                    places.append(None if is_guarded else place)
    escaped.update(method for method in methods if method.rpartition(".")[2] in private)
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
    # test classes whose set-up skips them without CUDA: what only their tests call runs only off a Mac
    only: Set[str] = {f"{index.paths[path]}.{name}" for path, facts in index.facts.items()
                      if path in index.paths for name in facts.skipped_classes}
    candidates = {
        target: places for target, places in sites.items()
        if places and target not in escaped and target.rpartition(".")[2] not in unread  # an unread file may use it
        and (target in used_outside_tests or in_tests(target))  # a library's function only its tests call is public
    }
    for _ in range(MAX_ROUNDS):
        grown = {t for t, places in candidates.items() if t not in only and all(off_mac(p, only) for p in places)}
        if not grown:
            break
        only |= grown
    return only


def _satisfied(index: "ProjectIndex", conditions: List[list], tests) -> bool:
    """A use under tests of other modules' names: under a guard once the index knows those names."""
    for position, polarity in tests:
        if not isinstance(position, int) or not 0 <= position < len(conditions):
            continue
        found = index.looked_up(conditions[position])
        if found and (found[0] if polarity else found[1]):
            return True
    return False
