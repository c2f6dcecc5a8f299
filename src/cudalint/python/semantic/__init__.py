"""The semantic model of one file, in the spirit of ruff's SemanticModel.

Built from a pre-pass over the module's statements (scopes and bindings), then moved
through the file by the main walk (`enter`/`leave` keep the current scope). Every rule
asks it — never a private table — what a name is bound to (`lookup`), what an expression
names (`resolve`: a canonical qualified name, re-exports mapped through the alias table),
what values an expression can take (`values`) and whether a test guards code away from a
Mac (`guard`).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from cudalint.project.paths import test_module
from cudalint.python.names import dotted
from cudalint.python.semantic.call_sites import CallSites
from cudalint.python.semantic.canonical import canonical
from cudalint.python.semantic.class_attributes import ClassAttributes
from cudalint.python.semantic.cuda_imports import CudaImports
from cudalint.python.semantic.device_switch import DeviceSwitches
from cudalint.python.semantic.opt_in_switch import OptInSwitches
from cudalint.python.semantic.guards import Guard, GuardEvaluator, guard_facts
from cudalint.python.semantic.scopes import Binding, Scope, ScopeBuilder
from cudalint.python.semantic.values import Evaluator, Value

__all__ = ["Binding", "Guard", "Scope", "SemanticModel", "Value", "guard_facts"]
MAX_ALIAS_DEPTH = 6


class SemanticModel:
    def __init__(self, module: cst.Module, project=None, module_name: str = "", package: str = "", siblings=None, path: str = "",
                 torch_version: Optional[Tuple[int, ...]] = None, text: Optional[str] = None):
        self.project = project  # the project index (cudalint.project.ProjectIndex), when the run built one
        self.module = module
        self.module_name = module_name
        self.path = path  # the file as the run names it
        self.in_tests = test_module(module_name or "", path, text)  # a test suite's module (`text`: a test.py says)
        self.torch_version = torch_version  # the target release (None: not said)
        builder = ScopeBuilder(package, siblings)
        self.absolute = builder.absolute
        self.cuda_imports = CudaImports(self)
        self.compiled_calls: Dict[int, bool] = {}  # function -> it calls compiled kernels (compiled_calls.py)
        builder.needs_library = self.cuda_imports.cuda_only  # what follows its import is conditional on it
        builder.star_names = project.star_exports if project is not None else None
        self.module_scope = builder.build(module)
        self.scopes: Dict[int, Scope] = builder.scopes
        self.file_imports = builder.file_imports
        self.options = builder.options
        self.scope = self.module_scope
        self._stack: List[Scope] = []
        self.evaluator = Evaluator(self)
        self.guards = GuardEvaluator(self)
        self.class_attributes = ClassAttributes(self)
        self.call_sites = CallSites(self)
        self.device_switches = DeviceSwitches(self)
        self.opt_in_switches = OptInSwitches(self)
        # Whether a class is a test class skipped off CUDA (its decorators or pytestmark): the main walk,
        # which reads test decorators, answers it; until then no class is.
        self.skipped_class: Callable[[cst.ClassDef], bool] = _never
        self._availability = None
        self._skip_markers = None
        self._imported_roots = None  # imports_under: the top-level modules the file's imports name
        self.canonical = canonical

    def release(self) -> None:
        """Forget the file: its helpers point back at the model, a cycle that would keep the whole
        libcst tree alive until a cyclic collection found it; without the model's references the tree
        is freed as soon as the engine lets go of it (so are a scope's bindings, which name their scope).
        The model answers nothing after this."""
        for scope in self.scopes.values():
            scope.bindings.clear()
            scope.attributes.clear()
        vars(self).clear()

    def imports_under(self, root: str) -> bool:
        """Some import of the file names the top-level module `root` or a module under it (`import torch.nn`)."""
        found = self._imported_roots
        if found is None:
            self._imported_roots = found = frozenset(qualified.partition(".")[0] for qualified in self.file_imports.values())
        return root in found

    @property
    def skip_markers(self):
        """Which test skips take a test away from hosts without CUDA (semantic/skip_markers.py), one per file."""
        if self._skip_markers is None:
            from cudalint.python.semantic.skip_markers import SkipMarkers

            self._skip_markers = SkipMarkers(self)
        return self._skip_markers

    @property
    def availability(self):
        """Where an optional library imports (cudalint.python.optional_imports), one per file."""
        if self._availability is None:
            from cudalint.python.optional_imports import Availability  # it builds on the guard evaluator

            self._availability = Availability(self)
        return self._availability

    # -- moving through the file --------------------------------------------------------
    def enter(self, node: cst.CSTNode) -> None:
        inner = self.scopes.get(id(node))
        if inner is None and isinstance(node, cst.Lambda):
            inner = Scope("lambda", node, self.scope)
            params = node.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                inner.bind(Binding(param.name.value, "param", inner, param, param.default, where=self.scope))
            self.scopes[id(node)] = inner
        if inner is not None:
            self._stack.append(self.scope)
            self.scope = inner

    def leave(self, node: cst.CSTNode) -> None:
        if self._stack and self.scope.node is node:
            self.scope = self._stack.pop()

    # -- names ------------------------------------------------------------------------
    def lookup(self, name: str, scope: Optional[Scope] = None) -> List[Binding]:
        """The bindings a name refers to from a scope (class bodies are not seen from their methods)."""
        start = scope or self.scope
        current: Optional[Scope] = start
        while current is not None:
            if current.kind == "class" and current is not start:
                current = current.parent
                continue
            if name in current.declared_global and current.parent is not None:
                current = self.module_scope
                continue
            found = current.bindings.get(name)
            if found:
                return found
            current = current.parent
        return []

    def assigned_once(self, node: cst.BaseExpression, scope: Optional[Scope] = None) -> Optional[Binding]:
        """The one binding of a Name when it is an assignment with a value (`x = ...`), else None."""
        if not isinstance(node, cst.Name):
            return None
        bindings = self.lookup(node.value, scope)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return bindings[0]
        return None

    def defined_function(self, func: cst.BaseExpression, scope: Optional[Scope] = None) -> Optional[Tuple[cst.FunctionDef, Scope]]:
        """The function a called name is (seen from `scope`, the current one by default), when the file defines
        it once under that name (`helper(x)` with one `def helper`), with its own scope; None for anything else."""
        if type(func) is not cst.Name:
            return None
        bindings = self.lookup(func.value, scope)
        if len(bindings) != 1 or bindings[0].kind != "def":
            return None
        inner = self.scopes.get(id(bindings[0].node))
        return (bindings[0].node, inner) if inner is not None else None

    def assigned(self, name: cst.Name, scope: Optional[Scope] = None) -> List[Tuple[cst.BaseExpression, Scope]]:
        """What a local name is bound to, when every binding of it assigns an expression: (the value, the
        scope it is evaluated in) per binding; [] when one is a parameter, an import, a loop target, ..."""
        bindings = self.lookup(name.value, scope or self.scope)
        if not all(binding.kind == "assign" and binding.value is not None for binding in bindings):
            return []
        return [(binding.value, binding.context) for binding in bindings]

    def bindings_of(self, node: cst.BaseExpression, scope: Optional[Scope] = None) -> List[Binding]:
        """What a Name, or `self.attr` inside a method, is bound to."""
        scope = scope or self.scope
        if isinstance(node, cst.Name):
            return self.lookup(node.value, scope)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            owner = self.self_class(node.value.value, scope)
            if owner is not None:
                return self.class_attributes.bindings(owner, node.attr.value) or []
            stored, settled = self.stores(node.value.value, node.attr.value, scope)
            return stored if settled else []  # a store made only under some test: the other value is not known here
        return []

    def stores(self, base: str, name: str, scope: Scope) -> Tuple[List[Binding], bool]:
        """The stores `base.name = value` (`args.device = "cuda"`) of the scope that reads `base.name`,
        where `base` is a name of that scope (a parameter or a local; a module name at module level), and
        whether one of them is made unconditionally (then they are all the attribute can hold there)."""
        stored = scope.stores.get((base, name)) if scope is not None else None
        if stored and any(binding.scope is scope for binding in self.lookup(base, scope)):
            return stored, any(not binding.conditions for binding in stored)
        return [], False

    def self_class(self, name: str, scope: Scope, depth: int = 0) -> Optional[Scope]:
        """The class scope when `name` is the `self` parameter of an enclosing method, or a name bound
        once to it (`me = self`, `self_ref = weakref.proxy(self)`, and a closure's `self = self_ref`)."""
        current: Optional[Scope] = scope
        while current is not None:
            if current.kind == "function":
                if current.self_name == name:
                    return current.enclosing_class
                bindings = current.bindings.get(name)
                if bindings:
                    alias = self._alias_of(bindings, current)
                    return self.self_class(alias, current.parent if alias == name else current, depth + 1) \
                        if alias is not None and depth < 3 else None
            current = current.parent
        return None

    def base_binding(self, owner: Scope, name: str):
        """What a base in another module of the module-level class `owner` says of flag `name` (the project
        index's class facts: ProjectIndex.base_binding); None where no such base binds it, or there is no
        index."""
        if self.project is None or not self.module_name or owner.kind != "class" or owner.parent is not self.module_scope:
            return None
        return self.project.base_binding(f"{self.module_name}.{owner.node.name.value}", name)

    def _alias_of(self, bindings: List[Binding], scope: Scope) -> Optional[str]:
        """The name a single assignment binds another name to, directly or through `weakref.proxy(...)`."""
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        value = bindings[0].value
        if (isinstance(value, cst.Call) and len(value.args) == 1 and (dotted(value.func) or "").endswith("proxy")
                and self.resolve(value.func, scope) == "weakref.proxy"):  # the name test first: this runs for every local
            value = value.args[0].value
        return value.value if isinstance(value, cst.Name) else None

    def resolve(self, node: cst.BaseExpression, scope: Optional[Scope] = None, depth: int = 0) -> Optional[str]:
        """The canonical qualified name a Name/Attribute chain refers to through an import, else None.
        A name bound to another name (`tc = torch.cuda`) resolves through it; a parameter,
        loop variable or any other local binding shadows an import of the same name."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self._resolve_head(head, scope or self.scope, depth, node)
        if target is None:
            return None
        return canonical(f"{target}.{rest}" if rest else target)

    def _resolve_head(self, head: str, scope: Scope, depth: int, node: Optional[cst.CSTNode] = None) -> Optional[str]:
        bindings = self.lookup(head, scope)
        if not bindings:
            return self.file_imports.get(head)  # imported in another function of this file
        imported = [b for b in bindings if b.kind == "import"]
        if len({b.qualified for b in imported}) > 1 and node is not None:
            # `if old: from torch.cuda.amp import autocast` / `else: from torch.amp import autocast`: a read
            # in one arm sees that arm's import, not the other's
            imported = _same_arm(imported, node, scope) or imported
        if imported:
            return imported[0].qualified
        if depth >= MAX_ALIAS_DEPTH:
            return None
        targets: Set[str] = set()
        for binding in bindings:
            value = binding.value
            if binding.kind != "assign" or not isinstance(value, (cst.Name, cst.Attribute)):
                return None
            resolved = self.resolve(value, binding.context, depth + 1)
            if resolved is None:
                return None
            targets.add(resolved)
        return targets.pop() if len(targets) == 1 else None

    def resolve_all(self, node: cst.BaseExpression, scope: Optional[Scope] = None) -> Set[str]:
        """Every API an expression may name: `scope = autocast if amp else nullcontext` names both."""
        scope = scope or self.scope
        direct = self.resolve(node, scope)
        if direct is not None:
            return {direct}
        return {value.data for value in self.values(node, scope) if value.kind == "ref"}

    def is_module_ref(self, node: cst.BaseExpression) -> bool:
        return self.resolve(node) is not None

    # -- values and guards -----------------------------------------------------------------
    def values(self, node: cst.BaseExpression, scope: Optional[Scope] = None, depth: int = 0) -> Tuple[Value, ...]:
        return self.evaluator.values(node, scope or self.scope, depth)

    def entry_values(self, node: cst.BaseExpression, key: str, scope: Optional[Scope] = None) -> Tuple[Value, ...]:
        """What `f(**node)` passes as `key=`: the values of that entry of the dicts node may be."""
        return self.evaluator.entry(node, key, scope or self.scope)

    def guard(self, test: cst.BaseExpression, scope: Optional[Scope] = None, depth: int = 0) -> Guard:
        return self.guards.guard(test, scope or self.scope, depth)


def _never(node: cst.ClassDef) -> bool:
    return False


def _same_arm(bindings: List[Binding], node: cst.CSTNode, scope: Scope) -> List[Binding]:
    """The bindings that do not lie in another arm of an `if` around the node."""
    root = scope.node
    around = scope.path_to(node) if root is not None else None
    if not around:
        return bindings
    def arm(holder: cst.If, child: cst.CSTNode) -> Optional[int]:
        return 0 if child is holder.body else 1 if child is holder.orelse else None

    # each `if` around the read -> the arm it is in (0: body, 1: else or elif)
    arms = {id(holder): arm(holder, around[index + 1]) for index, holder in enumerate(around[:-1]) if type(holder) is cst.If}
    kept = []
    for binding in bindings:
        path = scope.path_to(binding.node) or []
        other = any(type(holder) is cst.If and arms.get(id(holder)) is not None
                    and arm(holder, path[index + 1]) not in (None, arms[id(holder)])
                    for index, holder in enumerate(path[:-1]))
        if not other:
            kept.append(binding)
    return kept
