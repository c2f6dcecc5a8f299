"""Scopes and bindings, from one cheap pre-pass over a module's statements.

The pass reads statements only (expressions are not entered), so it costs a small
fraction of the main walk. It records, per scope, every name a statement binds —
imports, assignments, parameters, `for`/`with`/`except` targets, functions, classes —
with the expression bound where there is one; the attributes a class's methods set on
`self`; each function's `return` values; and the if/while tests every binding sits
under, so that the guard evaluator can tell a binding that only happens on a CUDA host.
Flow-insensitive by design: every binding of a name in a scope is a value it may have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import libcst as cst

from cudalint.project.paths import as_sibling
from cudalint.python.children import TRY_KINDS, parent_map, path_from
from cudalint.python.names import dotted, string_value

# (test, polarity): the binding runs only when `test` evaluates to `polarity`.
Condition = Tuple[cst.BaseExpression, bool]
OPTION_CALLS = {"add_argument", "option", "argument"}
MATCH = getattr(cst, "Match", None)


@dataclass(eq=False)
class Binding:
    name: str
    kind: str  # import, assign, param, loop, with, except, def, class, augassign
    scope: "Scope"
    node: cst.CSTNode  # the statement, parameter or definition that binds
    value: Optional[cst.BaseExpression] = None  # what is bound, when an expression says so
    qualified: Optional[str] = None  # for imports: the module or member it names
    conditions: Tuple[Condition, ...] = ()
    annotation: Optional[cst.BaseExpression] = None
    where: Optional["Scope"] = None  # the scope the bound expression is evaluated in (default: scope)

    @property
    def context(self) -> "Scope":
        return self.where or self.scope


@dataclass(eq=False)
class Scope:
    kind: str  # module, class, function, lambda
    node: cst.CSTNode
    parent: Optional["Scope"]
    bindings: Dict[str, List[Binding]] = field(default_factory=dict)
    declared_global: set = field(default_factory=set)
    returns: List[Tuple[cst.BaseExpression, Tuple[Condition, ...]]] = field(default_factory=list)
    attributes: Dict[str, List[Binding]] = field(default_factory=dict)  # class: self.<name> = ...
    self_name: Optional[str] = None  # function defined in a class: its first parameter
    called: List[cst.Call] = field(default_factory=list)  # the scope's call statements (`f(x)` on a line of its own)
    # `args.device = "cuda"`: (name, attribute) -> the stores into an attribute of a name other than self
    stores: Dict[Tuple[str, str], List[Binding]] = field(default_factory=dict)
    parents: Optional[Dict[int, cst.CSTNode]] = None  # module scope: children.parent_map(module), built when first asked

    def path_to(self, node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
        """The nodes from the scope's own node down to `node`, `node` last; None when it is not under it
        (read from the module's one map of parents, whichever scope asks)."""
        top = self
        while top.parent is not None:
            top = top.parent
        if top.parents is None:
            top.parents = parent_map(top.node)
        return path_from(self.node, node, top.parents)

    def name_paths(self, name: str) -> Iterator[List[cst.CSTNode]]:
        """The path (path_to) to each occurrence of `name` in the scope, nested scopes too, but not where an
        assignment binds it (`name = ...`, `name: T = ...`): its reads, and the other ways it is bound."""
        pending: List[cst.CSTNode] = [self.node]
        while pending:
            current = pending.pop()
            if type(current) in (cst.AssignTarget, cst.AnnAssign) and type(current.target) is cst.Name:
                pending.extend(child for child in current.children if child is not current.target)
                continue
            pending.extend(current.children)
            if type(current) is cst.Name and current.value == name:
                path = self.path_to(current)
                if path is not None:
                    yield path

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    @property
    def enclosing_class(self) -> Optional["Scope"]:
        parent = self.parent
        return parent if self.kind == "function" and parent is not None and parent.kind == "class" else None


class ScopeBuilder:
    """Builds every statement-level scope of a module; lambdas are added by the main walk."""

    def __init__(self, package: str = "", siblings: Optional[Dict[str, str]] = None) -> None:
        self.package = package  # the package relative imports start from ("" when not known)
        # A script folder's modules as its files import them (`from utils import x` beside utils.py) ->
        # their names in the project (ProjectIndex.siblings_of)
        self.siblings = siblings or {}
        self.scopes: Dict[int, Scope] = {}
        self.file_imports: Dict[str, str] = {}  # every import in the file, whatever its scope
        self.options: Dict[str, List[Tuple[cst.Call, Scope]]] = {}  # argparse/click option dest -> its declaring calls
        self.needs_library: Optional[Callable[[Optional[str]], bool]] = None  # a module CUDA-only code imports
        # What `from m import *` binds (the project index's star_exports), and the bindings it made: a name
        # the scope binds otherwise too is left to those bindings (which binding wins depends on order).
        self.star_names: Optional[Callable[[str], Dict[str, str]]] = None
        self.starred: List[Tuple[Scope, str]] = []

    def build(self, module: cst.Module) -> Scope:
        root = Scope("module", module, None)
        self.scopes[id(module)] = root
        self._block(module.body, root, ())
        for scope, name in self.starred:
            bindings = scope.bindings.get(name, [])
            if any(not _is_star(binding.node) for binding in bindings):
                scope.bindings[name] = [binding for binding in bindings if not _is_star(binding.node)]
        return root

    # -- statements -------------------------------------------------------------
    def _block(self, body, scope: Scope, conditions: Tuple[Condition, ...]) -> None:
        for statement in body:
            self._statement(statement, scope, conditions)
            if type(statement) is cst.If and statement.orelse is None and leaves(statement.body):
                conditions = conditions + ((statement.test, False),)  # the rest runs only when the test was false
            elif scope.kind == "function" and self.needs_library is not None and self._imports(statement):
                conditions = conditions + ((statement, True),)  # the rest runs after it (cuda_imports judges)

    def _suite(self, suite: cst.BaseSuite, scope: Scope, conditions: Tuple[Condition, ...]) -> None:
        if isinstance(suite, cst.SimpleStatementSuite):  # `if x: a = 1` on one line
            for small in suite.body:
                self._small(small, scope, conditions)
        else:
            self._block(suite.body, scope, conditions)

    def _statement(self, node: cst.CSTNode, scope: Scope, conditions: Tuple[Condition, ...]) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self._small(small, scope, conditions)
        elif isinstance(node, cst.If):
            self._suite(node.body, scope, conditions + ((node.test, True),))
            orelse = node.orelse
            if isinstance(orelse, cst.If):
                self._statement(orelse, scope, conditions + ((node.test, False),))
            elif isinstance(orelse, cst.Else):
                self._suite(orelse.body, scope, conditions + ((node.test, False),))
        elif isinstance(node, cst.While):
            self._suite(node.body, scope, conditions + ((node.test, True),))
            if node.orelse is not None:
                self._suite(node.orelse.body, scope, conditions)
        elif isinstance(node, cst.For):
            self._target(node.target, None, scope, node, "loop", conditions)
            self._suite(node.body, scope, conditions)
            if node.orelse is not None:
                self._suite(node.orelse.body, scope, conditions)
        elif isinstance(node, cst.With):
            for item in node.items:
                if item.asname is not None:
                    self._target(item.asname.name, None, scope, node, "with", conditions)
            self._suite(node.body, scope, conditions)
        elif isinstance(node, TRY_KINDS):
            self._suite(node.body, scope, conditions)
            for handler in node.handlers:
                if handler.name is not None:
                    self._target(handler.name.name, None, scope, handler, "except", conditions)
                self._suite(handler.body, scope, conditions)
            for extra in (node.orelse, node.finalbody):
                if extra is not None:
                    self._suite(extra.body, scope, conditions)
        elif isinstance(node, cst.FunctionDef):
            self._function(node, scope, conditions)
        elif isinstance(node, cst.ClassDef):
            scope.bind(Binding(node.name.value, "class", scope, node, conditions=conditions))
            inner = Scope("class", node, scope)
            self.scopes[id(node)] = inner
            self._suite(node.body, inner, conditions)
        elif MATCH is not None and isinstance(node, MATCH):
            for case in node.cases:
                self._suite(case.body, scope, conditions)

    def _function(self, node: cst.FunctionDef, scope: Scope, conditions: Tuple[Condition, ...]) -> None:
        scope.bind(Binding(node.name.value, "def", scope, node, conditions=conditions))
        for decorator in node.decorators:
            if isinstance(decorator.decorator, cst.Call):
                self._option(decorator.decorator, scope)
        inner = Scope("function", node, scope)
        self.scopes[id(node)] = inner
        params = node.params
        ordered = [*params.posonly_params, *params.params]
        if scope.kind == "class" and ordered and not _is_static(node):
            inner.self_name = ordered[0].name.value
        for param in [*ordered, *params.kwonly_params]:
            annotation = param.annotation.annotation if param.annotation is not None else None
            inner.bind(Binding(param.name.value, "param", inner, param, param.default, annotation=annotation, where=scope))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                inner.bind(Binding(star.name.value, "param", inner, star))
        self._suite(node.body, inner, conditions)

    def _small(self, node: cst.BaseSmallStatement, scope: Scope, conditions: Tuple[Condition, ...]) -> None:
        imported = _imported_by_call(node)
        if imported is not None:  # `torch = _safe_import("torch")`: an optional-import helper's module
            self._import(imported[0], imported[1], scope, node, conditions)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                self._target(target.target, node.value, scope, node, "assign", conditions)
        elif isinstance(node, cst.AnnAssign):
            annotation = node.annotation.annotation
            self._target(node.target, node.value, scope, node, "assign", conditions, annotation)
        elif isinstance(node, cst.AugAssign):
            self._target(node.target, None, scope, node, "augassign", conditions)
        elif isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local, target = alias.asname.name.value, self.sibling(full)
                else:
                    local = full.split(".")[0]
                    target = self.sibling(local)
                self._import(local, target, scope, node, conditions)
        elif isinstance(node, cst.ImportFrom):
            base = self.absolute(len(node.relative), dotted(node.module) if node.module is not None else None)
            if base is None:
                return
            if isinstance(node.names, cst.ImportStar):
                for local, target in (self.star_names(base) if self.star_names is not None else {}).items():
                    self._import(local, target, scope, node, conditions)
                    self.starred.append((scope, local))
                return
            for alias in node.names:
                name = dotted(alias.name) or ""
                local = name
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                self._import(local, f"{base}.{name}", scope, node, conditions)
        elif isinstance(node, cst.Global):
            scope.declared_global.update(item.name.value for item in node.names)
        elif isinstance(node, cst.Return) and node.value is not None and scope.kind == "function":
            scope.returns.append((node.value, conditions))
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
            scope.called.append(node.value)
            self._option(node.value, scope)

    def _option(self, call: cst.Call, scope: Scope) -> None:
        """`parser.add_argument("--dist-backend", default=...)` or `@click.option("--device", ...)`:
        the option's destination name (`dist_backend`), as `args.<dest>` reads it."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in OPTION_CALLS:
            return
        dest = None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "dest":
                dest = string_value(arg.value)
        if dest is None:
            flags = [string_value(arg.value) for arg in call.args if arg.keyword is None]
            flags = [flag for flag in flags if flag]
            long = [flag for flag in flags if flag.startswith("--")] or [flag for flag in flags if not flag.startswith("-")]
            chosen = long[0] if long else (flags[0] if flags else None)
            if chosen is None:
                return
            dest = chosen.lstrip("-").replace("-", "_")
        if dest.isidentifier():
            self.options.setdefault(dest, []).append((call, scope))

    def _imports(self, statement: cst.CSTNode) -> bool:
        """An import of a library `needs_library` names, or a compound statement with one directly in
        a block of its own."""
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Import and any(self.needs_library(dotted(a.name)) for a in small.names):
                    return True
                if type(small) is cst.ImportFrom:
                    module = dotted(small.module) if small.module is not None else None
                    if self.needs_library(self.absolute(len(small.relative), module)):
                        return True
            return False
        if not isinstance(statement, (cst.If, cst.With, *TRY_KINDS)):
            return False
        suites = [statement.body, *(handler.body for handler in getattr(statement, "handlers", ()))]
        orelse = getattr(statement, "orelse", None)
        if isinstance(orelse, (cst.Else, cst.If)):
            suites.append(orelse.body)
        return any(
            isinstance(line, cst.SimpleStatementLine) and self._imports(line)
            for suite in suites if isinstance(suite, cst.IndentedBlock) for line in suite.body
        )

    def absolute(self, level: int, module: Optional[str]) -> Optional[str]:
        """`from ..utils import x` inside package `a.b` -> `a.utils`; None when it cannot be known."""
        if not level:
            return self.sibling(module) if module else module
        if not self.package:
            return None
        parts = self.package.split(".")
        if level - 1 > len(parts) - 1:
            return None
        base = parts[: len(parts) - (level - 1)]
        return ".".join([*base, module] if module else base)

    def sibling(self, module: str) -> str:
        return as_sibling(module, self.siblings)

    def _import(self, local: str, target: str, scope: Scope, node, conditions) -> None:
        scope.bind(Binding(local, "import", scope, node, qualified=target, conditions=conditions))
        self.file_imports.setdefault(local, target)

    def _target(self, target, value, scope: Scope, node, kind: str, conditions, annotation=None) -> None:
        if isinstance(target, cst.Name):
            owner = scope
            if target.value in scope.declared_global:
                while owner.parent is not None:
                    owner = owner.parent
            owner.bind(Binding(target.value, kind, owner, node, value, conditions=conditions, annotation=annotation))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = None
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
                values = [element.value for element in value.elements]
            for index, element in enumerate(target.elements):
                inner = element.value
                if isinstance(inner, cst.StarredElement):
                    inner = inner.value
                self._target(inner, values[index] if values else None, scope, node, kind, conditions)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            owner_class = scope.enclosing_class
            if owner_class is not None and target.value.value == scope.self_name:
                binding = Binding(target.attr.value, kind, owner_class, node, value, conditions=conditions, where=scope)
                owner_class.attributes.setdefault(target.attr.value, []).append(binding)
            elif kind == "assign" and value is not None:
                key = (target.value.value, target.attr.value)
                scope.stores.setdefault(key, []).append(Binding(target.attr.value, kind, scope, node, value, conditions=conditions))


def _imported_by_call(node: cst.BaseSmallStatement) -> Optional[Tuple[str, str]]:
    """(name, module) of `torch = _safe_import("torch")`, `cuda = lazy_import("torch.cuda")`: a name bound to
    what a call makes of a torch module path, the name being that path's last part, as an optional-import
    helper returns the module (importlib.import_module("torch") among them). Only torch's modules: a CUDA-only
    library loaded so is the helper's to guard, and a string naming anything else may be no module at all."""
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
            and isinstance(node.value, cst.Call) and node.value.args and node.value.args[0].keyword is None):
        return None
    first = node.value.args[0].value
    path = first.evaluated_value if isinstance(first, cst.SimpleString) else None
    name = node.targets[0].target.value
    if not isinstance(path, str) or path.split(".")[0] != "torch" or path.rsplit(".", 1)[-1] != name:
        return None
    return name, path


def _is_static(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)


def leaves(suite: cst.BaseSuite) -> bool:
    """The suite ends in return/raise/continue/break (calls that exit are the main walk's business)."""
    body = suite.body
    if not body:
        return False
    last = body[-1]
    final = (last.body[-1] if last.body else None) if isinstance(last, cst.SimpleStatementLine) else last
    return isinstance(final, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _is_star(node) -> bool:
    return isinstance(node, cst.ImportFrom) and isinstance(node.names, cst.ImportStar)
