"""One guard evaluator: does a test being true (or false) mean the host is not a Mac?

Three-valued in effect: for a test, `when_true` says "if this is true, the code it guards
never runs on a Mac" (a CUDA or ROCm host, a Linux or Windows platform), `when_false`
the same for the other outcome, and both False means "unknown". The answer comes from
what names are bound to, never from how they are spelled: availability queries and
build flags (from the catalog's guard table), device-type comparisons whose values the
value model knows, enum members named CUDA, platform tests, names and attributes bound
to any of those or None on every Mac (none_guard), tests of torch's own version, which have one value at the
target release (torch_version_test), and local functions that return them — combined through `not`, `and`,
`or` (De Morgan falls out of the combination rules). `self.flag` is what every binding of it in
the class, its bases and its subclasses says (class_attributes); a test true only where a
CUDA-only library imports is a CUDA guard (optional_imports' Availability, cuda_imports' list).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Set

import libcst as cst

from cudalint.project.facts import TEXT_METHODS
from cudalint.python.children import code_children, comes_after, ends_in_raise, find_argument
from cudalint.python.count_tests import count_meaning
from cudalint.python.guard_facts import GuardFacts, guard_facts  # noqa: F401 - re-exported
from cudalint.python.mac_failures import dead_returns, fails_on_mac, falsy_constant
from cudalint.python.names import conjuncts, disjuncts, dotted, int_literal, is_none, names_cuda_oom, negative_literal, source_of, string_elements, string_value
from cudalint.python.optional_facts import optional_facts
from cudalint.python.semantic import torch_version_test
from cudalint.python.semantic.none_guard import none_on_mac
from cudalint.python.semantic.parametrize import parametrized
from cudalint.python.semantic.values import COMMAND_LINE, MAX_VALUES, UNKNOWN_KIND, UNSET, reads_environment

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Binding, Scope

MAX_DEPTH = 8
GLOBALS_WRITERS = frozenset({"exec", "eval", "globals"})  # top-level calls that may rebind a module's globals


@dataclass(frozen=True)
class Guard:
    when_true: bool = False
    when_false: bool = False

    def negated(self) -> "Guard":
        return Guard(self.when_false, self.when_true)

    @property
    def known(self) -> bool:
        return self.when_true or self.when_false


UNKNOWN = Guard()
TRUE_OFF_MAC = Guard(True, False)
NOT_NONE = frozenset({"str", "prefix", "int", "float", "bool"})  # value kinds (values.py) that are never None
FALSE_OFF_MAC = Guard(False, True)
BOTH_OFF_MAC = Guard(True, True)  # what a binding that never happens on a Mac says about one
VALIDATION_REACH = 3  # the statements after a binding that may check it (an assert, an `if ...: raise`)


class GuardEvaluator:
    def __init__(self, model: "SemanticModel"):
        self.model = model
        self.facts = guard_facts()
        self.memo = {}  # (id(test), id(scope)) -> (guard, the depth it was worked out at)
        self.pending = set()  # the tests (and ids of bindings) being worked out now
        # answers given as unknown because their question was pending (a cycle through bindings), here or
        # in the value evaluator: an answer worked out while one was given may be short of the truth, and
        # is memoized only where nothing else is pending
        self.cycles = 0
        self.test_nodes: Dict[int, FrozenSet[int]] = {}  # id of a condition's test -> ids of its nodes
        self.binding_memo = {}
        self.raises_memo = {}  # id(function) -> it raises off CUDA before it can return
        self.none_on_mac = set()  # (id(node), id(scope)) of the references that are None on every Mac
        self.checked = {}  # (id(function), switch as written) -> the function checks it against CUDA
        self.places = {}  # (id(node), id(scope)) -> where it lies among the scope's statements (straight_line)
        self._rewrites_globals: Optional[bool] = None  # a top-level exec/eval/globals() (_globals_rewritten)

    def may_memoize(self, cycles: int) -> bool:
        """An answer worked out since the count stood at `cycles` may be kept: no cycle answered part of it
        as unknown, or nothing else (here or in the value evaluator) is being worked out now."""
        return self.cycles == cycles or not (self.pending or self.model.evaluator.pending)

    def guard(self, test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> Guard:
        key = (id(test), id(scope))
        cached = self.memo.get(key)
        if cached is not None and cached[1] <= depth:  # worked out with at least this much depth left
            return cached[0]
        if depth > MAX_DEPTH:
            return UNKNOWN
        if key in self.pending:
            self.cycles += 1
            return UNKNOWN  # a cycle through bindings
        self.pending.add(key)
        cycles = self.cycles
        found = self._guard(test, scope, depth)
        self.pending.discard(key)
        if self.may_memoize(cycles):
            self.memo[key] = (found, depth)
        return found

    def binding_off_mac(self, binding: "Binding", depth: int = 0) -> bool:
        """A binding under `if torch.cuda.is_available():` only happens on a host that is not a Mac."""
        key = id(binding)
        cached = self.binding_memo.get(key)
        if cached is not None and cached[1] <= depth:
            return cached[0]
        if key in self.pending:
            self.cycles += 1
            return False
        self.pending.add(key)
        cycles = self.cycles
        found = (self.conditions_off_mac(binding.conditions, binding.context, depth) or self._in_skipped_class(binding)
                 or self._stopped_off_mac(binding, depth))
        self.pending.discard(key)
        if self.may_memoize(cycles):
            self.binding_memo[key] = (found, depth)
        return found

    def _stopped_off_mac(self, binding: "Binding", depth: int) -> bool:
        """A flag set to True or False in one arm of an `if` whose other statements include one that surely
        raises on every Mac (a call rules/guards.toml lists: OpenMMLab's `init_dist`, which sets a CUDA device;
        a function of the project that raises off CUDA; `assert torch.cuda.is_available()`): the flag records
        that the arm was taken, which never happens on a Mac. The failing statement before the binding, or
        after it for a name (not an attribute, which an object may keep past a caught exception) with no
        `try:` around it in its function, where the program stops before anything reads the name.
        `else: distributed = True; init_dist(args.launcher)`: `if distributed:` runs only off a Mac. (Only a
        flag of an arm: every name bound after a failing statement never holds on a Mac either, but the
        code that reads it is a finding of its own, as is any other code after that statement.)"""
        if binding.kind != "assign" or not isinstance(binding.node, (cst.Assign, cst.AnnAssign)) or depth > MAX_DEPTH \
                or not (isinstance(binding.value, cst.Name) and binding.value.value in ("True", "False")):
            return False
        path = binding.scope.path_to(binding.node)
        if not path or len(path) < 4 or not isinstance(path[-2], cst.SimpleStatementLine):
            return False
        statement, holder = path[-2], path[-3]
        if not isinstance(holder, cst.IndentedBlock) or not isinstance(path[-4], (cst.If, cst.Else)):
            return False
        body = list(holder.body)
        at = next((index for index, item in enumerate(body) if item is statement), None)
        if at is None:
            return False
        scope = binding.context
        if any(self._requires_cuda(item, scope, depth + 1) or fails_on_mac(self.model, item, scope) for item in body[:at]):
            return True
        targets = binding.node.targets if isinstance(binding.node, cst.Assign) else [binding.node]
        if not all(isinstance(target.target, cst.Name) for target in targets) or any(
                isinstance(node, (cst.Try, cst.TryStar)) for node in path):
            return False
        return any(self._requires_cuda(item, scope, depth + 1) or fails_on_mac(self.model, item, scope)
                   for item in body[at + 1:])

    def _in_skipped_class(self, binding: "Binding") -> bool:
        """A binding in the body of a test class skipped off CUDA, or in one of its methods
        (`@skipIf(not torch.cuda.is_available()) class TestCUDA(Base): device = "cuda"`): an instance
        that sees it runs its tests only where CUDA is."""
        scope = binding.scope
        klass = scope if scope.kind == "class" else scope.enclosing_class if scope.kind == "function" else None
        return klass is not None and isinstance(klass.node, cst.ClassDef) and self.model.skipped_class(klass.node)

    def test_guard(self, test, scope: "Scope", depth: int = 0) -> Guard:
        """The guard of a statement's test (`if`, `while`, a conditional expression), where a test written
        as a constant also settles the way it never goes: `if False:  # torch.cuda.is_available():` never
        runs, on a Mac or anywhere. (Only there: a constant that is a value, `enabled=False`, a parameter's
        default, says nothing about the host.)"""
        return literal_guard(test) or self.guard(test, scope, depth)

    def conditions_off_mac(self, conditions, scope: "Scope", depth: int = 0) -> bool:
        for test, polarity in conditions:
            found = self.test_guard(test, scope, depth + 1)
            if found.when_true if polarity else found.when_false:
                return True
        return False

    def call_requires_cuda(self, call: cst.Call, scope: "Scope", depth: int = 0) -> bool:
        """`installed_cuda_version()`, a function of this file (or, through the project index, of another
        module) that raises unless the host has CUDA (`if CUDA_HOME is None: raise ...` before it can
        return), or a class whose `__init__` does (`prof = Profiler()`): the code after the call runs only
        off a Mac."""
        func = call.func
        if depth > MAX_DEPTH or not isinstance(func, (cst.Name, cst.Attribute)):
            return False
        if isinstance(func, cst.Name):
            bindings = self.model.lookup(func.value, scope)
            if bindings and all(binding.kind == "def" for binding in bindings):
                return all(self._raises_off_mac(binding.node, depth) for binding in bindings)
            if len(bindings) == 1 and bindings[0].kind == "class":  # `prof = Profiler()`: its `__init__` raises so
                init = next((item for item in bindings[0].node.body.body
                             if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
                return init is not None and self._raises_off_mac(init, depth)
        project = self.model.project  # `from pkg.checks import require_cuda`: the index judged it
        name = func.value if isinstance(func, cst.Name) else func.attr.value
        if project is None or name not in project.requiring:
            return False
        qualified = self.model.resolve(func, scope)
        return qualified is not None and project.is_own(qualified) and project.requires_cuda(qualified)

    def method_off_mac(self, function: cst.FunctionDef, scope: "Scope") -> bool:
        """A method of a class (`scope`) whose `__init__` raises off a Mac before it can return (`if not
        _TE_AVAILABLE: raise ...`, `require_cuda()`): it runs only on an instance, so never on a Mac.
        Not the constructor itself (its early exit guards the rest of it), a static or class method,
        which run without one, nor a method of a class that may have another constructor."""
        if scope.kind != "class" or function.name.value in ("__init__", "__new__"):
            return False
        inner = self.model.scopes.get(id(function))
        if inner is None or inner.self_name is None or any(_named(d.decorator, "classmethod") for d in function.decorators):
            return False
        return self.constructed_off_mac(scope)

    def backward_off_mac(self, function: cst.FunctionDef, scope: "Scope") -> bool:
        """The backward of an autograd Function (`class F(torch.autograd.Function)`) whose forward, before
        it can return, raises for every tensor a Mac holds (`if not input.is_cuda: raise NotImplementedError`):
        autograd calls backward only on a graph a forward built, so it never runs there, and its own test of
        the gradient repeats the forward's finding."""
        facts = self.facts
        if scope.kind != "class" or function.name.value not in facts.after_forward or not isinstance(scope.node, cst.ClassDef):
            return False
        if not any(base.keyword is None and self.model.resolve(base.value, scope.parent) in facts.autograd_functions
                   for base in scope.node.bases):
            return False
        forwards = scope.bindings.get("forward", ())
        if len(forwards) != 1 or forwards[0].kind != "def" or not isinstance(forwards[0].node, cst.FunctionDef):
            return False
        forward = forwards[0].node
        inner = self.model.scopes.get(id(forward))
        if inner is None or not isinstance(forward.body, cst.IndentedBlock):
            return False
        for statement in forward.body.body:
            if isinstance(statement, cst.If) and ends_in_raise(statement.body) and self.guard(statement.test, inner).when_false:
                return True  # raises for any tensor there, whatever the test names
            if _may_return(statement):
                return False
        return False

    def constructed_off_mac(self, scope: "Scope") -> bool:
        """A class (`scope`) whose one `__init__` raises off a Mac before it can return (Composer's
        `DeviceGPU`: `if not torch.cuda.is_available(): raise ...`): its instances exist only off a Mac,
        and the class attributes they read (`dist_backend = "nccl"`) with them."""
        if scope.kind != "class" or "__new__" in scope.bindings:
            return False
        constructors = scope.bindings.get("__init__", ())
        return len(constructors) == 1 and constructors[0].kind == "def" and self._raises_off_mac(constructors[0].node, 0)

    def backend_class(self, klass: cst.ClassDef) -> bool:
        """The CUDA backend of a device abstraction (Lightning's CUDAAccelerator, an accelerator class of
        one's own): a class whose `is_available()` (the availability protocol of torch.cuda, torch.mps and
        every accelerator registry) returns a CUDA query. The abstraction picks the class only where
        that answer is yes, so nothing else in it runs on a Mac. Judged by what the method returns,
        not by the class's name; a method that may return something else makes no backend."""
        for statement in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "is_available":
                inner = self.model.scopes.get(id(statement))
                if inner is None or not inner.returns:
                    return False
                return _agree(self.guard(returned, inner) for returned, _ in inner.returns).when_true
        return False

    def raises_off_mac(self, function: cst.FunctionDef) -> bool:
        """The function raises unless CUDA is there before it can return (`if not torch.cuda.is_available(): raise
        RuntimeError("CUDA required")` first): on a Mac nothing it holds is used."""
        return self._raises_off_mac(function, 0)

    def _raises_off_mac(self, function: cst.FunctionDef, depth: int) -> bool:
        """The function's body, before anything in it can return, raises unless the host is not a Mac."""
        key = id(function)
        if key not in self.raises_memo:
            self.raises_memo[key] = False  # a function that calls itself proves nothing
            inner = self.model.scopes.get(id(function))
            found = False
            for statement in function.body.body if inner is not None else ():
                if self._requires_cuda(statement, inner, depth):
                    found = True
                    break
                if _may_return(statement):
                    break
            self.raises_memo[key] = found
        return self.raises_memo[key]

    def _requires_cuda(self, statement, scope: "Scope", depth: int) -> bool:
        """`if <not CUDA>: raise ...`, `assert <CUDA>`, or a call of another function that raises off CUDA.
        The test must be about the host: one on the arguments (`assert x.device.type == "cuda"`) says
        what the caller passed, and the caller's own code is where that is reported."""
        if isinstance(statement, cst.If):
            return (
                (ends_in_raise(statement.body) or self._ends_in_skip(statement.body, scope)) and statement.orelse is None
                and self.guard(statement.test, scope, depth + 1).when_false and self._about_host(statement.test, scope)
            )
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Assert) and self.guard(small.test, scope, depth + 1).when_true:
                return self._about_host(small.test, scope)
            value = getattr(small, "value", None) if isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign)) else None
            if isinstance(value, cst.Call) and self.call_requires_cuda(value, scope, depth + 1):
                return True
        return False

    def _ends_in_skip(self, block: cst.BaseSuite, scope: "Scope") -> bool:
        """The block ends in a call that skips (`pytest.skip(..., allow_module_level=True)`: it raises pytest's
        Skipped, so a helper that calls it before returning stops a test, or a test module, as a raise does)."""
        last = block.body[-1] if isinstance(block, cst.IndentedBlock) and block.body else None
        small = last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else None
        return (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
                and self.model.resolve(small.value.func, scope) in optional_facts().skip_calls)

    def _about_host(self, test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
        """No name in the test is a parameter of the function, nor a local bound from one."""
        stack = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                stack.append(node.value)  # `x.device`: the attribute's own name is not a variable
                continue
            if isinstance(node, cst.Name):
                for binding in scope.bindings.get(node.value, ()):
                    if binding.kind == "import":
                        continue  # `import torch.utils.cpp_extension` inside the function
                    if binding.kind == "param" or depth >= MAX_DEPTH:
                        return False
                    if binding.value is None or not self._about_host(binding.value, scope, depth + 1):
                        return False
                continue
            stack.extend(code_children(node))
        return True

    def loop_off_mac(self, iterable: cst.BaseExpression, scope: "Scope") -> bool:
        """The body runs only over a sequence that is not empty: `for i in range(torch.cuda.device_count()):`
        (a start of 0 or more and a positive step keep the count's meaning), `for i in visible` with
        `visible = list(range(num_gpus()))`: empty, so never run, on a Mac."""
        if type(iterable) is cst.GeneratorExp:  # a generator is true as an object: what it yields says
            return self._comprehension(iterable, scope, 0).when_true
        return self.guard(iterable, scope).when_true

    def _comprehension(self, test: cst.BaseComp, scope: "Scope", depth: int) -> Guard:
        """Whether what a comprehension yields is empty: `[torch.device(f"cuda:{i}") for i in
        range(torch.cuda.device_count())]` is empty where what its first `for` runs over is (a Mac's), and so
        is `{s.device for s in stages if s.device.type == "cuda"}`, whose filter passes an element only off a
        Mac; it is not empty where its first `for` runs over something, unless a filter or another `for` may
        empty it."""
        first = test.for_in
        inner = self.guard(first.iter, scope, depth + 1)
        single = first.inner_for_in is None
        filtered = single and any(self.guard(condition.test, scope, depth + 1).when_true for condition in first.ifs)
        return Guard(inner.when_true or filtered, inner.when_false and single and not first.ifs)

    def marker_skips(self, call: cst.Call, scope: "Scope") -> bool:
        """`@RunIf(min_cuda_gpus=1)`: a keyword the catalog knows as a CUDA requirement, set to a count >= 1
        or True, skips the test off CUDA, when the marker is imported from a module the project does not
        ship (an sdist without tests/conftest.py) or its definition forwards its keywords to Lightning's
        _runif_reasons. Any other definition the tree holds is judged by what it does instead."""
        keywords = self.facts.marker_keywords
        required = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in keywords]
        if not required or not (self._forwards_keywords(call.func, scope) or self._defined_outside(call.func, scope)):
            return False
        for value in required:
            values = self.model.values(value, scope)
            if values and all(v.kind in ("int", "bool") and v.data for v in values):
                return True
        return False

    def _forwards_keywords(self, func: cst.BaseExpression, scope: "Scope") -> bool:
        """The marker's definition, in this file or (through the project index) another one, hands its
        own `**kwargs` to a marker_reasons function and returns a skip_if marker."""
        if isinstance(func, cst.Name):
            bindings = self.model.lookup(func.value, scope)
            if bindings and all(binding.kind == "def" for binding in bindings):
                return all(self._forwarding_definition(binding.node) for binding in bindings)
        qualified = self.model.resolve(func, scope)
        project = self.model.project
        return qualified is not None and project is not None and project.is_own(qualified) and project.forwards_keywords(qualified)

    def _forwarding_definition(self, function: cst.FunctionDef) -> bool:
        star = function.params.star_kwarg
        inner = self.model.scopes.get(id(function))
        if not isinstance(star, cst.Param) or inner is None or not isinstance(function.body, cst.IndentedBlock):
            return False
        forwards = returns_skip = False
        for line in function.body.body:
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                value = getattr(small, "value", None)
                if not isinstance(value, cst.Call):
                    continue
                qualified = self.model.resolve(value.func, inner)
                if isinstance(small, cst.Return):
                    returns_skip = returns_skip or qualified in self.facts.skip_if
                elif qualified in self.facts.marker_reasons:
                    forwards = forwards or any(
                        arg.star == "**" and isinstance(arg.value, cst.Name) and arg.value.value == star.name.value
                        for arg in value.args
                    )
        return forwards and returns_skip

    def _defined_outside(self, func: cst.BaseExpression, scope: "Scope") -> bool:
        """The callee is imported, and the module it comes from is not a file of the project."""
        name = dotted(func)
        if name is None:
            return False
        bindings = self.model.lookup(name.partition(".")[0], scope)
        if not bindings or any(binding.kind != "import" for binding in bindings):
            return False
        qualified = self.model.resolve(func, scope)
        project = self.model.project
        return qualified is not None and (project is None or not project.ships(qualified))

    # -- one test ---------------------------------------------------------------------
    def _guard(self, test, scope, depth) -> Guard:
        if isinstance(test, cst.BaseStatement):  # a binding's condition: it comes after this statement
            return TRUE_OFF_MAC if self.model.cuda_imports.after(test) else UNKNOWN
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.guard(test.expression, scope, depth + 1).negated()
        if isinstance(test, cst.BooleanOperation):
            left = self.guard(test.left, scope, depth + 1)
            right = self.guard(test.right, scope, depth + 1)
            if isinstance(test.operator, cst.And):
                return Guard(left.when_true or right.when_true, left.when_false and right.when_false)
            # `torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1"`: the CUDA path, forced
            left_true = left.when_true or (right.when_true and self._opt_in(test.left, scope, depth))
            right_true = right.when_true or (left.when_true and self._opt_in(test.right, scope, depth))
            return Guard(left_true and right_true, left.when_false or right.when_false)
        if isinstance(test, (cst.Comparison, cst.Call, cst.Name, cst.Attribute)):
            if isinstance(test, cst.Comparison):
                found = self._comparison(test, scope, depth)
                found = found if found.known else self._configured_cuda(test, scope, depth)
                if not found.known and depth < MAX_DEPTH and self._checked_switch(test, scope, depth):
                    found = TRUE_OFF_MAC  # `kind == "inconsistent"` after the test skipped it without CUDA
            elif isinstance(test, cst.Call):
                found = self._call(test, scope, depth)
                found = found if found.known else self._configured_cuda(test, scope, depth)
            else:
                found = self._reference(test, scope, depth)
            found = found if found.known else self._library_guard(test, scope, depth)
            return found if found.known else self._switch(test, scope)
        if isinstance(test, cst.NamedExpr):
            return self.guard(test.value, scope, depth + 1)
        if type(test) in (cst.ListComp, cst.SetComp, cst.DictComp):
            return self._comprehension(test, scope, depth)
        if isinstance(test, cst.IfExp) and not (is_none(test.body) or is_none(test.orelse)):
            # `True if torch.cuda.is_available() else False` (an arm of None: none_guard reads its tests)
            body, orelse = self._value_guard(test.body, scope, depth), self._value_guard(test.orelse, scope, depth)
            # `torch.cuda.is_available() if use_cuda is None else use_cuda`: beside a CUDA query, a switch
            # that is off unless a caller turns it on asks for the CUDA path, as in an `or`
            if body.when_true and not orelse.when_true and self.model.opt_in_switches.opt_in(test.orelse, scope, depth):
                orelse = Guard(True, orelse.when_false)
            elif orelse.when_true and not body.when_true and self.model.opt_in_switches.opt_in(test.body, scope, depth):
                body = Guard(True, body.when_false)
            return _chosen(self.guard(test.test, scope, depth + 1), body, orelse)
        return UNKNOWN

    def _configured_cuda(self, test, scope, depth) -> Guard:
        """`os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""`, `"CUDA_VISIBLE_DEVICES" in os.environ`: a test
        of a variable only a CUDA setup reads (rules/guards.toml cuda_environment) that is false where it is
        not set is true only where someone configured CUDA devices, never on a Mac."""
        facts = self.facts
        if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) in (cst.In, cst.NotIn):
            if string_value(test.left) in facts.cuda_environment and self.model.resolve(test.comparisons[0].comparator, scope) == "os.environ":
                return TRUE_OFF_MAC if type(test.comparisons[0].operator) is cst.In else TRUE_OFF_MAC.negated()
            return UNKNOWN
        if not reads_environment(test, self.model, scope, facts.cuda_environment):
            return UNKNOWN
        unset = self.model.evaluator.unset_environment(test, scope, depth + 1)
        if unset is None:
            return UNKNOWN
        return TRUE_OFF_MAC.negated() if unset is not UNSET and unset else TRUE_OFF_MAC

    def _opt_in(self, test, scope, depth) -> bool:
        """`os.getenv("FORCE_CUDA", "0") == "1"`: a test of an environment variable that is false where
        the variable is not set. Beside a CUDA query in an `or` it forces the CUDA path (a CUDA build on a
        machine that cannot see its GPU); every host, a Mac included, runs with it false until someone
        sets it. Alone it says nothing: `os.getenv("WORLD_SIZE", "1") != "1"` is a launcher's, on any host."""
        found = self.model.evaluator.unset_environment(test, scope, depth + 1)
        return found is UNSET or (found is not None and not found)

    def _option_default(self, call: cst.Call, scope: "Scope") -> Optional[cst.BaseExpression]:
        """The default of an option read with one: `options.get(key, DEFAULT)` (a dict, `**kwargs`, a
        config, `os.environ`) or `getattr(obj, name, DEFAULT)`. Where nobody set the option the test is
        its default, so a default that is a CUDA guard guards like it: what runs on a Mac is what a user
        there asked for by setting the option, as with an environment opt-in."""
        if any(arg.keyword is not None or arg.star for arg in call.args):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "get" and len(call.args) == 2:
            return call.args[1].value
        if isinstance(func, cst.Name) and func.value == "getattr" and len(call.args) == 3 and not self.model.lookup("getattr", scope):
            return call.args[2].value
        return None

    def _switch(self, test, scope) -> Guard:
        """`if not args.cpu:` where the file picks `torch.device("cpu") if args.cpu else torch.device(rank)`:
        as written, the code is on CUDA wherever the test picks it (device_switch); the selection is
        where that is reported."""
        cuda_when = self.model.device_switches.cuda_when(test, scope)
        if cuda_when is None:
            return UNKNOWN
        return TRUE_OFF_MAC if cuda_when else TRUE_OFF_MAC.negated()

    def _library_guard(self, test, scope, depth) -> Guard:
        """`if is_triton_available():`, `find_spec("tensorrt") is None`: a test that is true (or false)
        only where a CUDA-only library (CDL404's list) imports is true (false) only off a Mac."""
        found, library = self.model.availability.tested(test, scope, depth + 1)
        if found.known and library and self.model.cuda_imports.cuda_only(library):
            return found
        return UNKNOWN

    def _call(self, call: cst.Call, scope, depth) -> Guard:
        qualified = self.model.resolve(call.func, scope)
        project = self.model.project
        if qualified is not None and project is not None and project.is_own(qualified):
            followed = project.follow(qualified)  # a library's query a module of the project re-exports
            qualified = qualified if project.is_own(followed) else followed
        if qualified in self.facts.queries or qualified in self.facts.off_mac_queries:
            return TRUE_OFF_MAC
        if type(call.func) is cst.Name and len(call.args) == 1:
            tested = self._none_test_of_argument(call)
            if tested is not None:  # `exists(self.stream)` with `def exists(v): return v is not None`
                return self._comparison(tested, scope, depth + 1)
        if qualified in self.facts.absence_queries or qualified in self.facts.mac_queries:
            return TRUE_OFF_MAC.negated()
        if (qualified in self.facts.program_lookups and call.args and call.args[0].keyword is None
                and string_value(call.args[0].value) in self.facts.off_mac_programs):
            return TRUE_OFF_MAC  # `shutil.which("nvidia-smi")`: None where the program is missing, as on every Mac
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "is_cuda" and not call.args and qualified is None:
            return TRUE_OFF_MAC  # a simulator's or framework's `device.is_cuda()`: no device of a Mac is CUDA's
        if (isinstance(func, cst.Name) and func.value == "hasattr" and len(call.args) == 2
                and string_value(call.args[1].value) in self.facts.off_mac_attributes and not self.model.lookup("hasattr", scope)):
            return TRUE_OFF_MAC  # `hasattr(x, "__cuda_array_interface__")`: only an array in CUDA memory has it
        if (isinstance(func, cst.Name) and func.value == "isinstance" and len(call.args) == 2
                and not self.model.lookup("isinstance", scope) and self._cuda_library_types(call.args[1].value, scope)):
            return TRUE_OFF_MAC  # `isinstance(a, cupy.ndarray)`: only a CUDA-only library, which no Mac imports, makes one
        if isinstance(func, cst.Name) and func.value in SAME_TRUTH and not self.model.lookup(func.value, scope):
            if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
                return self.guard(call.args[0].value, scope, depth + 1)  # the builtin keeps its argument's truth
        if isinstance(func, cst.Name) and func.value == "min" and not self.model.lookup("min", scope):
            # `min(torch.cuda.device_count(), 2)`: a count capped by a positive number is 0 where the count is
            counted = [arg.value for arg in call.args if not (arg.keyword is None and (int_literal(arg.value) or 0) > 0)]
            if len(counted) == 1 and len(call.args) >= 2 and not any(arg.keyword is not None or arg.star for arg in call.args):
                return self.guard(counted[0], scope, depth + 1)
        if isinstance(func, cst.Name) and func.value in ("all", "any") and not self.model.lookup(func.value, scope):
            # `all(d.type == "cuda" for d in devices)`: true only where an element's test is (all() of an
            # empty list aside, which no list of the devices in use is); false says nothing
            if len(call.args) == 1 and type(call.args[0].value) in COMPREHENSIONS and not call.args[0].star:
                return Guard(self.guard(call.args[0].value.elt, scope, depth + 1).when_true, False)
        default = self._option_default(call, scope)
        if default is not None:  # `kwargs.get("use_cuda", torch.cuda.is_available())`: the query, unless set
            found = self.guard(default, scope, depth + 1)
            if found.known:
                return found
        if isinstance(func, cst.Name) and func.value == "range" and not self.model.lookup("range", scope):
            stop = _range_stop(call)  # range(device_count()) is empty where the count is 0
            return self.guard(stop, scope, depth + 1) if stop is not None else UNKNOWN
        if qualified is not None and project is not None and project.is_own(qualified):
            found = project.guard_of(qualified)  # a helper in another module of the project
            return Guard(*found) if found else UNKNOWN
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "startswith" and call.args:
            prefix = string_value(call.args[0].value)
            if self._is_platform(func.value, scope, depth):
                return self._platform_equals(prefix, depth)
            if self.facts.names_off_mac_device(prefix):
                return TRUE_OFF_MAC
            return UNKNOWN
        if qualified is None:
            guards = []
            for callee in self.model.values(func, scope, depth + 1):
                if callee.kind != "func":
                    return UNKNOWN
                inner = self.model.scopes.get(id(callee.data))
                if inner is None or not inner.returns:
                    return UNKNOWN
                dead = dead_returns(self.model, callee.data, inner, depth)  # after nvidia-smi; after an early exit
                constants = [_constant_guard(returned) for returned, _ in inner.returns]
                if not dead and None not in constants:
                    return UNKNOWN  # a function that only returns constants says nothing of the host
                # `except ImportError: return False` beside `return torch.cuda.is_available()`: a constant is never
                # true (or never false) anywhere, and keeps what the other returns say
                guards.extend(
                    TRUE_OFF_MAC if dead and falsy_constant(returned) else constant or self.guard(returned, inner, depth + 1)
                    for (returned, _), constant in zip(inner.returns, constants) if id(returned) not in dead
                )
            return _agree(guards)
        return UNKNOWN

    def _reference(self, node, scope, depth) -> Guard:
        qualified = self.model.resolve(node, scope)
        # `x.is_cuda`: a tensor's (or module's) own answer, it is on a CUDA device; so is a project
        # object's whose binding the index knows nothing of (super-gradients' `device_config.is_cuda`)
        is_cuda = isinstance(node, cst.Attribute) and node.attr.value == "is_cuda"
        if qualified is not None:
            if qualified in self.facts.flags:
                return TRUE_OFF_MAC
            project = self.model.project
            if project is not None and project.is_own(qualified):
                found = project.guard_constant(qualified)  # CUDA_IS_AVAILABLE = torch.cuda.is_available() elsewhere
                return Guard(*found) if found else TRUE_OFF_MAC if is_cuda else UNKNOWN
            return UNKNOWN
        if is_cuda:
            return TRUE_OFF_MAC
        found = _agree(self._bound_guards(node, scope, depth))
        if not found.known and depth < MAX_DEPTH and self._checked_switch(node, scope, depth):
            return TRUE_OFF_MAC
        if not found.known:
            found = self._command_line_default(node, scope, depth) or self._project_attribute(node, scope)
        if found.known or not none_on_mac(self.model, node, scope, depth):
            return found
        self.none_on_mac.add((id(node), id(scope)))  # true only off a Mac, as a value: not a count
        return TRUE_OFF_MAC

    def _none_test_of_argument(self, call: cst.Call) -> Optional[cst.Comparison]:
        """`exists(x)` where the file's `def exists(val): return val is not None` (or `is None`): the test the
        helper makes, written of the call's own argument; None for any other call."""
        found = self.model.defined_function(call.func)
        if found is None or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return None
        function, _ = found
        params = function.params
        body = function.body.body if isinstance(function.body, cst.IndentedBlock) else function.body.body
        if (len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.star_kwarg is not None
                or not isinstance(params.star_arg, cst.MaybeSentinel) or len(body) != 1):
            return None
        small = body[0].body[0] if isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 else body[0]
        returned = small.value if isinstance(small, cst.Return) else None  # `def exists(v): return v is not None` too
        if (type(returned) is not cst.Comparison or len(returned.comparisons) != 1 or not _named(returned.left, params.params[0].name.value)
                or not isinstance(returned.comparisons[0].operator, (cst.Is, cst.IsNot)) or not is_none(returned.comparisons[0].comparator)):
            return None
        return returned.with_changes(left=call.args[0].value)

    def _command_line_default(self, node, scope, depth) -> Optional[Guard]:
        """`args.cuda` of a command-line option whose default is a CUDA guard (`add_argument("--cuda", type=int,
        default=int(torch.cuda.is_available()))`), where the file stores nothing else in it: run as it comes, a
        Mac takes the default; a user there who asks for CUDA asks for what the host lacks. None otherwise."""
        if type(node) is not cst.Attribute or depth >= MAX_DEPTH:
            return None
        options = self.model.options.get(node.attr.value)
        if not options or type(node.value) is not cst.Name or self.model.stores(node.value.value, node.attr.value, scope)[0]:
            return None  # `args.cuda = args.cuda and torch.cuda.is_available()`: the bindings answer that
        if not self.model.evaluator.may_hold_options(node.value, scope, depth):
            return None
        guards = []
        for call, where in options:
            found = find_argument(call, "default", None)
            default = found.value if found is not None else None
            if default is None or _constant_truth(default) is not None or literal_guard(default) is not None:
                return None  # `default=False`: the user turns it on, on any host; only a default that asks for CUDA says so
            guards.append(self._value_guard(default, where, depth))
        found = _agree(guards)
        return found if found.known else None

    def _project_attribute(self, node, scope) -> Guard:
        """`config.total_visible_gpus` of an object the file cannot name (a parameter, a local), where the
        project's classes bind that attribute only to one CUDA guard (ProjectIndex.attribute_guard). An
        attribute of `self` is its class's own: the class model (`_bound_guards`) answers it, not the name."""
        project = self.model.project
        if project is None or type(node) is not cst.Attribute or self.model.is_module_ref(node.value):
            return UNKNOWN
        owner = node.value
        if type(owner) is cst.Name and owner.value == scope.self_name:
            return UNKNOWN
        found = project.attribute_guard(node.attr.value)
        return Guard(*found) if found else UNKNOWN

    def _checked_switch(self, node, scope, depth) -> bool:
        return self._checked_here(node, scope, depth) or self._checked_in_project(node, scope)

    def _checked_in_project(self, node, scope) -> bool:
        """A switch some module of the project checks against CUDA before relying on it (ProjectIndex.
        checked_switch: `if args.use_cuda: assert torch.cuda.is_available()` in the command line's
        validation; or a flag it sets True only beside OpenMMLab's `init_dist`), read by the same last name
        where the code hands it on (`use_cuda=args.use_cuda`, `distributed=distributed`, then
        `self.use_cuda = use_cuda`): the check says what the switch means. Not where this file binds it to
        a true constant (`use_cuda=True` as a default, `use_cuda = True`), which turns it on by itself."""
        project = self.model.project
        if project is None:
            return False
        if isinstance(node, cst.Name):
            name = node.value
        elif isinstance(node, cst.Attribute) and dotted(node):
            name = node.attr.value
        else:
            return False
        if not project.checked_switch(name):
            return False
        return not any(binding.value is not None and _constant_truth(binding.value) is True
                       for binding in self.model.bindings_of(node, scope))

    def _checked_here(self, node, scope, depth) -> bool:
        """A switch the code checks against CUDA before it relies on it: `if use_cuda: assert
        torch.cuda.is_available()`, `if args.cuda and not torch.cuda.is_available(): raise ...` in the
        function that binds the name, or, for `self.use_cuda`, in the class's `__init__` (there also
        through `self.use_cuda = use_cuda`, for the parameter). Wherever the switch holds past that
        check, CUDA is there: on a Mac the program stopped at it. Where the check stands in the function
        is not compared with the reference's place: a switch checked there is read as checked throughout
        (code that uses it before checking it is rare, and the check states what the switch means)."""
        if isinstance(node, cst.Name):
            bindings = self.model.bindings_of(node, scope)
            owner = bindings[0].scope if bindings else None
            spelling = node.value
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and (
                klass := self.model.self_class(node.value.value, scope)) is not None:
            init = klass.bindings.get("__init__")  # `self.use_cuda`: checked in __init__
            owner = self.model.scopes.get(id(init[0].node)) if init and init[0].kind == "def" else None
            spelling = f"{owner.self_name}.{node.attr.value}" if owner is not None and owner.self_name else ""
        elif (isinstance(node, cst.Attribute) and dotted(node)) or isinstance(node, cst.Comparison):
            # `args.cuda`, `kind == "inconsistent"`: checked in the function that reads it
            owner = scope
            while owner is not None and owner.kind != "function":
                owner = owner.parent
            spelling = dotted(node) if isinstance(node, cst.Attribute) else _spelled(node)
        else:
            return False
        if owner is None or owner.kind != "function" or not isinstance(owner.node, cst.FunctionDef) or not spelling:
            return False
        key = (id(owner.node), spelling)
        if key not in self.checked:
            self.checked[key] = False  # a cycle through the check's own test is no check
            self.checked[key] = self._checks_switch(owner, spelling, depth)
        return self.checked[key]

    def _checks_switch(self, owner, spelling: str, depth) -> bool:
        body = owner.node.body.body if isinstance(owner.node.body, cst.IndentedBlock) else ()
        spellings = {spelling}
        for line in body:  # `self.use_cuda = use_cuda`: checking the attribute checks the name
            small = line.body[0] if isinstance(line, cst.SimpleStatementLine) else None
            if (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Name)
                    and small.value.value == spelling and dotted(small.targets[0].target)):
                spellings.add(dotted(small.targets[0].target))
        # a comparison's source is never a dotted name: it is generated only where a spelling is no such name
        compared = any(not spelled.replace(".", "").isidentifier() for spelled in spellings)

        def owns(part) -> bool:
            if compared:
                return _spelled(part) in spellings
            return not isinstance(part, cst.Comparison) and dotted(part) in spellings

        for statement in body:
            if not isinstance(statement, cst.If) or statement.orelse is not None:
                continue
            test = statement.test
            if dotted(test) in spellings and self._asserts_cuda(statement.body, owner, depth):
                return True  # `if use_cuda: assert torch.cuda.is_available()`
            if self.stops_unless_cuda(statement, owns, owner, depth):
                return True  # `if args.cuda and not torch.cuda.is_available(): raise ...`
        return False

    def stops_unless_cuda(self, statement: cst.CSTNode, owns, scope: "Scope", depth: int = 0) -> bool:
        """`if <a part `owns` names> and <parts false only off a Mac>: raise ...` (or a test's skip), with no
        else: past it, what that part tests holds only where CUDA is (`if args.cuda and not
        torch.cuda.is_available(): raise`, `if not torch.cuda.is_available() and kind == "inconsistent":
        pytest.skip()`)."""
        if type(statement) is not cst.If or statement.orelse is not None:
            return False
        test = statement.test
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)) or not exits(statement.body, self.model):
            return False
        parts = list(conjuncts(test))
        own = [part for part in parts if owns(part)]
        return bool(own) and all(self.guard(part, scope, depth + 1).when_false for part in parts if part not in own)

    def _asserts_cuda(self, suite, owner, depth) -> bool:
        """The suite's first statement asserts a CUDA query, or raises unless one holds."""
        statements = suite.body if isinstance(suite, cst.IndentedBlock) else ()
        first = statements[0] if statements else None
        if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Assert):
            return self.guard(first.body[0].test, owner, depth + 1).when_true
        if isinstance(first, cst.If) and first.orelse is None and _raises(first.body, self.model):
            return self.guard(first.test, owner, depth + 1).when_false
        return False

    def _bound_guards(self, node, scope, depth):
        """The guards of every expression a name (or self.attr, across the class's bases and
        subclasses) is bound to; [UNKNOWN] when one is unknown. A binding that happens only off a
        Mac holds both ways there (it never happens on one); a False or None binding is never true,
        so "true only off a Mac" holds for it, and a True binding the other way round. Those count
        only beside a binding that says something: `self.x = False` alone is no guard."""
        bindings = self.model.bindings_of(node, scope)
        if not bindings:
            inherited = self._inherited_constant(node, scope)
            return [inherited if inherited.known else self._inherited_guard(node, scope)]
        if len(bindings) > 1:
            bindings = self._reaching(bindings, node)
        found, informative = [], False
        for binding in bindings:
            if binding.kind == "param":
                passed = self._parametrized(binding, depth)
                passed = passed if passed is not None else self._passed(binding, depth)
                if passed is None:
                    return [UNKNOWN]
                found.extend(passed)
                informative = informative or any(guard.known for guard in passed)
                continue
            if binding.kind == "def" and _is_property(binding.node):
                returned = self._returned(binding, depth)
                if returned is None:
                    return [UNKNOWN]
                found.extend(returned)
                continue
            if binding.kind == "assign" and binding.value is None:
                unpacked = self._unpacked(binding, depth)
                if unpacked is None:
                    return [UNKNOWN]
                found.append(unpacked)
                informative = informative or unpacked.known
                continue
            if binding.kind != "assign" or binding.value is None:
                return [UNKNOWN]
            if self.binding_off_mac(binding, depth + 1):
                found.append(BOTH_OFF_MAC)
                informative = True
                continue
            if _constant_truth(binding.value) is True and self._forced(binding, depth):
                found.append(BOTH_OFF_MAC)  # `if os.getenv("FORCE_CUDA", "0") == "1": WITH_CUDA = True`
                continue
            guard = self._value_guard(_accumulated(binding), binding.context, depth)
            if not guard.known:
                guard = self._settled_off_mac(binding, bindings, depth) or self._validated_off_mac(binding, depth) or guard
            found.append(guard)
            informative = informative or (guard.known and _constant_truth(binding.value) is None)
        inherited = self._base_bound(node, scope)
        if inherited is not None:
            if not inherited.known:
                return [UNKNOWN]
            found.append(inherited)
        return found if informative or self._module_constant(node, bindings) or self._class_constant(node, scope) else [UNKNOWN]

    def _unpacked(self, binding, depth) -> Optional[Guard]:
        """`ok, _ = _support()` where every return of `_support`, a function of this file, is a tuple as long
        as the target (`return torch.cuda.is_available(), ""`): what the element at the name's place says."""
        node = binding.node
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.value) is not cst.Call \
                or type(node.value.func) is not cst.Name or depth > MAX_DEPTH:
            return None
        target = node.targets[0].target
        if type(target) not in (cst.Tuple, cst.List) or any(type(element) is not cst.Element for element in target.elements):
            return None
        index = next((at for at, element in enumerate(target.elements) if _named(element.value, binding.name)), None)
        callees = self.model.lookup(node.value.func.value, binding.context)
        if index is None or len(callees) != 1 or callees[0].kind != "def":
            return None
        inner = self.model.scopes.get(id(callees[0].node))
        if inner is None or not inner.returns:
            return None
        parts = []
        for returned, _ in inner.returns:
            if type(returned) is not cst.Tuple or len(returned.elements) != len(target.elements):
                return None
            parts.append(self.guard(returned.elements[index].value, inner, depth + 1))
        return _agree(parts)

    def _base_bound(self, node, scope) -> Optional[Guard]:
        """`self.use_gpu` that the file binds (`if torch.cuda.is_available(): self.use_gpu = True`) in a class
        whose base in another module may bind it too (`self.use_gpu = config.use_gpu`): what that binding
        says, from the project index; None where no such base binds it, or there is no index."""
        owner = self._module_class(node, scope)
        found = self.model.base_binding(owner, node.attr.value) if owner is not None else None
        return None if found is None else Guard(*found)

    def _forced(self, binding: "Binding", depth: int) -> bool:
        """A binding made only under an environment variable's opt-in (`if os.getenv("FORCE_CUDA", "0") ==
        "1": WITH_CUDA = True`, a test false where the variable is not set): the user's request for the CUDA
        path, which every host, a Mac included, runs without until someone sets it (as `_opt_in` reads the
        same test beside a CUDA query in an `or`)."""
        return any(polarity and self._opt_in(test, binding.context, depth) for test, polarity in binding.conditions)

    def _settled_off_mac(self, binding: "Binding", bindings: List["Binding"], depth: int) -> Optional[Guard]:
        """A later binding of the same name in the same function sets it to a constant wherever a Mac runs
        it with the other truth: `self.use_amp = config.use_amp`, then `if self.use_amp: if
        torch.cuda.is_available(): ... else: self.use_amp = False` (Ludwig's trainer); `use_cuda = args.cuda`,
        then `if use_cuda and not torch.cuda.is_available(): use_cuda = False`; or the other way round,
        `use_cpu = args.use_cpu`, then `if not use_cpu and not torch.cuda.is_available(): use_cpu = True`.
        Each condition of that binding is made of the flag's own other truth and tests a Mac passes; after
        it, the flag keeps the truth it had only off a Mac (TRUE_OFF_MAC where it was set False or None,
        FALSE_OFF_MAC where it was set True)."""
        flag = source_of(binding.node.targets[0].target) if isinstance(binding.node, cst.Assign) and binding.node.targets else None
        for other in bindings:
            if (other is binding or other.kind != "assign" or other.scope is not binding.scope or not other.conditions
                    or not isinstance(other.value, cst.Name)):
                continue
            truth = _constant_truth(other.value)
            if truth is None:
                continue
            if all(self._taken_on_mac(test, polarity, flag, not truth, other.context, depth) for test, polarity in other.conditions) \
                    and comes_after(binding.scope.node, binding.node, other.node):
                return FALSE_OFF_MAC if truth else TRUE_OFF_MAC
        return None

    def _validated_off_mac(self, binding: "Binding", depth: int) -> Optional[Guard]:
        """The statements right after the binding stop a Mac wherever the flag is true: `self.use_gpu =
        use_gpu`, then `assert not self.use_gpu or torch.cuda.is_available()`, or `if use_cuda and not
        torch.cuda.is_available(): raise ...` (the flag written as the target or as the name bound to it).
        Past them the flag is true only off a Mac."""
        node = binding.node
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            return None
        flags = {source_of(node.targets[0].target)}
        if isinstance(node.value, (cst.Name, cst.Attribute)):
            flags.add(source_of(node.value))
        path = binding.scope.path_to(node)
        if not path or len(path) < 3 or not isinstance(path[-2], cst.SimpleStatementLine) or not isinstance(path[-3], (cst.IndentedBlock, cst.Module)):
            return None
        statements = list(path[-3].body)
        at = next((index for index, statement in enumerate(statements) if statement is path[-2]), None)
        for statement in statements[at + 1:at + 1 + VALIDATION_REACH] if at is not None else ():
            if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assert):
                test, polarity = statement.body[0].test, False  # it fails where the test is false
            elif isinstance(statement, cst.If) and statement.orelse is None and _raises(statement.body, self.model):
                test, polarity = statement.test, True
            else:
                continue
            if any(self._taken_on_mac(test, polarity, flag, True, binding.context, depth) for flag in flags):
                return TRUE_OFF_MAC
        return None

    def _taken_on_mac(self, test, polarity: bool, flag: Optional[str], before: bool, scope: "Scope", depth: int) -> bool:
        """A Mac goes this way at the test whenever the flag held `before`: each part the branch needs (a
        conjunct of a test taken true, a disjunct of one taken false) is the flag's own truth `before`, or a
        test a Mac passes that way."""
        if not isinstance(test, cst.BaseExpression) or depth > MAX_DEPTH:
            return False
        parts = conjuncts(test) if polarity else disjuncts(test)
        return all(self._part_taken_on_mac(part, polarity, flag, before, scope, depth) for part in parts)

    def _part_taken_on_mac(self, part, polarity: bool, flag: Optional[str], before: bool, scope: "Scope", depth: int) -> bool:
        negated = type(part) is cst.UnaryOperation and type(part.operator) is cst.Not
        if flag is not None and source_of(part.expression if negated else part) == flag:
            return (polarity != negated) == before
        guard = self.guard(part, scope, depth + 1)
        return guard.when_false if polarity else guard.when_true

    def _reaching(self, bindings: List["Binding"], node: cst.CSTNode) -> List["Binding"]:
        """The bindings of a name read in an `if` test that can reach the test: one made under that very
        test (in its body or else, or after it returned early) comes after it. `world_size =
        torch.cuda.device_count()`, then `if world_size > 1:` that binds `world_size = get_world_size()`."""
        found = [binding for binding in bindings if not any(id(node) in self._test_nodes(test) for test, _ in binding.conditions)]
        return self.straight_line(found or bindings, node)

    def straight_line(self, bindings: List["Binding"], node: cst.CSTNode) -> List["Binding"]:
        """The bindings of a name, read at `node`, that can reach the read, where the read and they are
        statements of one function's body (or of the module's): an assignment statement before the read
        hides the bindings before it (`use_cuda = use_cuda and torch.cuda.is_available()` after the
        parameter), and a binding in a later statement, or by the assignment whose value holds the read
        (`HAS_TRITON = HAS_TRITON and ...`), comes after it. A read or a binding inside a nested function
        runs at another time: such a read is only hidden from, such a binding always kept."""
        scope = bindings[0].scope if bindings else None
        if len(bindings) < 2 or any(binding.scope is not scope for binding in bindings):
            return bindings
        if scope.kind == "function" and isinstance(scope.node, cst.FunctionDef) and isinstance(scope.node.body, cst.IndentedBlock):
            statements, depth = scope.node.body.body, 2  # FunctionDef -> IndentedBlock -> statement
        elif scope.kind == "module" and isinstance(scope.node, cst.Module) and not self._globals_rewritten():
            statements, depth = scope.node.body, 1  # Module -> statement
        else:
            return bindings
        read = self._place(scope, node, statements, depth)
        if read is None:
            return bindings  # the read is not in the body (a default, a decorator)
        read_at, read_small, read_later = read
        assigns = {id(binding.node) for binding in bindings if binding.kind == "assign"}
        hidden = None  # the bindings in statements before this index are hidden
        for index in range(read_at):  # in order, up to the read
            statement = statements[index]
            if isinstance(statement, cst.SimpleStatementLine) and any(id(small) in assigns for small in statement.body):
                hidden = index
            elif isinstance(statement, cst.If) and statement.orelse is None and type(statement.test) is cst.Name \
                    and statement.test.value == bindings[0].name and _rebinds(statement.body, assigns):
                # `if use_cupy: try: use_cupy = cp.cuda.is_available() / except ImportError: use_cupy = False`:
                # what was bound before reaches past it only where it was false, which never makes it true
                hidden = index
        kept = []
        for binding in bindings:
            if binding.kind == "param":
                if hidden is None:
                    kept.append(binding)
                continue
            place = self._place(scope, binding.node, statements, depth)
            if place is None or place[2]:
                kept.append(binding)  # not a statement of the body, or bound inside a function it defines
                continue
            at, small = place[0], place[1]
            if not read_later and (at > read_at or (at == read_at and binding.kind == "assign" and small is not None
                                                    and read_small is not None and small >= read_small)):
                continue  # bound after the read
            if hidden is None or at >= hidden:
                kept.append(binding)
        return kept or bindings

    def _place(self, scope: "Scope", node: cst.CSTNode, statements, depth: int):
        """_place, worked out once per node and scope (a binding's place serves every read of its name)."""
        key = (id(node), id(scope))
        if key not in self.places:
            self.places[key] = _place(scope, node, statements, depth)
        return self.places[key]

    def _test_nodes(self, test: cst.CSTNode) -> FrozenSet[int]:
        """The ids of the nodes of a condition's test (none for a condition that is a statement: an import
        that must succeed), worked out once per test."""
        found = self.test_nodes.get(id(test))
        if found is None:
            ids = []
            pending = [test] if isinstance(test, cst.BaseExpression) else []
            while pending:
                current = pending.pop()
                ids.append(id(current))
                pending.extend(code_children(current))
            self.test_nodes[id(test)] = found = frozenset(ids)
        return found

    def _module_constant(self, node, bindings) -> bool:
        """`DEBUG = False` once at module level, never rebound (no `global` assignment elsewhere in the
        file): `if DEBUG:` never runs, on a Mac or anywhere."""
        if not isinstance(node, cst.Name) or len(bindings) != 1:
            return False
        binding = bindings[0]
        return (binding.kind == "assign" and binding.scope is self.model.module_scope and not binding.conditions
                and _constant_truth(binding.value) is not None)

    def _inherited_constant(self, node, scope) -> Guard:
        """`self.cuda` in a test class whose file binds no `cuda`: a constant a base of another module
        binds, that no class derived from this one binds again (the project index's class facts)."""
        owner = self._test_class(node, scope)
        if owner is None:
            return UNKNOWN
        truth = self.model.project.class_constant(f"{self.model.module_name}.{owner.node.name.value}", node.attr.value)
        return UNKNOWN if truth is None else Guard(not truth, truth)

    def _inherited_guard(self, node, scope) -> Guard:
        """`self.use_gpu` in a method of a class whose file binds no `use_gpu`: the guard a base of another
        module binds it to in its methods (`self.use_gpu = torch.cuda.is_available() and use_gpu`; the
        project index's class facts)."""
        owner = self._module_class(node, scope)
        if owner is None:
            return UNKNOWN
        found = self.model.project.class_guard(f"{self.model.module_name}.{owner.node.name.value}", node.attr.value)
        return UNKNOWN if found is None else Guard(*found)

    def _module_class(self, node, scope) -> Optional["Scope"]:
        """The module-level class whose method reads `node` as `self.<flag>`, when the run has a project
        index (which names the class)."""
        if self.model.project is None or not self.model.module_name or not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name):
            return None
        owner = self.model.self_class(node.value.value, scope)
        return owner if owner is not None and owner.parent is self.model.module_scope else None

    def _test_class(self, node, scope) -> Optional["Scope"]:
        """The module-level class of a test module whose method reads `node` as `self.<flag>`."""
        owner = self._module_class(node, scope)
        return owner if owner is not None and self.model.in_tests else None

    def _class_constant(self, node, scope) -> bool:
        """`self.cuda` where each binding the file's classes make is a constant (`cuda = False`, a
        property returning False) and no class of another module derived from them binds the name (the
        project index's class facts): as with a module constant, the test never runs (or always does),
        on a Mac or anywhere. Without the index a subclass elsewhere may say otherwise. Only in test
        code, where the test runner makes the instances: a library's users may set the flag on theirs."""
        owner = self._test_class(node, scope)
        if owner is None:
            return False
        project, module = self.model.project, self.model.module_name
        for klass in self.model.class_attributes.related(owner):
            if klass.parent is not self.model.module_scope:
                return False  # a class inside a function or class: the index does not name it
            if project.subclass_binds(f"{module}.{klass.node.name.value}", node.attr.value):
                return False
        return True

    def _value_guard(self, value: cst.BaseExpression, scope: "Scope", depth: int) -> Guard:
        """What holding `value` says: a constant is never true (or never false) anywhere, so it agrees
        with either answer; anything else guards as it would as a test."""
        return _constant_guard(value) or literal_guard(value) or self.guard(value, scope, depth + 1)

    def _parametrized(self, binding: "Binding", depth: int) -> Optional[List[Guard]]:
        """A test's parameter that `@pytest.mark.parametrize` hands its values (semantic/parametrize.py):
        each value's guard, and both ways for a case taken only off a Mac (`pytest.param(True,
        marks=pytest.mark.skipif(not torch.cuda.is_available(), ...))`); None without such a decorator."""
        function = binding.scope.node
        if not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param):
            return None
        cases = parametrized(self.model, function, binding.name, binding.context)
        if cases is None:
            return None
        return [BOTH_OFF_MAC if off_mac else self._value_guard(case, where, depth) for case, where, off_mac in cases]

    def _passed(self, binding: "Binding", depth: int) -> Optional[List[Guard]]:
        """A parameter's guards from the calls of its function in the file (call_sites): its default,
        and what each call passes, which holds both ways where the call itself runs only off a Mac;
        None when a caller may be out of sight."""
        passed = self.model.call_sites.in_sight(binding)
        if passed is None:
            return self._passed_elsewhere(binding, depth)
        if any(argument is None for argument in passed):
            return None
        found = [] if binding.value is None else [self._value_guard(binding.value, binding.context, depth)]
        for value, where, tests in passed:
            if self.conditions_off_mac(tests, where, depth):
                found.append(BOTH_OFF_MAC)
            elif value is not None:
                found.append(self._value_guard(value, where, depth))
            elif binding.value is None:
                return None
        return found

    def _passed_elsewhere(self, binding: "Binding", depth: int) -> Optional[List[Guard]]:
        """A test helper's parameter that only classes of other modules pass (call_sites.elsewhere): its
        default, and each call's constant or flag of the calling class that the project index knows to
        be one."""
        passed = self.model.call_sites.elsewhere(binding)
        if passed is None or (binding.value is None and None in (summary for _, summary in passed)):
            return None
        found = [] if binding.value is None else [self._value_guard(binding.value, binding.context, depth)]
        for caller, summary in passed:
            if summary is None:
                continue  # the default, counted above
            kind, *data = summary
            truth = data[0] if kind == "c" else self.model.project.class_constant(caller, data[0]) if kind == "a" else None
            if truth is None:
                return None
            found.append(Guard(not truth, truth))
        return found

    def _returned(self, binding: "Binding", depth: int) -> Optional[List[Guard]]:
        """`@property def cuda(self): return False`: what reading the property gives, when every return
        is a constant."""
        scope = self.model.scopes.get(id(binding.node))
        if scope is None or not scope.returns:
            return None
        found = [_constant_guard(value) for value, _ in scope.returns]
        return None if None in found else found

    def _comparison(self, test: cst.Comparison, scope, depth) -> Guard:
        if len(test.comparisons) != 1:
            return UNKNOWN
        at_target = torch_version_test.decided(self.model, test, scope)
        if at_target is not None:  # `torch.__version__ < "1.10"`: one value at the target release
            return Guard(False, True) if at_target else TRUE_OFF_MAC
        target = test.comparisons[0]
        op, left, right = target.operator, test.left, target.comparator
        positive = isinstance(op, (cst.Equal, cst.Is, cst.In))
        negative = isinstance(op, (cst.NotEqual, cst.IsNot, cst.NotIn))
        if isinstance(op, (cst.Equal, cst.NotEqual)):
            for side, other in ((left, right), (right, left)):
                if type(side) is cst.Attribute and side.attr.value == "__name__" and self._names_cuda_library(other):
                    # `xp.__name__ == "cupy"`: a module (or type) of that name exists only where the library runs
                    return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
        for atom, other in ((left, right), (right, left)):  # `torch.cuda.is_available() is False`: the query itself
            if (positive or negative) and not isinstance(op, (cst.In, cst.NotIn)) and type(other) is cst.Name \
                    and other.value in ("True", "False"):
                inner = self.guard(atom, scope, depth + 1)
                return inner if positive == (other.value == "True") else inner.negated()
        if isinstance(op, (cst.Is, cst.IsNot)):
            for atom, other in ((left, right), (right, left)):
                if is_none(other) and self._never_none(atom, scope, depth):
                    # `if args.device is None:` of an option whose default is "cpu": never true, anywhere
                    return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
        # A query or flag compared with a count or None: device_count() > 0, torch.version.hip is not None
        for atom, other in ((left, right), (right, left)):
            inner = self.guard(atom, scope, depth + 1)
            if isinstance(other, cst.Integer) and (id(atom), id(scope)) in self.none_on_mac:
                continue  # None on a Mac: `x == 0` is false there, `x > 0` raises; neither says CUDA
            if inner.known and _is_quantity(other):
                return _counted(inner, op, other, atom is left)
            if inner.known and type(atom) is cst.Call and self._device_index(other, scope, depth) and isinstance(
                    op, cst.GreaterThan if atom is left else cst.LessThan):
                return inner  # device_count() > local_rank: a device index exists only where the count is positive
        if self._is_platform(left, scope, depth) and (positive or negative):
            found = self._platform_equals(string_value(right), depth)
            return found if positive else found.negated()
        if isinstance(op, (cst.In, cst.NotIn)):
            cuda = self._all_cuda(left, scope, depth) or self._container_all_cuda(right, scope, depth)
            if cuda:
                return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
            if isinstance(right, (cst.Tuple, cst.List, cst.Set)) and self.facts.mac_device_types <= set(string_elements(right)):  # device.type in {"cpu", "mps"}: false only off a Mac
                return TRUE_OFF_MAC.negated() if positive else TRUE_OFF_MAC
            if self._names_cuda_library(left):  # `"cuml" in str(type(model))`: an object only that library makes
                return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
            if names_cuda_oom(string_value(left)):  # `"CUDA out of memory" in str(e)`: an error only CUDA raises
                return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()  # (MPS: "MPS backend out of memory")
            return UNKNOWN
        if (positive or negative) and not isinstance(op, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) and type(left) is cst.Tuple \
                and type(right) is cst.Tuple and len(left.elements) == len(right.elements):
            # `(self.backend, self.device) == ("pytorch", "cuda")`: each pair equal, an `and` of them
            parts = [self._pair(a.value, b.value, scope, depth) for a, b in zip(left.elements, right.elements)]
            found = Guard(any(part.when_true for part in parts), all(part.when_false for part in parts))
            return found if positive else found.negated()
        picked = self.model.device_switches.index_when(test, scope)
        if picked is not None:  # `if cuda_device >= 0:` of an int device option whose default is -1
            return TRUE_OFF_MAC if picked else TRUE_OFF_MAC.negated()
        if positive or negative:
            if not isinstance(op, (cst.In, cst.NotIn)) and (string_value(left) in self.facts.mac_backends
                                                            or string_value(right) in self.facts.mac_backends):
                return TRUE_OFF_MAC.negated() if positive else TRUE_OFF_MAC  # not gloo: a backend no Mac has
            for side in (left, right):
                if _cuda_member(side, self.facts):
                    return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
                if self._all_cuda(side, scope, depth):
                    return TRUE_OFF_MAC if positive else TRUE_OFF_MAC.negated()
            for side, other in ((left, right), (right, left)):
                if string_value(other) == "cpu" and self._cuda_or_cpu(side, scope, depth):
                    return TRUE_OFF_MAC.negated() if positive else TRUE_OFF_MAC  # `self.device != "cpu"`
            if isinstance(op, (cst.Equal, cst.NotEqual)):
                for side, other in ((left, right), (right, left)):
                    equal = self._constant_equal(side, string_value(other), scope)
                    if equal is not None:  # `device_id != "cpu"` after `device_id = "cpu"`: decided as written
                        return TRUE_OFF_MAC.negated() if equal == positive else TRUE_OFF_MAC
                for side, other in ((left, right), (right, left)):
                    equal = self._equal_on_a_mac(side, string_value(other), scope, depth)
                    if equal is not None:
                        return TRUE_OFF_MAC.negated() if equal == positive else TRUE_OFF_MAC
        return UNKNOWN

    def _equal_on_a_mac(self, side, text: Optional[str], scope, depth: int) -> Optional[bool]:
        """Whether a name (or attribute) equals `text` on every Mac (True) or on none (False), where some of its
        values are taken only off a Mac and the others are written strings that all agree: `kind = "amgx" if
        device.type == "cuda" else "torch"` (or what a function of the file returns only under such a test)
        makes `kind == "amgx"` true only off a Mac; `device = "cpu" if not use_cuda else device` makes
        `device == "cpu"` false only off a Mac, whatever the caller's device is. None where it cannot tell."""
        if text is None or type(side) not in (cst.Name, cst.Attribute) or depth > MAX_DEPTH:
            return None
        if type(side) is cst.Attribute and side.attr.value == "type":  # `device.type == "cpu"`: the devices' types
            values = tuple(replace(value, data=value.data.partition(":")[0]) if value.kind == "str" else value
                           for value in self.model.values(side.value, scope, depth + 1))
        else:
            values = self.model.values(side, scope, depth + 1)
        if len(values) >= MAX_VALUES:
            return None
        on_mac = [value for value in values if not value.off_mac]
        if not on_mac or len(on_mac) == len(values) or any(value.kind != "str" for value in on_mac):
            return None
        answers = {value.data == text for value in on_mac}
        return answers.pop() if len(answers) == 1 else None

    def _never_none(self, node: cst.BaseExpression, scope, depth) -> bool:
        """Every value the expression can hold is a constant that is not None, or what the command line gives
        an option that takes a value (values.COMMAND_LINE): a test that it is None never holds."""
        if type(node) not in (cst.Name, cst.Attribute):
            return False
        values = self.model.values(node, scope, depth + 1)
        return bool(values) and len(values) < MAX_VALUES and all(
            value.kind in NOT_NONE or (value.kind == UNKNOWN_KIND and value.data is COMMAND_LINE) for value in values)

    def _constant_equal(self, side, text: Optional[str], scope) -> Optional[bool]:
        """Whether a name every binding of which assigns a written string equals `text` (the same answer for
        all of them), else None. A test decided as written is the same on every host: never true is never
        true on a Mac (TRUE_OFF_MAC holds of it), always true is never false there. Only the bindings are
        read (no values of other names, no guards of their own): a test asked of every comparison."""
        if text is None or type(side) is not cst.Name:
            return None
        bindings = self.model.lookup(side.value, scope)
        if not bindings or any(binding.kind != "assign" for binding in bindings):
            return None
        if any(binding.scope is self.model.module_scope for binding in bindings) and self._globals_rewritten():
            return None  # nanoGPT's `exec(open("configurator.py").read())`: the command line rebinds globals
        written = [string_value(binding.value) if binding.value is not None else None for binding in bindings]
        if None in written:
            return None
        answers = {value == text for value in written}
        return answers.pop() if len(answers) == 1 else None

    def _globals_rewritten(self) -> bool:
        """A top-level statement of the module runs code that may rebind its globals: `exec(...)`,
        `eval(...)`, `globals()` (read once per file)."""
        found = self._rewrites_globals
        if found is None:
            found = self._rewrites_globals = any(
                _calls_named(statement, GLOBALS_WRITERS)
                for statement in self.model.module_scope.node.body if isinstance(statement, cst.SimpleStatementLine))
        return found

    def _names_cuda_library(self, node) -> bool:
        """A string that is the name of a library that never imports on a Mac (cuda_imports.cuda_libraries:
        cuml, cupy, torch_xla): tested for in a type's or module's name, in `sys.modules`, in a chosen
        backend's name, it is found only where that library runs."""
        text = string_value(node)
        if not text or not text.isidentifier():
            return False
        from cudalint.python.semantic.cuda_imports import cuda_libraries

        return text in {library.partition(".")[0] for library in cuda_libraries(self.model)}

    def _cuda_library_types(self, node, scope) -> bool:
        """The class argument of an isinstance test names only types of libraries that never import on a Mac
        (`cupy.ndarray`, `cufinufft.Plan` imported under a guard): a type, or a tuple of them."""
        from cudalint.python.semantic.cuda_imports import cuda_libraries

        parts = [element.value for element in node.elements] if type(node) is cst.Tuple else [node]
        libraries = cuda_libraries(self.model)
        for part in parts:
            qualified = self.model.resolve(part, scope)
            if qualified is None or not any(qualified == library or qualified.startswith(library + ".") for library in libraries):
                return False
        return bool(parts)

    def _pair(self, left, right, scope, depth) -> Guard:
        """What `left == right` says of the host, for one pair of a tuple comparison: true only off a
        Mac where either side is always a CUDA device (or an enum member named for CUDA)."""
        for side in (left, right):
            if _cuda_member(side, self.facts) or self._all_cuda(side, scope, depth):
                return TRUE_OFF_MAC
        return UNKNOWN

    def _device_index(self, node, scope, depth) -> bool:
        """A variable compared with a device count as an index (`torch.cuda.device_count() > local_rank`):
        on a Mac the count is 0, so the test holds only for a negative index, which no device has. A
        name the file binds to a negative number (`rank = -1`, a "no device" sentinel) is not read so."""
        if type(node) not in (cst.Name, cst.Attribute, cst.Subscript):
            return False
        return not any(negative_literal(value.origin) for value in self.model.values(node, scope, depth + 1))

    def _all_cuda(self, node, scope, depth) -> bool:
        if isinstance(node, cst.Call) and node.args and self.model.resolve(node.func, scope) == "torch.device":
            return self._all_cuda(node.args[0].value, scope, depth)  # `torch.device("cuda")`
        if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Name, cst.Attribute)):
            return False
        values = self.model.values(node, scope, depth + 1)
        return bool(values) and all(
            (v.kind in ("str", "prefix") and self.facts.names_off_mac_device(v.text))
            or (v.kind == "ref" and v.data in self.facts.off_mac_backend_members) for v in values)

    def _cuda_or_cpu(self, node, scope, depth) -> bool:
        """Every value a name can hold is a device no Mac has or "cpu", and one is not "cpu"
        (`self.device = "cuda" if kokkos else "cpu"`): where it is not "cpu", the host is no Mac."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        values = self.model.values(node, scope, depth + 1)
        if any(v.kind != "str" for v in values):
            return False
        others = [v.text for v in values if v.text != "cpu"]
        return len(others) < len(values) and bool(others) and all(self.facts.names_off_mac_device(text) for text in others)

    def _container_all_cuda(self, node, scope, depth) -> bool:
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)) and node.elements:
            return all(self._all_cuda(element.value, scope, depth) for element in node.elements)
        return False

    def tests_platform(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """Some part of the test is the platform (`sys.platform == "darwin"`, `platform.system() != "Linux"`):
        what it decides for a Mac, it decides knowingly."""
        pending = [test]
        while pending:
            node = pending.pop()
            if type(node) in (cst.Name, cst.Attribute, cst.Call) and self._is_platform(node, scope, 0):
                return True
            pending.extend(code_children(node))
        return False

    def _is_platform(self, node, scope, depth) -> bool:
        """`sys.platform`, `platform.system()`, their text in another case (`.lower()`), or a name every
        binding of which is one of those (`SYSTEM = platform.system()`)."""
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args \
                and node.func.attr.value in TEXT_METHODS:
            node = node.func.value
        target = node.func if isinstance(node, cst.Call) else node
        if self.model.resolve(target, scope) in self.facts.platforms:
            return True
        if isinstance(node, cst.Name) and depth < MAX_DEPTH and any(
                self.model.imports_under(platform.partition(".")[0]) for platform in self.facts.platforms):
            bound = self.model.assigned(node, scope)
            return bool(bound) and all(self._is_platform(value, where, depth + 1) for value, where in bound)
        return False

    def _platform_equals(self, text, depth) -> Guard:
        """`sys.platform == text`: true off a Mac when text is another platform; false off a Mac when it is macOS."""
        if not isinstance(text, str) or not text:
            return UNKNOWN
        if any(text.lower().startswith(mac) for mac in self.facts.mac_platforms):
            return Guard(False, True)
        return TRUE_OFF_MAC


def _accumulated(binding: "Binding") -> cst.BaseExpression:
    """What an accumulating binding adds (`on_cuda = on_cuda or t.is_cuda`: `t.is_cuda`): the name's earlier
    values are its other bindings, so its guard is theirs and this operand's together."""
    value = binding.value
    if type(value) is cst.BooleanOperation and type(value.operator) is cst.Or:
        for own, other in ((value.left, value.right), (value.right, value.left)):
            if type(own) is cst.Name and own.value == binding.name:
                return other
    return value


def _cuda_member(node, facts: GuardFacts) -> bool:
    """`RNGType.CUDA`, `Device.cuda`: an enum member named for CUDA (GuardFacts.names_cuda_member)."""
    if not isinstance(node, cst.Attribute):
        return False
    owner = node.value.value if isinstance(node.value, cst.Name) else node.value.attr.value if isinstance(
        node.value, cst.Attribute) else None
    return facts.names_cuda_member(owner, node.attr.value)


# Builtins whose result is truthy exactly when their one argument is: bool(x), len(x), list(range(n)); int(x) of
# the booleans and counts guards are made of (`int(torch.cuda.is_available())`, an option's default).
SAME_TRUTH = frozenset({"bool", "len", "list", "tuple", "set", "frozenset", "sorted", "int"})
COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp, cst.SetComp)


def _raises(suite: cst.BaseSuite, model) -> bool:
    from cudalint.python.visitor import ends_flow  # the walk's own rule (the walk imports the model)

    return ends_flow(suite, model) == "raise"


def _agree(guards: Iterable[Guard]) -> Guard:
    """Several bindings or returns: only what all of them say holds."""
    guards = list(guards)
    if not guards:
        return UNKNOWN
    return Guard(all(g.when_true for g in guards), all(g.when_false for g in guards))


def _range_stop(node) -> Optional[cst.BaseExpression]:
    """The stop of `range(stop)`, `range(start, stop[, step])` with a literal start >= 0 and step > 0."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"):
        return None
    args = node.args
    if not 1 <= len(args) <= 3 or any(arg.keyword is not None or arg.star for arg in args):
        return None
    if len(args) == 1:
        return args[0].value
    start = int_literal(args[0].value)
    step = int_literal(args[2].value) if len(args) == 3 else 1
    return args[1].value if start is not None and start >= 0 and step is not None and step > 0 else None


def _spelled(node: cst.CSTNode) -> Optional[str]:
    """How a switch is written: `args.cuda`, or a comparison's source (`kind == "inconsistent"`)."""
    if isinstance(node, cst.Comparison):
        return source_of(node)
    return dotted(node)


def exits(suite: cst.BaseSuite, model) -> bool:
    """The suite ends by raising, exiting or skipping the test."""
    from cudalint.python.visitor import ends_flow

    return ends_flow(suite, model) in ("raise", "skip")


def _rebinds(block: cst.BaseSuite, assigns: Set[int]) -> bool:
    """Every way through the block makes one of the assignments: one of its statements does, or a `try:`
    whose body and every handler do."""
    if not isinstance(block, cst.IndentedBlock):
        return False
    for statement in block.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(id(small) in assigns for small in statement.body):
            return True
        if isinstance(statement, cst.Try) and statement.handlers and _rebinds(statement.body, assigns) and all(
                _rebinds(handler.body, assigns) for handler in statement.handlers):
            return True
    return False


def _may_return(statement: cst.CSTNode) -> bool:
    """A `return` or `yield` anywhere in a statement (not in the functions, classes and lambdas it defines)."""
    stack = [statement]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Return or kind is cst.Yield:
            return True
        if node is not statement and (kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda):
            continue
        stack.extend(code_children(node))
    return False


def _named(node, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


DEFERRED = (cst.FunctionDef, cst.Lambda)  # what they hold runs when called, not where they stand


def _place(scope: "Scope", node: cst.CSTNode, statements, depth: int):
    """Where a node lies among the statements of a function's (or the module's) own body: (the index of the
    statement that holds it, the index of its small statement in a simple statement line or None, whether
    it lies inside a function or lambda defined there); None when no statement holds it."""
    path = scope.path_to(node)
    if path is None or len(path) <= depth:
        return None
    top = path[depth]
    at = next((index for index, statement in enumerate(statements) if statement is top), None)
    if at is None:
        return None
    small = None
    if type(top) is cst.SimpleStatementLine and len(path) > depth + 1:
        inner = path[depth + 1]
        small = next((index for index, part in enumerate(top.body) if part is inner), None)
    return at, small, any(isinstance(step, DEFERRED) for step in path[depth:-1])


def _is_property(function: cst.CSTNode) -> bool:
    return isinstance(function, cst.FunctionDef) and any(
        isinstance(decorator.decorator, cst.Name) and decorator.decorator.value == "property" for decorator in function.decorators)


def _constant_guard(node) -> Optional[Guard]:
    """What holding a True/False/None constant says: it is never true (or never false) anywhere."""
    truth = _constant_truth(node)
    return None if truth is None else Guard(not truth, truth)


def literal_guard(node) -> Optional[Guard]:
    """What a test written as True, False or an integer says (`if False:`, `if 0:`, `while True:`): the way it
    never goes never runs."""
    if type(node) is cst.Integer:
        truth = int_literal(node)
        return None if truth is None else Guard(not truth, bool(truth))
    if type(node) is cst.Name and node.value in ("True", "False"):
        return _constant_guard(node)
    return None


def _chosen(condition: Guard, body: Guard, orelse: Guard) -> Guard:
    """The guard of `BODY if CONDITION else ORELSE`: true only off a Mac when each way it can be true
    (CONDITION and BODY, not CONDITION and ORELSE) is, and likewise false."""
    return Guard(
        (condition.when_true or body.when_true) and (condition.when_false or orelse.when_true),
        (condition.when_true or body.when_false) and (condition.when_false or orelse.when_false),
    )


def _constant_truth(node) -> Optional[bool]:
    """True, False or None written as such: its truth value; None for anything else."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return node.value == "True"
    return None


def _is_quantity(node) -> bool:
    return isinstance(node, cst.Integer) or (isinstance(node, cst.Name) and node.value == "None")


CST_OPERATORS = {cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
                 cst.GreaterThanEqual: ">=", cst.Is: "is", cst.IsNot: "is not"}


def _counted(inner: Guard, op, other, atom_left: bool) -> Guard:
    """A query compared with a number or None (count_tests.count_meaning): kept, turned round, or unknown."""
    number = None if isinstance(other, cst.Name) else int(other.value.replace("_", ""), 0)
    meaning = count_meaning(CST_OPERATORS.get(type(op), ""), number, atom_left)
    return UNKNOWN if meaning is None else inner if meaning else inner.negated()


def _calls_named(node: cst.CSTNode, names: FrozenSet[str]) -> bool:
    """The code calls a bare name among `names` (`exec(...)`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call and type(current.func) is cst.Name and current.func.value in names:
            return True
        stack.extend(current.children)
    return False
