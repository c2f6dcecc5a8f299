"""Code that runs only where an optional library imports, or never.

`if is_xformers_available(): import xformers`, `if not is_triton_available(): <stub> else:
import triton`, `if not _TE_AVAILABLE: raise ModuleNotFoundError(...)` before the import, a class
whose constructor raises that way, and `if TYPE_CHECKING:` (never true at run time): an import
there only runs where it succeeds, so it is no porting problem (an import that runs
unconditionally at module import is). The tests are what names are bound to: the availability
queries of rules/optional_code.toml (`importlib.util.find_spec`, `RequirementCache`), names bound
only to those (or to False/None), and helpers, in this file or through the project index, whose
every return is one.

The answer is a Guard: `when_true` means "if the test is true, the library imports (or the code
never runs)", `when_false` the same for the test being false.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from cudalint.project.availability import PARAMETER, called_library, libraries_of, one_of
from cudalint.python.children import TRY_KINDS, code_children, ends_in_raise
from cudalint.python.names import is_none, string_value
from cudalint.python.optional_facts import optional_facts, requirement_module
from cudalint.python.semantic.guards import UNKNOWN, Guard

MAX_DEPTH = 6
AVAILABLE = Guard(True, False)
Tested = Tuple[Guard, str]  # the test's guard, and the library it tests ("" when not known)
NOTHING: Tested = (UNKNOWN, "")


class Availability:
    def __init__(self, model):
        self.model = model
        self.facts = optional_facts()
        self.memo = {}
        self._trues = None

    def test(self, node: cst.BaseExpression, scope=None) -> Guard:
        return self.tested(node, scope)[0]

    def tested(self, node: cst.BaseExpression, scope=None, depth: int = 0) -> Tested:
        """The test's guard and the library it tests ("" when that is not known)."""
        scope = scope or self.model.scope
        key = (id(node), id(scope))
        cached = self.memo.get(key)
        if cached is not None and cached[1] <= depth:  # worked out with at least this much depth left
            return cached[0]
        if depth > MAX_DEPTH:
            return NOTHING  # too deep here; a shallower question about the same test is answered afresh
        self.memo[key] = (NOTHING, -1)  # a cycle through bindings is unknown
        found = self._test(node, scope, depth)
        self.memo[key] = (found, depth)
        return found

    def _test(self, node, scope, depth) -> Tested:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            guard, library = self.tested(node.expression, scope, depth + 1)
            return guard.negated(), library
        if isinstance(node, cst.BooleanOperation):
            (left, one), (right, other) = self.tested(node.left, scope, depth + 1), self.tested(node.right, scope, depth + 1)
            if isinstance(node.operator, cst.And):
                guard = Guard(left.when_true or right.when_true, left.when_false and right.when_false)
            else:
                guard = Guard(left.when_true and right.when_true, left.when_false or right.when_false)
            libraries = {library for found, library in ((left, one), (right, other)) if found.known}
            if len(libraries) == 1:
                return guard, libraries.pop()
            return guard, one_of(libraries) if isinstance(node.operator, cst.Or) else ""
        if isinstance(node, cst.NamedExpr):
            return self.tested(node.value, scope, depth + 1)
        if isinstance(node, cst.Comparison):
            return self._none_comparison(node, scope, depth)
        if isinstance(node, cst.Call):
            return self._call(node, scope, depth)
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._reference(node, scope, depth)
        return NOTHING

    def _none_comparison(self, node: cst.Comparison, scope, depth) -> Tested:
        """`find_spec("triton") is not None` keeps the query's meaning; `is None` turns it round."""
        if len(node.comparisons) != 1:
            return NOTHING
        target = node.comparisons[0]
        for atom, other in ((node.left, target.comparator), (target.comparator, node.left)):
            if is_none(other):
                guard, library = self.tested(atom, scope, depth + 1)
                if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                    return guard, library
                if isinstance(target.operator, (cst.Is, cst.Equal)):
                    return guard.negated(), library
        return NOTHING

    def _call(self, call: cst.Call, scope, depth) -> Tested:
        model = self.model
        qualified = model.resolve(call.func, scope)
        if qualified in self.facts.queries:
            return AVAILABLE, _queried_library(call)
        library = self.facts.library_tested(qualified)
        if library is not None:  # transformers' is_flash_attn_2_available(), is_apex_available()
            return AVAILABLE, library
        if isinstance(call.func, cst.Name) and call.func.value == "bool" and len(call.args) == 1 and not model.lookup("bool", scope):
            return self.tested(call.args[0].value, scope, depth + 1)
        if qualified is not None:
            return self._project(qualified, call)
        if model.project is not None and model.module_name and isinstance(call.func, cst.Name):
            own = self._project(f"{model.module_name}.{call.func.value}", call)  # a helper of this file the index read
            if own[0].known:
                return own
        returned = []
        for callee in model.values(call.func, scope, depth + 1):
            inner = model.scopes.get(id(callee.data)) if callee.kind == "func" else None
            if inner is None or not inner.returns:
                return NOTHING
            returned.extend((value, inner) for value, _ in inner.returns)
        return self._only_when_available(returned, depth)

    def _reference(self, node, scope, depth) -> Tested:
        model = self.model
        qualified = model.resolve(node, scope)
        if qualified in self.facts.never_true:
            return AVAILABLE, ""  # its body never runs
        if isinstance(node, cst.Name):
            module = _module_or_none(model.bindings_of(node, scope))
            if module:  # `try: import tensorrt as trt` / `except ImportError: trt = None`, then `if not trt:`
                project = model.project
                if project is not None and project.is_own(module):
                    known = self._project(module)  # `from pkg import HAS_LIGER_KERNEL`: what the flag tests, if known
                    return known if known[0].known else (AVAILABLE, "")
                return AVAILABLE, module
        if qualified is not None:
            return self._project(qualified)
        bindings = model.bindings_of(node, scope)
        if len(bindings) > 1:  # `HAS_TRITON = HAS_TRITON and ...` after the try: the bindings that reach the read
            bindings = model.guards.straight_line(bindings, node)
        if not bindings or any(binding.kind != "assign" or binding.value is None for binding in bindings):
            return NOTHING
        return self._only_when_available([(binding.value, binding.context) for binding in bindings], depth)

    def _only_when_available(self, values, depth) -> Tested:
        """Every value is an availability test or False/None, and at least one is a test (a `True`
        set or returned in a `try:` after an import whose ImportError the try catches is one)."""
        libraries = set()
        for value, scope in values:
            if _is_false(value):
                continue
            imported = self._imported_trues().get(id(value))
            if imported is not None:
                libraries.add(imported)
                continue
            guard, library = self.tested(value, scope, depth + 1)
            if not guard.when_true:
                return NOTHING
            libraries.add(library)
        if not libraries:
            return NOTHING
        return AVAILABLE, libraries.pop() if len(libraries) == 1 else ""

    def _imported_trues(self) -> dict:
        """id of each value assigned or returned after an import in a `try:` that catches its ImportError
        -> the module. Such a binding happens only where the import succeeded, whatever its value
        (`HAS_SOFTCAP = Version(flash_attn.__version__) >= ...`), and a try counts wherever it sits in the
        module's blocks (`if major >= 8: try: ...`) or in a function's, though not in a class."""
        if self._trues is None:
            self._trues = {}
            for trial in _trials(self.model.module_scope.node.body):
                self._scan_trial(trial, self._trues)
        return self._trues

    def _scan_trial(self, statement, into: dict) -> None:
        if not _catches_import_error(statement):
            return
        library = None
        for line in _statements(statement.body):
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if library is None and isinstance(small, (cst.Import, cst.ImportFrom)):
                    library = _imported_module(small)
                elif library and isinstance(small, (cst.Return, cst.Assign, cst.AnnAssign)) and small.value is not None:
                    into[id(small.value)] = library

    def _project(self, qualified: str, call: Optional[cst.Call] = None) -> Tested:
        project = self.model.project
        if project is not None and project.is_own(qualified):
            library = project.tested_library(qualified)
            if library is not None and library.startswith(PARAMETER):  # `_is_package_available("flash_attn")`
                positional = [string_value(arg.value) for arg in call.args if arg.keyword is None] if call is not None else []
                library = called_library(library, positional, {}, [])
            if library is not None:
                return AVAILABLE, library
        return NOTHING

    # -- where an import only runs once it can succeed ---------------------------------
    def optional_fields(self, node: cst.CSTNode) -> tuple:
        """The fields of an `if` (or a class) that only run where an optional library imports."""
        if isinstance(node, cst.If):
            found = self.test(node.test)
            return (("body",) if found.when_true else ()) + (("orelse",) if found.when_false else ())
        if isinstance(node, cst.ClassDef) and self._constructor_requires(node):
            return ("body",)
        return ()

    def libraries(self, node: cst.CSTNode) -> Tuple[str, ...]:
        """The libraries an optional scope's test asks for, any one of which makes it true (`if
        is_xformers_available():`); () where any import there runs only where it succeeds (a `try:` that
        catches ImportError, a class whose constructor raises without its library, an unknown library)."""
        if isinstance(node, cst.If):
            return tuple(library.split(".")[0] for library in libraries_of(self.tested(node.test)[1]))
        return ()

    def exits_unless_available(self, node: cst.If, ends_flow) -> bool:
        """`if not _TE_AVAILABLE: raise ModuleNotFoundError(...)`: the rest of the block runs only
        where the library imports (so does the rest after `if available: ... else: return`)."""
        found = self.test(node.test)
        if not found.known:
            return False
        body = ends_flow(node.body) is not None
        orelse = isinstance(node.orelse, cst.Else) and ends_flow(node.orelse.body) is not None
        return (found.when_false and body and not orelse) or (found.when_true and orelse and not body)

    # -- code that never runs --------------------------------------------------------
    def always_skips(self, decorator) -> bool:
        """`@pytest.mark.skip`, `@pytest.mark.skip(reason=...)`, `@unittest.skip("...")`."""
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        return isinstance(target, (cst.Name, cst.Attribute)) and self.model.resolve(target) in self.facts.always_skip

    def skips_rest(self, line: cst.SimpleStatementLine) -> bool:
        """A statement that skips the rest of its block whatever the host: `pytest.skip("...")`,
        `raise unittest.SkipTest(...)`."""
        for small in line.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                if self.model.resolve(small.value.func) in self.facts.skip_calls:
                    return True
            if isinstance(small, cst.Raise) and small.exc is not None:
                raised = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
                if self.model.resolve(raised) in self.facts.skip_exceptions:
                    return True
        return False

    def cannot_raise(self, body: cst.BaseSuite) -> bool:
        """A try body whose every call never raises without CUDA (`torch.cuda.empty_cache()`):
        its handler never runs on a Mac, so the try falls back on nothing there."""
        calls = []
        stack = [body]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                calls.append(node)
            if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.extend(code_children(node))
        return bool(calls) and all(self.model.resolve(call.func) in self.facts.never_raise for call in calls)

    def _constructor_requires(self, node: cst.ClassDef) -> bool:
        """A class whose `__init__` raises unless the library imports: its methods only run on an
        instance, so only where the library is there."""
        init = next(
            (item for item in getattr(node.body, "body", ()) if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"),
            None,
        )
        inner = self.model.scopes.get(id(init)) if init is not None else None
        if inner is None or not isinstance(init.body, cst.IndentedBlock):
            return False
        for statement in init.body.body:
            if isinstance(statement, cst.If) and ends_in_raise(statement.body):
                found = self.test(statement.test, inner)
                if found.when_false and statement.orelse is None:
                    return True
        return False


def _module_or_none(bindings) -> Optional[str]:
    """The module a name holds when every binding of it imports that one module or sets None or False
    (the handler of a `try:` around the import): the name is true only where the module imported."""
    modules = {binding.qualified for binding in bindings if binding.kind == "import"}
    if len(modules) != 1 or not all(binding.kind == "import" or (binding.kind == "assign" and _is_false(binding.value))
                                    for binding in bindings):
        return None
    return modules.pop()


def _is_false(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "False")


def _queried_library(call: cst.Call) -> str:
    """The top-level module a query names: find_spec("triton.language") -> "triton",
    RequirementCache("transformer-engine>=0.11") -> "transformer_engine"; "" when not a literal."""
    module = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "module"), None)
    first = module or (call.args[0].value if call.args and call.args[0].keyword is None else None)
    text = string_value(first) if first is not None else None
    return requirement_module(text)


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(node: cst.Try) -> bool:
    """A handler of the try catches a failed import (a bare except, ImportError or a base of it)."""
    return any(handler_catches_import_error(handler) for handler in node.handlers)


def handler_catches_import_error(handler: cst.ExceptHandler) -> bool:
    """The handler catches a failed import: it is bare, or names ImportError or a base of it."""
    if handler.type is None:
        return True
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = [kind.value if isinstance(kind, cst.Element) else kind for kind in kinds]
    return any(isinstance(name, cst.Name) and name.value in IMPORT_ERRORS for name in names)


def _statements(block: cst.BaseSuite):
    """The statements of a block in order, into its ifs (not into functions or classes)."""
    for statement in block.body if isinstance(block, cst.IndentedBlock) else [cst.SimpleStatementLine(block.body)]:
        yield statement
        if isinstance(statement, cst.If):
            yield from _statements(statement.body)


def _trials(body):
    """Every `try:` in a block, in its nested blocks and in the functions defined there (not in classes)."""
    for statement in body:
        if isinstance(statement, TRY_KINDS):
            yield statement
        if isinstance(statement, cst.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, cst.If):  # an elif
                yield from _trials([inner])
            elif isinstance(inner, (cst.IndentedBlock, cst.Else, cst.Finally)):
                yield from _trials(inner.body.body if isinstance(inner, (cst.Else, cst.Finally)) else inner.body)
        for handler in getattr(statement, "handlers", ()):
            yield from _trials(handler.body.body)


def _imported_module(node) -> str:
    if isinstance(node, cst.Import):
        target = node.names[0].name
    elif node.relative or node.module is None:
        return ""
    else:
        target = node.module
    while isinstance(target, cst.Attribute):
        target = target.value
    return target.value if isinstance(target, cst.Name) else ""
