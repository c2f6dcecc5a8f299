"""One file's facts for the project index, from CPython's own tree (no libcst).

Module-level structure: imports (and whether a try/if guards them), the names the module
re-exports, functions whose every return is a CUDA guard, parameters that default to a CUDA
device, module constants with a literal value, and CUDA extension modules built by a call in
the file. One walk over the rest records how the file uses names (calls under a CUDA guard or
not, references that let a name escape) for the project's reachability (`project/reach.py`).
"""

from __future__ import annotations

import ast
import contextlib
import json
import itertools
import re
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

from cudalint.project.availability import availability_tests, libraries_of, library_of
from cudalint.project.device_flow import DEVICE_TEXT_RE, DeviceFlow
from cudalint.project.device_params import (
    DEVICE_NAME_RE, filled_when_omitted, holds_device, is_cuda_device, resolved_for_mac, with_defaults,
)
from cudalint.project.paths import as_sibling, test_module
from cudalint.project import saved_files
from cudalint.project.collection_skips import collection_skips
from cudalint.project.star_exports import star_facts
from cudalint.project.reach import TRIES, _dotted, collect_uses, test_helper
from cudalint.python.count_tests import count_meaning
from cudalint.python.guard_facts import guard_facts
from cudalint.python.host_types import host_annotation_ast
from cudalint.python.optional_facts import optional_facts

# Calls that build a CUDA extension module: the name is their first argument or `name=`.
BUILDERS = {
    "torch.utils.cpp_extension.CUDAExtension",
    "torch.utils.cpp_extension.load",
    "torch.utils.cpp_extension.load_inline",
}
CUDA_SOURCE_RE = re.compile(r"\.(cu|cuh)$")


class FileFacts:
    """JSON-ready facts of one module."""

    def __init__(self) -> None:
        self.imports: List[Tuple[str, int, int, bool]] = []  # (module, line, column, guarded)
        # a module imported at module level under a `try:` ("") or an `if` (the names its test may call or
        # read, for the index to judge as availability tests): ProjectIndex.imported_only_conditionally
        self.optional_imports: Dict[str, List[str]] = {}
        self.guards: Dict[str, Tuple[bool, bool]] = {}  # function -> (true off a Mac, false off a Mac)
        # callable -> [(param, position, line, col, the default as written: '"cuda"', 'torch.device("cuda")')]
        self.cuda_defaults: Dict[str, List[Tuple[str, int, int, int, str]]] = {}
        # callable -> the parameters whose CUDA default holds no device (`impl="cuda"`: device_params.py)
        self.choice_defaults: Dict[str, List[str]] = {}
        # callable -> the position (-1: keyword only) of its `device` parameter that defaults to None or "cpu":
        # what a call that leaves it out builds lands on the CPU (placement.builds_on_default_device)
        self.host_device_defaults: Dict[str, int] = {}
        # callable -> [(param, position; -1: keyword only)] of the device parameters that default to None
        # and that the function fills itself when a call leaves them out (device_params.filled_when_omitted),
        # or whose default is a choice made at run time that names CUDA (`"cuda" if torch.cuda.is_available()
        # else "cpu"`): CDL104's finding there is moot when every call passes the parameter
        self.filled_defaults: Dict[str, List[Tuple[str, int]]] = {}
        self.constants: Dict[str, Tuple[str, object, int, int]] = {}  # NAME -> (kind, value, line, col)
        self.extensions: List[Tuple[str, int, int]] = []  # (module name, line, column)
        self.guard_constants: Dict[str, Tuple[bool, bool]] = {}  # NAME = <a CUDA guard> at module level
        self.skips: List[str] = []  # test decorators (functions) that skip unless CUDA is there
        # helpers that stop a test for one value of a parameter where CUDA is missing (`check_device(device)`:
        # `if device == "cuda" and not torch.cuda.is_available(): pytest.skip()`): name -> [[position, param, value]]
        self.device_skips: Dict[str, list] = {}
        self.requires: List[str] = []  # functions that raise unless CUDA is there, before they can return
        self.markers: List[str] = []  # test markers that forward their keywords to a marker_reasons function
        self.exports: Dict[str, str] = {}  # module-level `from x import y as z`: z -> x.y (re-exports)
        self.availability: Dict[str, str] = {}  # functions and names true only where a package imports -> it
        # Guards and skip helpers that depend on helpers of other modules: function -> [leaves, table], the
        # leaves ("call"|"ref", qualified) and, per combination of their guards, what the function is.
        self.guards_via: Dict[str, list] = {}
        self.skips_via: Dict[str, list] = {}
        self.guard_constants_via: Dict[str, list] = {}
        self.definitions: List[str] = []  # module-level classes and functions (and names bound to an API: reach.py)
        self.uses: Dict[str, list] = {}  # qualified -> [escapes, [contexts of guarded uses], [contexts of the others]]
        self.decorators: Dict[str, List[str]] = {}  # context with an unguarded call -> its decorators
        self.words: List[str] = []  # a file whose tree was not read: the identifiers it holds ("*": too many)
        self.loads: Dict[str, list] = {}  # what an import may load -> [contexts under a guard, the others]
        self.tried: Dict[str, list] = {}  # the same, for imports in a `try:` that catches ImportError
        # Tests that guard uses through names of other modules: [leaves, table] (see _Reader.table_of);
        # a use under one is listed, in `uses` and `loads`, as [context, [[test, polarity], ...]].
        self.conditions: List[list] = []
        self.mentions: Dict[str, list] = {}  # a string naming modules ("pkg.ops.*_op": a pattern) -> where, as `loads`
        self.private: List[str] = []  # `_name` attributes read other than by a method of their own class
        self.method_names: List[str] = []  # the names of the methods module-level classes define (ProjectIndex.defines_method)
        self.script = False  # the module runs as a program (`if __name__ == "__main__":`)
        self.testing = False  # a test suite's module (paths.test_module, told the text: a test.py that holds tests)
        self.factories: List[str] = []  # "Class.method": classmethods that build their own class (`cls(...)`)
        self.skipped_classes: List[str] = []  # test classes whose set-up skips them where a Mac's test holds
        self.collection_skips: List[List[str]] = []  # a conftest's hook skips without CUDA (collection_skips.py)
        self.star: Optional[list] = None  # what `from module import *` binds (see star_exports.star_facts)
        # Module-level classes with a base the file can name (and, in a test module, every one): class ->
        # {"bases": qualified bases, "binds": the flags it binds (its body's assignments and properties,
        # what its test fixtures set on self), and in a test module "constants": {flag: truth} of those
        # bound to True/False/None, "calls": {method: [[passed, ...] per `self.method(...)`]}} with each
        # passed argument as [position or keyword, ["c", truth] | ["a", flag of self] | ["?"]], or ["*"];
        # and "guards": {flag: [true off a Mac, false off a Mac]} of the flags its methods bind on self to
        # a CUDA guard (any module-level class).
        self.classes: Dict[str, dict] = {}
        # Attributes the module's classes bind to a CUDA guard, in their body (`total_visible_gpus =
        # torch.cuda.device_count()`) or on self in a method: name -> [true off a Mac, false off a Mac], or
        # None where another binding of the name in the module says something else (see
        # ProjectIndex.attribute_guard, which reads `config.total_visible_gpus` of any object by it).
        self.attribute_guards: Dict[str, Optional[List[bool]]] = {}
        self.bound_attributes: List[str] = []  # every attribute name an assignment of the module stores
        # switches the module checks against CUDA before relying on them (`if args.use_cuda: assert
        # torch.cuda.is_available()`): their last name (ProjectIndex.checked_switch)
        self.checked_switches: List[str] = []
        self.switched_on: List[str] = []  # keywords a call of the module passes a literal True (`use_cuda=True`)
        self.assigned: List[str] = []  # names the module binds at its top by assignment (`C = load_ext(...)`)
        # "saver|file name" -> [its saves here write host values only, a test module's] (saved_files.py)
        self.saves: Dict[str, list] = {}
        # device_flow.py: module-level function -> the device atoms of what it returns; called name -> the
        # calls that pass a device, each [qualified callee or "", called on an object, {keyword or "#position":
        # atoms}, spreads arguments]
        self.device_returns: Dict[str, list] = {}
        self.device_calls: Dict[str, list] = {}
        # module-level functions whose return annotation names host types only (host_types.py): what a tensor
        # is made of their result from is Python or NumPy data (`def _tables(d: int) -> tuple[int, ...]:`)
        self.host_returns: List[str] = []

    def to_json(self) -> dict:
        return {
            **self.shared_json(),
            "definitions": self.definitions,
            "uses": self.uses,
            "decorators": self.decorators,
            "words": self.words,
            "private": self.private,
            "method_names": self.method_names,
            "mentions": self.mentions,
            "loads": self.loads,
            "tried": self.tried,
            "conditions": self.conditions,
            "script": self.script,
            "testing": self.testing,
            "factories": self.factories,
            "skipped_classes": self.skipped_classes,
        }

    def shared_json(self) -> dict:
        """The facts other files read directly (reachability is shared through its result instead)."""
        return {
            "collection_skips": self.collection_skips,
            "imports": self.imports,
            "guards": self.guards,
            "cuda_defaults": self.cuda_defaults,
            "choice_defaults": self.choice_defaults,
            "host_device_defaults": self.host_device_defaults,
            "filled_defaults": self.filled_defaults,
            "constants": self.constants,
            "extensions": self.extensions,
            "guard_constants": self.guard_constants,
            "skips": self.skips,
            "device_skips": self.device_skips,
            "requires": self.requires,
            "markers": self.markers,
            "exports": self.exports,
            "availability": self.availability,
            "optional_imports": self.optional_imports,
            "star": self.star,
            "guards_via": self.guards_via,
            "skips_via": self.skips_via,
            "guard_constants_via": self.guard_constants_via,
            "classes": self.classes,
            "attribute_guards": self.attribute_guards,
            "bound_attributes": self.bound_attributes,
            "checked_switches": self.checked_switches,
            "switched_on": self.switched_on,
            "assigned": self.assigned,
            "saves": self.saves,
            "device_returns": self.device_returns,
            "device_calls": self.device_calls,
            "host_returns": self.host_returns,
        }

    @classmethod
    def from_json(cls, data: dict) -> "FileFacts":
        facts = cls()
        facts.imports = [tuple(item) for item in data.get("imports", [])]
        facts.guards = {name: tuple(value) for name, value in data.get("guards", {}).items()}
        facts.cuda_defaults = {name: [tuple(p) for p in params] for name, params in data.get("cuda_defaults", {}).items()}
        facts.choice_defaults = {name: list(params) for name, params in data.get("choice_defaults", {}).items()}
        facts.host_device_defaults = {name: int(position) for name, position in data.get("host_device_defaults", {}).items()}
        facts.filled_defaults = {name: [tuple(p) for p in params] for name, params in data.get("filled_defaults", {}).items()}
        facts.constants = {name: tuple(value) for name, value in data.get("constants", {}).items()}
        facts.extensions = [tuple(item) for item in data.get("extensions", [])]
        facts.guard_constants = {name: tuple(value) for name, value in data.get("guard_constants", {}).items()}
        facts.skips = list(data.get("skips", []))
        facts.device_skips = {name: [list(entry) for entry in entries] for name, entries in data.get("device_skips", {}).items()
                              if isinstance(entries, list) and all(isinstance(entry, list) and len(entry) == 3 for entry in entries)}
        facts.requires = list(data.get("requires", []))
        facts.markers = list(data.get("markers", []))
        facts.exports = dict(data.get("exports", {}))
        facts.availability = dict(data.get("availability", {}))
        facts.optional_imports = {module: [name for name in names if isinstance(name, str)]
                                  for module, names in data.get("optional_imports", {}).items() if isinstance(names, list)}
        facts.star = data.get("star")
        facts.saves = {key: list(value) for key, value in data.get("saves", {}).items()
                       if isinstance(value, list) and len(value) == 2 and all(type(part) is int for part in value)}
        facts.device_returns = dict(data.get("device_returns", {}))
        facts.device_calls = dict(data.get("device_calls", {}))
        facts.host_returns = [name for name in data.get("host_returns", []) if isinstance(name, str)]
        facts.guards_via = dict(data.get("guards_via", {}))
        facts.skips_via = dict(data.get("skips_via", {}))
        facts.guard_constants_via = dict(data.get("guard_constants_via", {}))
        facts.classes = dict(data.get("classes", {}))
        facts.attribute_guards = dict(data.get("attribute_guards", {}))
        facts.bound_attributes = list(data.get("bound_attributes", []))
        facts.checked_switches = list(data.get("checked_switches", []))
        facts.switched_on = list(data.get("switched_on", []))
        facts.assigned = list(data.get("assigned", []))
        facts.definitions = list(data.get("definitions", []))
        facts.uses = dict(data.get("uses", {}))
        facts.decorators = dict(data.get("decorators", {}))
        facts.words = list(data.get("words", []))
        facts.private = list(data.get("private", []))
        facts.method_names = list(data.get("method_names", []))
        facts.mentions = dict(data.get("mentions", {}))
        facts.loads = dict(data.get("loads", {}))
        facts.tried = dict(data.get("tried", {}))
        facts.conditions = list(data.get("conditions", []))
        facts.script = bool(data.get("script", False))
        facts.testing = bool(data.get("testing", False))
        facts.factories = list(data.get("factories", []))
        facts.skipped_classes = list(data.get("skipped_classes", []))
        facts.collection_skips = [list(skip) for skip in data.get("collection_skips", [])
                                  if isinstance(skip, list) and len(skip) == 2 and all(isinstance(part, str) for part in skip)]
        return facts


ENVIRONMENT_READERS = frozenset({"os.getenv", "os.environ.get"})
# torch's floating and complex dtypes: a module constant bound to one is kept as a "ref" constant
# (`_GLOBAL_DTYPE = torch.float64`), which the value model hands to argument checks in other modules.
TORCH_DTYPES = frozenset(f"torch.{name}" for name in (
    "float64", "double", "float32", "float", "float16", "half", "bfloat16", "complex128", "cdouble", "complex64",
    "cfloat",
))
TEXT_METHODS = {"lower": str.lower, "upper": str.upper, "casefold": str.casefold, "strip": str.strip}


def _with_value(constant: ast.Constant, value) -> ast.Constant:
    """A constant holding `value`, placed where `constant` is written."""
    return ast.copy_location(ast.Constant(value=value), constant)


FIXTURES = frozenset({"setUp", "setUpClass", "setup_method", "setup_class"})
PROPERTIES = frozenset({"property", "functools.cached_property", "cached_property"})


def _class_flags(node: ast.ClassDef) -> Tuple[Set[str], Dict[str, bool]]:
    """What a class binds that a flag of a base could be (its body's assignments and properties, what
    its test fixtures set on `self` or `cls`), and the truth of those bound in the body to True, False
    or None (`cuda = False`, `@property def cuda(self): return False`)."""
    binds: Set[str] = set()
    constants: Dict[str, bool] = {}
    for item in node.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            names = [target.id for target in targets if isinstance(target, ast.Name)]
            binds.update(names)
            truth = _truth(item.value)
            if truth is not None and len(names) == len(targets) == 1:
                constants[names[0]] = truth
        elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        elif any(_dotted(decorator) in PROPERTIES for decorator in item.decorator_list):
            binds.add(item.name)
            returned = item.body[0] if len(item.body) == 1 else None
            truth = _truth(returned.value) if isinstance(returned, ast.Return) else None
            if truth is not None:
                constants[item.name] = truth
        elif item.name in FIXTURES and item.args.args:
            owner = item.args.args[0].arg
            for statement in ast.walk(item):
                targets = statement.targets if isinstance(statement, ast.Assign) else (
                    [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else [])
                binds.update(
                    target.attr for target in targets
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == owner
                )
    return binds, constants


def _truth(node) -> Optional[bool]:
    return bool(node.value) if isinstance(node, ast.Constant) and node.value in (True, False, None) else None


def _self_calls(node: ast.ClassDef) -> Dict[str, list]:
    """What each `self.method(...)` in the class's methods passes: method -> [[argument, ...] per call]."""
    found: Dict[str, list] = {}
    for item in node.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or not item.args.args:
            continue
        owner = item.args.args[0].arg
        for call in ast.walk(item):
            func = call.func if isinstance(call, ast.Call) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == owner:
                found.setdefault(func.attr, []).append(_passed(call, owner))
    return found


def _passed(call: ast.Call, owner: str) -> list:
    passed = []
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return ["*"]
        passed.append([index, _summary(arg, owner)])
    for keyword in call.keywords:
        if keyword.arg is None:
            return ["*"]
        passed.append([keyword.arg, _summary(keyword.value, owner)])
    return passed


def _summary(node, owner: str) -> list:
    truth = _truth(node)
    if truth is not None:
        return ["c", truth]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == owner:
        return ["a", node.attr]
    return ["?"]


def _names_cuda(expression: ast.AST) -> bool:
    """A CUDA device string is written somewhere in the expression."""
    return any(isinstance(node, ast.Constant) and is_cuda_device(node.value) for node in ast.walk(expression))


class _Reader:
    def __init__(self, module: str, queries, flags, skip_if=(), skip_unless=(), guards=None):
        self.module = module
        self.queries = queries
        self.flags = flags
        self.skip_if = skip_if
        self.skip_unless = skip_unless
        self.is_package = False  # the module is a package's __init__.py (relative imports start at itself)
        self.enum_members = guards.enum_members if guards is not None else frozenset()
        self.platforms = guards.platforms if guards is not None else frozenset()
        self.mac_platforms = guards.mac_platforms if guards is not None else frozenset()
        self.marker_reasons = guards.marker_reasons if guards is not None else frozenset()
        self.guard_facts = guards if guards is not None else guard_facts()
        self.always_skip = optional_facts().always_skip  # `unittest.skip`: skips a test on every host
        self.library_queries = optional_facts().queries  # `find_spec(name)`: truthy only where `name` imports
        self._names_off_mac_device = self.guard_facts.names_off_mac_device
        self._locals: Dict[int, Dict[str, List[ast.AST]]] = {}  # function -> NAME -> the values assigned to it
        self._stopped_memo: Dict[int, Set[int]] = {}  # function -> its assigned values that never happen on a Mac
        self._top_values: Dict[int, Set[int]] = {}  # function -> the values its own body's assignments assign
        self._statements_memo: Dict[int, List[ast.stmt]] = {}  # function -> the statements of its own body
        self._dead_memo: Dict[int, Set[int]] = {}  # function -> its returns that never run on a Mac
        self.class_of: Dict[int, ast.ClassDef] = {}  # method of a module-level class -> the class
        self._attributes_memo: Dict[int, Dict[str, List[Tuple[ast.AST, ast.AST]]]] = {}  # class -> self.NAME's values
        self._arms_memo: Dict[int, Dict[int, tuple]] = {}  # function -> see _bound_off_mac
        self._platforms_imported: Optional[bool] = None  # see _imports_platforms
        # (class, NAME) -> its guard and the other modules' names met working it out
        self._attribute_memo: Dict[Tuple[int, str], Tuple[Tuple[bool, bool], tuple]] = {}
        self._judged_attributes: Dict[str, List[Optional[Tuple[bool, bool]]]] = {}  # see _attribute_binding
        self.stored_attributes: Dict[str, int] = {}  # attribute name -> its stores in the module (the reach pass)
        self._attribute_visits: set = set()  # (class, NAME) being judged
        self.libraries: Tuple[str, ...] = ()  # the libraries that never import on a Mac (CDL404's, off_mac_libraries)
        self.import_flags: Dict[str, List[Tuple[object, bool]]] = {}  # NAME -> (constant, after a CUDA-only import)
        self.leaves: Optional[List[Tuple[str, str]]] = None  # while tabulating: the other modules' names met
        self.assumed: Dict[Tuple[str, str], Tuple[bool, bool]] = {}  # while tabulating: their assumed guards
        self._visiting: set = set()  # helper functions being judged (a helper that calls itself)
        self._local_imports: Dict[int, Dict[str, str]] = {}  # id of a function -> the names its own imports bind
        self.pending: Dict[str, ast.AST] = {}  # module-level NAME = <expression>, judged once functions are known
        self.builds = True  # the file may build a CUDA extension (set by read_facts from its text)
        self.guards_possible = True  # the file names a query, flag or skip decorator
        self.text = b""  # the module's bytes, and the words of those names (set by read_facts from its text)
        self.words: Set[bytes] = set()
        self.aliases: Dict[str, str] = {}
        self.siblings: Dict[str, str] = {}  # bare name -> module, for a file of a script folder (index.sibling_folders)
        self.facts = FileFacts()
        self.functions: Dict[str, ast.AST] = {}
        self.api_aliases: Set[str] = set()  # module-level names bound to an attribute: `get_reserved = torch.cuda.memory_reserved`
        self.availability: Optional[Dict[str, str]] = None  # FileFacts.availability, worked out when first asked
        self.tree: Optional[ast.Module] = None  # the module read (for availability)
        self.statements_read = False  # the module's statements (its imports) have all been read
        self.availability_whole = False
        self.classes: Dict[str, ast.ClassDef] = {}  # NAME -> the module-level class
        self.methods: Set[str] = set()  # "Class._helper": the private methods of module-level classes
        self.testing = test_module(module)  # a test suite's module: its classes' calls and constants are read

    def sibling(self, module: str) -> str:
        return as_sibling(module, self.siblings)

    def absolute(self, level: int, name: Optional[str]) -> str:
        if not level:
            return self.sibling(name) if name else ""
        base = self.module.split(".") + (["__init__"] if self.is_package else [])  # a package's own __init__
        package = base[: len(base) - level] if len(base) >= level else []
        return ".".join(part for part in [*package, name or ""] if part)

    def resolve(self, node: ast.AST) -> Optional[str]:
        name = _dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def _class_facts(self, node: ast.ClassDef) -> None:
        bases = self._bases(node)
        testing = self.testing
        if not bases and not testing:
            return
        binds, constants = _class_flags(node)
        entry = {"bases": bases, "binds": sorted(binds)}
        if testing:
            entry["constants"] = constants
            entry["calls"] = _self_calls(node)
        self.facts.classes[node.name] = entry

    def _bases(self, node: ast.ClassDef) -> List[str]:
        bases = []
        for base in node.bases:
            qualified = self.resolve(base)
            if qualified is None and isinstance(base, ast.Name) and base.id in self.classes:
                qualified = f"{self.module}.{base.id}"
            if qualified is not None:
                bases.append(qualified)
        return bases

    def _class_guards(self, name: str, node: ast.ClassDef) -> None:
        """The flags the class's methods bind on `self` to a CUDA guard (`self.use_gpu =
        torch.cuda.is_available() and use_gpu`), as `_attribute_guard` judges them here, for the methods
        of classes of other modules derived from it (FileFacts.classes: "guards")."""
        guards = {}
        for attribute in self._attributes(node):
            guard, _ = self._answer(lambda: self._known(self._attribute_guard(node, attribute)))
            if guard is not None:
                guards[attribute] = list(guard)
            self._attribute_binding(attribute, guard)
        for statement in node.body:  # `total_visible_gpus = torch.cuda.device_count()` in the class body
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target] if isinstance(
                statement, ast.AnnAssign) and statement.value is not None else []
            for target in targets:
                if isinstance(target, ast.Name):
                    guard, _ = self._answer(lambda: self._known(self._guard(statement.value)))
                    self._attribute_binding(target.id, guard)
        if guards:
            entry = self.facts.classes.get(name)
            if entry is None:
                entry = self.facts.classes[name] = {"bases": self._bases(node), "binds": sorted(_class_flags(node)[0])}
            entry["guards"] = guards

    def read(self, tree: ast.Module) -> FileFacts:
        self._statements(tree.body, guarded=False)
        self.statements_read = True
        self.facts.exports = {local: target for local, target in self.aliases.items() if local != target}
        self.facts.definitions = sorted({*self.functions, *self.classes, *self.methods, *self.api_aliases})
        self.facts.method_names = sorted({item.name for node in self.classes.values() for item in node.body
                                          if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))})
        own_classes = frozenset(self.classes)  # a class of its own named `float` is no builtin
        self.facts.host_returns = sorted(
            name for name, node in self.functions.items()
            if node.returns is not None and host_annotation_ast(node.returns, self.resolve, own_classes))
        collect_uses(tree, self)
        if not self.text or DEVICE_TEXT_RE.search(self.text):
            self.facts.device_returns, self.facts.device_calls = DeviceFlow(self, tree, self.text).read()
        if not self.guards_possible:
            return self.facts
        for name, node in self.functions.items():
            guard, table = self._answer(lambda: self._function_guard(node))
            if guard is not None:
                self.facts.guards[name] = guard
            elif table is not None:
                self.facts.guards_via[name] = table
            if self._raises_off_mac(node):
                self.facts.requires.append(name)
            if self._forwards_keywords(node):
                self.facts.markers.append(name)
            self._note_skip(name, lambda: self._skips_off_cuda(node) or None)
            stops = self._stops_for_values(node)
            if stops:
                self.facts.device_skips[name] = stops
        for name, klass in self.classes.items():  # `prof = Profiler()` whose `__init__` raises without CUDA
            init = next((item for item in klass.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
            if init is not None and self._raises_off_mac(init):
                self.facts.requires.append(name)
        for statement in tree.body:  # `cuda = pytest.mark.skipif(not torch.cuda.is_available(), ...)`: a marker
            if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Call)):
                call = statement.value
                self._note_skip(statement.targets[0].id, lambda: self._marker_skips_off_cuda(call) or None)
        self._off_mac_flags()
        if self.testing:
            self.facts.skipped_classes = sorted(name for name, node in self.classes.items() if self._set_up_skips(node))
        if self.module.rpartition(".")[2] == "conftest":
            self.facts.collection_skips = collection_skips(tree, self.resolve, self._guard)
        starts = None
        for name, node in self.classes.items():
            if self.text:  # only a class whose own text holds a query, flag or skip word can bind a guard
                if starts is None:
                    starts = [0, *(found.end() for found in re.finditer(rb"\n", self.text))]
                end = starts[node.end_lineno] if node.end_lineno is not None and node.end_lineno < len(starts) else len(self.text)
                held = self.text[starts[node.lineno - 1]:end]
                if not any(word in held for word in self.words):
                    continue
            self._class_guards(name, node)
        self._attribute_guards()
        for name, value in self.pending.items():
            # CUDA_IS_AVAILABLE = checks.cuda_is_available() with checks from another module: a table
            guard, table = self._answer(lambda: self._known(self._guard(value)))
            if guard is not None:
                self.facts.guard_constants[name] = guard
            elif table is not None:
                self.facts.guard_constants_via[name] = table
        for name, assigned in self.import_flags.items():
            if any(value is True and imported for value, imported in assigned) and all(
                (value is True and imported) or value in (False, None) for value, imported in assigned
            ):
                self.facts.guard_constants[name] = (True, False)
        return self.facts

    def _forwards_keywords(self, function) -> bool:
        """Lightning's RunIf: `reasons, kw = _runif_reasons(**kwargs)` (a marker_reasons function given the
        function's own `**kwargs`), then `return pytest.mark.skipif(...)`: its keywords decide the skip."""
        star = function.args.kwarg
        if star is None:
            return False
        forwards = returns_skip = False
        for statement in function.body:
            value = getattr(statement, "value", None)
            if not isinstance(value, ast.Call):
                continue
            qualified = self.resolve(value.func)
            if isinstance(statement, ast.Return):
                returns_skip = returns_skip or qualified in self.skip_if
            elif qualified in self.marker_reasons:
                forwards = forwards or any(
                    keyword.arg is None and isinstance(keyword.value, ast.Name) and keyword.value.id == star.arg
                    for keyword in value.keywords
                )
        return forwards and returns_skip

    def _raises_off_mac(self, function, depth: int = 0) -> bool:
        """`if CUDA_HOME is None: raise ...` (or `assert torch.cuda.is_available()`, or a call of another
        such function of the file) before anything in the body can return (the libcst evaluator's rule)."""
        body = function.body
        for at, statement in enumerate(body):
            if self.requires_cuda(statement, function, depth):
                return not any(_may_return(earlier) for earlier in body[:at])
        return False

    def requires_cuda(self, statement: ast.stmt, function, depth: int = 0) -> bool:
        """The statement fails wherever CUDA is missing: `if not torch.cuda.is_available(): raise ...`,
        `assert torch.cuda.is_available()`, or a call of the file's function that raises so."""
        return self._may_require(statement, function) and self._requires_cuda(statement, function, depth)

    def _may_require(self, statement: ast.stmt, function) -> bool:
        """The shapes _requires_cuda can answer True for (so the others need not be judged)."""
        if isinstance(statement, ast.If):
            return bool(statement.body) and (isinstance(statement.body[-1], ast.Raise) or self._skips(statement.body[-1], function)) \
                and not statement.orelse
        if isinstance(statement, ast.Assert):
            return True
        value = statement.value if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.functions

    def _requires_cuda(self, statement: ast.stmt, function, depth: int) -> bool:
        """A statement of one of _may_require's shapes that fails off a Mac."""
        if isinstance(statement, ast.If):
            test = statement.test
            return self._guard(test, function)[1] and self._about_host(test, function)
        if isinstance(statement, ast.Assert):
            return self._guard(statement.test, function)[0] and self._about_host(statement.test, function)
        return depth < MAX_REQUIRE_DEPTH and self._raises_off_mac(self.functions[statement.value.func.id], depth + 1)

    def _about_host(self, test: ast.AST, function, depth: int = 0) -> bool:
        """No name in the test is a parameter of the function, nor a local bound from one (a test on the
        arguments says what the caller passed, not what the host is)."""
        arguments = function.args
        params = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg] if a}
        assigned = self._assigned(function)
        for node in ast.walk(test):
            if not isinstance(node, ast.Name):
                continue
            if node.id in params or depth >= MAX_REQUIRE_DEPTH:
                return False
            if any(not self._about_host(value, function, depth + 1) for value in assigned.get(node.id, ())):
                return False
        return True

    def _note_skip(self, name: str, judge) -> None:
        """Record `name` as a skip off CUDA where `judge` says so, or the table that decides it once the
        index knows other modules' names."""
        skips, table = self._answer(judge)
        if skips:
            self.facts.skips.append(name)
        elif table is not None:
            self.facts.skips_via[name] = table

    def _marker_skips_off_cuda(self, call: ast.Call) -> bool:
        """A skip marker made at the module's top whose condition holds wherever CUDA is missing:
        `pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `unittest.skipUnless(<CUDA>, ...)`."""
        qualified = self.resolve(call.func)
        if not call.args or (qualified not in self.skip_unless and qualified not in self.skip_if):
            return False
        true, false = self._guard(call.args[0])
        return (qualified in self.skip_unless and true) or (qualified in self.skip_if and false)

    def _skips_off_cuda(self, node) -> bool:
        """`return unittest.skipUnless(torch.cuda.is_available(), ...)(test_case)` and the like, or
        `if not torch.cuda.is_available(): return unittest.skip(...)(test_case)` with every other return
        (the test as it was) reached only off a Mac (the semantic model's Visitor._returns_skip)."""
        skipping = False
        others = []
        for inner, conditions in _returns_under(node):
            value = inner.value
            call = value.func if isinstance(value, ast.Call) and isinstance(value.func, ast.Call) else value
            qualified = self.resolve(call.func) if isinstance(call, ast.Call) else None
            if qualified in self.skip_unless or qualified in self.skip_if:
                true, false = self._guard(call.args[0], node) if call.args else (False, False)
                if (qualified in self.skip_unless and true) or (qualified in self.skip_if and false):
                    return True
            if qualified in self.always_skip:
                skipping = True
            else:
                others.append(conditions)
        if skipping and all(
                any(self._guard(test, node)[0 if polarity else 1] for test, polarity in conditions) for conditions in others):
            return True
        return self._runs_test_only_off_mac(node)

    def _stops_for_values(self, node, depth: int = 0) -> list:
        """[position, parameter, value] for each statement of the function's body `if param == "value" and
        <parts true on every Mac>: pytest.skip(...)` (or raise): a call passing "value" there stops where
        CUDA is missing (the semantic model's GuardEvaluator.stops_unless_cuda, one call away). Position -1:
        a decorator whose one wrapper does so for the wrapped test's parameter of that name."""
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        wrappers = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if len(wrappers) == 1 and depth == 0:  # a decorator: its wrapper stops the test it wraps, by parameter name
            found = [[-1, param, value] for _, param, value in self._stops_for_values(wrappers[0], 1)]
        else:
            found = []
        params = [arg.arg for arg in node.args.posonlyargs + node.args.args]
        for statement in node.body:
            if not (isinstance(statement, ast.If) and not statement.orelse and isinstance(statement.test, ast.BoolOp)
                    and isinstance(statement.test.op, ast.And) and statement.body):
                continue
            last = statement.body[-1]
            if not (isinstance(last, ast.Raise) or self._skips(last, node)):
                continue
            owned = [(part, _compared_value(part, params)) for part in statement.test.values]
            own = [(part, pair) for part, pair in owned if pair is not None]
            if len(own) == 1 and all(self._guard(part, node)[1] for part, pair in owned if pair is None):
                param, value = own[0][1]
                found.append([params.index(param), param, value])
        return found

    def _set_up_skips(self, klass) -> bool:
        """The class's set-up skips its tests where a test true on every Mac holds: `setUpClass` (or
        setUp) starting `if not torch.cuda.is_available(): raise unittest.SkipTest(...)` (or
        `self.skipTest(...)`, `pytest.skip(...)`), or calling a function of the module that does;
        the semantic model's Visitor._set_up_skips."""
        for method in klass.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name not in CLASS_SET_UPS:
                continue
            for statement in method.body[:SET_UP_LOOK]:
                if (isinstance(statement, ast.If) and not statement.orelse and statement.body
                        and self._skips(statement.body[0], method) and self._guard(statement.test, method)[1]):
                    return True
                call = statement.value if isinstance(statement, ast.Expr) else None
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in self.functions
                        and self._raises_off_mac(self.functions[call.func.id])):
                    return True  # `_require_npu()`: a helper of the module that skips or raises off a Mac
        return False

    def _skips(self, statement, method) -> bool:
        """`raise unittest.SkipTest(...)`, `pytest.skip(...)`, `self.skipTest(...)` (rules/optional_code.toml)."""
        facts = optional_facts()
        if isinstance(statement, ast.Raise) and statement.exc is not None:
            raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
            return self.resolve(raised) in facts.skip_exceptions
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return False
        func = statement.value.func
        receiver = (method.args.posonlyargs + method.args.args)[:1]
        return self.resolve(func) in facts.skip_calls or (
            isinstance(func, ast.Attribute) and func.attr == "skipTest" and isinstance(func.value, ast.Name)
            and bool(receiver) and func.value.id == receiver[0].arg)

    def _runs_test_only_off_mac(self, node, depth: int = 0) -> bool:
        """A decorator (or a factory of one: `skip_if_lt_x_gpu(2)`) whose wrapper calls the test it wraps
        only under a CUDA test and otherwise exits or skips: `if torch.cuda.is_available() and
        torch.cuda.device_count() >= x: return func(*args, **kwargs)`, then `sys.exit(...)` (PyTorch's
        common_distributed, vendored in many test suites)."""
        inner = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if len(inner) != 1 or depth > 1:
            return False
        wrapped = node.args.posonlyargs + node.args.args
        if len(wrapped) == 1 and self._calls_only_off_mac(inner[0], wrapped[0].arg):
            return True
        return depth == 0 and self._runs_test_only_off_mac(inner[0], depth + 1)

    def _calls_only_off_mac(self, wrapper, name: str) -> bool:
        calls = [call for call in ast.walk(wrapper) if isinstance(call, ast.Call)
                 and isinstance(call.func, ast.Name) and call.func.id == name]
        returns = [(inner, conditions) for inner, conditions in _returns_under(wrapper)
                   if any(inner.value is call for call in calls)]
        return bool(returns) and len(returns) == len(calls) and all(
            any(self._guard(test, wrapper)[0 if polarity else 1] for test, polarity in conditions)
            for _, conditions in returns)

    def _statements(self, body, guarded: bool, prefix: str = "", imported: bool = False, trying: bool = False,
                    under: Optional[ast.AST] = None) -> None:
        """`imported`: the statements run only once a CUDA-only library imported (`try: import triton`);
        `under`: the test of the `if` the statements sit under (TRIED in a `try:` that catches ImportError;
        None: neither), whose names are read only where an import sits under it."""
        for node in body:
            if trying and not imported and isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                imported = not getattr(node, "level", 0) and any(self._cuda_library(name) for name in names)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        self.aliases[alias.asname or alias.name.split(".")[0]] = self.sibling(alias.name if alias.asname else alias.name.split(".")[0])
                else:
                    base = self.absolute(node.level, node.module)
                    for alias in node.names:
                        if alias.name != "*":
                            self.aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                if not prefix:
                    tests = None if under is None else [""] if under is TRIED else self._test_names(under)
                    for module in self._imported_names(node):
                        self.facts.imports.append((module, node.lineno, node.col_offset + 1, guarded))
                        if tests is not None:
                            self.facts.optional_imports.setdefault(module, []).extend(tests)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[prefix + node.name] = node
                self._defaults(prefix + node.name, node, method=bool(prefix))
                self._calls(node)
            elif isinstance(node, ast.ClassDef) and not prefix:
                self._class_facts(node)
                self.classes[node.name] = node
                self.class_of.update((id(item), node) for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
                self.methods.update(  # a test class's helpers too: only its own tests call them (reach.test_helper)
                    f"{node.name}.{item.name}" for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                        (item.name.startswith("_") and not item.name.startswith("__"))
                        or (self.testing and test_helper(item.name)))
                )
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        static = any(isinstance(decorator, ast.Name) and decorator.id == "staticmethod" for decorator in item.decorator_list)
                        self._defaults(node.name if item.name == "__init__" else f"{node.name}.{item.name}", item, method=not static)
                self._calls(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not prefix:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                self.facts.assigned.extend(target.id for target in targets if isinstance(target, ast.Name))
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(node.value, ast.Attribute) \
                        and _dotted(node.value) is not None:
                    self.api_aliases.add(targets[0].id)  # `get_reserved = torch.cuda.memory_reserved`: called as one
                self._constant(node)
                self._import_flag(node, imported)
                self._calls(node)
            elif isinstance(node, (ast.Try, ast.If, ast.With)) or type(node).__name__ == "TryStar":
                if isinstance(node, ast.If) and _is_main_test(node.test):
                    self.facts.script = True
                    self._calls(node)
                    continue
                trial = isinstance(node, ast.Try) or type(node).__name__ == "TryStar"
                reraised = trial and _raises_again(node)
                caught = trial and not reraised and any(_catches_import_error(handler.type) for handler in node.handlers)
                tested = node.test if isinstance(node, ast.If) else TRIED if caught else None
                for field in ("body", "orelse", "finalbody"):
                    self._statements(  # a `try:` whose handlers all raise again guards nothing
                        getattr(node, field, []) or [], guarded=guarded or not (isinstance(node, ast.With) or reraised),
                        prefix=prefix, imported=imported, trying=trial and field == "body",
                        under=tested if tested is not None and field != "finalbody" else under,
                    )
                for handler in getattr(node, "handlers", []):
                    self._statements(handler.body, guarded=True, prefix=prefix)
            else:
                self._calls(node)

    def _imported_names(self, node) -> List[str]:
        """The modules an import statement runs: each one `import` names, or the base of a `from` import and
        each of its names (`from pkg import submodule` imports the submodule)."""
        if isinstance(node, ast.Import):
            return [self.sibling(alias.name) for alias in node.names]
        base = self.absolute(node.level, node.module)
        return [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")]

    def _test_names(self, test: ast.expr) -> List[str]:
        """What an `if` test may be true by: the qualified names it calls or reads (through `not`, `and`,
        `or`; `is_megatron_available()`, `importlib.util.find_spec(...) is not None`, `_HAS_APEX`), a name of
        this module under the module's own name."""
        found: List[str] = []
        for node in ast.walk(test):
            if isinstance(node, ast.Call):
                node = node.func
            if isinstance(node, (ast.Name, ast.Attribute)):
                qualified = self.resolve(node)
                if qualified is None and isinstance(node, ast.Name) and self.module:
                    qualified = f"{self.module}.{node.id}"
                if qualified is not None:
                    found.append(qualified)
        return found

    def _cuda_library(self, module: str) -> bool:
        return library_of(module, self.libraries) is not None or self.guard_facts.cuda_extension(module, self.module or "")

    def _tests_cuda_library(self, name: str) -> bool:
        """A module-level function of the file that is true only where libraries that never import on a Mac
        import (every one it may test)."""
        if name not in self.functions or self.tree is None:
            return False
        if self.availability is None:
            self.availability = availability_tests(self.tree, self.resolve, self.text, self._cuda_library)
            self.availability_whole = self.statements_read  # worked out with every import of the module known
        libraries = libraries_of(self.availability.get(name, ""))
        return bool(libraries) and all(self._cuda_library(library) for library in libraries)

    def _finds_cuda_library(self, node: ast.AST) -> bool:
        """`importlib.util.find_spec("cupy")` (rules/optional_code.toml queries) of a library that never
        imports on a Mac."""
        if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            return False
        return self.resolve(node.func) in self.library_queries and self._cuda_library(node.args[0].value)

    def _names_cuda_module(self, node: ast.AST) -> bool:
        """A name bound by an import of a library that never imports on a Mac (`import triton`, perhaps
        beside `triton = None`): where it is not None, that library imported. Not the project's own
        package (flash-attn's `FusedMLP is not None`: its own class, whatever its module needs)."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return False
        qualified = self.resolve(node)
        own = (self.module or "").split(".")[0]
        return qualified is not None and qualified.split(".")[0] != own and self._cuda_library(qualified)

    def _import_flag(self, node, imported: bool) -> None:
        """`HAS_TRITON = True` right after `import triton` in a try, False elsewhere: the name is a guard."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        constant = value.value if isinstance(value, ast.Constant) else ...
        for target in targets:
            if isinstance(target, ast.Name):
                self.import_flags.setdefault(target.id, []).append((constant, imported))

    def _constant(self, node) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if value is not None and not isinstance(value, ast.Constant):
            for target in targets:
                if isinstance(target, ast.Name):
                    self.pending[target.id] = value
            if isinstance(value, ast.Attribute) and self.resolve(value) in TORCH_DTYPES:  # DTYPE = torch.float64
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.facts.constants[target.id] = ("ref", self.resolve(value), value.lineno, value.col_offset + 1)
                return
            value = self._unset_environment(value)  # PIN_MEMORY = str(os.getenv("PIN_MEMORY", True)).lower() == "true"
        if value is None or not isinstance(value.value, (str, bool, int)):
            return
        for target in targets:
            if isinstance(target, ast.Name):
                kind = "bool" if isinstance(value.value, bool) else "int" if isinstance(value.value, int) else "str"
                self.facts.constants[target.id] = (kind, value.value, value.lineno, value.col_offset + 1)

    def _unset_environment(self, node: ast.AST) -> Optional[ast.Constant]:
        """What a module constant read from the environment is where the variable is not set: the
        reader's default, through `str()`, `.lower()`-style methods and a comparison with literals, as
        a constant placed where the default is written (the libcst value model's rules, on CPython's tree)."""
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Call) and not node.keywords:
            func, args = node.func, node.args
            if self.resolve(func) in ENVIRONMENT_READERS and len(args) == 2 and isinstance(args[1], ast.Constant):
                return args[1]
            if isinstance(func, ast.Name) and func.id == "str" and len(args) == 1 and "str" not in self.aliases:
                inner = self._unset_environment(args[0])
                return _with_value(inner, str(inner.value)) if inner is not None else None
            if isinstance(func, ast.Attribute) and func.attr in TEXT_METHODS and not args:
                inner = self._unset_environment(func.value)
                if inner is not None and isinstance(inner.value, str):
                    return _with_value(inner, TEXT_METHODS[func.attr](inner.value))
            return None
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op, right = node.ops[0], node.comparators[0]
            items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else None
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                texts, equal = {right.value}, isinstance(op, ast.Eq)
            elif isinstance(op, (ast.In, ast.NotIn)) and items and all(
                isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items
            ):
                texts, equal = {item.value for item in items}, isinstance(op, ast.In)
            else:
                return None
            inner = self._unset_environment(node.left)
            if inner is not None and isinstance(inner.value, str):
                return _with_value(inner, (inner.value in texts) == equal)
        return None

    def _defaults(self, name: str, function: ast.AST, method: bool) -> None:
        """The parameters of a function whose default names CUDA: those that hold a device in `cuda_defaults`,
        the others (`impl="cuda"`, a choice of implementation, and a device the body resolves for a Mac before
        it uses it: device_params.py) in `choice_defaults`."""
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        found, choices = [], []
        offset = len(positional) - len(args.defaults)
        for index, default in enumerate(args.defaults):
            written = self._cuda_default(default)
            if written:
                param = positional[offset + index].arg
                if holds_device(function, param) and not resolved_for_mac(function, param):
                    position = offset + index - (1 if method else 0)
                    found.append((param, position, default.lineno, default.col_offset + 1, written))
                else:
                    choices.append(param)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            written = self._cuda_default(default) if default is not None else ""
            if written:
                if holds_device(function, arg.arg) and not resolved_for_mac(function, arg.arg):
                    found.append((arg.arg, -1, default.lineno, default.col_offset + 1, written))
                else:
                    choices.append(arg.arg)
        filled = [
            (param.arg, position if position < 0 else position - (1 if method else 0))
            for position, param, default in with_defaults(args)
            if (isinstance(default, ast.Constant) and default.value is None and filled_when_omitted(function, param.arg))
            or (isinstance(default, ast.IfExp) and DEVICE_NAME_RE.search(param.arg) and _names_cuda(default))
        ]
        for position, param, default in with_defaults(args):
            if param.arg == "device" and isinstance(default, ast.Constant) and default.value in (None, "cpu"):
                self.facts.host_device_defaults[name] = position if position < 0 else position - (1 if method else 0)
        if found:
            self.facts.cuda_defaults[name] = found
        if choices:
            self.facts.choice_defaults[name] = choices
        if filled:
            self.facts.filled_defaults[name] = filled

    def _cuda_default(self, default: ast.AST) -> str:
        """"cuda", "cuda:1", or `torch.device("cuda")` as a parameter's default: the default as it reads
        ('"cuda"', 'torch.device("cuda")'), else ""."""
        device = None
        if isinstance(default, ast.Call) and len(default.args) == 1 and not default.keywords:
            if self.resolve(default.func) != "torch.device":
                return ""
            default, device = default.args[0], True
        if not (isinstance(default, ast.Constant) and is_cuda_device(default.value)):
            return ""
        written = json.dumps(default.value)
        return f"torch.device({written})" if device else written

    def _calls(self, node: ast.AST) -> None:
        if not self.builds:
            return  # the file never names cpp_extension: no extension is built here
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                qualified = self.resolve(inner.func)
                if qualified in BUILDERS:
                    self._extension(inner, qualified)

    def _extension(self, call: ast.Call, qualified: str) -> None:
        name = next((kw.value for kw in call.keywords if kw.arg == "name"), call.args[0] if call.args else None)
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return
        if any(kw.arg == "is_python_module" and isinstance(kw.value, ast.Constant) and kw.value.value is False
               for kw in call.keywords):
            return  # the build only registers operators (torch.ops.NAME): no module of that name to import
        if qualified.endswith(".load"):
            sources = next((kw.value for kw in call.keywords if kw.arg == "sources"), call.args[1] if len(call.args) > 1 else None)
            texts = [e.value for e in getattr(sources, "elts", []) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if not any(CUDA_SOURCE_RE.search(text) for text in texts):
                return
        if qualified.endswith(".load_inline"):
            cuda = next((kw.value for kw in call.keywords if kw.arg == "cuda_sources"), None)
            if cuda is None or (isinstance(cuda, (ast.List, ast.Tuple)) and not cuda.elts):
                return
        self.facts.extensions.append((name.value, name.lineno, name.col_offset + 1))

    # -- helpers that are guards ---------------------------------------------------------
    @staticmethod
    def _known(guard: Tuple[bool, bool]) -> Optional[Tuple[bool, bool]]:
        return guard if guard[0] or guard[1] else None

    def table_of(self, judge) -> Optional[list]:
        """What `judge()` answers when it depends on names of other modules (`is_cuda_available() and
        not is_xla()`, both imported): [leaves, {combination of their guards: answer}], for the index
        to look up once it knows them. At most MAX_LEAVES such names; None when there is nothing to tell."""
        return self._answer(judge, known=False)[1]

    def _answer(self, judge, known: bool = True) -> Tuple[Optional[Any], Optional[list]]:
        """judge()'s answer where it is known here (and `known` asks for it), else None and its table
        (table_of): one judgement finds both the answer and the other modules' names it met."""
        self.leaves = []
        try:
            found = judge()
            leaves = list(dict.fromkeys(self.leaves))
        finally:
            self.leaves = None
        if known and found:
            return found, None
        return None, self.tabulate(judge, leaves)

    def tabulate(self, judge, leaves: List[Tuple[str, str]]) -> Optional[list]:
        """table_of's table, for the other modules' names (`leaves`) a judgement already met."""
        if not leaves or len(leaves) > MAX_LEAVES:
            return None
        table = {}
        for combination in itertools.product(range(len(LEAF_GUARDS)), repeat=len(leaves)):
            self.assumed = {leaf: LEAF_GUARDS[choice] for leaf, choice in zip(leaves, combination)}
            try:
                answer = judge()
            finally:
                self.assumed = {}
            if answer:
                table["".join(map(str, combination))] = answer
        return [[list(leaf) for leaf in leaves], table] if table else None

    def _leaf(self, kind: str, qualified: Optional[str]) -> Optional[Tuple[bool, bool]]:
        """A name of another module in a guard: its assumed guard while tabulating, else unknown. A name of
        the standard library or of torch is no leaf (no module of the project defines it, so the index
        never knows a guard for it), unless the module is in a package of that name (linting torch)."""
        if qualified is None or "." not in qualified:
            return None
        top = qualified.partition(".")[0]
        if top in NO_PROJECT_MODULES and top != self.module.partition(".")[0]:
            return None
        leaf = (kind, qualified)
        if self.leaves is not None:
            self.leaves.append(leaf)
        return self.assumed.get(leaf)

    def _function_guard(self, node) -> Optional[Tuple[bool, bool]]:
        returns = [inner for inner in self._body(node) if isinstance(inner, ast.Return) and inner.value is not None]
        if not returns:
            return None
        dead = self._dead_on_mac(node)
        returns = [inner.value for inner in returns if id(inner) not in dead]
        if not returns:
            return None
        # With the returns a Mac never reaches left out, a falsy constant is the function's value there:
        # a GPU count that is 0 when nvidia-smi cannot start is truthy only off a Mac. A function-local
        # import (`import torch` inside it) names what its returns call.
        with self.local_imports(node):
            # `else: return False` beside `return torch.cuda.is_available()` is never true anywhere (and
            # `return True`, never false): it keeps what the other returns say, and says nothing alone.
            guards = [(True, False) if dead and _falsy_constant(value) else self._held(value, node, -1)
                      for value in returns]
        if not dead and all(_bool_constant(value) for value in returns):
            return None
        true, false = all(g[0] for g in guards), all(g[1] for g in guards)
        return (true, false) if true or false else None

    @contextlib.contextmanager
    def local_imports(self, function):
        """The function's own imports (`import torch` inside it) in sight while what it holds is judged."""
        if function is None:
            yield
            return
        local = self._local_imports.get(id(function))
        if local is None:  # judged once per tabulated case: the body is walked once
            local = self._local_imports[id(function)] = _local_aliases(function, self)
        saved = self.aliases
        if local:
            self.aliases = {**saved, **local}
        try:
            yield
        finally:
            self.aliases = saved

    def _attribute_binding(self, name: str, guard: Optional[Tuple[bool, bool]]) -> None:
        """Note one binding of attribute `name` by a class of the module: a guard, or (None) anything else."""
        self._judged_attributes.setdefault(name, []).append(guard)

    def _attribute_guards(self) -> None:
        """FileFacts.attribute_guards: each attribute a class of the module binds to a CUDA guard, with that
        guard where every assignment of the module that stores the name (the reach pass counted them) is
        one of the bindings judged, and all agree; None where one of them says something else."""
        stored = self.stored_attributes
        for name, guards in self._judged_attributes.items():
            if not any(guard is not None for guard in guards):
                continue
            agreed = len(set(guards)) == 1 and len(guards) == stored.get(name, 0)
            self.facts.attribute_guards[name] = list(guards[0]) if agreed else None

    def _held(self, value: ast.AST, function, depth: int) -> Tuple[bool, bool]:
        """What holding `value` says: True and False are never false (or never true) anywhere."""
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            return not value.value, bool(value.value)
        return self._guard(value, function, depth + 1)

    def _guard(self, node: ast.AST, function=None, depth: int = 0) -> Tuple[bool, bool]:
        if depth > 6:
            return False, False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            true, false = self._guard(node.operand, function, depth + 1)
            return false, true
        if isinstance(node, ast.BoolOp):
            parts = [self._guard(value, function, depth + 1) for value in node.values]
            if isinstance(node.op, ast.And):
                return any(p[0] for p in parts), all(p[1] for p in parts)
            return all(p[0] for p in parts), any(p[1] for p in parts)
        if isinstance(node, ast.IfExp) and not any(
                isinstance(arm, ast.Constant) and arm.value is None for arm in (node.body, node.orelse)):
            # `True if torch.cuda.is_available() else False` (the semantic model's guards._chosen)
            (c_true, c_false), (b_true, b_false), (o_true, o_false) = (
                self._guard(node.test, function, depth + 1), self._held(node.body, function, depth),
                self._held(node.orelse, function, depth))
            return (c_true or b_true) and (c_false or o_true), (c_true or b_false) and (c_false or o_false)
        if isinstance(node, ast.Call):
            qualified = self.resolve(node.func)
            if qualified in self.queries:
                return True, False
            if qualified in self.guard_facts.mac_queries:
                return False, True  # torch.backends.mps.is_available(): false only off a Mac
            if (qualified in self.guard_facts.program_lookups and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value in self.guard_facts.off_mac_programs):
                return True, False  # shutil.which("nvidia-smi"): None where the program is missing, as on every Mac
            if (isinstance(node.func, ast.Name) and node.func.id == "hasattr" and len(node.args) == 2
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value in self.guard_facts.off_mac_attributes):
                return True, False  # hasattr(x, "__cuda_array_interface__"): only an array in CUDA memory has it
            if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1 and not node.keywords:
                return self._guard(node.args[0], function, depth + 1)  # the builtin keeps its argument's meaning
            default = _option_default(node)
            if default is not None:  # options.get(key, CUDA query): the query where nobody set the option
                found = self._guard(default, function, depth + 1)
                if found[0] or found[1]:
                    return found
            if isinstance(node.func, ast.Name) and self._tests_cuda_library(node.func.id):
                return True, False  # `_can_import_pycuda()`: true only where a library that never imports on a Mac does
            if isinstance(node.func, ast.Name) and node.func.id in self.functions and node.func.id not in self._visiting:
                self._visiting.add(node.func.id)
                try:
                    return self._function_guard(self.functions[node.func.id]) or (False, False)
                finally:
                    self._visiting.discard(node.func.id)
            local = isinstance(node.func, ast.Name) and node.func.id in self.functions
            assumed = None if local else self._leaf("call", qualified)
            if assumed is not None:
                return assumed
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith":
            prefix = node.args[0] if node.args else None
            text = prefix.value if isinstance(prefix, ast.Constant) else None
            if self._is_platform(node.func.value, function):
                return self._platform(text)
            return (True, False) if self._names_off_mac_device(text) else (False, False)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(node, function, depth)
        if isinstance(node, (ast.Attribute, ast.Name)):
            qualified = self.resolve(node)
            if qualified in self.flags:
                return True, False
            if qualified is None and isinstance(node, ast.Attribute) and node.attr == "is_cuda":
                return True, False  # `x.is_cuda`: a tensor's (or module's) own answer (the semantic model's _reference)
            assumed = self._leaf("ref", qualified)
            if assumed is not None:
                return assumed
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and id(function) in self.class_of:
            if node.value.id == _first_parameter(function):  # self.NAME, bound in the class's methods
                return self._attribute_guard(self.class_of[id(function)], node.attr)
        if isinstance(node, ast.Name):  # a local of the function, or a module constant, bound to a guard
            values = self._assigned(function).get(node.id, []) if function is not None else []
            values = self._reaching(values, function, node) if values else values
            if not values and node.id in self.pending:
                values = [self.pending[node.id]]
            if values:
                stopped = self._stopped_off_mac(function) if function is not None else set()
                parts, said = [], False
                for value in values:
                    if id(value) in stopped:  # `distributed = True` beside `init_dist(...)`: never on a Mac
                        parts.append((True, True))
                        said = True
                    elif isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, bool)):
                        parts.append((not value.value, value.value is True))  # never true (or never false) anywhere
                    else:
                        parts.append(self._guard(value, function, depth + 1))
                        said = said or parts[-1][0] or parts[-1][1]
                if said:  # a constant alone says nothing of the host: only beside a binding that does
                    return all(p[0] for p in parts), all(p[1] for p in parts)
        return False, False

    def _reaching(self, values: List[ast.AST], function, node: ast.Name) -> List[ast.AST]:
        """Of the values a function's local is assigned, the one that reaches `node` where every assignment is
        a statement of the function's own body (straight-line code: `wanted = <option>`, then `wanted = wanted
        and torch.cuda.is_available()`, then `return wanted`): the last one before it. All of them otherwise."""
        if function is None:
            return values
        top = self._top_values.get(id(function))
        if top is None:
            top = self._top_values[id(function)] = {
                id(statement.value) for statement in function.body if isinstance(statement, (ast.Assign, ast.AnnAssign))}
        if not all(id(value) in top for value in values):
            return values
        before = [value for value in values if value.lineno < node.lineno]
        return [max(before, key=lambda value: (value.lineno, value.col_offset))] if before else values

    def _off_mac_flags(self) -> None:
        """FileFacts.checked_switches, the other kind: a flag a function of the module sets True only in arms
        that never run on a Mac (`else: distributed = True; init_dist(args.launcher)`), and otherwise only
        False or None. Handed on by its name (`train_model(model, cfg, distributed=distributed)`), it is true
        only off a Mac there too (ProjectIndex.checked_switch). Read only in a module whose text names a call
        that fails off CUDA (rules/guards.toml cuda_only_results)."""
        if self.text and not any(word in self.text for word in self.guard_facts.failing_words):
            return
        flags = set()
        for function in self.functions.values():
            stopped = self._stopped_off_mac(function)
            if not stopped:
                continue
            set_true: Dict[str, List[bool]] = {}
            for statement in _statements_of(function):
                if not isinstance(statement, ast.Assign):
                    continue
                value = statement.value
                if isinstance(value, ast.Constant) and (value.value is False or value.value is None):
                    continue  # a false binding beside the flag's true one
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        set_true.setdefault(target.id, []).append(
                            isinstance(value, ast.Constant) and value.value is True and id(value) in stopped)
            flags.update(name for name, stopped_each in set_true.items() if all(stopped_each))
        if flags:
            self.facts.checked_switches = sorted({*self.facts.checked_switches, *flags})

    def _stopped_off_mac(self, function) -> Set[int]:
        """The ids of the values of the function's assignments of True or False, in an arm of an `if`, that never
        happen on a Mac: a statement of the same arm before the assignment surely raises there (a call
        rules/guards.toml lists as failing off CUDA, OpenMMLab's `init_dist`; a check that raises off CUDA), or
        one after it, for names, outside any `try:` (the libcst evaluator's guards._stopped_off_mac)."""
        found = self._stopped_memo.get(id(function))
        if found is not None:
            return found
        found = self._stopped_memo[id(function)] = set()
        blocks: List[Tuple[list, bool, bool]] = [(function.body, False, False)]  # (block, in a try, an if's arm)
        while blocks:
            body, trying, arm = blocks.pop()
            failing: Optional[List[bool]] = None
            for index, statement in enumerate(body):
                if arm and isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
                        and isinstance(statement.value.value, bool):
                    if failing is None:
                        failing = [self._fails_on_mac(item) or self.requires_cuda(item, function) for item in body]
                    if any(failing[:index]) or (not trying and any(failing[index + 1:])
                                                and all(isinstance(target, ast.Name) for target in statement.targets)):
                        found.add(id(statement.value))
                if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                inner, arms = trying or isinstance(statement, TRIES), isinstance(statement, ast.If)
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(statement, field, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                        blocks.append((block, inner, arms))
                for handler in getattr(statement, "handlers", None) or ():
                    blocks.append((handler.body, inner, False))
                for case in getattr(statement, "cases", None) or ():
                    blocks.append((case.body, inner, False))
        return found

    def _attribute_guard(self, klass: ast.ClassDef, name: str) -> Tuple[bool, bool]:
        """`self.gpu_available` where the class's methods bind `self.gpu_available = torch.cuda.is_available()
        and config["use_gpu"]`: what every value it is bound to says (a false constant beside them is never
        true); unknown where the class binds it to nothing that says anything (the libcst evaluator's rule
        for attributes, within this class, or its bases of this module where it binds nothing)."""
        key = (id(klass), name)
        known = self._attribute_memo.get(key)
        if known is not None and (not self.assumed or not known[1]):  # no other module's name: no assumption in it
            if self.leaves is not None:
                self.leaves.extend(known[1])  # the other modules' names the answer met, for the caller's table
            return known[0]
        if key in self._attribute_visits:
            return False, False  # an attribute bound from itself says nothing
        self._attribute_visits.add(key)
        outer = self.leaves
        self.leaves = []  # the other modules' names met, kept with the answer whoever asks
        try:
            values = self._inherited(klass, name)
            # each value judged afresh (the depth of the test that read the attribute aside), so the answer holds
            # for every reader; one bound only in an arm no Mac takes (`if "cuda" in str(model.device): self.graphs
            # = use_graphs`) is never held there
            parts = [(True, True) if self._bound_off_mac(value, method) else None if _falsy_constant(value)
                     else self._guard(value, method, 1) for value, method in values]
        finally:
            self._attribute_visits.discard(key)
            met, self.leaves = tuple(self.leaves), outer
        if outer is not None:
            outer.extend(met)
        said = [part for part in parts if part is not None]
        found = (all(part[0] for part in said), len(said) == len(parts) and all(part[1] for part in said)) if said else (False, False)
        if not self.assumed or not met:  # not an answer resting on assumed guards of other modules
            self._attribute_memo[key] = (found, met)
        return found

    def _bound_off_mac(self, value: ast.AST, function) -> bool:
        """The assignment of `value` sits in an arm of an `if` of the function that no Mac takes."""
        arms = self._arms_memo.get(id(function))
        if arms is None:  # the value of each assignment -> the tests it sits under
            arms = self._arms_memo[id(function)] = {
                id(statement if isinstance(statement, ast.AugAssign) else statement.value): conditions
                for statement, conditions in _statements_under(function, ASSIGNMENTS) if conditions}
        for test, polarity in arms.get(id(value), ()):
            found = self._guard(test, function, 1)
            if found[0 if polarity else 1]:
                return True
        return False

    def _inherited(self, klass: ast.ClassDef, name: str, depth: int = 0) -> List[Tuple[ast.AST, ast.AST]]:
        """What the class binds to self.NAME, or where it binds nothing, what its bases of this module do."""
        values = self._attributes(klass).get(name, [])
        if values or depth > 4:
            return values
        for base in klass.bases:
            parent = self.classes.get(base.id) if isinstance(base, ast.Name) else None
            if parent is not None and parent is not klass:
                values = values + self._inherited(parent, name, depth + 1)
        return values

    def _attributes(self, klass: ast.ClassDef) -> Dict[str, List[Tuple[ast.AST, ast.AST]]]:
        found = self._attributes_memo.get(id(klass))
        if found is None:
            found = self._attributes_memo[id(klass)] = {}
            for method in klass.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                owner = _first_parameter(method)
                for statement in self._body(method):
                    targets = statement.targets if isinstance(statement, ast.Assign) else [
                        statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value else []
                    for target in targets:
                        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == owner:
                            # `self.x += 1`: the statement itself, which says nothing (the value is not known)
                            value = statement if isinstance(statement, ast.AugAssign) else statement.value
                            found.setdefault(target.attr, []).append((value, method))
        return found

    def _dead_on_mac(self, function) -> Set[int]:
        """The returns of a `try:` body that come at or after a statement that raises on a Mac (it starts
        nvidia-smi, or calls a CUDA-only API): they never run there, whatever the handlers catch; and
        those after (or in the else of) an early return whose test is true on every Mac, and those of a
        branch no Mac takes. Judged once, as the host is, whatever other modules' names are assumed: the
        names it meets are no leaves of a table."""
        found = self._dead_memo.get(id(function))
        if found is not None:
            return found
        outer, assumed, self.leaves, self.assumed = self.leaves, self.assumed, None, {}
        try:
            return self._dead_returns(function)
        finally:
            self.leaves, self.assumed = outer, assumed

    def _dead_returns(self, function) -> Set[int]:
        dead: Set[int] = self._dead_memo.setdefault(id(function), set())
        judged: Dict[int, Tuple[bool, bool]] = {}
        for returned, conditions in _returns_under(function):  # as mac_failures reads them
            for test, value in conditions:
                if id(test) not in judged:
                    judged[id(test)] = self._guard(test, function)
                if judged[id(test)][0 if value else 1]:
                    dead.add(id(returned))
                    break
        for statement in self._body(function):
            if not (isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar"):
                continue
            failed = False
            for inner in [*statement.body, *statement.orelse]:
                failed = failed or self._fails_on_mac(inner)
                if failed:
                    dead.update(id(node) for node in _own_nodes(inner) if isinstance(node, ast.Return))
        return dead

    def _fails_on_mac(self, statement: ast.stmt) -> bool:
        """A simple statement (or a `with` line) that surely makes a call that raises on a Mac: not one in
        a branch of a conditional expression, after a short-circuit, or in a lambda."""
        if isinstance(statement, ast.With):
            parts: List[ast.AST] = [item.context_expr for item in statement.items]
        elif isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)):
            parts = [statement.value] if statement.value is not None else []
        else:
            return False
        while parts:
            node = parts.pop()
            if isinstance(node, ast.Call) and self._call_fails_on_mac(node):
                return True
            if isinstance(node, ast.IfExp):
                parts.append(node.test)
            elif isinstance(node, ast.BoolOp):
                parts.append(node.values[0])
            elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                parts.extend(ast.iter_child_nodes(node))
        return False

    def _call_fails_on_mac(self, call: ast.Call) -> bool:
        qualified = self.resolve(call.func)
        facts = self.guard_facts
        if qualified is None or facts.fails_on_mac(qualified):
            return qualified is not None
        if qualified not in facts.program_runners:
            return False
        command = call.args[0] if call.args else next((kw.value for kw in call.keywords if kw.arg == "args"), None)
        if isinstance(command, (ast.List, ast.Tuple)) and command.elts:
            command = command.elts[0]
        program = command.value if isinstance(command, ast.Constant) else None
        shell = any(
            kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and not kw.value.value) for kw in call.keywords
        )
        return facts.run_fails_on_mac(qualified, program, shell)

    def _compare(self, node: ast.Compare, function, depth: int) -> Tuple[bool, bool]:
        """A query or flag against a count or None; a device kind, an enum member named CUDA or
        the platform against a constant (the libcst guard evaluator's rules, on CPython's tree)."""
        left, op, right = node.left, node.ops[0], node.comparators[0]
        inner = self._guard(left, function, depth + 1)
        number = right.value if isinstance(right, ast.Constant) else ""
        operator = AST_OPERATORS.get(type(op), "")
        if type(number) is bool:  # `use_cuda == True`, `flag is False`: 1 and 0
            number, operator = int(number), {"is": "==", "is not": "!="}.get(operator, operator)
        if inner[0] and (number is None or (type(number) is int and number >= 0)):
            meaning = count_meaning(operator, number)
            if meaning is not None:
                return inner if meaning else (inner[1], inner[0])
        positive = isinstance(op, (ast.Eq, ast.Is, ast.In))
        if not positive and not isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)):
            return False, False
        found = (False, False)
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None \
                and (self._finds_cuda_library(left) or self._names_cuda_module(left)):
            # `find_spec("cupy") is not None`, `triton is not None` after `try: import triton`: only where it imports
            return (False, True) if positive else (True, False)
        if self._is_platform(left, function) and isinstance(right, ast.Constant):
            found = self._platform(right.value)
        elif isinstance(op, (ast.In, ast.NotIn)):
            items = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else []
            if self._off_mac_constant(left) or (items and all(self._off_mac_constant(item) for item in items)):
                found = (True, False)
            elif self.guard_facts.mac_device_types <= {item.value for item in items if isinstance(item, ast.Constant)}:
                found = (False, True)  # device.type in ("cpu", "mps"): true on every Mac
        elif any(self._off_mac_constant(side) or self._is_cuda_member(side) for side in (left, right)):
            found = (True, False)
        elif isinstance(left, ast.Tuple) and isinstance(right, ast.Tuple) and len(left.elts) == len(right.elts) and any(
                self._off_mac_constant(side) or self._is_cuda_member(side) for pair in zip(left.elts, right.elts) for side in pair):
            found = (True, False)  # `(backend, device) == ("pytorch", "cuda")`: an `and` of pairs, one of them CUDA's
        return found if positive else (found[1], found[0])

    def _off_mac_constant(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and self._names_off_mac_device(node.value)

    def _is_cuda_member(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Attribute):  # RNGType.CUDA, Device.cuda
            return False
        owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr if isinstance(
            node.value, ast.Attribute) else None
        return self.guard_facts.names_cuda_member(owner, node.attr)

    def _is_platform(self, node: ast.AST, function=None, depth: int = 0) -> bool:
        """`sys.platform`, `platform.system()`, their text in another case (`.lower()`), or a name every
        value of which is one of those (a local of the function, else a module constant: `SYSTEM =
        platform.system()`)."""
        while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and node.func.attr in TEXT_METHODS:
            node = node.func.value
        target = node.func if isinstance(node, ast.Call) else node
        if self.resolve(target) in self.platforms:
            return True
        if isinstance(node, ast.Name) and depth < 4 and self._imports_platforms():
            values = self._assigned(function).get(node.id, []) if function is not None else []
            if not values and node.id in self.pending:
                values = [self.pending[node.id]]
            return bool(values) and all(self._is_platform(value, function, depth + 1) for value in values)
        return False

    def _imports_platforms(self) -> bool:
        """The module imports one that names the platform (sys, platform, os): a name may hold its answer."""
        if self._platforms_imported is not None:
            return self._platforms_imported
        roots = {platform.partition(".")[0] for platform in self.platforms}
        found = any(target.partition(".")[0] in roots for target in self.aliases.values())
        if self.statements_read:  # every import of the module is known: the answer holds
            self._platforms_imported = found
        return found

    def _platform(self, text) -> Tuple[bool, bool]:
        """`sys.platform == text`: true off a Mac for another platform, false off a Mac for macOS."""
        if not isinstance(text, str) or not text:
            return False, False
        if any(text.lower().startswith(mac) for mac in self.mac_platforms):
            return False, True
        return True, False

    def _body(self, function) -> List[ast.stmt]:
        found = self._statements_memo.get(id(function))
        if found is None:
            found = self._statements_memo[id(function)] = _statements_of(function)
        return found

    def _assigned(self, function) -> Dict[str, List[ast.AST]]:
        """NAME -> every value the function assigns to it (read once per function)."""
        found = self._locals.get(id(function))
        if found is None:
            found = {}
            for inner in self._body(function):
                if isinstance(inner, ast.Assign):
                    for target in inner.targets:
                        if isinstance(target, ast.Name):
                            found.setdefault(target.id, []).append(inner.value)
            self._locals[id(function)] = found
        return found


AST_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not"}


def _may_return(statement: ast.stmt) -> bool:
    """A `return` or `yield` anywhere in a statement (not in the functions, classes and lambdas it defines)."""
    stack: List[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if node is not statement and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _returns_under(function) -> List[Tuple[ast.Return, Tuple[Tuple[ast.expr, bool], ...]]]:
    """Each `return VALUE` of a function's own body with the tests it sits under (_statements_under)."""
    return [(statement, conditions) for statement, conditions in _statements_under(function, (ast.Return,))
            if statement.value is not None]


ASSIGNMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def _statements_under(function, kinds) -> List[Tuple[ast.stmt, Tuple[Tuple[ast.expr, bool], ...]]]:
    """Each statement of one of `kinds` in a function's own body with the tests it sits under, (test, truth)
    each: an `if`'s body and `else`, and the statements after an `if` whose body ends by leaving (early exits)."""
    found: List[Tuple[ast.stmt, Tuple[Tuple[ast.expr, bool], ...]]] = []

    def block(body, conditions) -> None:
        for statement in body:
            if isinstance(statement, kinds):
                found.append((statement, conditions))
            elif isinstance(statement, ast.If):
                block(statement.body, conditions + ((statement.test, True),))
                block(statement.orelse, conditions + ((statement.test, False),))
                if not statement.orelse and statement.body and isinstance(statement.body[-1], LEAVING):
                    conditions = conditions + ((statement.test, False),)
            elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    inner = getattr(statement, field, None)
                    if inner:
                        block(inner if field not in ("handlers", "cases") else [s for part in inner for s in part.body], conditions)

    block(function.body, ())
    return found


LEAVING = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _bool_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


def _local_aliases(function, reader) -> Dict[str, str]:
    """The names a function's own imports bind (not those of functions or classes inside it)."""
    found: Dict[str, str] = {}
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = reader.sibling(alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = reader.absolute(node.level, node.module)
            found.update({alias.asname or alias.name: f"{base}.{alias.name}" for alias in node.names if alias.name != "*"})
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return found


def _falsy_constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _first_parameter(function) -> Optional[str]:
    """The name a method calls its instance (`self`), or None for a function with no positional parameter."""
    ordered = [*function.args.posonlyargs, *function.args.args]
    return ordered[0].arg if ordered else None


def _own_nodes(statement: ast.stmt) -> List[ast.AST]:
    """Every node of a statement, not those of the functions, classes and lambdas it defines."""
    found: List[ast.AST] = []
    stack: List[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        found.append(node)
        if node is not statement and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _statements_of(function) -> List[ast.stmt]:
    """Every statement of a function's own body (not of the functions and classes it defines)."""
    found: List[ast.stmt] = []
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(reversed(getattr(node, field, None) or []))
    return found


MAX_WORDS = 20000
MAX_REQUIRE_DEPTH = 6  # calls of functions that raise off CUDA followed within one file
# What unittest and pytest run before each test of a class (python/visitor.py reads the same set-ups).
CLASS_SET_UPS = frozenset({"setUpClass", "setUp", "setup_class", "setup_method", "asyncSetUp"})
MODULE_SET_UPS = frozenset({"setUpModule", "setup_module"})  # and before a module's tests
SET_UP_LOOK = 4  # the statements of a set-up looked at for its skip
# Top-level modules no project module is named by (the standard library, torch, whose guards the catalog
# gives): a name under one is never a leaf of a guard's table (_Reader._leaf).
NO_PROJECT_MODULES = frozenset(sys.stdlib_module_names) | {"torch"}
MAX_LEAVES = 3  # names of other modules one helper's table may depend on (3 ** 3 evaluations at most)
LEAF_GUARDS = ((False, False), (True, False), (False, True))  # unknown, true only off a Mac, false only off a Mac
WORD_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def unread_facts(text: bytes) -> FileFacts:
    """The facts of a module whose tree is not read (a syntax error, too deep, too large): only the
    identifiers it holds, so that reachability treats any name it may use as used from anywhere."""
    facts = FileFacts()
    words: Set[bytes] = set()
    for match in WORD_RE.finditer(text):
        words.add(match.group())
        if len(words) > MAX_WORDS:
            facts.words = ["*"]
            return facts
    facts.words = sorted(word.decode("ascii") for word in words)
    return facts


def _is_main_test(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def read_facts(
    tree: ast.Module, module: str, queries, flags, skip_if=(), skip_unless=(), text: bytes = b"", guards=None,
    is_package: bool = False, libraries=(), siblings=None,
) -> FileFacts:
    """The facts of one module. `text` (its bytes) lets the reader skip what the file cannot hold:
    extension builds without `cpp_extension`, guard helpers without a query, flag or skip word.
    `guards` (the catalog's guard table) adds platform tests and enum members to the guard rules.
    `siblings`: the modules beside a script folder's file, by the bare names it imports them with."""
    reader = _Reader(module, queries, flags, skip_if, skip_unless, guards)
    reader.is_package = is_package
    reader.libraries = tuple(libraries)
    reader.siblings = dict(siblings or {})
    if text:
        reader.builds = b"cpp_extension" in text
        programs = (*guards.off_mac_programs, *guards.cuda_only_results, *guards.off_mac_attributes) if guards is not None else ()
        words = {name.rsplit(".", 1)[-1].encode() for name in (*queries, *flags, *skip_if, *skip_unless, *libraries, *programs)}
        if guards is not None:  # a device type a Mac has, quoted: `device.type in ("cpu", "mps")`
            words.update(f"{quote}{kind}{quote}".encode() for kind in guards.mac_device_types - {"cpu"} for quote in "'\"")
        reader.guards_possible = any(word in text for word in words)
        reader.text, reader.words = text, words
        reader.testing = test_module(module, "", text)
    reader.facts.testing = reader.testing
    reader.tree = tree
    facts = reader.read(tree)
    # worked out once: by the guards that asked (after the module's imports were read), else now
    facts.availability = reader.availability if reader.availability_whole else availability_tests(
        tree, reader.resolve, text, reader._cuda_library)
    if not text or b"save(" in text:
        from cudalint.python.selection_use import loaders

        facts.saves = saved_files.saves(tree, reader.resolve, set(loaders().values()), reader.testing)
    facts.star = star_facts(tree, reader.absolute)
    return facts


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
TRIED = ast.Pass()  # what an import in a `try:` that catches ImportError sits under (_Reader._statements)


def _raises_again(node) -> bool:
    """Every handler of the `try:` catches an import failure and ends by raising: the module stops there
    whether the import worked or not, so the import guards nothing."""
    handlers = getattr(node, "handlers", [])
    return bool(handlers) and all(
        handler.body and isinstance(handler.body[-1], ast.Raise) and _catches_import_error(handler.type) for handler in handlers)


def _catches_import_error(kind) -> bool:
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(isinstance(name, ast.Name) and name.id in IMPORT_ERRORS | {"Exception", "BaseException"} for name in names)


def _compared_value(test, params) -> Optional[Tuple[str, str]]:
    """(param, value) of `param == "value"` (either side) with param one of `params`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    for name, value in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if isinstance(name, ast.Name) and name.id in params and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return name.id, value.value
    return None


def _option_default(call: ast.Call) -> Optional[ast.AST]:
    """DEFAULT of `options.get(key, DEFAULT)` or `getattr(obj, name, DEFAULT)` (the semantic model's
    GuardEvaluator._option_default, on CPython's tree)."""
    if call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr == "get" and len(call.args) == 2:
        return call.args[1]
    if isinstance(call.func, ast.Name) and call.func.id == "getattr" and len(call.args) == 3:
        return call.args[2]
    return None
