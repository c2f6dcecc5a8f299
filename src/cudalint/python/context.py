"""Per-file state shared by the checks during the single pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from cudalint.catalog import Rule
from cudalint.python.cpu_arms import in_cpu_arm
from cudalint.python.fixplan import FixPlan
from cudalint.python.children import code_children, unused_default
from cudalint.python.names import conjuncts, dotted, int_literal, string_value
from cudalint.python.optional_facts import optional_facts, squeezed
from cudalint.python.semantic import SemanticModel

# A related location: the node and what it is ("the device argument it reaches").
Related = Tuple[cst.CSTNode, str]


@dataclass
class Hit:
    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[FixPlan] = None
    related: Tuple[Related, ...] = ()


class FileContext:
    def __init__(self, rules: Dict[str, Rule], torch_version: Tuple[int, ...], model: SemanticModel, path: str = ""):
        self.path = path
        self.rules = rules
        self.torch_version = torch_version
        self.model = model
        self.stack: List[cst.CSTNode] = []
        self.hits: List[Hit] = []
        self.handled: Set[int] = set()  # nodes already judged (reported, or part of a judged idiom)
        self.reported: Dict[int, Hit] = {}
        # Depth counters maintained by the visitor.
        self.guard_depth = 0  # inside code that never runs on a Mac (the guard evaluator says so)
        # The branches around the current node whose guard is not worked out yet: (test, the scope it is
        # read in, the test's value that runs the branch). A branch is judged only when something in it
        # would be reported (`guarded`): most branches hold nothing to report.
        self.branches: List[Tuple[cst.BaseExpression, object, bool]] = []
        # Names and attributes the code before set to a false constant under a test (the visitor's
        # `if` statements): (what was set, or None once bound again, the test, its scope); `false_on_mac`
        # judges them when asked.
        self.forced_off: List[Tuple[Optional[cst.BaseExpression], cst.BaseExpression, object]] = []
        self.fallback_depth = 0  # of those, the bodies of a `try:` whose handler falls back
        self.test_depth = 0  # inside the test of an if/while/ternary
        # Per optional scope open around the node (a `try:` whose handler catches ImportError, an availability
        # test's branch, dead code), the libraries its test asks for (`if find_spec("xformers"):`), () where any
        # import there runs only where it succeeds.
        self.optional_libraries: List[Tuple[str, ...]] = []
        self.import_depth = 0  # inside an import statement
        self.type_depth = 0  # inside a type expression (an annotation, a typing generic's parameters, a type alias)
        self.silenced: Tuple[str, ...] = ()  # codes (or prefixes) not reported here: inside an override of the user's call
        self.check_state: Dict[str, object] = {}  # per-file state of a custom check, keyed by its name

    @property
    def optional_import_depth(self) -> int:
        """How many optional scopes are open around the node."""
        return len(self.optional_libraries)

    def optional_import(self, module: str) -> bool:
        """An import of `module` here runs only where it succeeds: an optional scope around it allows any
        import, or asks for the library `module` lies under (each of its alternatives: `if a or b:` runs
        where either imports). Under `if find_spec("torch"):` an import of flash_attn still runs on a Mac,
        where torch imports and flash_attn does not. A library is named as its test names it: a module, a
        distribution (`_is_distribution_installed("liger-kernel")` for liger_kernel) or a helper's name
        (`is_auto_awq_available()` for autoawq's module awq), so the module's name, case, `-` and `_` aside,
        need only lie within it."""
        top = squeezed(module.split(".")[0])
        return any(all(top in squeezed(library) for library in libraries) for libraries in self.optional_libraries)

    def _never_raises(self, node: cst.CSTNode) -> bool:
        """An API that does nothing without CUDA instead of raising (`torch.cuda.set_rng_state_all` is queued
        until CUDA initializes; `torch.autocast("cuda")` warns and casts nothing), or a CUDA argument of one, reached on a Mac inside a `try:` that falls back: the handler never runs
        for it, so the try guards it only when an earlier statement of its body already raised there."""
        target = node.func if isinstance(node, cst.Call) else node
        if isinstance(node, (cst.Arg, cst.BaseString)):  # `torch.autocast("cuda")`: an argument of a call that never raises
            call = next((call for call in reversed(self.stack) if isinstance(call, cst.Call)), None)
            target = call.func if call is not None and any(arg is node or arg.value is node for arg in call.args) else None
        if not isinstance(target, (cst.Name, cst.Attribute)) or self.model.resolve(target) not in optional_facts().never_raise:
            return False
        stack = self.stack
        for depth in range(len(stack) - 1, 1, -1):
            if isinstance(stack[depth - 2], cst.Try) and stack[depth - 1] is stack[depth - 2].body:
                before = stack[depth - 1].body[: stack[depth - 1].body.index(stack[depth])]
                return not any(self._raises_off_cuda(statement) for statement in before)
        return False

    def _raises_off_cuda(self, statement: cst.CSTNode) -> bool:
        """The statement calls a torch.cuda API that raises without CUDA (`torch.cuda.synchronize()`)."""
        never = optional_facts().never_raise
        nodes = [statement]
        while nodes:
            node = nodes.pop()
            if isinstance(node, cst.Call):
                qualified = self.model.resolve(node.func)
                if qualified is not None and qualified.startswith("torch.cuda.") and qualified not in never:
                    return True
            if not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                nodes.extend(code_children(node))
        return False

    @property
    def imports(self) -> SemanticModel:
        """Name resolution in the current scope (the semantic model)."""
        return self.model

    @property
    def scope_key(self) -> int:
        return id(self.model.scope)

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        return self.stack[-2] if len(self.stack) >= 2 else None

    def compared(self, depth: int) -> bool:
        """The node at `stack[depth]` is a value to compare with, alone or in a tuple, list or set
        (`ProfilerActivity.CUDA in activities`, `d == torch.device("cuda")`): a test of what the code
        has, which makes nothing."""
        _, holder = self._unwrapped(depth, (cst.Tuple, cst.List, cst.Set))
        return holder >= 0 and isinstance(self.stack[holder], (cst.Comparison, cst.ComparisonTarget))

    def _spoken_for(self, code: str) -> bool:
        """A node around the current one already has a finding whose rule supersedes `code` (catalog)."""
        reported, rules = self.reported, self.rules
        for holder in self.stack[:-1]:
            earlier = reported.get(id(holder))
            if earlier is not None and code in rules[earlier.code].supersedes and earlier in self.hits:
                return True
        return False

    def _in_unused_default(self, node: cst.CSTNode) -> bool:
        """The node is (inside) a parameter's default that the function's body never reads, or that every call
        of its function in the project passes a value for (CallSites.default_never_used): what the default holds
        never reaches anything."""
        for depth in range(len(self.stack) - 1, 0, -1):
            holder = self.stack[depth]
            if isinstance(holder, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
                return False
            if isinstance(holder, cst.Param):
                inner = self.stack[depth + 1] if depth + 1 < len(self.stack) else node
                if holder.default is None or inner is not holder.default:
                    return False
                function = next((node for node in reversed(self.stack[:depth]) if isinstance(node, (cst.FunctionDef, cst.Lambda))), None)
                if isinstance(function, cst.FunctionDef) and self._names_a_device(holder.default) and (
                        unused_default(function, holder.name.value)  # the body never reads it (or rebinds it first)
                        or self.model.guards.raises_off_mac(function)):  # `if not torch.cuda.is_available(): raise` first
                    return True  # a device that only names one, never used on a Mac: naming it runs nothing
                scope = self.model.scopes.get(id(function)) if isinstance(function, cst.FunctionDef) else None
                bindings = scope.bindings.get(holder.name.value, ()) if scope is not None else ()
                binding = next((found for found in bindings if found.node is holder), None)
                return binding is not None and self.model.call_sites.default_never_used(binding)
        return False

    def _names_a_device(self, node: cst.BaseExpression) -> bool:
        """A string, or `torch.device(...)` of literals: a default that only names a device, whose
        evaluation when the function is defined fails nowhere."""
        if string_value(node) is not None:
            return True
        return (isinstance(node, cst.Call) and self.model.resolve(node.func) == "torch.device"
                and all(string_value(arg.value) is not None or int_literal(arg.value) is not None for arg in node.args))

    def truth_tested(self, depth: int) -> bool:
        """The node at `stack[depth]` is used only as a truth value: the test of an if, while, assert or
        conditional expression, or an operand of `not` (or of `and`/`or` that are themselves so used)."""
        node = self.stack[depth]
        while depth > 0:
            holder = self.stack[depth - 1]
            if isinstance(holder, (cst.If, cst.While, cst.Assert, cst.IfExp)):
                return holder.test is node
            if isinstance(holder, cst.UnaryOperation) and isinstance(holder.operator, cst.Not):
                return True
            if not isinstance(holder, cst.BooleanOperation):
                return False
            node, depth = holder, depth - 1
        return False

    def names_class(self, depth: int) -> bool:
        """The node at `stack[depth]` is the class argument of isinstance/issubclass, alone or in a tuple
        (`isinstance(s, torch.cuda.Stream)`): a test of what the code has, as a comparison is."""
        node, holder = self._unwrapped(depth, (cst.Tuple,))
        if holder < 1:
            return False
        arg, call = self.stack[holder], self.stack[holder - 1]
        return (isinstance(arg, cst.Arg) and arg.value is node and arg.keyword is None and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Name) and call.func.value in ("isinstance", "issubclass")
                and not self.model.lookup(call.func.value) and len(call.args) == 2 and call.args[1] is arg)

    def never_entered(self, depth: int) -> bool:
        """The call at `stack[depth]` makes a context manager that the `with` drops: an operand of `and`
        before the last (`with autocast() and torch.no_grad():` enters only what `and` gives, the last
        operand, a context manager being truthy)."""
        stack, child, dropped = self.stack, self.stack[depth], False
        for holder in reversed(stack[:depth]):
            if not (isinstance(holder, cst.BooleanOperation) and isinstance(holder.operator, cst.And)):
                return dropped and isinstance(holder, cst.WithItem) and holder.item is child
            dropped = dropped or holder.left is child
            child = holder
        return False

    def _unwrapped(self, depth: int, containers) -> Tuple[cst.CSTNode, int]:
        """The node at `stack[depth]`, or the container literal it is an element of, and the depth of
        what holds that."""
        stack, holder = self.stack, depth - 1
        if holder >= 1 and isinstance(stack[holder], cst.Element) and isinstance(stack[holder - 1], containers):
            return stack[holder - 1], holder - 2
        return stack[depth], holder

    def guarded(self) -> bool:
        """The current node runs only where the host is not a Mac."""
        return bool(self.guard_depth) or self._branch_off_mac()

    def _disabled_off_mac(self) -> bool:
        """The current node is part of a call that does its work only when its `enabled=` argument is true
        (a GradScaler, an autocast region), and that argument is false wherever the host is a Mac. (A
        catalog entry's `enabled_by` also names the argument's position: matchers._disabled_on_mac.)"""
        for node in reversed(self.stack):
            if type(node) is cst.Call:
                enabled = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "enabled"), None)
                if enabled is not None and self.false_wherever_mac(enabled):
                    return True
            elif isinstance(node, cst.BaseStatement):
                return False  # the statement holding the node: calls around it end here
        return False

    def false_wherever_mac(self, value: cst.BaseExpression) -> bool:
        """A value false on every Mac: the guard evaluator says it is true only off a Mac, or the code
        before turned it off there (`if not torch.cuda.is_available(): amp = False`)."""
        return self.model.guard(value, self.model.scope).when_true or self.false_on_mac(value)

    def _branch_off_mac(self) -> bool:
        guard = self.model.guards.test_guard
        for test, scope, polarity in self.branches:
            found = guard(test, scope)
            if found.when_true if polarity else found.when_false:
                return True
            if polarity and self.forced_off and any(self.false_on_mac(part) for part in conjuncts(test)):
                return True  # `if amp:` after `if not torch.cuda.is_available(): amp = False`
        return False

    def false_on_mac(self, node: cst.BaseExpression) -> bool:
        """A name or attribute is false wherever the current node runs on a Mac, by what ran before it in
        the enclosing blocks: a statement that set it to a false constant under a test that holds on
        every Mac unless it is already false (`if not torch.cuda.is_available(): amp = False`, `if amp
        and device.type == "cpu": amp = False`), or an early exit under such a test (`if amp and not
        torch.cuda.is_available(): raise ...`)."""
        key = dotted(node)
        if key is None:
            return False
        for target, test, scope in self.forced_off:
            if target is not None and dotted(target) == key and self._holds_on_mac_unless(test, key, scope):
                return True
        for test, scope, polarity in self.branches:
            if not polarity and any(dotted(part) == key for part in conjuncts(test)):
                if self._holds_on_mac_unless(test, key, scope):
                    return True
        return False

    def _holds_on_mac_unless(self, test: cst.BaseExpression, key: str, scope) -> bool:
        """Every part of an `and` test but `key` itself is true on every Mac."""
        return all(dotted(part) == key or self.model.guard(part, scope).when_false for part in conjuncts(test))

    def report(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        fix: Optional[FixPlan] = None,
        related: Tuple[Related, ...] = (),
        covers: Tuple[cst.CSTNode, ...] = (),
    ) -> None:
        """Report `code` at `node`, unless something settles that it is no problem here. `covers`: parts of
        the node the finding speaks for (a selection's CUDA arms), whose earlier findings of the codes the
        rule supersedes (catalog) it replaces."""
        rule = self.rules.get(code)
        if rule is None:
            return
        if rule.silenced_by_guard and (self.guard_depth or self.branches):
            shielded = self.guard_depth and not (self.guard_depth == self.fallback_depth
                                                 and (not rule.shielded_by_try or self._never_raises(node)))
            if shielded or self._branch_off_mac():  # the branches' guards only when the shields do not settle it
                return  # code that never runs on a Mac is not a portability problem
        if rule.silenced_by_guard and self._disabled_off_mac():
            return  # `GradScaler("cuda", enabled=use_amp)` with `use_amp = device.type == "cuda"`: inert on a Mac
        if self.type_depth:
            return  # a type expression names an API; it makes nothing and runs nothing
        if rule.silenced_in_cpu_arm and in_cpu_arm(self.model, self.stack):
            return  # `else: device = "cpu"; ... .double()`: made for the CPU a Mac's run chooses there
        if self._in_unused_default(node):
            return  # `def f(device="cuda")` whose every call in the project passes a device: never used
        if self.silenced and code.startswith(self.silenced):
            return  # `def cuda(self)` of a class: the user's own `.cuda()` call is where this belongs
        if self._spoken_for(code):
            return  # `DDP(model, device_ids=[torch.cuda.current_device()])`: the argument's finding speaks for it
        if id(node) in self.handled:
            earlier = self.reported.get(id(node))
            if earlier is None or earlier.code not in rule.supersedes:
                return  # one finding per node; a rule that supersedes another replaces its finding
            self.hits.remove(earlier)
        self.handled.add(id(node))
        hit = Hit(code, node, message, fix, related)
        self.reported[id(node)] = hit
        self.hits.append(hit)
        for part in covers:
            earlier = self.reported.get(id(part))
            if earlier is not None and earlier.code in rule.supersedes and earlier in self.hits:
                self.hits.remove(earlier)
