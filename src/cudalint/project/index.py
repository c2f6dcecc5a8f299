"""The project index: built once per run from every Python and build file under the project
root, before any file is linted, and cached by content hash in `.cudalint_cache/`."""

from __future__ import annotations

import ast
import json
import os
import re
import warnings
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from cudalint.digests import sha256
from cudalint.project.availability import libraries_of, library_of
from cudalint.python.guard_facts import guard_facts
from cudalint.python.optional_facts import optional_facts
from cudalint.project.facts import FileFacts, read_facts, unread_facts
from cudalint.project import default_calls, device_flow, reach
from cudalint.project.paths import project_key, test_module

INDEX_VERSION = "52"
ENTRY_POINT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_REEXPORTS = 8  # re-exports followed from a name to its definition
# Packages that hold a project's examples, scripts or benchmarks, no API its users import
NOT_API = frozenset({"examples", "example", "scripts", "script", "benchmarks", "benchmark", "demo", "demos", "tools",
                     "experiments", "notebooks", "docs", "tutorials"})
MAX_STAR_DEPTH = 8  # star imports of star imports followed (a cycle ends at the first repeat)
MAX_HELPER_DEPTH = 6  # helpers of helpers followed across modules (a cycle ends here too)
LEAF_CHOICES = {(False, False): 0, (True, False): 1, (False, True): 2}  # facts.LEAF_GUARDS, by position
# The stored index holds a few KB of facts per module: a large tree's (2,000 modules, 12 MB) is far over
# MAX_FILE_BYTES, and a limit that small made every run of such a tree index it again from scratch.
CACHE_MAX_BYTES = 256 * 1024 * 1024
FACTS_MAX_BYTES = 1024 * 1024  # a larger module is named in the index, but its tree is not held to read facts
SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "node_modules", "__pycache__", ".cudalint_cache", "build", "dist", ".eggs", "site-packages"}
CMAKE_TARGET_RE = re.compile(r"\b(pybind11_add_module|add_library|python_add_library|Python_add_library)\s*\(\s*([A-Za-z_][\w.]*)([^)]*)\)", re.S)
CUDA_SOURCE_RE = re.compile(r"\.(cu|cuh)\b")


def _not_api(folder: str) -> bool:
    """A package of examples, scripts, demos (`examples`, `downstream_examples`, `demo-scripts`): a word of
    its name is one of NOT_API's."""
    return any(word in NOT_API for word in re.split(r"[_\-]+", folder.lower()))


class Place(NamedTuple):
    path: str  # relative to the project root, with "/"
    line: int
    column: int


class ProjectIndex:
    """What every module of the project says about itself (facts), joined for the queries below.
    A plain class, not a dataclass: see findings.py on start-up cost."""

    def __init__(self, root: str = "", cuda_modules: Tuple[str, ...] = (), off_mac_modules: Tuple[str, ...] = ()):
        self.root = root
        self.modules: Dict[str, str] = {}  # module -> path
        self.paths: Dict[str, str] = {}  # path -> module
        self._entry_text: Optional[str] = None  # the project files that may name entry points (_entry_point)
        self.loaded: frozenset = frozenset()  # every module of the project another one imports but where its ImportError is caught
        self.facts: Dict[str, FileFacts] = {}  # path -> facts
        self.packages: Set[str] = set()  # the project's own top-level packages/modules
        self.extensions: Dict[str, Place] = {}  # extension module -> where it is built
        self.cuda_modules = cuda_modules  # CDL404's libraries: an unguarded import of one is a finding
        self.off_mac_modules = off_mac_modules  # those and the packages of device types no Mac has: never on a Mac
        self.facts_digest = ""  # changes only when a fact another file can read changes
        self.cuda_only: Set[str] = set()  # classes and functions the project reaches only off a Mac
        self.queries: FrozenSet[str] = frozenset()  # the availability queries (guards.toml) the index was built with
        self.default_calls: Dict[str, Dict[str, List[int]]] = {}  # see default_calls.py
        # module-level functions and classes another module of the project uses, by their defining names;
        # "*name": a name a module that was not read holds ("*": too many names to list)
        self.used_outside: frozenset = frozenset()
        self.globals_read: frozenset = frozenset()  # `module.name` of module-level names other modules read

        self._gate: Dict[bool, Dict[str, frozenset]] = {}  # a top package's __init__ or not -> _gate_roots
        self._gate_words: Optional[frozenset] = None
        self._own: Optional[frozenset] = None  # own_packages
        self._requiring: Optional[frozenset] = None
        self._chains: Dict[str, Optional[List[str]]] = {}
        self._libraries: Dict[str, Optional[str]] = {}
        self._importing: Dict[str, bool] = {}  # path -> imports_cuda_library(path)
        self._extension_of: Dict[str, Optional[Tuple[str, Place]]] = {}  # module -> extension(module)
        self._imported: Optional[Set[str]] = None  # modules another module imports at module level (see is_imported)
        self._conditional: Optional[Set[str]] = None  # modules imported only conditionally (see imported_only_conditionally)
        self._private_reads: Optional[frozenset] = None  # see reads_private
        self._method_names: Optional[frozenset] = None  # see defines_method
        self._checked_switches: Optional[frozenset] = None  # see checked_switch
        self._reaching: Optional[Set[str]] = None  # paths whose import reaches a CUDA-only library (see _cuda_chain)
        self._stars: Dict[str, Dict[str, str]] = {}  # module -> star_exports(module)
        self._exported: Optional[Set[str]] = None  # see exported
        self._conftest_skips: Optional[Dict[str, List[List[str]]]] = None  # folder -> its conftest's collection skips
        self._siblings: Optional[Dict[str, Dict[str, str]]] = None  # script folder -> siblings_of its files
        self._package_siblings: Optional[Dict[str, Dict[str, str]]] = None  # the same of every folder
        self.programs: Set[str] = set()  # the files of packages' folders that may run as programs (`__main__`)
        self._subclasses: Optional[Dict[str, List[Tuple[str, str]]]] = None  # class -> [(subclass, its path)]
        self._attribute_guards: Optional[Dict[str, Optional[Tuple[bool, bool]]]] = None  # see attribute_guard
        self._base_bindings: Dict[Tuple[str, str], Optional[Tuple[bool, bool]]] = {}  # see base_binding
        self.subprojects: List[str] = []  # folders, not the root, with a project file of their own; deepest first
        self._libraries_in: Dict[Tuple[str, str], bool] = {}  # see library_own
        self._device_calls: Optional[Dict[str, list]] = None  # called name -> its device-passing calls, every module's
        self._devices: Dict[tuple, Optional[bool]] = {}  # see returned_device, passed_device

    # -- queries ------------------------------------------------------------------------
    def siblings_of(self, path: str) -> Dict[str, str]:
        """The modules beside the file at `path` as it imports them (see sibling_folders): a script
        folder's file, or a program in a package's folder (`python train.py` there puts the folder first on
        sys.path, so `from distributed import init_device` imports the distributed.py beside it)."""
        if self._siblings is None:
            self._siblings = sibling_folders(self.paths)
        key = project_key(path, self.root)
        folder = key.rpartition("/")[0]
        if folder not in self._siblings and key in self.programs:
            if self._package_siblings is None:
                self._package_siblings = sibling_folders(self.paths, packages_too=True)
            return self._package_siblings.get(folder, {})
        return self._siblings.get(folder, {})

    @property
    def gate_words(self) -> frozenset:
        """Every word of gate_roots_of (any file's), for a text search."""
        if self._gate_words is None:
            self._gate_words = frozenset(self._gate_roots(True))
        return self._gate_words

    def gate_roots_of(self, path: str) -> Dict[str, frozenset]:
        """Words that make the file at `path` worth analysing because of another file, each with the
        top-level names it counts under: the last part of an extension module the project builds, of a
        module that imports a CUDA-only library itself (in a top package's `__init__`: of any module whose
        import reaches one, as CDL407 reports there), of callables with "cuda" defaults and of constants
        that name CUDA or NCCL. Each reaches a file only through an import of the project (or of the
        extension itself), so a word counts only as part of such a name, as the gates read a resolved word
        (analyze._mentions): a file defining its own `device` or reading `self.device` does not pass for
        another file's `device = "cuda"`. A file mentioning none of them has nothing the project rules
        can report."""
        module = self.module_of(path)
        entry = module is not None and "." not in module and os.path.basename(path) == "__init__.py"
        return self._gate_roots(entry)

    def _gate_roots(self, entry: bool) -> Dict[str, frozenset]:
        if entry not in self._gate:
            own = frozenset(self.packages)
            words: Dict[str, set] = {}

            def add(word: str, roots) -> None:
                if word.isidentifier():
                    words.setdefault(word, set()).update(roots)

            for name in self.extensions:  # `import ext`, `from pkg import ext`, `from pkg.ext import f`
                add(name.rsplit(".", 1)[-1], own | {name.split(".", 1)[0]})
            for module in self.modules:
                chain = self.cuda_chain(module)
                if chain is not None and (entry or len(chain) == 2):
                    add(module.rsplit(".", 1)[-1], {module.split(".", 1)[0]})
            for path, facts in self.facts.items():
                module = self.paths.get(path)
                if module is None:
                    continue
                roots = {module.split(".", 1)[0]}
                for name in facts.cuda_defaults:
                    add(name.rsplit(".", 1)[-1], roots)
                for name, (kind, value, _, _) in facts.constants.items():
                    if kind == "str" and (value == "nccl" or value == "cuda" or str(value).startswith("cuda:")):
                        add(name, roots)
            self._gate[entry] = {word: frozenset(roots) for word, roots in words.items()}
        return self._gate[entry]

    @property
    def own_packages(self) -> frozenset:
        """The project's own top-level packages and modules, frozen once (the gates ask for every file)."""
        if self._own is None or len(self._own) != len(self.packages):
            self._own = frozenset(self.packages)
        return self._own

    def module_of(self, path: str) -> Optional[str]:
        return self.paths.get(project_key(path, self.root))

    def library_own(self, path: str, top: str) -> bool:
        """The file is the code of the library `top` itself, vendored in the project: it lies in a top-level
        package folder named `top` (every folder from that one down to the file holds an `__init__.py`, its
        parent none:
        third_party/cutlass/python/cutlass/...), or in a subproject of the tree (a folder, not the root,
        with a project file of its own) that holds that package (the library's own examples and tests).
        Its imports of `top` are the library's own code, not the project's use of the library."""
        key = project_key(path, self.root)
        folder = key.rpartition("/")[0]
        while folder and f"{folder}/__init__.py" in self.paths:
            head, _, name = folder.rpartition("/")
            if name == top and f"{head}/__init__.py" not in self.paths:
                return True  # the top of its package chain, as `import top` finds it (not mamba_ssm/ops/triton)
            folder = head
        holder = next((sub for sub in self.subprojects if key.startswith(sub + "/")), None)
        if holder is None:
            return False
        if (holder, top) not in self._libraries_in:
            self._libraries_in[(holder, top)] = any(
                other.startswith(holder + "/") and other.endswith(f"/{top}/__init__.py")
                and f"{other[:-len(f'/{top}/__init__.py')]}/__init__.py" not in self.paths for other in self.paths)
        return self._libraries_in[(holder, top)]

    def display(self, path: str) -> str:
        """A project path as the run shows paths (relative to the working folder)."""
        return os.path.relpath(os.path.join(self.root, path))

    def paths_of_module(self, module: str) -> Optional[str]:
        return self.modules.get(module)

    def is_own(self, module: str) -> bool:
        return module.split(".")[0] in self.packages

    def extension(self, module: str) -> Optional[Tuple[str, Place]]:
        """The extension module an import names (`fused_ops_cuda`, `pkg.fused_ops_cuda`, `pkg._C`)."""
        if module not in self._extension_of:  # asked for every import of every module a chain passes
            self._extension_of[module] = self._extension(module)
        return self._extension_of[module]

    def _extension(self, module: str) -> Optional[Tuple[str, Place]]:
        parts = module.split(".")
        for end in range(len(parts), 0, -1):
            name = ".".join(parts[:end])
            if self.modules.get(name, "").endswith("__init__.py"):
                return None  # the project's own package of that name is what the import finds (a folder comes first)
            if name in self.extensions:
                return name, self.extensions[name]
            short = parts[end - 1]
            if end == len(parts) and short in self.extensions and self.is_own(module):
                return short, self.extensions[short]
        return None

    def _module_file(self, module: str) -> Optional[str]:
        return self.modules.get(module)

    def cuda_chain(self, module: str) -> Optional[List[str]]:
        if module not in self._chains:
            self._chains[module] = self._cuda_chain(module)
        return self._chains[module]

    def _cuda_chain(self, module: str) -> Optional[List[str]]:
        """[module path, ..., CUDA-only library] when importing `module` imports a CUDA-only library (or a
        CUDA extension the project builds) at module level through the project's own modules (unguarded
        imports only); None otherwise."""
        seen: Set[str] = set()
        start = self._module_file(module)
        if start is None or start not in self._reaching_paths():
            return None
        stack: List[Tuple[str, List[str]]] = [(start, [start])]
        while stack:
            path, chain = stack.pop()
            if path in seen:
                continue
            seen.add(path)
            facts = self.facts.get(path)
            if facts is None:
                continue
            for imported, _line, _column, guarded in facts.imports:
                if guarded:
                    continue
                reached, target = self._import_step(imported)
                if reached is not None:
                    return [*chain, reached]
                if target is not None and target not in seen:
                    stack.append((target, [*chain, target]))
        return None

    def _import_step(self, imported: str) -> Tuple[Optional[str], Optional[str]]:
        """One unguarded import, as the chain search reads it: (the CUDA-only library or built extension it
        names, None) when it ends a chain, else (None, the path of the project's module it goes on to, if any)."""
        library = self._cuda_library(imported)
        if library is not None and not self.is_own(imported):
            return library, None
        built = self.extension(imported)
        if built is not None:
            return built[0], None
        return None, self._module_file(imported) if self.is_own(imported) else None

    def _reaching_paths(self) -> Set[str]:
        """Every path from which _cuda_chain's search finds a chain, found once for the whole project (the
        same graph read backwards from the modules that import a library or extension themselves), so a
        module that reaches none is answered without walking everything it imports: on a tree of 2,000
        modules that search, once per module, was quadratic."""
        if self._reaching is None:
            importers: Dict[str, List[str]] = {}
            found: List[str] = []
            for path, facts in self.facts.items():
                for imported, _line, _column, guarded in facts.imports:
                    if guarded:
                        continue
                    reached, target = self._import_step(imported)
                    if reached is not None:
                        found.append(path)
                        break
                    if target is not None:
                        importers.setdefault(target, []).append(path)
            reaching: Set[str] = set()
            while found:
                path = found.pop()
                if path not in reaching:
                    reaching.add(path)
                    found.extend(importers.get(path, ()))
            self._reaching = reaching
        return self._reaching

    def imports_cuda_library(self, path: str) -> bool:
        """The module at `path` imports a CUDA-only library at module level, unguarded."""
        if path not in self._importing:
            facts = self.facts.get(path)
            self._importing[path] = facts is not None and any(
                not guarded and self._cuda_library(module) is not None and not self.is_own(module)
                for module, _, _, guarded in facts.imports
            )
        return self._importing[path]

    def _cuda_library(self, module: str) -> Optional[str]:
        if module not in self._libraries:
            self._libraries[module] = library_of(module, self.cuda_modules)
        return self._libraries[module]

    def function(self, qualified: str) -> Optional[Tuple[FileFacts, str, str]]:
        """(facts, path, local name) of a function or class defined in the project, through re-exports."""
        qualified = self.follow(qualified)
        module, _, name = qualified.rpartition(".")
        while module:
            path = self._module_file(module)
            if path is not None:
                return self.facts.get(path), path, name
            module, _, head = module.rpartition(".")
            name = f"{head}.{name}"
        return None

    def follow(self, qualified: str) -> str:
        """The name a re-export stands for (`pkg.require_cuda` -> `pkg.testing.require_cuda` when the
        package's __init__ says `from .testing import require_cuda`); the name itself otherwise."""
        for _ in range(MAX_REEXPORTS):
            module, name, rest = self.split(qualified)
            facts = self.facts.get(self.modules[module]) if module is not None else None
            if facts is None or name in facts.definitions:
                break
            target = facts.exports.get(name)
            if target is None:
                break
            qualified = f"{target}.{rest}" if rest else target
        return qualified

    def origin(self, qualified: str) -> Optional[Tuple[str, str]]:
        """(definition, the attribute path after it) of a class or function the project defines at
        module level, through re-exports; None for anything else (a library, a module, a constant)."""
        module, name, rest = self.split(self.follow(qualified))
        facts = self.facts.get(self.modules[module]) if module is not None else None
        if facts is None or name not in facts.definitions:
            return None
        return f"{module}.{name}", rest

    def split(self, qualified: str) -> Tuple[Optional[str], str, str]:
        """`pkg.mod.Class.attr` -> ("pkg.mod", "Class", "attr"): the longest prefix that is a module."""
        parts = qualified.split(".")
        if parts[0] not in self.packages:
            return None, "", ""
        for end in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:end])
            if module in self.modules:
                return module, parts[end], ".".join(parts[end + 1:])
        return None, "", ""

    def star_exports(self, module: str, depth: int = 0) -> Dict[str, str]:
        """What `from module import *` binds, for a module of the project: name -> the qualified name it
        stands for (`pkg.models._utils.HAS_FLASH`, through the module's own star imports too)."""
        if module not in self._stars:
            self._stars[module] = {}  # a cycle of star imports ends here
            self._stars[module] = self._star_exports(module, depth)
        return self._stars[module]

    def _star_exports(self, module: str, depth: int) -> Dict[str, str]:
        path = self._module_file(module) if self.is_own(module) else None
        facts = self.facts.get(path) if path is not None else None
        if facts is None or not facts.star or depth >= MAX_STAR_DEPTH:
            return {}
        listed, public, sources = facts.star
        found: Dict[str, str] = {}
        for source in sources:
            if source:
                found.update(self.star_exports(source, depth + 1))
        found.update((name, origin or f"{module}.{name}") for name, origin in public.items())
        if listed is None:
            return found
        return {name: found.get(name, f"{module}.{name}") for name in listed}

    def exported(self, qualified: str) -> bool:
        """A top-level package's `__init__` re-exports the name (`from .utils import load`, `from .utils
        import *`): the distribution's public API, which its users call. (A subpackage's `__init__`
        gathers names for the package's own modules.)"""
        if self._exported is None:
            found: Set[str] = set()
            for path, facts in self.facts.items():
                module = self.paths.get(path)
                if module is None or "." in module or not path.replace("\\", "/").endswith("__init__.py"):
                    continue
                found.update(facts.exports.values())
                if facts.star:
                    found.update(self.star_exports(module).values())
            self._exported = found
        return qualified in self._exported

    def public_api(self, qualified: str) -> bool:
        """A module-level function or class of a public module of one of the project's packages
        (`torchkm.cvkdwd.cvkdwd` in torchkm/cvkdwd.py beside torchkm/__init__.py): users import it from
        there and call it with its defaults, whatever the package's own code passes. Not a private name or
        module (`_helpers`), a test module, nor a package of examples, scripts or benchmarks."""
        module, _, name = qualified.rpartition(".")
        parts = module.split(".")
        if len(parts) < 2 or name.startswith("_") or any(part.startswith("_") for part in parts) \
                or any(_not_api(folder) for folder in parts[:-1]):  # a benchmarks/ package, not utils/benchmarks.py
            return False
        path, top = self.modules.get(module), self.modules.get(parts[0])
        return path is not None and top is not None and top.replace("\\", "/").endswith("/__init__.py") \
            and not self.test_module(module)

    def calls_in_sight(self, qualified: str) -> bool:
        """Every caller of a module-level function is in its own module: no other module of the project
        uses it (by any name a re-export gives it), and no top-level package's `__init__` exports it."""
        return not self._used_from(self.used_outside, qualified)

    def read_elsewhere(self, qualified: str) -> bool:
        """A module-level name of a project module may be read outside it: another module reads it (`from m
        import name`, `m.name`, a bare name its `from m import *` binds), its module's `__all__` lists it, a
        top-level package's `__init__` exports it, or a file the index could not read may."""
        module, _, name = qualified.rpartition(".")
        facts = self.facts.get(self.modules.get(module, ""))
        listed = facts.star[0] if facts is not None and facts.star else None
        return self._used_from(self.globals_read, qualified) or name in (listed or ())

    def _used_from(self, used: frozenset, qualified: str) -> bool:
        """`qualified` is among the names other modules use (`used`: used_outside, globals_read), or may be."""
        return "*" in used or qualified in used or f"*{qualified.rpartition('.')[2]}" in used or self.exported(qualified)

    def collection_skips(self, path: str) -> List[List[str]]:
        """What the collection hooks of the conftest.py files above a test file skip where CUDA is missing
        (collection_skips.py): pytest reads every conftest.py from the rootdir down to the test's folder."""
        if self._conftest_skips is None:
            self._conftest_skips = {conftest.rpartition("/")[0]: facts.collection_skips for conftest, facts in self.facts.items()
                                    if facts.collection_skips and conftest.rpartition("/")[2] == "conftest.py"}
        found: List[List[str]] = []
        folder = path
        while self._conftest_skips and folder:
            folder = folder.rpartition("/")[0]
            found.extend(self._conftest_skips.get(folder, ()))
        return found

    def saved_on_host(self, saver: str, key: str, for_test: bool) -> bool:
        """The project saves files named `key` with `saver`, and every such save writes host values only
        (saved_files.py); a test module's saves count for the loads of test modules, as host data."""
        found = [entry for facts in self.facts.values() for entry in (facts.saves.get(f"{saver}|{key}"),) if entry]
        counted = [bool(host) or for_test for host, testing in found if for_test or not testing]
        return bool(counted) and all(counted)

    def ships(self, qualified: str) -> bool:
        """The name comes from a module that is a file of the project (through re-exports)."""
        return self.split(self.follow(qualified))[0] is not None or qualified in self.modules

    def is_imported(self, module: str) -> bool:
        """Another module of the project imports this one at module level: it is library code, which
        runs as the project is used, whatever its `if __name__ == "__main__":` block does. A test suite's
        import is not one: a test calls a program's `main(args)` with its own arguments, and the program's
        main block is still what runs when people use it."""
        if self._imported is None:
            self._imported = {
                imported for path, facts in self.facts.items() if not facts.testing
                for imported, _line, _column, _guarded in facts.imports if imported != self.paths.get(path)
            }
        return module in self._imported

    def test_module(self, module: str) -> bool:
        """The project's module belongs to a test suite (FileFacts.testing: paths.test_module, told its text)."""
        path = self.modules.get(module)
        facts = self.facts.get(path) if path is not None else None
        return facts.testing if facts is not None else test_module(module, path or "")

    def imported_only_conditionally(self, module: str) -> bool:
        """Every module-level import of this module by the project's other (non-test) modules sits under a
        `try:` that goes on without it, or under an `if` that tests whether a package imports (`if
        is_megatron_available(): from .megatron import *`, `find_spec`, a CUDA or platform test,
        `TYPE_CHECKING`), or in a module that is itself imported only so; and there is at least one such
        import. The module is an optional part of its package, loaded where its test says the library is
        there: its own imports of that library are what the test is about, not a porting problem. Not a
        program nor an entry point, which people run."""
        if self._conditional is None:
            self._conditional = self._conditionally_imported()
        return module in self._conditional

    def _conditionally_imported(self) -> Set[str]:
        importers: Dict[str, List[Tuple[str, bool]]] = {}  # module -> (the importer's module, guarded)
        for path, facts in self.facts.items():
            importer = self.paths.get(path) or ""
            if facts.testing:
                continue
            for imported, _line, _column, guarded in facts.imports:
                guarded = guarded and self._optional_test(facts.optional_imports.get(imported, ()))
                parts = imported.split(".")
                for end in range(len(parts), 0, -1):  # `import a.b.c` runs a/__init__ and a/b/__init__ first
                    module = ".".join(parts[:end])
                    if module in self.modules and not f"{importer}.".startswith(f"{module}."):
                        importers.setdefault(module, []).append((importer, guarded))  # (its own packages ran first)
        found: Set[str] = set()
        changed = True
        while changed:  # the least set closed under "every import is guarded or made by a member"
            changed = False
            for module, made in importers.items():
                if module in found:
                    continue
                facts = self.facts.get(self.modules[module])
                if facts is None or facts.script or self._entry_point(module):
                    continue
                if all(guarded or importer in found for importer, guarded in made):
                    found.add(module)
                    changed = True
        return found

    def _optional_test(self, names: Sequence[str]) -> bool:
        """An import's `try:` (""), or an `if` test naming an availability query or helper of the project,
        a CUDA query, the platform (guards.toml `platforms`), or TYPE_CHECKING (optional_code.toml
        `never_true`): FileFacts.optional_imports."""
        if not names:
            return False
        optional, platforms = optional_facts(), guard_facts().platforms
        return any(not name or name in optional.never_true or name in optional.queries or name in platforms
                   or self.guard_of(name) is not None or self.tested_library(name) is not None for name in names)

    def loaded_on_demand(self, module: str) -> bool:
        """A module of one of the project's packages (its folder holds an `__init__.py`) that no other
        module imports by name, anywhere, but where its ImportError is caught; that does not run as a
        program and is not a test: something loads it when asked for (importlib with a computed name, a
        plugin table, a user's own import), never as the package's code runs."""
        path = self.modules.get(module)
        facts = self.facts.get(path) if path is not None else None
        if facts is None or facts.script or facts.testing:
            return False
        if module in self.loaded or self._entry_point(module):
            return False
        folder = path.rpartition("/")[0]
        return bool(folder) and f"{folder}/__init__.py" in self.paths and not path.endswith("/__init__.py")

    def _entry_point(self, module: str) -> bool:
        """The module is named as an entry point (`fastops.evaluate:main` under [project.scripts], a
        console_scripts or plugin entry of setup.py or setup.cfg): a program, or loaded as a plugin is."""
        if self._entry_text is None:
            texts = []
            for folder in ("", *self.subprojects):
                for name in ENTRY_POINT_FILES:
                    data = _read(os.path.join(self.root, folder, name))
                    if data:
                        texts.append(data.decode("utf-8", "replace"))
            self._entry_text = "\n".join(texts)
        return bool(self._entry_text) and re.search(rf"(?<![\w.]){re.escape(module)}\s*:", self._entry_text) is not None

    def is_program_only(self, module: str) -> bool:
        """The module runs as a program (`if __name__ == "__main__":`) and no other module of the project
        imports it: nothing but its own code calls its functions."""
        path = self.modules.get(module)
        facts = self.facts.get(path) if path is not None else None
        return facts is not None and facts.script and not self.is_imported(module)

    def is_cuda_only(self, qualified: str) -> bool:
        """A class or function whose every use in the project sits where the host is not a Mac."""
        return qualified in self.cuda_only

    def guard_of(self, qualified: str, depth: int = 0) -> Optional[Tuple[bool, bool]]:
        """(true only off a Mac, false only off a Mac) of a helper's return value, when it is a guard; a
        library's availability query a module of the project re-exports is that query."""
        if self.follow(qualified) in self.queries:
            return True, False
        found = self.function(qualified)
        if found is None or found[0] is None:
            return None
        facts, _, name = found
        known = facts.guards.get(name) or self._tests_cuda_library(facts, name)
        if known is not None or name not in facts.guards_via:
            return known
        return self.looked_up(facts.guards_via[name], depth)

    def _tests_cuda_library(self, facts: FileFacts, name: str) -> Optional[Tuple[bool, bool]]:
        """`is_fp8_available()` true only where MS-AMP or Transformer Engine imports: true only off a Mac."""
        parts = libraries_of(facts.availability.get(name, ""))
        return (True, False) if parts and all(library_of(part, self.off_mac_modules) for part in parts) else None

    def subclass_binds(self, qualified: str, name: str, elsewhere: bool = True) -> bool:
        """A class derived (at any remove) from the class `qualified` binds `name` (FileFacts.classes):
        an instance may hold that instead of the class's own. `elsewhere`: only classes of other modules."""
        qualified = self.follow(qualified)
        home = self._home(qualified) if elsewhere else None
        return any(where != home and name in self._class(klass)["binds"] for klass, where in self._derived(qualified))

    def self_calls(self, qualified: str, method: str) -> Optional[List[Tuple[str, list]]]:
        """The `self.method(...)` calls that the classes of other modules related to the class
        `qualified` (its bases, at any remove, and every class derived from those) make, as
        (caller class, what the call passes); None where one of its bases is a class of the project the
        index did not read."""
        qualified = self.follow(qualified)
        related = set()
        for klass, entry in self._lineage(qualified):
            if entry is None:
                if self.is_own(klass):
                    return None
                continue
            related.add(klass)
            related.update(derived for derived, _ in self._derived(klass))
        home = self._home(qualified)
        return [
            (klass, passed) for klass in sorted(related) if self._home(klass) != home
            for passed in self._class(klass).get("calls", {}).get(method, ())
        ]

    def class_constant(self, qualified: str, name: str) -> Optional[bool]:
        """The truth of a flag an instance of the class `qualified` reads: the nearest class among it and
        its bases that binds the name binds it to a constant (FileFacts.classes), and no class derived
        from `qualified` binds it again; None when that is not known."""
        qualified = self.follow(qualified)
        for _, entry in self._lineage(qualified):
            if entry is not None and name in entry["binds"]:
                truth = entry.get("constants", {}).get(name)
                return None if truth is None or self.subclass_binds(qualified, name, elsewhere=False) else truth
        return None

    def class_guard(self, qualified: str, name: str) -> Optional[Tuple[bool, bool]]:
        """What a flag an instance of the class `qualified` reads guards, where the nearest class among it
        and its bases (at any remove) that binds the name is one whose methods bind it on `self` to a CUDA
        guard (FileFacts.classes "guards": `self.use_gpu = torch.cuda.is_available() and use_gpu` in the
        base class of another module) and no class derived from `qualified` binds the name in its body;
        None when that is not known."""
        qualified = self.follow(qualified)
        for _, entry in self._lineage(qualified):
            if entry is None:
                continue
            guards = entry.get("guards")
            guard = guards.get(name) if isinstance(guards, dict) else None
            if isinstance(guard, list) and len(guard) == 2 and all(type(part) is bool for part in guard):
                return None if self.subclass_binds(qualified, name, elsewhere=False) else (guard[0], guard[1])
            if name in entry["binds"]:
                return None
        return None

    def base_binding(self, qualified: str, name: str) -> Optional[Tuple[bool, bool]]:
        """What a base of the class `qualified` in another module (at any remove) says of flag `name`, for
        a class whose own file binds it (`if torch.cuda.is_available(): self.use_gpu = True` in a subclass
        of a class that set `self.use_gpu = config.use_gpu`): the base's guard where its class facts hold
        one, (False, False) where that base's module stores the name otherwise (or a base of the project
        was not read); None where no base of another module can bind it."""
        key = (qualified, name)
        if key not in self._base_bindings:
            self._base_bindings[key] = self._base_binding(self.follow(qualified), name)
        return self._base_bindings[key]

    def _base_binding(self, qualified: str, name: str) -> Optional[Tuple[bool, bool]]:
        home = self._home(qualified)
        for klass, entry in self._lineage(qualified):
            if klass == qualified:
                continue
            where = self._home(klass)
            if entry is None:
                if self.is_own(klass) and where is None:
                    return (False, False)
                continue
            if where is None or where == home:
                continue  # a base in the same file: its bindings are the file's own
            guards = entry.get("guards")
            guard = guards.get(name) if isinstance(guards, dict) else None
            if isinstance(guard, list) and len(guard) == 2 and all(type(part) is bool for part in guard):
                return (guard[0], guard[1])
            if name in entry["binds"] or name in self.facts[where].bound_attributes:
                return (False, False)
        return None

    def attribute_guard(self, name: str) -> Optional[Tuple[bool, bool]]:
        """What reading attribute `name` of an object the code cannot name guards (`config.total_visible_gpus`
        of a parameter), where the project's classes bind that name only to one CUDA guard (ColBERT's
        settings class: `total_visible_gpus = torch.cuda.device_count()`), in every module that binds it
        to one and with nothing else beside it there (FileFacts.attribute_guards); None otherwise."""
        if self._attribute_guards is None:
            merged: Dict[str, Optional[Tuple[bool, bool]]] = {}
            for facts in self.facts.values():
                for attribute, guard in facts.attribute_guards.items():
                    found = tuple(guard) if isinstance(guard, list) and len(guard) == 2 else None
                    merged[attribute] = found if merged.get(attribute, found) == found else None
            for facts in self.facts.values():
                for attribute in facts.bound_attributes:
                    if attribute in merged and attribute not in facts.attribute_guards:
                        merged[attribute] = None  # another module stores it, to something else
            self._attribute_guards = merged
        return self._attribute_guards.get(name)

    def compiled(self, qualified: str) -> bool:
        """A name under the project's own package that none of its Python modules holds: what a compiled
        extension module of the project provides (bmtrain's `from .. import C` then `C.ncclAllReduce`;
        spconv's `core_cc`, compiled, with only `.pyi` stubs beside it). False where a module that would
        hold it was not read (it may define it)."""
        module, name, _ = self.split(self.follow(qualified))
        if module is None or not name or f"{module}.{name}" in self.modules:
            return False
        facts = self.facts.get(self.modules[module])
        if facts is None or facts.words:
            return False
        exported = facts.exports.get(name)  # `from . import C` in the package: the submodule itself
        return (name not in facts.definitions and exported in (None, f"{module}.{name}") and name not in facts.assigned
                and name not in self.star_exports(module))

    def checked_switch(self, name: str) -> bool:
        """Some module of the project checks a switch of this last name against CUDA before relying on it
        (`if args.use_cuda: assert torch.cuda.is_available()` in the CLI's validation), or sets it True only
        in an arm that never runs on a Mac (`distributed = True` beside `init_dist(...)`; FileFacts.
        checked_switches): the project says there what the switch means, wherever it is handed on; unless
        some call of the project turns it on by itself (`use_cuda=True`; FileFacts.switched_on), or may (a
        module whose tree was not read names it, or holds too many names to list). A test's call does not
        count: a test that turns it on tests the CUDA mode, and says nothing of the program's callers."""
        if self._checked_switches is None:
            checked = {name for facts in self.facts.values() for name in facts.checked_switches}
            for path, facts in self.facts.items():
                if not facts.testing:
                    checked.difference_update(facts.switched_on)
                if "*" in facts.words:
                    checked.clear()
                checked.difference_update(facts.words)
            self._checked_switches = frozenset(checked)
        return name in self._checked_switches

    def reads_private(self, name: str) -> bool:
        """Some module reads the private attribute `name` (`x._load`) other than in a method of its own
        class, or may (a module whose tree was not read holds the word, or too many to list): a private
        method called only as `self._load(...)` has its callers in its class."""
        if self._private_reads is None:
            self._private_reads = frozenset(word for facts in self.facts.values() for word in _private_words(facts))
        return name in self._private_reads or "*" in self._private_reads

    def defines_method(self, name: str) -> bool:
        """A module-level class of some module defines a method `name`, or may (a module whose tree was not
        read holds the word, or too many to list): `x.get_device()` may be the project's own method."""
        if self._method_names is None:
            self._method_names = frozenset(word for facts in self.facts.values() for word in (*facts.method_names, *facts.words))
        return name in self._method_names or "*" in self._method_names

    def derived_reads_private(self, qualified: str, name: str) -> bool:
        """A module holding a class derived from the class `qualified` (at any remove) reads the private
        attribute `name` (FileFacts.private), or may (a module whose tree was not read holds the word)."""
        for where in {where for _, where in self._derived(self.follow(qualified))}:
            words = _private_words(self.facts[where]) if where in self.facts else ()
            if name in words or "*" in words:
                return True
        return False

    def derives_from(self, qualified: str, bases: frozenset) -> bool:
        """The class (through re-exports) is one of `bases` or derives from one at any remove, as far as
        the index holds the project's classes (`StrEnum` of the project's own compatibility module)."""
        return any(klass in bases for klass in self.lineage(qualified))

    def lineage(self, qualified: str) -> Iterator[str]:
        """The class (through re-exports) and its bases at any remove, as far as the index holds the
        project's classes; a class from outside the project ends its line (`torch.nn.Linear`)."""
        return (klass for klass, _entry in self._lineage(self.follow(qualified)))

    def _class(self, qualified: str) -> Optional[dict]:
        facts = self.facts.get(self._home(qualified) or "")
        return facts.classes.get(qualified.rpartition(".")[2]) if facts is not None else None

    def _home(self, qualified: str) -> Optional[str]:
        """The path of the module a class (or function) of the project is defined in."""
        return self.modules.get(qualified.rpartition(".")[0])

    def _lineage(self, qualified: str):
        """The class and its bases at any remove, depth first (the resolution order of single bases),
        each with its facts (None: a class the index holds no facts of, whose bases are not followed)."""
        stack, seen = [qualified], set()
        while stack:
            klass = stack.pop()
            if klass in seen:
                continue
            seen.add(klass)
            entry = self._class(klass)
            yield klass, entry
            if entry is not None:
                stack.extend(reversed([self.follow(base) for base in entry["bases"]]))

    def _derived(self, qualified: str) -> List[Tuple[str, str]]:
        """Every class derived (at any remove) from the class `qualified`, with its path."""
        if self._subclasses is None:
            self._subclasses = {}
            for where, facts in self.facts.items():
                module = self.paths.get(where)
                for klass, entry in facts.classes.items():
                    for base in entry["bases"]:
                        self._subclasses.setdefault(self.follow(base), []).append((f"{module}.{klass}", where))
        found, seen, stack = [], set(), [qualified]
        while stack:
            for klass, where in self._subclasses.get(stack.pop(), ()):
                if klass not in seen:
                    seen.add(klass)
                    found.append((klass, where))
                    stack.append(klass)
        return found

    def guard_constant(self, qualified: str, depth: int = 0) -> Optional[Tuple[bool, bool]]:
        """(true only off a Mac, false only off a Mac) of a module constant bound to a guard."""
        found = self.function(qualified)
        if found is None or found[0] is None:
            return None
        facts, _, name = found
        known = facts.guard_constants.get(name) or self._tests_cuda_library(facts, name)
        if known is not None or name not in facts.guard_constants_via:
            return known
        return self.looked_up(facts.guard_constants_via[name], depth)

    @property
    def requiring(self) -> frozenset:
        """The bare names of the project's functions that raise unless CUDA is there (a cheap first test)."""
        if self._requiring is None:
            self._requiring = frozenset(name.rpartition(".")[2] for facts in self.facts.values() for name in facts.requires)
        return self._requiring

    def requires_cuda(self, qualified: str) -> bool:
        """A function of the project that raises unless CUDA is there, before it can return."""
        found = self.function(qualified)
        return found is not None and found[0] is not None and found[2] in found[0].requires

    def forwards_keywords(self, qualified: str) -> bool:
        """A test marker of the project whose keywords decide its skip (it forwards them to Lightning's
        _runif_reasons, rules/guards.toml marker_reasons)."""
        found = self.function(qualified)
        return found is not None and found[0] is not None and found[2] in found[0].markers

    def tested_library(self, qualified: str) -> Optional[str]:
        """A helper or module constant of the project that is true only where a package imports: the
        module it tests ("" when not known); None for anything else."""
        found = self.function(qualified)
        return found[0].availability.get(found[2]) if found is not None and found[0] is not None else None

    def skips_off_cuda(self, qualified: str, depth: int = 0) -> bool:
        """A test decorator (or decorator factory) of the project that skips unless CUDA is there."""
        found = self.function(qualified)
        if found is None or found[0] is None:
            return False
        facts, _, name = found
        if name in facts.skips:
            return True
        return name in facts.skips_via and bool(self.looked_up(facts.skips_via[name], depth))

    def device_skips(self, qualified: str) -> list:
        """[position, parameter, value] entries of a project helper that stops a test for that value of
        that parameter where CUDA is missing (FileFacts.device_skips)."""
        found = self.function(qualified)
        if found is None or found[0] is None:
            return []
        return found[0].device_skips.get(found[2], [])

    def looked_up(self, entry, depth: int = 0):
        """A helper that depends on other modules' helpers: its table entry for what they are."""
        if depth >= MAX_HELPER_DEPTH:
            return None
        leaves, table = entry
        choices = []
        for kind, qualified in leaves:
            guard = self.guard_of(qualified, depth + 1) if kind == "call" else self.guard_constant(qualified, depth + 1)
            choices.append(str(LEAF_CHOICES.get(tuple(guard) if guard else (False, False), 0)))
        found = table.get("".join(choices))
        return tuple(found) if isinstance(found, list) else found

    def every_call_passes(self, name: str, param: str, not_none: bool = False) -> bool:
        """The project calls `name` and each of those calls passes `param` (default_calls.py): a call that
        hands on a wrapper's own CUDA default passes it only if every call of the wrapper passes that, and
        so on along the chain (a cycle, `run` handing to another `run`, adds no call that leaves it out);
        and some call along it passes a value of its own (a function only calling itself has none).
        `not_none`: a call that passes what may be None (`device=args.device` of an option with no default)
        counts as one that leaves the parameter out (for a parameter whose default is None)."""
        seen, pending, chosen = set(), [(name, param)], False
        while pending:
            pair = pending.pop()
            if pair in seen:
                continue
            seen.add(pair)
            counts = self.default_calls.get(pair[0], {}).get(pair[1])
            if not counts or counts[0] == 0 or counts[1] > 0 or (not_none and counts[4] > 0):
                return False
            chosen = chosen or counts[3] > 0
            pending.extend((wrapper, handed) for wrapper, handed in counts[2])
        return chosen

    def cuda_defaults(self, qualified: str):
        found = self.function(qualified)
        if found is None or found[0] is None:
            return None
        params = found[0].cuda_defaults.get(found[2])
        return (found[1], params) if params else None

    def host_device_default(self, qualified: str) -> Optional[int]:
        """The position (-1: keyword only) of the `device` parameter of the project's function or class
        `qualified` that defaults to None or "cpu" (FileFacts.host_device_defaults); None where it has none."""
        found = self.function(qualified)
        return found[0].host_device_defaults.get(found[2]) if found is not None and found[0] is not None else None

    # -- devices across modules (device_flow.py) ---------------------------------------------------------
    def returns_host(self, qualified: str) -> bool:
        """The project's module-level function `qualified` is annotated to return host values only (Python
        or NumPy data: FileFacts.host_returns)."""
        found = self.function(qualified)
        return found is not None and found[0] is not None and found[2] in found[0].host_returns

    def returned_device(self, qualified: str) -> Optional[bool]:
        """What the project's function `qualified` returns, where every return is a device: True where it is
        the CPU wherever the host is a Mac (`"cuda" if torch.cuda.is_available() else "cpu"`), False where
        no Mac ever gets it, None where that is not known."""
        return self._device(("ret", qualified), 0)

    def passed_device(self, name: str, param: str, position: int, kind: int) -> Optional[bool]:
        """The same of what the project's calls of `name` pass for `param` (at `position` as the function
        is written, -1 keyword only; `kind` says how a call passes it: device_flow.FUNCTION, METHOD, INIT):
        None where a call passes it otherwise or leaves it out, or no call passes it."""
        return self._device(("param", name, param, position, kind), 0)

    def _device(self, atom: tuple, depth: int) -> Optional[bool]:
        if atom in self._devices:
            return self._devices[atom]  # worked out, or being worked out (a cycle: not known)
        if depth > device_flow.MAX_DEPTH:
            return None
        self._devices[atom] = None
        if atom[0] == "ret":
            found = self.function(atom[1])
            atoms = found[0].device_returns.get(found[2]) if found is not None and found[0] is not None else None
            answer = self._joined(atoms, depth) if atoms else None
        else:
            answer = self._passed(*atom[1:], depth)
        self._devices[atom] = answer
        return answer

    def _passed(self, name: str, param: str, position: int, kind: int, depth: int) -> Optional[bool]:
        if self._device_calls is None:
            self._device_calls = {}
            for facts in self.facts.values():
                for called, calls in facts.device_calls.items():
                    self._device_calls.setdefault(called, []).extend(calls)
        cpu, counted = False, 0
        for qualified, on_object, passed, _ in self._device_calls.get(name, ()):
            if qualified and not self.is_own(qualified):
                continue  # another library's function of that name
            at = position - 1 if kind == device_flow.INIT or (kind == device_flow.METHOD and on_object) else position
            atoms = passed.get(param) if param in passed else passed.get(f"#{at}") if at >= 0 else None
            answer = self._joined(atoms, depth) if atoms else None
            if answer is None:
                return None
            cpu, counted = cpu or answer, counted + 1
        return cpu if counted else None

    def _joined(self, atoms: list, depth: int) -> Optional[bool]:
        cpu = False
        for atom in atoms:
            kind = atom[0] if isinstance(atom, list) and atom else None
            if kind == "cpu":
                cpu = True
            elif kind in ("ret", "param") and len(atom) == (2 if kind == "ret" else 5):
                answer = self._device(tuple(atom), depth + 1)
                if answer is None:
                    return None
                cpu = cpu or answer
            elif kind != "never":
                return None
        return cpu

    def choice_default(self, qualified: str, param: str) -> bool:
        """The CUDA default of `param` of the project's function `qualified` holds no device: a choice of
        implementation (`impl="cuda"`, project/device_params.py)."""
        found = self.function(qualified)
        return found is not None and found[0] is not None and param in found[0].choice_defaults.get(found[2], ())

    def constant(self, qualified: str):
        found = self.function(qualified)
        if found is None or found[0] is None:
            return None
        value = found[0].constants.get(found[2])
        return (found[1], value) if value else None


def sibling_folders(paths: Dict[str, str], packages_too: bool = False) -> Dict[str, Dict[str, str]]:
    """Per script folder (one without __init__.py: Python puts it on sys.path for the scripts in it, and
    pytest for the tests), the modules beside its files as they import them, with their names in the
    index (`paths`: project path -> module): `testing_utils` -> `tests.testing_utils`. A package's files
    are left out, since their absolute imports mean a sibling only where the file runs as a program
    (`packages_too`: their folders as well, for those), and so are modules whose name is the bare one
    anyway (the project root's)."""
    folders: Dict[str, Dict[str, str]] = {}
    packages = set() if packages_too else {relative.rpartition("/")[0] for relative in paths if relative.endswith("__init__.py")}
    for relative, module in paths.items():
        folder, _, name = relative.rpartition("/")
        if name == "__init__.py":  # a package beside the scripts: `import models` for models/
            folder, _, name = folder.rpartition("/")
            stem = name
        else:
            stem = name[:-3]
        if folder in packages or not stem.isidentifier() or module == stem:
            continue
        folders.setdefault(folder, {})[stem] = module
    return folders


def _module_name(relative: str, roots: Sequence[str]) -> Optional[str]:
    """`src/pkg/mod.py` -> `pkg.mod` (src layout), `pkg/__init__.py` -> `pkg`."""
    for prefix in roots:
        if prefix and not relative.startswith(prefix + "/"):
            continue
        inner = relative[len(prefix) + 1:] if prefix else relative
        parts = inner[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts)
    return None


def _script_module(relative: str) -> Optional[str]:
    """The name in the index of a file no import can name (`exercises/07_gpu/1.py`, `run-train.py`): its path
    without `.py`, which no import statement can spell; its own facts (calls, tests, defaults) count. None
    where the path holds a dot (`v1.0/run.py`), which would read as a module and its attribute."""
    name = relative[:-3]
    return None if "." in name else name


PROJECT_FILES = {"setup.py", "pyproject.toml", "setup.cfg"}


def subprojects(relative_paths: Sequence[str]) -> List[str]:
    """The folders, not the root and not a package, that hold a project file of their own (a vendored
    library's repository, a subproject of a monorepo), deepest first."""
    packages = {path.rpartition("/")[0] for path in relative_paths if path.rpartition("/")[2] == "__init__.py"}
    found = {folder for folder, _, name in (path.rpartition("/") for path in relative_paths)
             if name in PROJECT_FILES and folder and folder not in packages}
    return sorted(found, key=lambda folder: (-folder.count("/"), folder))


def _import_roots(relative_paths: Sequence[str]) -> List[str]:
    """Folders modules are imported from: the root, every folder holding its own project file (a
    subproject of a monorepo, an example with its own setup.py) unless it is a package itself (the
    `setup.py` torchreid ships inside its package builds an extension: the package's modules are still
    imported through it), and the `src/` of each of them."""
    roots = {""}
    packages = {path.rpartition("/")[0] for path in relative_paths if path.rpartition("/")[2] == "__init__.py"}
    for path in relative_paths:
        folder, _, name = path.rpartition("/")
        if name in PROJECT_FILES and (not folder or folder not in packages):
            roots.add(folder)
    for folder in list(roots):
        source = f"{folder}/src" if folder else "src"
        if any(path.startswith(source + "/") for path in relative_paths):
            roots.add(source)
    return sorted(roots, key=len, reverse=True)


def _walk(root: str):
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".") and not d.endswith(".egg-info"))
        for name in sorted(files):
            yield os.path.join(folder, name)


def _read(path: str, limit: int = MAX_FILE_BYTES) -> Optional[bytes]:
    """A regular file's bytes (never a FIFO, a device or a link), within `limit`; None otherwise."""
    from cudalint.fileio import UnreadableFile, read_regular

    if os.path.islink(path):
        return None
    try:
        return read_regular(path, limit)
    except (UnreadableFile, OSError):
        return None


def _parse(data: bytes, path: str) -> Optional[ast.Module]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse_quietly(data: bytes, path: str) -> Optional[ast.Module]:
    """A module's tree for default_calls, within the size the facts reader parses."""
    return _parse(data, path) if len(data) <= FACTS_MAX_BYTES else None


def _stable_table(facts) -> list:
    """A catalog table of name sets in one order in every process (a set's repr follows string hashing,
    which differs per process, and a salt built from it would never match the next run's)."""
    return sorted((key, _stable(value)) for key, value in facts._asdict().items())


def _stable(value):
    """A table's value as JSON in one order: sets sorted, mappings by key, records field by field."""
    if isinstance(value, (set, frozenset)):
        return sorted(_stable(item) for item in value)
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return _stable_table(value)
    if isinstance(value, (list, tuple)):
        return [_stable(item) for item in value]
    if isinstance(value, dict):
        return sorted((key, _stable(item)) for key, item in value.items())
    return value


def build_index(
    root: Path, cuda_modules: Iterable[str], queries, flags, cache_dir: Optional[Path] = None, skip_if=(), skip_unless=(),
    parse: Optional[Callable[[str, bytes], Optional[ast.Module]]] = None,
) -> ProjectIndex:
    """Index every .py file and CMake build under `root`; facts of unchanged files come from the cache.
    `parse(path, bytes)` parses a module whose facts are read (the runner's, which gates the file on the
    same tree); where it gives no tree, the index parses the bytes itself."""
    from cudalint.python.analyze import without_collections
    from cudalint.python.guard_facts import guard_facts
    from cudalint.python.optional_facts import optional_facts

    from cudalint.cache import _code_fingerprint

    guards = guard_facts()  # platform tests and enum members, beside the queries and flags passed in
    root_text = os.path.abspath(str(root))
    # Facts depend on the catalog's guard table and library list too: a cached entry is for both. And on
    # the code that read them: the installed modules' fingerprint, which no linted tree can know, so a
    # cache file a tree ships (made elsewhere, or made up) never matches and is never read as facts.
    inputs = [sorted(queries), sorted(flags), sorted(skip_if), sorted(skip_unless), sorted(cuda_modules),
              _stable_table(guards), _stable_table(optional_facts()), _code_fingerprint()]
    salt = sha256(json.dumps(inputs).encode()).digest()
    cached = _load_cache(cache_dir)
    fresh: Dict[str, Tuple[str, dict]] = {}
    changed = False  # a module whose facts were read again (not taken from the stored index)
    index = ProjectIndex(root=root_text, cuda_modules=tuple(sorted(cuda_modules)),
                         off_mac_modules=tuple(sorted({*cuda_modules, *guards.off_mac_libraries})))
    contents: List[Tuple[str, str, str]] = []  # (path on disk, path in the project, content digest) of each module read
    files = list(_walk(root_text))
    relative_paths = [project_key(path, root_text) for path in files]
    roots = _import_roots(relative_paths)
    index.subprojects = subprojects(relative_paths)
    index.queries = frozenset(queries)
    named = {relative: _module_name(relative, roots) for relative in relative_paths if relative.endswith(".py")}
    modules_named = {relative: module for relative, module in named.items() if module is not None}
    folders = sibling_folders(modules_named)
    index._siblings = folders
    everywhere: Optional[Dict[str, Dict[str, str]]] = None  # sibling_folders(packages_too=True), when a program needs it
    # A script folder's file imports what lies beside it, so its facts change with that too: its key holds it.
    for path, relative in zip(files, relative_paths):
        if relative.endswith(".py"):
            module = named[relative] or _script_module(relative)
            if module is None:
                continue
            data = _read(path)
            if data is None:
                continue
            folder = relative.rpartition("/")[0]
            siblings = folders.get(folder)
            if siblings is None and b"__main__" in data:  # a program in a package's folder (ProjectIndex.siblings_of)
                if everywhere is None:
                    everywhere = index._package_siblings = sibling_folders(modules_named, packages_too=True)
                siblings = everywhere.get(folder)
                if siblings:
                    index.programs.add(relative)
            content = sha256(salt + data + (json.dumps(sorted(siblings.items())).encode() if siblings else b"")).hexdigest()
            contents.append((path, relative, content))
            index.modules.setdefault(module, relative)
            index.paths[relative] = module
            index.packages.add(module.split(".")[0])
            entry = cached.get(relative)
            if entry is not None and entry[0] == content:
                facts = FileFacts.from_json(entry[1])
            else:
                changed = True
                package = relative.endswith("/__init__.py") or relative == "__init__.py"
                with without_collections():  # CPython's tree has no cycles: collections would only scan it
                    tree = None
                    if len(data) <= FACTS_MAX_BYTES:
                        tree = parse(relative, data) if parse is not None else None
                        if tree is None:
                            tree = _parse(data, relative)
                    facts = (
                        read_facts(tree, module, queries, flags, skip_if, skip_unless, data, guards, package, index.off_mac_modules,
                                   siblings)
                        if tree is not None else unread_facts(data)
                    )
                    del tree
            fresh[relative] = (content, facts.to_json())
            index.facts[relative] = facts
            for name, line, column in facts.extensions:
                index.extensions.setdefault(name, Place(relative, line, column))
        elif os.path.basename(relative) == "CMakeLists.txt" or relative.endswith(".cmake"):
            data = _read(path)
            if data is None:
                continue
            text = data.decode("utf-8", "replace")
            for match in CMAKE_TARGET_RE.finditer(text):
                if CUDA_SOURCE_RE.search(match.group(3)):
                    line = text.count("\n", 0, match.start(2)) + 1
                    column = match.start(2) - (text.rfind("\n", 0, match.start(2)) + 1) + 1
                    index.extensions.setdefault(match.group(2), Place(relative, line, column))
    index.cuda_only = reach.cuda_only(index)
    index.used_outside = _used_outside(index)
    index.globals_read = _globals_read(index)
    index.loaded = frozenset(loaded for path, facts in index.facts.items() for loaded in facts.loads
                             if loaded in index.modules and loaded != index.paths.get(path))
    index.default_calls, calls_entry = default_calls.collect(
        contents, default_calls.wanted_names(index.facts), cached.get(default_calls.CACHE_KEY), _read, _parse_quietly
    )
    if calls_entry is not None:
        fresh[default_calls.CACHE_KEY] = tuple(calls_entry)
        changed = changed or list(calls_entry) != list(cached.get(default_calls.CACHE_KEY) or ())
    for facts in index.facts.values():  # read only by reach: not held (nor sent to workers) after it
        facts.uses, facts.loads, facts.tried, facts.mentions, facts.decorators = {}, {}, {}, {}, {}
        facts.factories = []
    material = {
        "version": INDEX_VERSION,
        "modules": index.modules,
        "facts": {path: facts.shared_json() for path, facts in index.facts.items()},
        "extensions": {name: [p.path, p.line, p.column] for name, p in index.extensions.items()},
        "cuda_only": sorted(index.cuda_only),
        "used_outside": sorted(index.used_outside),
        "globals_read": sorted(index.globals_read),
        "loaded": sorted(index.loaded),
        "default_calls": index.default_calls,
        "subprojects": index.subprojects,
    }
    index.facts_digest = sha256(json.dumps(material, sort_keys=True, default=list).encode()).hexdigest()[:16]
    if changed or fresh.keys() != cached.keys():  # a warm run of a large tree need not write it all again
        _save_cache(cache_dir, fresh)
    return index


def _used_outside(index: "ProjectIndex") -> frozenset:
    """The defining names of the project's functions and classes that a module other than their own
    uses (reach's uses, read before they are dropped)."""
    found: Set[str] = set()
    for path, facts in index.facts.items():
        if facts.words:  # a file not read (too large, or not Python CPython parses): the names it holds
            if "*" in facts.words:
                return frozenset({"*"})
            found.update(f"*{word}" for word in facts.words)
            continue
        module = index.paths.get(path) or ""
        for qualified in facts.uses:
            owner = index.origin(qualified)
            if owner is None:
                continue  # a library's name, or a module
            defined = owner[0]
            if not defined.startswith(module + ".") or "." in defined[len(module) + 1:]:
                found.add(defined)
    return frozenset(found)


def _globals_read(index: "ProjectIndex") -> frozenset:
    """`module.name` for each module-level assigned name of a project module that another module imports by
    name or reads (reach's uses and loads, read before they are dropped): `from module import name`, `module.name`, or a bare name that
    module's star imports bind; "*name" for a file not read, "*" where one may read any name."""
    found: Set[str] = set()
    assigned = {name for facts in index.facts.values() for name in facts.assigned}  # the names asked about
    for path, facts in index.facts.items():
        if facts.words:
            if "*" in facts.words:
                return frozenset({"*"})
            found.update(f"*{word}" for word in facts.words)
            continue
        module = index.paths.get(path) or ""
        starred = index.star_exports(module) if facts.star else {}
        for qualified in (*facts.uses, *facts.loads, *facts.tried):  # a name imported by name counts as read
            if qualified.rpartition(".")[2] not in assigned:
                continue
            if "." not in qualified:
                qualified = starred.get(qualified)
                if qualified is None:
                    continue
            owner, name, _ = index.split(index.follow(qualified))
            if owner is not None and owner != module:
                found.add(f"{owner}.{name}")
    return frozenset(found)


def _cache_file(cache_dir: Optional[Path]) -> Optional[Path]:
    return cache_dir / f"project-index-v{INDEX_VERSION}.data" if cache_dir is not None else None


def _load_cache(cache_dir: Optional[Path]) -> Dict[str, Tuple[str, dict]]:
    target = _cache_file(cache_dir)
    if target is None:
        return {}
    data = _read(str(target), CACHE_MAX_BYTES)
    if data is None:
        return {}
    try:
        loaded = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {key: tuple(value) for key, value in loaded.items() if isinstance(value, list) and len(value) == 2}


def _save_cache(cache_dir: Optional[Path], entries: Dict[str, Tuple[str, dict]]) -> None:
    """Written like every cache entry: never through a link out of the project, atomically."""
    from cudalint.cache import prepare_folder
    from cudalint.fileio import replace_file

    target = _cache_file(cache_dir)
    if target is None:
        return
    try:
        if cache_dir.is_symlink() or (cache_dir.exists() and not cache_dir.is_dir()):
            return  # never write through a link that may leave the project
        prepare_folder(cache_dir)
        replace_file(target, json.dumps(entries).encode("utf-8", "surrogatepass"), cache_dir.parent, follow_links=False)
    except (OSError, ValueError):
        pass  # a read-only checkout: index on, cache nothing


def _private_words(facts) -> Tuple[str, ...]:
    """The private attributes a module reads other than in a method of their own class, and (for a module whose
    tree was not read) every identifier it holds: what it may read."""
    return (*facts.private, *facts.words)
