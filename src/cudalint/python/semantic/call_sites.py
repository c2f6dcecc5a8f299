"""What a parameter holds, read from the calls of its function in the file.

`def _fit(self, cuda=False): if cuda: model = model.cuda()` called as `self._fit(cuda=True)` only
under `if torch.cuda.is_available():` (and by a test runner with the default) is a CUDA mode flag:
the branch never runs on a Mac. A parameter's values are its default plus what each call of its
function passes, each with the guards around that call. That holds only where every caller is in
sight, so only for a function nobody outside the file is expected to call: a test (`test_*`: a
runner calls it with the defaults), one nested in another function, any function of a test module,
or a private method (`_load`) whose name the project index finds read nowhere but in methods of its
own class (its calls are `self._load(...)` in the classes walked for it; asked lazily, by the guard
questions that reach such a parameter). A private module-level helper qualifies too where the project
index finds no other module using it (`in_sight`; its calls are found by walking the module, asked lazily
as well). A call that spreads `*args`/`**kwargs` makes the parameter unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

import libcst as cst

from cudalint.python.children import code_children
from cudalint.python.names import is_none
from cudalint.python.semantic.scopes import leaves

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Binding, Scope

# One call of a function: the call, the scope it is in, and the tests around it in that scope as
# (test, the branch taken) pairs.
Site = Tuple[cst.Call, "Scope", Tuple[Tuple[cst.BaseExpression, bool], ...]]
# An argument as a call passes it: the expression (None where the call leaves the default), the
# scope, the tests around the call. `UNKNOWN_ARGUMENT` where a call spreads arguments.
Argument = Tuple[Optional[cst.BaseExpression], "Scope", Tuple[Tuple[cst.BaseExpression, bool], ...]]
UNKNOWN_ARGUMENT = None
# Decorators that call the function with the arguments its callers pass (or none at all), by the name
# they resolve to: whatever else decorates a function may supply or replace its arguments.
ARGUMENTS_AS_PASSED = frozenset({
    "staticmethod", "classmethod", "property", "functools.wraps", "functools.lru_cache", "functools.cache",
    "abc.abstractmethod", "typing.overload", "contextlib.contextmanager", "torch.no_grad", "torch.inference_mode",
    "torch.enable_grad", "torch.compile", "torch.jit.script", "torch.jit.ignore", "torch.jit.unused",
    "torch.autograd.function.once_differentiable", "pytest.fixture", "unittest.skip", "unittest.skipIf",
    "unittest.skipUnless", "unittest.expectedFailure",
    # patch decorators append the mocks they make after the positional arguments a call passes and keep its
    # keywords (CPython Lib/unittest/mock.py: _patch.decoration_helper extends the call's args): every
    # parameter a caller fills gets what the caller passes
    "unittest.mock.patch", "unittest.mock.patch.object", "mock.patch", "mock.patch.object",
})
# Nodes with statements (suites) among their children, walked statement by statement.
SUITE_HOLDERS = tuple(kind for kind in (
    cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, getattr(cst, "ExceptStarHandler", None), cst.Finally,
    cst.Module, getattr(cst, "MatchCase", None)) if kind is not None)


class CallSites:
    def __init__(self, model: "SemanticModel"):
        self.model = model
        self._calls: Dict[int, Dict[str, List[Site]]] = {}  # id(scope walked) -> callee's last name -> its calls

    def arguments(self, binding: "Binding") -> Optional[List[Optional[Argument]]]:
        """What each call of the parameter's function passes for it (the default aside); None when a
        caller may be out of sight, or nothing but a test runner calls it and it is no test."""
        function = binding.scope.node
        if not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param):
            return None
        if not self._callers_in_sight(function, binding.scope) or not self._arguments_as_passed(function, binding.scope):
            return None
        found = self.seen(binding)
        if not found and not self._a_test(function):
            return None  # a test with no caller here is still called, by the runner, with its defaults
        return found

    def _a_test(self, function: cst.FunctionDef) -> bool:
        """A test the runner calls: a `test*` function of a test module (a library's `Trainer.test(self,
        saved_model=None)` is an entry point for users, as any other method)."""
        return function.name.value.startswith("test") and self.model.in_tests

    def in_sight(self, binding: "Binding") -> Optional[List[Optional[Argument]]]:
        """`arguments`, and besides, for a private module-level helper (`_load`) no other module of the
        project uses (the project index's uses, which the index reads in its one pass anyway), what its
        calls here pass (at least one). A public function of a module others import stays out of sight:
        the project's users may call it."""
        found = self.arguments(binding)
        if found is not None:
            return found
        function, project, module = binding.scope.node, self.model.project, self.model.module_name
        if (project is None or not module or binding.scope.parent is not self.model.module_scope
                or not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param)
                or not function.name.value.startswith("_") or function.name.value.startswith("__")
                or not project.calls_in_sight(f"{module}.{function.name.value}")):
            return None
        return self.seen(binding) or None

    def seen(self, binding: "Binding") -> List[Optional[Argument]]:
        """What the calls of the parameter's function in this file pass for it, whoever else may call it."""
        function = binding.scope.node
        if not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param):
            return []
        found = [site for scope in self._callers(binding.scope) for site in self._sites(scope).get(function.name.value, ())]
        sites = [site for site in found if self._calls_it(site, binding.scope)]
        position = self._position(function, binding)
        return [_argument(site, binding.node.name.value, position) for site in sites]

    def elsewhere(self, binding: "Binding") -> Optional[List[Tuple[str, list]]]:
        """What the `self.method(...)` calls in other modules pass for a parameter of a method of a test
        module's class that nothing in its own file calls (a test base class's helper, overridden in a
        subclass of another module): [(caller class, ["c", truth] | ["a", flag] | ["?"] (not known, spread
        arguments too) | None for the default)], from the project index; None where that is not known,
        or no call was found."""
        function, klass, project = binding.scope.node, binding.scope.parent, self.model.project
        module = self.model.module_name
        if (project is None or not module or klass is None or klass.kind != "class" or klass.parent is not self.model.module_scope
                or not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param)
                or function.name.value.startswith("__") or not self.model.in_tests):
            return None
        calls = project.self_calls(f"{module}.{klass.node.name.value}", function.name.value)
        if not calls:
            return None
        name, position = binding.node.name.value, self._position(function, binding)
        found = []
        for caller, passed in calls:
            if passed == ["*"]:
                found.append((caller, ["?"]))  # spread arguments: what it passes is not known
                continue
            given = [summary for key, summary in passed if key == name or key == position]
            found.append((caller, given[0] if given else None))
        return found

    def default_never_used(self, binding: "Binding") -> bool:
        """The project calls the parameter's function (a class's `__init__`: the class) and every call
        passes the parameter, so its default is never what runs (project/default_calls.py: calls matched
        by the name they call, across the project). A function nothing in the project calls is an entry
        point for users: its default counts; so is one its package's `__init__` re-exports (`from .utils
        import load`), or one of a public module of the package (ProjectIndex.public_api), and a public
        method of such a class: the package's public API, however the project calls it itself."""
        function, project = binding.scope.node, self.model.project
        if project is None or not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param):
            return False
        name, owner = function.name.value, binding.scope.parent
        if name == "__init__":
            klass = binding.scope.enclosing_class
            if klass is None:
                return False
            name, owner = klass.node.name.value, klass.parent
        module = self.model.module_name
        if module and owner is self.model.module_scope and (project.exported(f"{module}.{name}") or project.public_api(f"{module}.{name}")):
            return False
        if (module and owner is not None and owner.kind == "class" and owner.parent is self.model.module_scope
                and not name.startswith("_") and project.public_api(f"{module}.{owner.node.name.value}")):
            return False  # a public method of a class of the package's public API
        return project.every_call_passes(name, binding.name, not_none=is_none(binding.value))

    def _arguments_as_passed(self, function: cst.FunctionDef, scope: "Scope") -> bool:
        """The function receives what its calls pass: no decorator that may supply or replace arguments
        (fastargs' `@param('training.epochs')`) stands between; those that hand the
        arguments on as given (ARGUMENTS_AS_PASSED) do not count."""
        for decorator in function.decorators:
            target = decorator.decorator.func if type(decorator.decorator) is cst.Call else decorator.decorator
            name = self.model.resolve(target, scope.parent) or ""
            if name not in ARGUMENTS_AS_PASSED and not (name.startswith("pytest.mark.") and name != "pytest.mark.parametrize"):
                return False  # a marker of pytest's own (skipif, slow) leaves the arguments alone
        return True

    # -- whose callers are all here ------------------------------------------------------------------
    def _callers_in_sight(self, function: cst.FunctionDef, scope: "Scope") -> bool:
        name = function.name.value
        if name.startswith("__"):
            return False
        parent = scope.parent
        if (parent is not None and parent.kind == "function") or self.model.in_tests:
            return True
        project = self.model.project
        if (parent is not None and parent.kind == "class" and name.startswith("_") and project is not None
                and self.model.module_name and not project.reads_private(name)):
            return True  # a private method nothing outside its class reads: `self._load(...)` in the class
        # a module-level function of a program no other module of the project imports: its calls are here
        module = self.model.module_name
        return (parent is self.model.module_scope and project is not None and bool(module)
                and project.is_program_only(module))

    def _calls_it(self, site: Site, function_scope: "Scope") -> bool:
        call, scope, _ = site
        parent = function_scope.parent
        func = call.func
        if isinstance(func, cst.Name):
            if parent is None or parent.kind == "class":
                return False
            found = self.model.lookup(func.value, scope)
            return len(found) == 1 and found[0].node is function_scope.node
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name) or parent is None or parent.kind != "class":
            return False
        owner = self.model.self_class(func.value.value, scope)
        if owner is None:
            return False
        related = self.model.class_attributes.related(parent)
        return any(klass is owner for klass in related)

    @staticmethod
    def _position(function: cst.FunctionDef, binding: "Binding") -> Optional[int]:
        """The parameter's index among the positional arguments a call passes (after `self`)."""
        ordered = [*function.params.posonly_params, *function.params.params]
        index = next((index for index, param in enumerate(ordered) if param is binding.node), None)
        if index is None:
            return None  # keyword-only
        return index - 1 if binding.scope.self_name is not None else index

    # -- the file's calls -----------------------------------------------------------------------------
    def _callers(self, function_scope: "Scope") -> List["Scope"]:
        """The scopes whose code may call the function: for a method, the classes `self.method()` can
        be written in (its own, its bases and subclasses); for a nested function, the function around
        it; else the module."""
        parent = function_scope.parent
        if parent is not None and parent.kind == "class":
            return self.model.class_attributes.related(parent)
        return [parent if parent is not None else self.model.module_scope]

    def _sites(self, scope: "Scope") -> Dict[str, List[Site]]:
        found = self._calls.get(id(scope))
        if found is None:
            found = self._calls[id(scope)] = {}
            node = scope.node
            self._walk(node.body if isinstance(node, (cst.FunctionDef, cst.ClassDef)) else node, scope, (), found)
        return found

    def _walk(self, node: cst.CSTNode, scope: "Scope", tests, into: Dict[str, List[Site]]) -> None:
        """Every call under `node`, with the tests around it: an enclosing if/elif/else or conditional
        expression, or an `if` before it in its block that leaves (`if not cuda: return`)."""
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not scope.node:
            inner = self.model.scopes.get(id(node))
            if inner is not None:
                self._walk(node.body, inner, (), into)
            return
        if isinstance(node, cst.IndentedBlock):
            for statement in node.body:
                self._walk(statement, scope, tests, into)
                if isinstance(statement, cst.If) and statement.orelse is None and leaves(statement.body):
                    tests = tests + ((statement.test, False),)  # the rest runs only when the test was false
            return
        if isinstance(node, cst.If):
            self._walk(node.test, scope, tests, into)
            self._walk(node.body, scope, tests + ((node.test, True),), into)
            if node.orelse is not None:
                self._walk(node.orelse, scope, tests + ((node.test, False),), into)
            return
        if isinstance(node, SUITE_HOLDERS):
            for child in code_children(node):
                self._walk(child, scope, tests, into)
            return
        _expressions(node, scope, tests, into)


def _expressions(node: cst.CSTNode, scope: "Scope", tests, into: Dict[str, List[Site]]) -> None:
    """The calls of simple statements and expressions (no suite is inside them), with the tests of the
    conditional expressions around each."""
    stack = [(node, tests)]
    while stack:
        current, tests = stack.pop()
        if isinstance(current, cst.Call):
            func = current.func
            name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
            if name is not None:
                into.setdefault(name, []).append((current, scope, tests))
        if isinstance(current, cst.IfExp):
            stack.append((current.test, tests))
            stack.append((current.body, tests + ((current.test, True),)))
            stack.append((current.orelse, tests + ((current.test, False),)))
            continue
        for child in code_children(current):
            stack.append((child, tests))


def _argument(site: Site, name: str, position: Optional[int]) -> Optional[Argument]:
    call, scope, tests = site
    positional = 0
    for arg in call.args:
        if arg.star:
            return UNKNOWN_ARGUMENT
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return (arg.value, scope, tests)
            continue
        if position is not None and positional == position:
            return (arg.value, scope, tests)
        positional += 1
    return (None, scope, tests)
