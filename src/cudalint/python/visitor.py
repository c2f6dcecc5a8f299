"""The single pass: one read-only walk per file, dispatching nodes to the checks.

Checks register handlers for node types (`on(cst.Call)`); the visitor keeps the
shared state they read — the import map, the node stack, whether the current
code only runs on a CUDA host — so no check walks the tree by itself.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Type

import libcst as cst

from cudalint.python.children import NODE_KINDS, OTHER_KINDS, child_fields, code_children, is_node
from cudalint.python.context import FileContext
from cudalint.python.cuda_mocks import imports_patchers, mocks_cuda_away
from cudalint.python.mac_failures import falsy_constant, through_shell
from cudalint.python.names import dotted, string_elements, string_value, tests_cuda_oom
from cudalint.python.optional_facts import optional_facts
from cudalint.python.optional_imports import handler_catches_import_error
from cudalint.python.overrides import load_overrides, silenced_in
from cudalint.python.semantic.parametrize import is_fixture
from cudalint.project.facts import CLASS_SET_UPS, MODULE_SET_UPS, SET_UP_LOOK

Handler = Callable[[cst.CSTNode, FileContext], None]


BRANCHING = (cst.If, cst.IfExp, cst.While)
SCOPES = (cst.FunctionDef, cst.ClassDef)
# A comprehension's parts that run once per item, by kind: none runs when a `for` of it loops over
# nothing, as `range(torch.cuda.device_count())` does on a Mac.
PER_ITEM = {cst.ListComp: ("elt",), cst.SetComp: ("elt",), cst.GeneratorExp: ("elt",), cst.DictComp: ("key", "value")}
SCOPE_OPENS = {cst.FunctionDef: "params", cst.ClassDef: "body"}  # parameters bind in the function's scope
BLOCKS = (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)
CALL_STATEMENTS = (cst.Expr, cst.Assign, cst.AnnAssign)  # statements whose value may be a call that raises off CUDA
IMPORTING = (cst.SimpleStatementLine, cst.If, cst.With, cst.Try)  # statements that may leave a library imported
TYPING_MODULES = ("typing.", "typing_extensions.", "collections.abc.")  # where generic types come from
BUILTIN_GENERICS = frozenset({"list", "dict", "tuple", "set", "frozenset", "type"})  # PEP 585 generics
TYPE_ALIAS = frozenset({"typing.TypeAlias", "typing_extensions.TypeAlias"})
TYPING_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})
KERNEL_KEYWORDS = frozenset({"types", "device_types", "dispatch_key"})  # where a kernel registration names its devices


# The node kinds whose fields the walk's state depends on (see _shielded_fields, _optional_fields,
# _type_fields, the tests of BRANCHING and the scopes of SCOPES), and those _enter and _leave act on.
STATEFUL = frozenset({*BRANCHING, *SCOPES, cst.BooleanOperation, cst.Try, cst.With, cst.For, cst.Call, cst.Module,
                      cst.Annotation, cst.Subscript, cst.AnnAssign, *PER_ITEM, cst.CompFor})
ENTERING = frozenset({cst.Import, cst.ImportFrom, cst.FunctionDef, cst.Lambda, *BLOCKS})
LEAVING = ENTERING | {cst.If, cst.For, cst.Assert, *CALL_STATEMENTS, *IMPORTING}
SEQUENCES = (list, tuple)


class Walker:
    """A read-only depth-first walk over a libcst tree.

    libcst's own `visit` rebuilds every node it passes (even for a visitor that changes
    nothing) and enters every comma and space; this walk reads the fields that can hold
    code, moves the semantic model's current scope, and keeps the state the checks share:
    the node stack, whether the code can run on a Mac (the guard evaluator's answer for
    branches, short-circuits, early exits, fallbacks and skip decorators), whether it is an
    if-test or an optional import.
    """

    def __init__(self, ctx: FileContext, visit: Dict[Type, List[Handler]], leave: Dict[Type, List[Handler]]):
        self.ctx = ctx
        self.model = ctx.model
        self.visit_handlers = visit
        self.leave_handlers = leave
        self.block_guards: List[int] = []  # per open block: guards added by early exits
        self.block_optional: List[int] = []  # per open block: optional-import scopes added by early exits
        self.block_branches: List[int] = []  # per open block: early exits whose guard is judged when needed
        self.block_forced: List[int] = []  # per open block: names set to a false constant under a test
        self.availability = self.model.availability
        self.skip_param_names = self.model.guards.facts.skip_param_names
        self.silenced: List[Tuple[str, ...]] = []  # per open definition: the codes silenced outside it
        self.skipped_classes: Dict[int, bool] = {}
        self._collection_skips: Optional[tuple] = None  # (the file's project path, its conftests' skips), when asked
        self._patchers: Optional[bool] = None  # the module imports unittest.mock's patchers (cuda_mocks), when asked
        self._attached: Optional[FrozenSet[str]] = None  # module functions stored on a class under their name
        self._header: Optional[tuple] = None  # (the last statement of the module's leading imports,)
        self.model.skipped_class = self._class_skipped  # the guard evaluator asks it of a binding's class

    def walk(self, node: cst.CSTNode) -> None:
        ctx = self.ctx
        kind = type(node)
        ctx.stack.append(node)
        if kind in ENTERING:
            self._enter(node, kind)
        handlers = self.visit_handlers.get(kind)
        if handlers:
            for handler in handlers:
                handler(node, ctx)
        if kind in STATEFUL:
            self._walk_fields(node, kind)
        else:  # most nodes: no field of theirs changes the walk's state, only their children are walked
            walk = self.walk
            for name in child_fields(kind):
                value = getattr(node, name)
                value_kind = type(value)
                if value_kind in NODE_KINDS:
                    walk(value)
                elif value_kind in SEQUENCES:
                    for item in value:
                        if type(item) in NODE_KINDS or is_node(item):
                            walk(item)
                elif value_kind not in OTHER_KINDS and is_node(value):
                    walk(value)
        handlers = self.leave_handlers.get(kind)
        if handlers:
            for handler in handlers:
                handler(node, ctx)
        if kind in LEAVING:
            self._leave(node, kind)
        ctx.stack.pop()

    def _walk_fields(self, node: cst.CSTNode, kind: Type) -> None:
        """The children of a node some of whose fields change the walk's state: a test, code that never
        runs on a Mac, an optional import's body, a type expression, a scope's parameters and body."""
        ctx = self.ctx
        shielded = self._shielded_fields(node, kind)
        # a try that falls back, or a `with` shielded for that (contextlib.suppress), not one a test expects to fail in
        falls_back = bool(shielded) and (kind is cst.Try or (kind is cst.With and not any(self._expects_failure(item.item)
                                                                                           for item in node.items)))
        branches = self._branch_fields(node, kind)
        if shielded and branches:
            branches = {name: branch for name, branch in branches.items() if name not in shielded}
        optional = self._optional_fields(node, kind)
        typed = self._type_fields(node, kind)
        cast = kind is cst.Call and self._casts(node)
        for name in child_fields(kind):
            value = getattr(node, name)
            value_kind = type(value)
            if value_kind in OTHER_KINDS:
                continue
            if cast and name == "args":  # `typing.cast(torch.cuda.Stream, s)`: the first argument is a type
                ctx.type_depth += 1
                self.walk(value[0])
                ctx.type_depth -= 1
                for item in value[1:]:
                    self.walk(item)
                continue
            test = kind in BRANCHING and name == "test"
            guarded = name in shielded
            fallback = guarded and falls_back
            branch = branches.get(name)
            if kind in SCOPES and name == SCOPE_OPENS[kind]:
                self.model.enter(node)
            ctx.test_depth += test
            ctx.guard_depth += guarded
            ctx.fallback_depth += fallback
            if name in optional:
                ctx.optional_libraries.append(self.availability.libraries(node))
            ctx.type_depth += name in typed
            if branch is not None:
                ctx.branches.append(branch)
            if value_kind in NODE_KINDS or (value_kind not in SEQUENCES and is_node(value)):
                self.walk(value)
            elif value_kind in SEQUENCES:
                for item in value:
                    if type(item) in NODE_KINDS or is_node(item):
                        self.walk(item)
            if branch is not None:
                ctx.branches.pop()
            ctx.test_depth -= test
            ctx.guard_depth -= guarded
            ctx.fallback_depth -= fallback
            if name in optional:
                ctx.optional_libraries.pop()
            ctx.type_depth -= name in typed
            if name == "body" and kind in SCOPES:
                self.model.leave(node)

    def _shielded_fields(self, node: cst.CSTNode, kind: Type) -> Tuple[str, ...]:
        """The fields of a node that only run where the host is not a Mac."""
        model = self.model
        if kind in BRANCHING:  # the test: _branch_fields
            if kind is cst.If and self._demo_block(node):
                return ("body",)
            if kind is cst.If and model.opt_in_switches.kernel_switch(node, model.scope):
                return ("body",)  # kernels built only where an environment variable asks for them
            switched = model.opt_in_switches.placement_switch(node, model.scope) if kind is not cst.While else None
            return (switched,) if switched else ()
        if kind is cst.Try:
            return ("body",) if _has_fallback(node, model) and not self.availability.cannot_raise(node.body) else ()
        if kind is cst.With and any(self._expects_failure(item.item) for item in node.items):
            return ("body",)  # `with pytest.raises(RuntimeError):`: the test wants it to fail
        if kind is cst.With and _suppresses(node, model) and not self.availability.cannot_raise(node.body):
            return ("body",)  # `with contextlib.suppress(pynvml.NVMLError):`, a try that falls back
        if kind is cst.For:
            return ("body",) if model.guards.loop_off_mac(node.iter, model.scope) else ()
        if kind in PER_ITEM:
            return PER_ITEM[kind] if self._loops_off_mac(node.for_in) else ()
        if kind is cst.CompFor:
            return ("ifs", "inner_for_in") if model.guards.loop_off_mac(node.iter, model.scope) else ()
        if kind is cst.Call:
            return ("args",) if self._skipped_param(node) else ()
        if kind is cst.FunctionDef and model.guards.method_off_mac(node, model.scope):
            return _function_fields(node)  # a method of a class whose constructor raises off a Mac
        if kind is cst.FunctionDef and model.guards.backward_off_mac(node, model.scope):
            return _function_fields(node)  # an autograd Function's backward, whose forward raises off a Mac
        if kind in (cst.FunctionDef, cst.ClassDef) and model.scope.kind == "module" and model.cuda_imports.defined_after_import(node):
            return _function_fields(node) if kind is cst.FunctionDef else ("body",)  # kernels loaded by name, after their import
        if kind is cst.FunctionDef and model.cuda_imports.always_calls(node):
            return _function_fields(node)  # it calls a CUDA-only library's function whatever happens
        if kind is cst.FunctionDef and self.model.in_tests and self._mocks_moves(node):
            return ("body",)  # a test that replaces `.to` with a mock: nothing in it moves to a device
        if kind is cst.FunctionDef and self.model.in_tests and mocks_cuda_away(model, node, self._imports_patchers()):
            return _function_fields(node)  # a test that makes CUDA unavailable runs so on every host
        if kind is cst.FunctionDef and self._fixture_of_skipped_tests(node):
            return _function_fields(node)  # a fixture only tests skipped off CUDA request: pytest never builds it there
        if kind is cst.ClassDef and model.guards.backend_class(node):
            return ("body",)  # the CUDA backend of a device abstraction: picked only where CUDA is available
        if kind in (cst.FunctionDef, cst.ClassDef):
            if not (self._skipped_off_cuda(node) or self._reached_off_mac(node)):
                return ()
            return _function_fields(node) if kind is cst.FunctionDef else ("body",)
        if kind is cst.Module:
            marker = model.module_scope.bindings.get("pytestmark")
            skipped = (bool(marker) and self._skips_off_cuda(marker[0].value)) or self._set_up_skips(node.body, MODULE_SET_UPS)
            reached = model.project is not None and bool(model.module_name) and model.project.is_cuda_only(model.module_name)
            return ("body",) if skipped or reached else ()
        return ()

    def _expects_failure(self, item: cst.BaseExpression) -> bool:
        """`pytest.raises(...)`, `self.assertRaises(...)`, `self.assertRaisesRegex(...)`: a block a test
        expects to raise, whatever the host."""
        if type(item) is not cst.Call:
            return False
        func = item.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == self.model.scope.self_name:
            return func.attr.value in EXPECTS_FAILURE_METHODS
        return self.model.resolve(func) in EXPECTS_FAILURE

    def _branch_fields(self, node: cst.CSTNode, kind: Type) -> Dict[str, Tuple[cst.BaseExpression, object, bool]]:
        """The fields of a branch that run only when its test has a value, with that test and value: the
        guard evaluator judges them only when something inside would be reported (FileContext.guarded)."""
        scope = self.model.scope
        if kind in BRANCHING:
            return {"body": (node.test, scope, True), "orelse": (node.test, scope, False)}
        if kind is cst.BooleanOperation:
            return {"right": (node.left, scope, isinstance(node.operator, cst.And))}
        return {}

    def _loops_off_mac(self, for_in: Optional[cst.CompFor]) -> bool:
        """A `for` of the comprehension loops over nothing on a Mac: `[torch.device(f"cuda:{i}") for i in
        range(torch.cuda.device_count())]` builds nothing there."""
        while for_in is not None:
            if self.model.guards.loop_off_mac(for_in.iter, self.model.scope):
                return True
            for_in = for_in.inner_for_in
        return False

    def _demo_block(self, node: cst.If) -> bool:
        """`if __name__ == "__main__":` at the top level of a module the project imports: a developer's
        demo or self-check of library code, which never runs when the project is used (a module no other
        module imports is a program, and its main block is what runs)."""
        model = self.model
        project = model.project
        if project is None or not model.module_name or model.scope is not model.module_scope:
            return False
        test = node.test
        if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and test.left.value == "__name__"
                and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Equal)):
            return False
        return string_value(test.comparisons[0].comparator) == "__main__" and project.is_imported(model.module_name)

    def _type_fields(self, node: cst.CSTNode, kind: Type) -> Tuple[str, ...]:
        """The fields of a node that are type expressions, which name APIs without using them: an
        annotation, the parameters of a typing generic (`Union[torch.cuda.Stream, None]`, also as a
        type alias) and the value of `X: TypeAlias = ...`."""
        if kind is cst.Annotation:
            return ("annotation",)
        if kind is cst.Subscript:
            return ("slice",) if self._names_generic(node.value) else ()
        if kind is cst.AnnAssign:
            return ("value",) if self.model.resolve(node.annotation.annotation) in TYPE_ALIAS else ()
        return ()

    def _names_generic(self, value: cst.BaseExpression) -> bool:
        """`Union`, `typing.Optional`, `collections.abc.Callable`, the builtin `list`: a generic type
        whose parameters are types (not `Annotated`, whose later parameters are values that run)."""
        name = value.value if isinstance(value, cst.Name) else value.attr.value if isinstance(value, cst.Attribute) else ""
        if name in BUILTIN_GENERICS and isinstance(value, cst.Name):
            return not self.model.lookup(name)
        if not name[:1].isupper() or name == "Annotated":
            return False
        if isinstance(value, cst.Name) and any(binding.kind != "import" for binding in self.model.lookup(name)):
            return False  # `Union = {}` too: the program's own object
        qualified = self.model.resolve(value)
        return qualified is not None and qualified.startswith(TYPING_MODULES)

    def _optional_fields(self, node: cst.CSTNode, kind: Type) -> Tuple[str, ...]:
        """The fields of a node that run only where an optional library imports (or never)."""
        if kind is cst.Try:
            return ("body",) if self._import_may_fail(node) else ()
        if kind in (cst.If, cst.ClassDef):
            return self.availability.optional_fields(node)
        return ()

    def _import_may_fail(self, node: cst.Try) -> bool:
        """`try: import x` with a handler that catches the failed import and goes on without it (or skips
        the test); not one whose every such handler raises or exits (`except ImportError: sys.exit("pip
        install x")`, `raise ImportError("Please install triton")`): there the import is required, as if it
        stood alone. Inside a function, a handler that raises an error of another kind (`raise
        BackendUnavailable("CuPy is not installed") from exc`) tells the function's callers that the backend
        is missing, an error they may catch and go on without: the import is optional there."""
        in_function = self.model.scope.kind == "function"
        return any(handler_catches_import_error(handler) and (
            ends_flow(handler.body, self.model) != "raise" or (in_function and _raises_another_error(handler.body, self.model)))
            for handler in node.handlers)

    def _skipped_off_cuda(self, node) -> bool:
        """A test skipped unless CUDA is there: `@unittest.skipIf(not torch.cuda.is_available(), ...)`,
        `@pytest.mark.skipif(...)`, a marker bound to one, or a class's `pytestmark`; or a kernel
        registered only for a device no Mac has (`@torch.library.impl("ns::op", "AutocastCUDA")`)."""
        if any(self._skips_off_cuda(decorator.decorator) or self._off_mac_kernel(decorator.decorator) for decorator in node.decorators):
            return True
        if self._collection_skipped(node):
            return True
        if isinstance(node, cst.ClassDef):
            inner = self.model.scopes.get(id(node))
            marker = inner.bindings.get("pytestmark") if inner is not None else None
            if marker and self._skips_off_cuda(marker[0].value):
                return True
            if isinstance(node.body, cst.IndentedBlock) and self._set_up_skips(node.body.body, CLASS_SET_UPS):
                return True  # `setUpClass`: `if not torch.cuda.is_available(): raise unittest.SkipTest(...)`
            # a skip on a test class is inherited (unittest's `__unittest_skip__`, pytest's class marks):
            # `class TestTFP(MultiProcessTestCase, TestCUDA)` under `@skipIf(<no CUDA>)` on TestCUDA
            return any(self._class_skipped(base) for base in self._file_bases(node))
        return False

    def _collection_skipped(self, node) -> bool:
        """A test a conftest's collection hook skips where CUDA is missing (ProjectIndex.collection_skips): its
        name holds the text (`"cuda" in item.name`), or its node id does (the file's path, the class's name, its
        own), or the text is one of its keywords (a marker of it, its name, its class's name)."""
        name = node.name.value
        if not name.startswith("test" if isinstance(node, cst.FunctionDef) else "Test") or not self.model.in_tests:
            return False  # pytest collects `test*` functions and `Test*` classes of test modules
        if self._collection_skips is None:
            project, module = self.model.project, self.model.module_name
            path = project.modules.get(module) if project is not None and module else None
            self._collection_skips = (path, project.collection_skips(path)) if path is not None else (None, [])
        path, skips = self._collection_skips
        if not skips:
            return False
        markers = set()
        for decorator in node.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            qualified = self.model.resolve(target) or ""
            if qualified.startswith("pytest.mark."):
                markers.add(qualified[len("pytest.mark."):])
        for kind, text in skips:
            if (kind == "name" and isinstance(node, cst.FunctionDef) and text in name) or (
                    kind == "nodeid" and (text in name or text in path)) or (kind == "keyword" and (text == name or text in markers)):
                return True
        return False

    def _set_up_skips(self, body: Sequence[cst.CSTNode], names: frozenset) -> bool:
        """A set-up the runner calls before every test of a class (or module) that skips them where a test
        true on every Mac holds: `if not torch.cuda.is_available(): raise unittest.SkipTest(...)` (or
        `self.skipTest(...)`, `pytest.skip(...)`), or a call of a helper that does, among its first
        statements. The tests never run there."""
        for definition in body:
            if type(definition) is not cst.FunctionDef or definition.name.value not in names:
                continue
            scope = self.model.scopes.get(id(definition))
            statements = definition.body.body if isinstance(definition.body, cst.IndentedBlock) else ()
            for statement in statements[:SET_UP_LOOK]:
                if (type(statement) is cst.If and statement.orelse is None and scope is not None
                        and self._skips_block(statement.body, scope)
                        and self.model.guards.guard(statement.test, scope).when_false):
                    return True
                small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
                if (type(small) is cst.Expr and type(small.value) is cst.Call and scope is not None
                        and self.model.guards.call_requires_cuda(small.value, scope)):
                    return True  # `_require_npu()`: a helper that skips or raises off a Mac (guards.call_requires_cuda)
        return False

    def _skips_block(self, block: cst.BaseSuite, scope) -> bool:
        lines = block.body if isinstance(block, cst.IndentedBlock) else [cst.SimpleStatementLine(body=block.body)]
        for line in lines:
            if type(line) is not cst.SimpleStatementLine:
                continue
            if self.availability.skips_rest(line):
                return True
            for small in line.body:  # `self.skipTest("needs CUDA")`, `cls.skipTest(...)`
                call = small.value if type(small) is cst.Expr else None
                if (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value == "skipTest"
                        and type(call.func.value) is cst.Name and call.func.value.value == scope.self_name):
                    return True
        return False

    def _fixture_of_skipped_tests(self, node: cst.FunctionDef) -> bool:
        """A module-level `@pytest.fixture` that only tests skipped off CUDA request (by parameter name, in
        functions of the module or methods of its classes): pytest builds a fixture for the tests that run,
        so this one is never built on a Mac (curated-transformers' model fixtures on `cuda:0`)."""
        model = self.model
        if model.scope is not model.module_scope or not is_fixture(model, node):
            return False
        name, requesting = node.name.value, []
        for statement in model.module_scope.node.body:
            if type(statement) is cst.FunctionDef and statement is not node:
                if self._takes(statement, name):
                    requesting.append(self._skipped_off_cuda(statement))
            elif type(statement) is cst.ClassDef and isinstance(statement.body, cst.IndentedBlock):
                skipped_class = self._skipped_off_cuda(statement)
                for method in statement.body.body:
                    if type(method) is cst.FunctionDef and self._takes(method, name):
                        requesting.append(skipped_class or self._skipped_off_cuda(method))
        return bool(requesting) and all(requesting)

    def _takes(self, function: cst.FunctionDef, name: str) -> bool:
        """The function has a parameter of that name (its scope's bindings)."""
        inner = self.model.scopes.get(id(function))
        return inner is not None and any(binding.kind == "param" for binding in inner.bindings.get(name, ()))

    def _file_bases(self, node: cst.ClassDef) -> List[cst.ClassDef]:
        """The bases of a class that are classes this file defines (by name, each bound once)."""
        found = []
        for base in node.bases:
            if base.keyword is None and type(base.value) is cst.Name:
                bindings = self.model.lookup(base.value.value)
                if len(bindings) == 1 and bindings[0].kind == "class" and bindings[0].node is not node:
                    found.append(bindings[0].node)
        return found

    def _off_mac_kernel(self, decorator: cst.BaseExpression) -> bool:
        """A kernel registration whose device types or dispatch key (its last positional string or list
        of strings, or `types=`/`device_types=`/`dispatch_key=`) are all off a Mac."""
        if not isinstance(decorator, cst.Call):
            return False
        facts = self.model.guards.facts
        func = decorator.func
        if not (self.model.resolve(func) in facts.kernel_registrations
                or (isinstance(func, cst.Attribute) and func.attr.value in facts.kernel_methods)):
            return False
        keyed = [arg.value for arg in decorator.args if arg.keyword is not None and arg.keyword.value in KERNEL_KEYWORDS]
        positional = [arg.value for arg in decorator.args if arg.keyword is None and not arg.star]
        chosen = keyed[0] if keyed else next((value for value in reversed(positional) if string_elements(value)), None)
        keys = string_elements(chosen) if chosen is not None else ()
        complete = not isinstance(chosen, (cst.Tuple, cst.List, cst.Set)) or len(keys) == len(chosen.elements)
        return bool(keys) and complete and all(facts.off_mac_dispatch(key) for key in keys)

    def _class_skipped(self, node: cst.ClassDef) -> bool:
        found = self.skipped_classes.get(id(node))
        if found is None:
            found = self.skipped_classes[id(node)] = self._skipped_off_cuda(node)
        return found

    def _casts(self, call: cst.Call) -> bool:
        """`typing.cast(T, value)`: T is a type expression, which names an API without using it."""
        func = call.func
        name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
        return (name == "cast" and bool(call.args) and call.args[0].keyword is None and not call.args[0].star
                and self.model.resolve(func) in TYPING_CASTS)

    def _skipped_param(self, call: cst.Call) -> bool:
        """`pytest.param(torch.device("cuda"), marks=[<a skip off CUDA>])`: its values are CUDA-only."""
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        facts = self.model.guards.facts
        if name not in self.skip_param_names or self.model.resolve(func) not in facts.skip_params:
            return False
        return self.model.skip_markers.param_skips_off_cuda(call)

    def _reached_off_mac(self, node) -> bool:
        """A module-level class or function, or a private method of one, that the project uses only
        where the host is not a Mac (the project index's reachability: every call sits under a guard)."""
        model = self.model
        project = model.project
        if project is None or not model.module_name:
            return False
        scope = model.scope
        if scope is model.module_scope:
            return project.is_cuda_only(f"{model.module_name}.{node.name.value}")
        if scope.kind == "class" and scope.parent is model.module_scope and isinstance(node, cst.FunctionDef):
            return project.is_cuda_only(f"{model.module_name}.{scope.node.name.value}.{node.name.value}")
        return False

    def _attached_to_class(self, function: cst.FunctionDef) -> bool:
        """A module-level function of the overrides table's name that the module stores as an attribute of
        an object under that name (torch-sparse's `SparseTensor.cuda = cuda`): a method of that class, as if
        defined in it. The module's top-level statements are read once, for the first such function."""
        name = function.name.value
        if name not in load_overrides():
            return False
        if self._attached is None:
            self._attached = frozenset(
                small.value.value
                for statement in self.model.module_scope.node.body if type(statement) is cst.SimpleStatementLine
                for small in statement.body if type(small) is cst.Assign and type(small.value) is cst.Name
                and any(type(target.target) is cst.Attribute and target.target.attr.value == small.value.value
                        and type(target.target.value) is cst.Name for target in small.targets))
        return name in self._attached

    def _skips_off_cuda(self, decorator: Optional[cst.BaseExpression]) -> bool:
        return self.model.skip_markers.skips_off_cuda(decorator)  # semantic/skip_markers.py

    def _enter(self, node: cst.CSTNode, kind: Type) -> None:
        ctx = self.ctx
        if kind in (cst.Import, cst.ImportFrom):
            ctx.import_depth += 1
        elif kind is cst.FunctionDef:
            scope_kind = self.model.scope.kind
            if scope_kind == "module" and self._attached_to_class(node):
                scope_kind = "class"  # `def cuda(self, ...)` at module level, then `SparseTensor.cuda = cuda`
            silenced = silenced_in(node, scope_kind)  # `def cuda(self)`: the table of overrides
            self.silenced.append(ctx.silenced)
            ctx.silenced = ctx.silenced + silenced if silenced else ctx.silenced
        elif kind in BLOCKS:
            self.block_guards.append(0)
            self.block_optional.append(0)
            self.block_branches.append(0)
            self.block_forced.append(0)
        elif kind is cst.Lambda:
            self.model.enter(node)

    def _leave(self, node: cst.CSTNode, kind: Type) -> None:
        ctx = self.ctx
        if kind in (cst.Import, cst.ImportFrom):
            ctx.import_depth -= 1
        elif kind is cst.FunctionDef:
            ctx.silenced = self.silenced.pop()
        elif kind in BLOCKS:
            ctx.guard_depth -= self.block_guards.pop()
            del ctx.optional_libraries[len(ctx.optional_libraries) - self.block_optional.pop():]
            del ctx.branches[len(ctx.branches) - self.block_branches.pop():]
            del ctx.forced_off[len(ctx.forced_off) - self.block_forced.pop():]
        elif kind is cst.Lambda:
            self.model.leave(node)
        elif kind is cst.For and self.block_guards:
            self._checked_each(node)
        elif kind is cst.If and self.block_guards:
            self._early_exit_guard(node)
            self._forced_off(node)
            if self.availability.exits_unless_available(node, lambda block: ends_flow(block, self.model)):
                self.block_optional[-1] += 1
                ctx.optional_libraries.append(self.availability.libraries(node))
        elif kind is cst.Assert and self.block_guards and self.model.guard(node.test).when_true:
            if not asserted_at_import(self.ctx.stack, self.model):
                self._guard_rest_of_block()  # a CUDA test's or a function's requirement: the rest runs only there
        elif kind in CALL_STATEMENTS and self.block_guards and isinstance(node.value, cst.Call):
            if self.model.guards.call_requires_cuda(node.value, self.model.scope):  # require_cuda() raises off CUDA
                self._guard_rest_of_block()
        elif kind is cst.SimpleStatementLine and self.block_guards and self.availability.skips_rest(node):
            self._guard_rest_of_block()  # `pytest.skip(...)` at the top of a test: the rest never runs
        if kind in IMPORTING and self.block_guards and self.model.scope.kind == "function":
            if self.model.cuda_imports.after(node):  # `import tensorrt` in a function: the rest needs it
                self._guard_rest_of_block()
        elif kind is cst.SimpleStatementLine and len(self.block_guards) == 1 and self.model.cuda_imports.integration_after(node):
            self._guard_rest_of_block()  # `import tensorrt_llm` at the top: the module is a TensorRT integration
        elif (kind is cst.SimpleStatementLine and len(self.block_guards) == 1 and node is self._header_end()
              and self.model.cuda_imports.package_integration()):
            self._guard_rest_of_block()  # its package imports tensorrt first: the code after its imports needs it too
        elif kind in IMPORTING and len(self.block_guards) == 1 and self.model.in_tests and self.model.cuda_imports.after(node):
            self._guard_rest_of_block()  # a test module that cannot import on a Mac tests CUDA code: the import is its finding
        if (kind is cst.Assign or kind is cst.AnnAssign) and ctx.forced_off:
            self._rebound(node)

    def _mocks_moves(self, function: cst.FunctionDef) -> bool:
        """A statement of the function's own body (not nested in another) assigns a mock to a move method:
        `torchmodel.to = Mock()` (rules/guards.toml mock_factories, mocked_moves)."""
        facts = self.model.guards.facts
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
        for statement in body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if (type(small) is cst.Assign and type(small.value) is cst.Call
                        and any(type(target.target) is cst.Attribute and target.target.attr.value in facts.mocked_moves
                                for target in small.targets)
                        and self.model.resolve(small.value.func) in facts.mock_factories):
                    return True
        return False

    def _imports_patchers(self) -> bool:
        if self._patchers is None:
            self._patchers = imports_patchers(self.model)
        return self._patchers

    def _early_exit_guard(self, node: cst.If) -> None:
        """`if not torch.cuda.is_available() or not flash: return` guards the rest of the block;
        so does an `else:` that leaves when the test is false. The rest of the block runs only when
        the test has the other value: a branch like any other, judged when needed (FileContext.guarded)."""
        body_exits = ends_flow(node.body, self.model) is not None
        orelse = node.orelse
        else_exits = isinstance(orelse, cst.Else) and ends_flow(orelse.body, self.model) is not None
        if body_exits != else_exits:
            self.block_branches[-1] += 1
            self.ctx.branches.append((node.test, self.model.scope, not body_exits))

    def _checked_each(self, node: cst.For) -> None:
        """`for t in tensors: if not t.is_cuda: raise RuntimeError(...)`: a loop that only checks each item and
        leaves when one fails guards the rest of the block as `if not x.is_cuda: raise` does for one: the rest
        runs only where the test was false for every item (a branch like any other)."""
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        check = body[0] if len(body) == 1 else None
        if (type(check) is cst.If and check.orelse is None and node.orelse is None
                and ends_flow(check.body, self.model) == "raise"):
            self.block_branches[-1] += 1
            self.ctx.branches.append((check.test, self.model.scope, False))

    def _forced_off(self, node: cst.If) -> None:
        """`if not torch.cuda.is_available(): args.amp = False`: the name or attribute is set to a false
        constant under the test (with no else), so where the test holds it is false for the rest of the
        block (FileContext.false_on_mac judges the test when asked)."""
        if node.orelse is not None:
            return
        for statement in node.body.body:
            smalls = statement.body if type(statement) is cst.SimpleStatementLine else (statement,)
            for small in smalls:
                if type(small) is cst.Assign and len(small.targets) == 1 and falsy_constant(small.value):
                    target = small.targets[0].target
                    if type(target) in (cst.Name, cst.Attribute):
                        self.block_forced[-1] += 1
                        self.ctx.forced_off.append((target, node.test, self.model.scope))

    def _rebound(self, node: cst.CSTNode) -> None:
        """An assignment after a flag was forced off binds it again: what was forced no longer holds (the
        entry stays, emptied, so each block still drops its own on leaving)."""
        targets = [target.target for target in node.targets] if type(node) is cst.Assign else [node.target]
        keys = {dotted(target) for target in targets} - {None}
        forced = self.ctx.forced_off
        for index, (target, test, scope) in enumerate(forced):
            if target is not None and dotted(target) in keys:
                forced[index] = (None, test, scope)

    def _header_end(self) -> Optional[cst.CSTNode]:
        """The last statement of the module's leading imports (after its docstring), once per module."""
        if self._header is None:
            last = None
            for statement in self.model.module.body:
                if type(statement) is not cst.SimpleStatementLine or not all(
                        type(small) in (cst.Import, cst.ImportFrom) or (type(small) is cst.Expr and isinstance(small.value, cst.BaseString))
                        for small in statement.body):
                    break
                last = statement
            self._header = (last,)
        return self._header[0]

    def _guard_rest_of_block(self) -> None:
        self.block_guards[-1] += 1
        self.ctx.guard_depth += 1


EXITS = {"sys.exit", "os._exit", "pytest.exit", "pytest.fail"}
EXPECTS_FAILURE = frozenset({"pytest.raises"})
EXPECTS_FAILURE_METHODS = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
SKIPS = {"pytest.skip", "unittest.SkipTest", "pytest.importorskip"}
BUILTIN_EXITS = {"exit", "quit"}
# Methods that end the program, by the object they are called on (the argparse documentation:
# ArgumentParser.error prints a usage message and exits with status 2; ArgumentParser.exit exits).
EXITING_METHODS = {"argparse.ArgumentParser": frozenset({"error", "exit"})}


def asserted_at_import(stack: Sequence[cst.CSTNode], model) -> bool:
    """The assert being visited is at the top level of a module that is not a test suite's: it turns every
    importer away on a Mac, and guards nothing below it, which a port must make portable too (CDL117).
    A test module's says its tests are CUDA tests; a function's is a requirement of that function."""
    return (len(stack) >= 3 and type(stack[-3]) is cst.Module
            and not model.in_tests)


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _raises_another_error(block: cst.BaseSuite, model=None) -> bool:
    """The block's last statement raises an exception that is no import error (not `sys.exit()`, which ends
    the program, nor `raise ImportError("Please install x")`, which says the library is required)."""
    last = block.body[-1] if block.body else None
    if not (isinstance(last, cst.SimpleStatementLine) and last.body and isinstance(last.body[-1], cst.Raise)):
        return False
    raised = last.body[-1].exc
    if raised is None:
        return False  # a bare `raise`: the ImportError itself, again
    name = _exception_name(raised.func if isinstance(raised, cst.Call) else raised, model)
    return name is not None and name.rpartition(".")[2] not in IMPORT_ERRORS


def ends_flow(block: cst.BaseSuite, model=None) -> Optional[str]:
    """How the suite's last statement leaves the block: "raise" (raise, sys.exit()), "skip" (a test
    skipped: pytest.skip(), raise unittest.SkipTest), "return" (return, continue, break), else None."""
    return statement_flow(block.body[-1], model) if block.body else None


def statement_flow(statement: cst.CSTNode, model=None) -> Optional[str]:
    """How a statement (or a small statement of a one-line suite) leaves its block, as ends_flow reads a
    suite's last one."""
    statements = statement.body if isinstance(statement, cst.SimpleStatementLine) else [statement]
    final = statements[-1] if statements else None
    if isinstance(final, cst.Raise):
        raised = final.exc.func if isinstance(final.exc, cst.Call) else final.exc
        if model is not None and raised is not None and model.resolve(raised) in SKIPS:
            return "skip"
        return "raise"
    if isinstance(final, (cst.Return, cst.Continue, cst.Break)):
        return "return"
    if isinstance(final, cst.Expr) and isinstance(final.value, cst.Call):
        func = final.value.func
        qualified = model.resolve(func) if model is not None else None
        if qualified in EXITS or (isinstance(func, cst.Name) and func.value in BUILTIN_EXITS) or _exits_through(func, model):
            return "raise"
        if qualified in SKIPS:
            return "skip"
    if isinstance(final, cst.If) and final.orelse is not None:  # `if flag: warn(...); raise ...` / `else: raise ...`
        body = ends_flow(final.body, model)
        other = ends_flow(final.orelse.body, model) if isinstance(final.orelse, cst.Else) else statement_flow(final.orelse, model)
        if body is not None and body == other:
            return body  # every way through it leaves the same way
    return None


def _exits_through(func: cst.BaseExpression, model) -> bool:
    """`parser.error("...")` on an `argparse.ArgumentParser(...)`: a method that ends the program (EXITING_METHODS)."""
    if model is None or type(func) is not cst.Attribute or not any(func.attr.value in names for names in EXITING_METHODS.values()):
        return False
    values = model.values(func.value)
    return bool(values) and all(value.kind == "result" and func.attr.value in EXITING_METHODS.get(value.data, ()) for value in values)


SUPPRESSING = frozenset({"contextlib.suppress"})


def _suppresses(node: cst.With, model) -> bool:
    """`with contextlib.suppress(E):` runs its body as `try: ... except E: pass` does: a fallback where such a
    handler is one (_has_fallback: one that catches what the body's CUDA work raises on a Mac)."""
    for item in node.items:
        call = item.item
        if type(call) is not cst.Call or not call.args or any(arg.keyword is not None or arg.star for arg in call.args) \
                or model.resolve(call.func) not in SUPPRESSING:
            continue
        caught = call.args[0].value if len(call.args) == 1 else cst.Tuple([cst.Element(arg.value) for arg in call.args])
        handler = cst.ExceptHandler(body=cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])]), type=caught)
        return _has_fallback(cst.Try(body=node.body, handlers=[handler]), model)
    return False


def _has_fallback(node: cst.Try, model=None) -> bool:
    """`try: <CUDA work> except ...: <another way>`: a handler that does not end by raising or exiting
    (`sys.exit(1)` after a message is no other way; skipping the test is one, and so is returning an
    answer or moving on to the next item: `except Exception: return False` in a capability probe)."""
    raised: dict = {}  # narrow exception -> whether the body's CUDA work raises it on a Mac (asked when a handler needs it)
    for handler in node.handlers:
        if _catches_only_unrelated(handler, model):
            continue  # `except StopIteration:` catches nothing CUDA work raises on a Mac
        narrow = _narrow_kinds(handler, model)
        if narrow is not None:
            for kind in narrow:
                if kind not in raised:
                    raised[kind] = _raises(node.body, kind, model)
            if not any(raised[kind] for kind in narrow):
                continue  # `except RuntimeError:` around `.to("cuda")`: a Mac raises AssertionError there
        if ends_flow(handler.body, model) != "raise" and not _recovers_cuda_oom_only(handler.body, model):
            return True
    return False


def _catches_only_unrelated(handler: cst.ExceptHandler, model=None) -> bool:
    """Every exception type the handler names is one CUDA work does not raise off CUDA
    (optional_code.toml `unrelated_exceptions`); a bare `except:` catches everything."""
    return _catches_only(handler, model, optional_facts().unrelated_exceptions)


def _catches_only(handler: cst.ExceptHandler, model, names) -> bool:
    """Every exception type the handler names is one of `names` (a bare `except:` catches everything)."""
    caught = caught_exceptions(handler, model)
    return caught is not None and all(name in names for name in caught)


def caught_exceptions(handler: cst.ExceptHandler, model=None) -> Optional[List[Optional[str]]]:
    """The names of the exception types a handler catches; None for a bare `except:`."""
    caught = handler.type
    if caught is None:
        return None
    types = [element.value for element in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    return [_exception_name(node, model) for node in types]


def _narrow_kinds(handler: cst.ExceptHandler, model=None):
    """The narrow exceptions (optional_code.toml `narrow_exceptions`) a handler catches, when every type it
    names is one of them or unrelated to CUDA work; None when it catches something broader."""
    caught = caught_exceptions(handler, model)
    if caught is None:
        return None
    facts = optional_facts()
    kinds = []
    for name in caught:
        kind = next((kind for kind in facts.narrow_exceptions if name in kind.names), None)
        if kind is None:
            if name not in facts.unrelated_exceptions:
                return None
        elif kind not in kinds:
            kinds.append(kind)
    return kinds


def _raises(body: cst.BaseSuite, kind, model=None) -> bool:
    """The block uses a torch API or tensor method that raises the narrow exception `kind` where torch has
    no CUDA, or (for a kind imports raise too) imports something: a handler of it may be its other way."""
    stack: list = [body]
    while stack:
        node = stack.pop()
        node_kind = type(node)
        if node_kind is cst.Import or node_kind is cst.ImportFrom:
            if kind.imports:
                return True
        elif kind.shell:
            if node_kind is cst.Call and through_shell(node) and _names_api(node.func, kind, model):
                return True
        elif node_kind is cst.Attribute or node_kind is cst.Name:  # `subprocess.run`, or `run` imported from it
            if node_kind is cst.Attribute and node.attr.value in kind.methods:
                return True
            if _names_api(node, kind, model):
                return True
        stack.extend(code_children(node))
    return False


def _names_api(node: cst.BaseExpression, kind, model=None) -> bool:
    qualified = model.resolve(node) if model is not None else dotted(node)
    return qualified is not None and any(qualified == api or qualified.startswith(api + ".") for api in kind.apis)


def _exception_name(node: cst.BaseExpression, model=None) -> Optional[str]:
    """`queue.Empty` as imported; a builtin (`StopIteration`) by its own name unless the file rebinds it."""
    qualified = model.resolve(node) if model is not None else None
    if qualified is not None:
        return qualified
    name = dotted(node)
    return None if name is None or (model is not None and model.lookup(name)) else name


def _recovers_cuda_oom_only(block: cst.BaseSuite, model=None) -> bool:
    """`except RuntimeError as e: if "CUDA out of memory" in str(e): ...; continue / else: raise`: the
    handler goes on only for an error text CUDA's allocator writes, so on a Mac it raises (CDL218 reports
    the test) and is no other way for the code it guards."""
    last = block.body[-1] if isinstance(block, cst.IndentedBlock) and block.body else None
    return (type(last) is cst.If and tests_cuda_oom(last.test) and type(last.orelse) is cst.Else
            and ends_flow(last.orelse.body, model) == "raise")


class Registry:
    """Handlers by node type, built from the checks that have a selected rule."""

    def __init__(self) -> None:
        self.visit: Dict[Type, List[Handler]] = defaultdict(list)
        self.leave: Dict[Type, List[Handler]] = defaultdict(list)

    def on(self, kind: Type, handler: Handler) -> None:
        self.visit[kind].append(handler)

    def on_leave(self, kind: Type, handler: Handler) -> None:
        self.leave[kind].append(handler)


def _function_fields(node: cst.FunctionDef) -> Tuple[str, ...]:
    """What of a function that runs only off a Mac is shielded: its body, and its parameters where their
    defaults only name values (`device: str = "cuda"` is read when the function runs); a default that
    calls something runs where the function is defined, on a Mac too."""
    defaults = [param.default for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params)
                if param.default is not None]
    return ("body", "params") if all(_calls_nothing(default) for default in defaults) else ("body",)


def _calls_nothing(node: cst.CSTNode) -> bool:
    pending = [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.Call:
            return False
        pending.extend(code_children(current))
    return True
