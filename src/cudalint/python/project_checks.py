"""Checks that read the project index: what a file imports or calls from the rest of the
project. Each is a named check (`check = "..."` in the catalog) like the idioms."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from cudalint.project.availability import library_of
from cudalint.python.context import FileContext
from cudalint.python.names import dotted, is_cuda_device_string, source_of
from cudalint.python.visitor import Registry


def _imported_modules(node, ctx: FileContext) -> List[str]:
    """Absolute module names an import statement loads (a from-import may name submodules)."""
    if isinstance(node, cst.Import):
        return [dotted(alias.name) or "" for alias in node.names]
    base = ctx.model.absolute(len(node.relative), dotted(node.module) if node.module is not None else None)
    if base is None:
        return []
    names = [] if isinstance(node.names, cst.ImportStar) else [dotted(alias.name) or "" for alias in node.names]
    return [base] + [f"{base}.{name}" for name in names]


# -- CDL406: import of a CUDA extension module this project builds -------------------------
def _extension_import(node, ctx: FileContext) -> None:
    project = ctx.model.project
    if project is None:
        return
    for module in _imported_modules(node, ctx):
        found = project.extension(module)
        if found is not None and ctx.optional_import_depth:  # judged at its first call
            ctx.check_state.setdefault("guarded extensions", set()).add(found[0])
        elif found is not None:
            name, place = found
            where = project.display(place.path)
            ctx.report(
                "CDL406",
                node,
                f"{name} is a CUDA extension this project builds ({where}:{place.line}): it exists only "
                "where nvcc compiled it, so this import fails on a Mac; import it under try/except ImportError "
                "with a torch fallback",
                related=(((where, place.line, place.column), f"{name} is built here"),),
            )
            return


def _extension_call(node: cst.Call, ctx: FileContext) -> None:
    """A call into an extension whose import is guarded (`try: import ext / except ImportError: ext =
    None`) with nothing to fall back on: on a Mac the name is None or unbound, so this call fails.
    Reported once per extension and file, at the first such call."""
    project = ctx.model.project
    guarded = ctx.check_state.get("guarded extensions")
    head = dotted(node.func) if guarded else None
    if project is None or head is None:
        return  # the common case: no guarded extension import in this file, nothing to resolve per call
    head = head.split(".")[0]
    bindings = ctx.model.lookup(head)
    found = next((project.extension(b.qualified) for b in bindings if b.kind == "import" and b.qualified), None)
    if found is None or any(_fallback(b, project) for b in bindings) or _may_fall_back(node, ctx):
        return
    name, place = found
    reported = ctx.check_state.setdefault("extension calls", set())
    if name in reported or name not in guarded:
        return
    reported.add(name)
    where = project.display(place.path)
    ctx.report(
        "CDL406",
        node,
        f"{source_of(node.func)}() calls {name}, a CUDA extension this project builds ({where}:{place.line}); its "
        "import is guarded, but nothing here falls back when it failed, so this call fails on a Mac; test "
        "the import's outcome and call a torch version instead",
        related=(((where, place.line, place.column), f"{name} is built here"),),
    )


def _fallback(binding, project) -> bool:
    """Another binding of the name that works without the extension: a def, a class, an import of
    something else, a value other than None."""
    if binding.kind == "import":
        return not binding.qualified or project.extension(binding.qualified) is None
    if binding.kind in ("def", "class"):
        return True
    if binding.kind == "assign":
        return not (isinstance(binding.value, cst.Name) and binding.value.value == "None")
    return False


_CONDITIONAL = (cst.If, cst.IfExp, cst.BooleanOperation, cst.Try, cst.While)


def _may_fall_back(node: cst.Call, ctx: FileContext) -> bool:
    """The call sits under a condition or a try, or its function first tests a module-level name
    (`if ext is None: return slow(x)`, `assert HAS_EXT`): a fallback this check does not judge."""
    frame = None
    for ancestor in reversed(ctx.stack[:-1]):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            frame = ancestor
            break
        if isinstance(ancestor, _CONDITIONAL):
            return True
    if not isinstance(frame, cst.FunctionDef):
        return False
    return any(_tests_module_name(test, ctx) for test in _tests_before(frame.body, node))


def _tests_before(body: cst.CSTNode, call: cst.Call) -> List[cst.BaseExpression]:
    """The tests of the `if`s and `assert`s of a function body that come before the call."""
    found: List[cst.BaseExpression] = []

    class Tests(cst.CSTVisitor):
        reached = False

        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is call:
                self.reached = True
            if self.reached or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(node, (cst.If, cst.Assert)):
                found.append(node.test)
            return True

    body.visit(Tests())
    return found


def _tests_module_name(test: cst.BaseExpression, ctx: FileContext) -> bool:
    names: List[str] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.append(node.value)

    test.visit(Names())
    module = ctx.model.module_scope
    return any(bindings[0].scope is module for bindings in map(ctx.model.lookup, names) if bindings)


def extension_import(registry: Registry) -> None:
    registry.on(cst.Import, _extension_import)
    registry.on(cst.ImportFrom, _extension_import)
    registry.on(cst.Call, _extension_call)


# -- CDL407: a project module that imports a CUDA-only library at import time ---------------
def _import_chain(node, ctx: FileContext) -> None:
    project = ctx.model.project
    if project is None or ctx.optional_import_depth or ctx.model.scope.kind in ("function", "lambda"):
        return  # an import inside a function runs when it is called: the lazy import a port wants
    name = ctx.model.module_name
    if name and project.imported_only_conditionally(name):
        return  # an optional part of its package, imported only under a test or a try: (matchers._optional_module)
    here = project.paths_of_module(name)
    if here is not None and project.imports_cuda_library(here) and not ctx.model.in_tests:
        return  # this module imports the library itself (CDL404 says so there): the chain adds nothing
        # (a test module's first failing import is its one finding, and may be this one: the walk guards the rest)
    if _imports_library_here(node, project, ctx):
        if not ctx.guarded():
            ctx.check_state["imports a CUDA library"] = True
        return
    if ctx.check_state.get("imports a CUDA library"):
        return  # an earlier import of this file (under an `if` that is no CUDA guard) already fails on a Mac
    if _package_fails_first(name, project):
        return  # importing this module runs a package __init__ that already imports the library: fixed there
    entry = here is not None and "." not in name and _package(name, here) == name  # the top package's __init__
    if not entry and not ctx.guarded() and any(_package_init_fails(module, name, project) for module in _imported_modules(node, ctx)):
        ctx.check_state["imports a CUDA library"] = True  # what this file imports after it is never reached on a Mac
    for module in _imported_modules(node, ctx):
        if not project.is_own(module) or module == name:
            continue
        chain = project.cuda_chain(module)
        if chain is None or here in chain:
            continue
        # `import pkg` runs every import of the top package's __init__: each eager one that fails is a place
        # to fix. Elsewhere a chain is reported once, at the import of the module that imports the library
        # itself, and not between siblings of one package (its own unguarded import, CDL404, is the place).
        if not entry and (len(chain) != 2 or here is not None and _package(name, here) == _package(module, chain[0])):
            continue
        library = chain[-1]
        ctx.report(
            "CDL407",
            node,
            f"importing {module} imports {library} at module level, which does not exist on a Mac "
            "(so does every module that imports this one): "
            f"{' → '.join([ctx.path, *map(project.display, chain[:-1]), library])}; import it lazily or guard the import",
        )
        return


def _imports_library_here(node, project, ctx: FileContext) -> bool:
    return any(
        not project.is_own(module) and library_of(module, project.cuda_modules) is not None
        for module in _imported_modules(node, ctx)
    )


def _package_init_fails(module: str, importer: Optional[str], project) -> bool:
    """Importing the project's `module` runs a package `__init__` that fails on a Mac (it imports a
    CUDA-only library at module level, itself or through the project's modules): a package around the
    module that is not around the importer too (that one ran before the importer), or the module itself
    when it is a package. Then nothing the importer imports after it is reached on a Mac, and every
    module of that package fails the same way: the package `__init__` is the place to fix (a kernel
    module imported eagerly, which fails by itself, is a place of its own and does not count here)."""
    if not project.is_own(module) or module == importer:
        return False
    around_importer = _packages(importer or "", project)
    return any(project.cuda_chain(package) is not None
               for package in _packages(module, project) if package == module or package not in around_importer)


def _package_fails_first(module: str, project) -> bool:
    """A package around the module (`pkg` for `pkg.sub.mod`) whose `__init__` imports a CUDA-only
    library itself, or a subpackage whose `__init__` does through other modules of the project (not through
    this one): Python runs it before the module, so nothing the module imports matters on a Mac; that
    `__init__` is the place to fix."""
    here = project.paths_of_module(module)
    for package, path in _packages(module, project).items():
        if package == module:
            continue
        if project.imports_cuda_library(path):
            return True
        chain = project.cuda_chain(package) if "." in package else None  # (the top package's eager imports are each reported)
        if chain is not None and here not in chain:
            return True
    return False


def _packages(module: str, project) -> Dict[str, str]:
    """The project's packages a dotted name lies in, and the name itself when it is one -> their `__init__`
    paths (`pkg`, `pkg.sub` for `pkg.sub.mod`; `from pkg.kernels import f` names `pkg.kernels.f`, whose
    `pkg.kernels` is a plain module, not a package)."""
    parts = module.split(".")
    found: Dict[str, str] = {}
    for end in range(1, len(parts) + 1):
        package = ".".join(parts[:end])
        path = project.paths_of_module(package)
        if path is not None and path.replace("\\", "/").endswith("__init__.py"):
            found[package] = path
    return found


def _package(module: str, path: str) -> str:
    """The package a module belongs to: itself for a package's `__init__`, else its parent."""
    if path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
        return module
    return module.rpartition(".")[0]


def import_chain(registry: Registry) -> None:
    registry.on(cst.Import, _import_chain)
    registry.on(cst.ImportFrom, _import_chain)


# -- CDL113: a call that takes a "cuda" default silently -------------------------------------
def _omitted(call: cst.Call, name: str, position: int) -> bool:
    if any(arg.star for arg in call.args):
        return False  # *args / **kwargs may pass it
    if any(arg.keyword is not None and arg.keyword.value == name for arg in call.args):
        return False
    positional = sum(1 for arg in call.args if arg.keyword is None)
    return position < 0 or positional <= position


def _takes_default(call: cst.Call, name: str, position: int, ctx: FileContext) -> bool:
    """The call leaves the parameter to its default, which is used: not where the function raises unless CUDA is
    there before it can return (GuardEvaluator.call_requires_cuda), so that on a Mac the default never is."""
    return _omitted(call, name, position) and not ctx.model.guards.call_requires_cuda(call, ctx.model.scope)


def choice_default(function: cst.FunctionDef, param: str, ctx: FileContext) -> bool:
    """The project index judged the CUDA default of `param` of this file's module-level function or
    method to hold no device (`impl="cuda"` that the body only compares or hands on under its own name:
    project/device_params.py). A function the index does not list (a nested one) is not known so."""
    model = ctx.model
    project, module, scope = model.project, model.module_name, model.scopes.get(id(function))
    if project is None or not module or scope is None:
        return False
    name, parent = function.name.value, scope.parent
    if parent is model.module_scope:
        local = name
    elif parent is not None and parent.kind == "class" and parent.parent is model.module_scope:
        local = parent.node.name.value if name == "__init__" else f"{parent.node.name.value}.{name}"
    else:
        return False
    return project.choice_default(f"{module}.{local}", param)


def _file_has_cuda_default(ctx: FileContext) -> bool:
    """Whether a parameter of a function of this file defaults to a CUDA device (once per file)."""
    found = ctx.check_state.get("cuda-default-call")
    if found is None:
        found = ctx.check_state["cuda-default-call"] = any(
            param.default is not None and _names_cuda_device(param.default, ctx)
            for scope in ctx.model.scopes.values()
            if isinstance(scope.node, cst.FunctionDef)
            for param in (*scope.node.params.posonly_params, *scope.node.params.params, *scope.node.params.kwonly_params)
        )
    return found


def _names_cuda_device(default: cst.BaseExpression, ctx: FileContext) -> bool:
    """"cuda", "cuda:1" or `torch.device("cuda")` (what the project index counts as a CUDA default)."""
    if type(default) is cst.Call and len(default.args) == 1 and default.args[0].keyword is None:
        if ctx.model.resolve(default.func) != "torch.device":
            return False
        default = default.args[0].value
    return is_cuda_device_string(default)


def _local_defaults(callee, ctx: FileContext) -> Optional[List[Tuple[str, int, cst.CSTNode]]]:
    """(param, position, default node) for "cuda" defaults of a function or class of this file."""
    node = callee.data
    method = False
    if callee.kind == "class":
        init = next(
            (item for item in getattr(node.body, "body", ()) if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"),
            None,
        )
        if init is None:
            return None
        node, method = init, True
    elif ctx.model.scopes.get(id(node)) is not None and ctx.model.scopes[id(node)].self_name is not None:
        method = True
    params = node.params
    ordered = [*params.posonly_params, *params.params]
    found = []
    for index, param in enumerate(ordered):
        if param.default is not None and _names_cuda_device(param.default, ctx) and not choice_default(node, param.name.value, ctx):
            found.append((param.name.value, index - (1 if method else 0), param.default))
    for param in params.kwonly_params:
        if param.default is not None and _names_cuda_device(param.default, ctx) and not choice_default(node, param.name.value, ctx):
            found.append((param.name.value, -1, param.default))
    return found or None


def _cuda_default_call(node: cst.Call, ctx: FileContext) -> None:
    model = ctx.model
    qualified = model.resolve(node.func)
    project = model.project
    rule = ctx.rules.get("CDL113")
    library = rule.match.get("library_defaults", {}).get(model.canonical(qualified)) if rule is not None and qualified else None
    if library is not None:  # `create_block_mask(mask_mod, B, H, Q, KV)`: torch's own "cuda" default
        if _omitted(node, library["param"], library["position"]):
            ctx.report("CDL113", node, f"{source_of(node.func)}() takes its {library['param']}={library['default']} "
                                       f"default ({library['source']}): pass the selected device")
        return
    if qualified is not None:
        if project is None or not project.is_own(qualified):
            return
        found = project.cuda_defaults(qualified)
        if found is None:
            return
        path, params = found
        path = project.display(path)
        for name, position, line, column, written in params:
            if _takes_default(node, name, position, ctx):
                ctx.report(
                    "CDL113",
                    node,
                    f"{source_of(node.func)}() takes its {name}={written} default here ({path}:{line}): "
                    f"pass the selected device",
                    related=(((path, line, column), f"{name} defaults to a CUDA device here"),),
                )
                return
        return
    if not _file_has_cuda_default(ctx):
        return  # no function of this file (nor class's __init__) can supply one: its callees are not worked out
    for callee in model.values(node.func):
        if callee.kind not in ("func", "class"):
            continue
        params = _local_defaults(callee, ctx)
        for name, position, default in params or ():
            if _takes_default(node, name, position, ctx):
                ctx.report(
                    "CDL113",
                    node,
                    f"{source_of(node.func)}() takes its {name}={source_of(default)} default: pass the selected device",
                    related=((default, f"{name} defaults to a CUDA device here"),),
                )
                return


def cuda_default_call(registry: Registry) -> None:
    registry.on(cst.Call, _cuda_default_call)
