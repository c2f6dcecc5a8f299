"""Statements that leave a CUDA-only library imported: the rest of their block runs only off a Mac.

    def export_engine(self):
        try:
            import tensorrt as trt
        except ImportError:
            check_requirements("tensorrt")
            import tensorrt as trt          # the handler imports it too
        ...
        model.to("cuda")                    # never reached where tensorrt cannot import

A library is CUDA-only when CDL404 says so (rules/packages.toml, the project index's list), or it is
a module of the project that imports one at module level, unguarded (the index's import chain). A
statement leaves one imported when it completes only after importing it: the import itself; a `try:`
whose body does and whose every handler does too or leaves the block (a handler that falls back on
something else is the other way, so the code after the try may run on a Mac); an `if` whose arms each
do or leave; a `with` whose body does. Only inside functions: a module-level import of such a library
is the finding itself (CDL404), and what follows it is the same problem; except in a module of a test
suite, whose tests then run only where the library imports (tests of CUDA kernels): there the import is
the module's one finding and the walk guards the rest of the module. The walk guards the rest of
the block; the scopes make the bindings there conditional on the statement, so a value bound after
it never holds on a Mac. The guard evaluator asks `cuda_only` too: a test true only where such a
library imports (`if is_triton_available():`) is true only off a Mac.
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

import libcst as cst

from cudalint.project.availability import libraries_of, library_of
from cudalint.python.children import TRY_KINDS
from cudalint.python.guard_facts import guard_facts
from cudalint.python.names import dotted

MAX_NESTING = 8

Leaves = Callable[[cst.BaseSuite], Optional[str]]  # how a suite leaves its block (the walk's ends_flow)


class CudaImports:
    def __init__(self, model, leaves: Optional[Leaves] = None):
        self.model = model
        self._leaves = leaves  # None: the walk's own rule (not a bound method kept here: no cycle through self)
        self._libraries = None
        self._memo = {}  # id(statement) -> it leaves a CUDA-only library imported
        self._modules = {}  # module -> it is CUDA-only

    def _leaves_block(self, block: cst.BaseSuite) -> Optional[str]:
        return self._leaves(block) if self._leaves is not None else self._ends_flow(block)

    def _ends_flow(self, block: cst.BaseSuite) -> Optional[str]:
        from cudalint.python.visitor import ends_flow  # the walk's own rule (the walk imports the model)

        return ends_flow(block, self.model)

    def after(self, statement: cst.CSTNode) -> bool:
        """leaves_imported, worked out once per statement (the walk and the scopes' conditions ask)."""
        key = id(statement)
        if key not in self._memo:
            self._memo[key] = self.leaves_imported(statement)
        return self._memo[key]

    def leaves_imported(self, statement: cst.CSTNode, depth: int = 0) -> bool:
        """The statement completes only once a CUDA-only library has been imported."""
        if depth > MAX_NESTING:
            return False
        if isinstance(statement, cst.SimpleStatementLine):
            return any(self._imports_cuda_library(small) for small in statement.body)
        if isinstance(statement, TRY_KINDS):
            if statement.finalbody is not None and self._block(statement.finalbody.body, depth):
                return True
            if not self._block(statement.body, depth):
                return False
            return all(self._block(handler.body, depth) or self._leaves_block(handler.body) for handler in statement.handlers)
        if isinstance(statement, cst.If):
            arms = [statement.body, statement.orelse.body if isinstance(statement.orelse, cst.Else) else statement.orelse]
            if arms[1] is None:
                return False
            imported = [self._arm(arm, depth) for arm in arms]
            return all(found is not None for found in imported) and any(imported)
        if isinstance(statement, cst.With):
            return self._block(statement.body, depth)
        return False

    def _arm(self, arm, depth: int) -> Optional[bool]:
        """True: the arm imports one; False: it leaves the block; None: it may go on without one."""
        if isinstance(arm, cst.If):  # elif
            return True if self.leaves_imported(arm, depth + 1) else None
        if self._block(arm, depth):
            return True
        return False if self._leaves_block(arm) else None

    def _block(self, suite: cst.BaseSuite, depth: int) -> bool:
        if isinstance(suite, cst.SimpleStatementSuite):
            return any(self._imports_cuda_library(small) for small in suite.body)
        return any(self.leaves_imported(statement, depth + 1) for statement in suite.body)

    def _imports_cuda_library(self, small: cst.BaseSmallStatement) -> bool:
        if type(small) is cst.Import:
            return any(self.cuda_only(dotted(alias.name)) for alias in small.names)
        if type(small) is cst.ImportFrom:
            module = self.model.absolute(len(small.relative), dotted(small.module) if small.module is not None else None)
            if self.cuda_only(module):
                return True
            names = small.names if isinstance(small.names, (list, tuple)) else ()
            project = self.model.project  # `from pkg import kernel` in a function imports the submodule pkg.kernel
            # (at a test module's top, a kernel module that fails by itself is a place of its own: what follows counts)
            return bool(module) and project is not None and self.model.scope.kind == "function" and any(
                type(alias.name) is cst.Name and project.is_own(f"{module}.{alias.name.value}")
                and self.cuda_only(f"{module}.{alias.name.value}") for alias in names)
        return False

    def always_calls(self, function: cst.FunctionDef, depth: int = 0) -> bool:
        """The function calls, whatever branch it takes, a name the module binds to a CUDA-only library's
        function where it imports and to None where it does not (`if is_flash_attn_2_available(): from flash_attn import
        flash_attn_func` / `else: flash_attn_func = None`, then `attn = flash_attn_func(q, k, v)`), or a
        method of its class that does (`self._flash_attention_forward(...)`): it completes only where
        that library imports, so what else it does is that library's requirement (a FlashAttention2
        class's `torch.is_autocast_enabled()`)."""
        key = ("calls", id(function))
        if key not in self._memo:
            self._memo[key] = False  # a method that calls itself proves nothing
            inner = self.model.scopes.get(id(function))
            self._memo[key] = inner is not None and depth <= MAX_NESTING and self._always(function.body, inner, depth)
        return self._memo[key]

    def _always(self, suite: cst.BaseSuite, scope, depth: int) -> bool:
        for statement in suite.body if isinstance(suite, cst.IndentedBlock) else ():
            if isinstance(statement, cst.SimpleStatementLine):
                if any(self._calls_library(small, scope, depth) for small in statement.body):
                    return True
            elif isinstance(statement, cst.If):
                arms, current = [], statement
                while isinstance(current, cst.If):
                    arms.append(current.body)
                    current = current.orelse
                if current is not None and all(self._always(arm, scope, depth) for arm in (*arms, current.body)):
                    return True
        return False

    def _calls_library(self, small: cst.BaseSmallStatement, scope, depth: int) -> bool:
        value = getattr(small, "value", None) if type(small) in (cst.Expr, cst.Assign, cst.AnnAssign, cst.Return) else None
        while type(value) is cst.Call and type(value.func) is cst.Attribute and type(value.func.value) is cst.Call:
            value = value.func.value  # `flash_attn_varlen_func(...).reshape(...)`
        if type(value) is not cst.Call:
            return False
        func = value.func
        if type(func) is cst.Name:
            return self._library_function(func.value)
        if (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == scope.self_name
                and scope.parent is not None and scope.parent.kind == "class"):
            methods = scope.parent.bindings.get(func.attr.value, ())
            return len(methods) == 1 and methods[0].kind == "def" and self.always_calls(methods[0].node, depth + 1)
        return False

    def _library_function(self, name: str) -> bool:
        key = ("function", name)  # asked for the callee of every call statement of every function
        if key not in self._memo:
            self._memo[key] = self._optional_library_function(name)
        return self._memo[key]

    def _optional_library_function(self, name: str) -> bool:
        bindings = self.model.module_scope.bindings.get(name, ())
        imported = [binding for binding in bindings if binding.kind == "import"]
        others = [binding for binding in bindings if binding.kind != "import"]
        # Both: the module runs without the library (the name is None there), and this name is its function.
        # A name only imported is the module's own CUDA import (CDL404), and what follows it is reported too.
        return bool(imported) and bool(others) and all(self.cuda_only(binding.qualified) for binding in imported) and all(
            binding.kind == "assign" and isinstance(binding.value, cst.Name) and binding.value.value == "None"
            for binding in others)

    def integration_after(self, statement: cst.CSTNode) -> bool:
        """A module-level import line of a runtime the module is built around (integration_libraries, or
        the bridge of a device type no Mac has: guards.toml off_mac_libraries, `import habana_frameworks`),
        directly or through a project module that imports one at its top: the rest of the module runs
        only where that runtime loads, and the import is its one finding."""
        if type(statement) is not cst.SimpleStatementLine:
            return False
        for small in statement.body:
            if type(small) is cst.Import:
                modules = [dotted(alias.name) for alias in small.names]
            elif type(small) is cst.ImportFrom:
                modules = [self.model.absolute(len(small.relative), dotted(small.module) if small.module else None)]
            else:
                continue
            if any(module and self._integration(module) for module in modules):
                return True
        return False

    def package_integration(self) -> bool:
        """A package the module sits in imports a runtime the module is built around at its top (its
        `__init__`, itself or through project modules: `torch_tensorrt/fx/__init__.py` reaching `import
        tensorrt`): importing the module runs that first, so its code runs only where the runtime loads."""
        if "package" not in self._memo:
            name, project = self.model.module_name, self.model.project
            parts = name.split(".") if name and project is not None else []
            self._memo["package"] = any(self._integration(".".join(parts[:end])) for end in range(len(parts) - 1, 0, -1))
        return self._memo["package"]

    def defined_after_import(self, definition: cst.CSTNode) -> bool:
        """A function or class at the top of a module the project loads only when asked for
        (ProjectIndex.loaded_on_demand: a backend's kernels picked by name at run time, `importlib.
        import_module(f".{name}", package)` under a CUDA device test), defined after that module's
        unguarded import of a CUDA-only library: it can be called only once that import worked, never on
        a Mac. The import stays the module's finding, and so does what its top level runs when loaded
        (a reference script's own device); its kernels' launchers are not reported line by line."""
        if "on demand" not in self._memo:
            self._memo["on demand"] = self._first_import_on_demand()
        first = self._memo["on demand"]
        if first is None:
            return False
        body = self.model.module.body
        position = next((at for at, statement in enumerate(body) if statement is definition), None)
        return position is not None and position > first

    def _first_import_on_demand(self) -> Optional[int]:
        """Where in the module's body its first unguarded import of a CUDA-only library is, when the
        module is loaded on demand."""
        project, name = self.model.project, self.model.module_name
        if not name or project is None or not project.loaded_on_demand(name) or _runs_calls(self.model.module.body):
            return None
        for at, statement in enumerate(self.model.module.body):
            if type(statement) is cst.SimpleStatementLine and any(
                    self._imports_cuda_library(small) for small in statement.body):
                return at
        return None

    def _integration(self, module: str) -> bool:
        runtimes = integration_libraries() | guard_facts().off_mac_libraries  # another device's bridge: an HPU module
        if library_of(module, runtimes) is not None:
            return True
        project = self.model.project
        chain = project.cuda_chain(module) if project is not None and project.is_own(module) else None
        return chain is not None and library_of(chain[-1], runtimes) is not None

    def cuda_only(self, module: Optional[str]) -> bool:
        """The (absolute) module is a library that never imports on a Mac (cuda_libraries) or a project
        module that imports a CUDA-only one."""
        if not module:
            return False
        parts = libraries_of(module)
        if len(parts) > 1:  # a test true where any of several libraries imports: CUDA-only if each is
            return all(self.cuda_only(part) for part in parts)
        if module not in self._modules:
            if self._libraries is None:
                self._libraries = cuda_libraries(self.model)
            project = self.model.project
            own = project is not None and project.is_own(module)
            self._modules[module] = library_of(module, self._libraries) is not None or (
                own and project.cuda_chain(module) is not None
            ) or (not own and guard_facts().cuda_extension(module, (self.model.module_name or "")))
        return self._modules[module]


def _runs_calls(body, depth: int = 0) -> bool:
    """The module's top level calls something as a statement of its own (`bench_softmax()`, also in an `if`,
    `for`, `with` or `try` there): loading it runs a script's work, which is what a port edits."""
    if depth > MAX_NESTING:
        return True
    for statement in body:
        if type(statement) is cst.SimpleStatementLine:
            if any(type(small) is cst.Expr and type(small.value) is cst.Call for small in statement.body):
                return True
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, *TRY_KINDS)):
            if any(_runs_calls(block, depth + 1) for block in _blocks(statement)):
                return True
    return False


def _blocks(statement: cst.CSTNode) -> list:
    """The statements of each block of a compound statement (an `elif` is a statement of its own)."""
    suites = [statement.body, *(handler.body for handler in getattr(statement, "handlers", ()))]
    for field in ("orelse", "finalbody"):
        part = getattr(statement, field, None)
        if isinstance(part, cst.If):
            suites.append(cst.IndentedBlock(body=[part]))
        elif part is not None:
            suites.append(part.body)
    return [suite.body if isinstance(suite, cst.IndentedBlock) else [cst.SimpleStatementLine(body=suite.body)]
            for suite in suites]


def integration_libraries() -> frozenset:
    """The runtimes a module is built around (packages.toml `integration`: TensorRT, TensorRT-LLM)."""
    return _catalog_libraries(integration=True)


def cuda_libraries(model) -> frozenset:
    """The modules that never import on a Mac: those CDL404 names (the project index holds them when the
    run built one) and the packages of device types no Mac has (rules/guards.toml, off_mac_libraries);
    not the project's own packages (linting auto-gptq, its tests' `from auto_gptq import ...` is the code
    being ported, not a library a Mac lacks: CDL404 says the same)."""
    from cudalint.python.guard_facts import guard_facts

    project = model.project
    libraries = (frozenset(project.cuda_modules) if project is not None else _catalog_libraries()) | guard_facts().off_mac_libraries
    own = project.own_packages if project is not None else frozenset()
    return frozenset(library for library in libraries if library.partition(".")[0] not in own) if own else libraries


@functools.lru_cache(maxsize=2)
def _catalog_libraries(integration: bool = False) -> frozenset:
    from cudalint.catalog import load_catalog

    catalog = load_catalog()
    specs = catalog["CDL404"].match.get("imports", ()) if "CDL404" in catalog else ()
    return frozenset(spec["module"] for spec in specs if spec.get("integration") or not integration)
