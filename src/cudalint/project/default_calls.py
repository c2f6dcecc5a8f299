"""How the project's own code calls its functions whose parameter defaults to a CUDA device.

`def grid_priors(self, sizes, device="cuda")` is CDL108's finding where the default can reach a Mac.
When the project calls the function and every one of those calls passes the parameter (by keyword,
or by position), the default is never what the code runs with: an internal helper whose callers
choose the device. Calls are matched by the name they call (`grid_priors(...)`, `x.grid_priors(...)`,
`Generator(...)` for a class's `__init__`), so a call the matching cannot tell apart from a call of
this function counts too: that errs towards keeping the finding; but not a call through a name the
module imports from outside the project (`subprocess.run(...)`, `from os import remove`), which calls
some other library's function of that name. A call that spreads `*args` or
`**kwargs` may leave the parameter out and counts as one that does; so does the name handed to a call as a
value (`ModelMeta(loader=Encoder)`): what receives it may call it with anything. A call that hands on a parameter
of its own function whose default is CUDA too (`def measure(self, model, device="cuda"): ...
config.measure(model, device=device)`) passes the wrapper's default along: it leaves the parameter out
unless every call of the wrapper passes its own (ProjectIndex.every_call_passes follows the chain, and
wants at least one call along it that passes a value of its own: a function that only hands its
default to itself, `run` to another `run`, has no caller that chooses).

The table is built by the project index after every module's facts are read (the names come from
those facts): each module's calls of those names, kept in the index cache under the module's content
and the set of names, so a warm run reads no file again.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from cudalint.digests import sha256
from cudalint.project.device_params import is_cuda_device, parameter_names, with_defaults
from cudalint.project.paths import test_module

TESTS_TOO = "*"  # a parameter name no function has: in a wanted name's parameters, its calls in test modules count
CACHE_KEY = "\0default-calls"  # the index cache's entry: [names digest, {path: [content, calls]}]

Wanted = Dict[str, Tuple[Tuple[str, int], ...]]  # called name -> (parameter, position; -1: keyword only)
# called name -> parameter -> [calls, calls that may leave it out, [[wrapper, its parameter] handed on],
#                               calls that pass a value of their own (neither left out nor handed on),
#                               calls that pass what may be None (`None`, an option whose default is None)]
Calls = Dict[str, Dict[str, list]]


def wanted_names(facts_by_path) -> Wanted:
    """The names a call of a function with a CUDA default goes by (a class's for its `__init__`), and of
    one whose device parameter defaults to None and is filled by the function when left out. A name
    defined only in test modules is marked (TESTS_TOO): its calls in test modules count; for the others
    they do not (a test that passes the device says nothing of the program's callers)."""
    wanted: Dict[str, set] = {}
    in_tests: Dict[str, bool] = {}  # name -> defined in test modules only
    for path, facts in facts_by_path.items():
        for qualified in (*facts.cuda_defaults, *facts.filled_defaults):
            name = qualified.rpartition(".")[2]
            in_tests[name] = in_tests.get(name, True) and facts.testing
        for qualified, params in (*facts.cuda_defaults.items(), *facts.filled_defaults.items()):
            name = qualified.rpartition(".")[2]
            if name.startswith("__"):
                continue  # a dunder method is called by syntax, not by its name
            wanted.setdefault(name, set()).update(
                (param[0], param[1]) for param in params
                if len(param) >= 2 and isinstance(param[0], str) and type(param[1]) is int
            )
    return {name: tuple(sorted(found)) + ((TESTS_TOO, -1),) * in_tests.get(name, False) for name, found in sorted(wanted.items()) if found}


def calls_in(tree: ast.AST, wanted: Wanted, lines: List[int], own: FrozenSet[str] = frozenset()) -> Calls:
    """The calls of the wanted names in one module, and how many may leave each parameter out; only the
    nodes that span one of `lines` (sorted: where the text names one of them) are visited. `own`: the
    names the project's folders and modules go by; a call through a name the module imports from
    anything else is another library's."""
    found: Calls = {}
    outside = _imported_from_outside(tree, own) if own else frozenset()
    others = _other_functions(tree, wanted)
    unset: List[FrozenSet[str]] = []  # the module's options with no default, read once a call passes `x.attr`
    # (node, the enclosing functions' parameters that default to CUDA -> (the name a call of their function
    # goes by, the parameter); None where that is not known, the class a method is defined in)
    # and the functions around it, innermost last
    stack: List[Tuple[ast.AST, Dict[str, Optional[Tuple[str, str]]], Optional[str], tuple]] = [(tree, {}, None, ())]
    unfilled: Dict[ast.AST, Tuple[FrozenSet[str], FrozenSet[str]]] = {}  # function -> (None-defaulted, bound) names
    while stack:
        node, forwarded, klass, around = stack.pop()
        if type(node) in _FUNCTIONS:
            forwarded = _cuda_defaulted(node, forwarded, klass)
            klass = None
            around = (*around, node)
        elif type(node) is ast.ClassDef:
            klass = node.name
        for field in node._fields:
            child = getattr(node, field, None)
            for item in child if type(child) is list else (child,):
                if not isinstance(item, ast.AST):
                    continue
                first = getattr(item, "lineno", None)
                if first is not None:
                    at = bisect.bisect_left(lines, first)
                    if at == len(lines) or lines[at] > (item.end_lineno or first):
                        continue  # no line of this node names a wanted function
                stack.append((item, forwarded, klass, around))
        if type(node) is not ast.Call:
            continue
        if not (type(node.func) is ast.Name and node.func.id in NEVER_CALLED):
            for handed_on in (*node.args, *(keyword.value for keyword in node.keywords)):
                _note_handed_on(handed_on, wanted, outside, found)
        func = node.func
        name = _wanted_name(func, wanted, outside)
        if name is None:
            continue
        params = wanted[name]
        if type(func) is ast.Name and func.id in others:
            continue  # `one_hot(x, num_classes=n)` beside this module's own `def one_hot(x, num_classes)`
        spread = any(type(arg) is ast.Starred for arg in node.args) or any(keyword.arg is None for keyword in node.keywords)
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        for param, position in params:
            if param == TESTS_TOO:
                continue
            given = keywords.get(param, node.args[position] if 0 <= position < len(node.args) else None)
            counts = found.setdefault(name, {}).setdefault(param, [0, 0, [], 0, 0])
            counts[0] += 1
            handed = forwarded.get(given.id, False) if type(given) is ast.Name else False
            if spread or given is None or handed is None:
                counts[1] += 1
            elif handed:
                if list(handed) not in counts[2]:
                    counts[2].append(list(handed))
            else:
                counts[3] += 1
            if type(given) is ast.Attribute and not unset:
                unset.append(_options_without_default(tree))
            if given is not None and (_may_be_none(given, unset[0] if unset else frozenset())
                                      or (type(given) is ast.Name and _unfilled_none(given.id, around, unfilled))):
                counts[4] += 1
    return found


def _options_without_default(tree: ast.AST) -> FrozenSet[str]:
    """The destinations of the module's command-line options that are None unless given: `add_argument(
    "--device")` or `add_argument("--device", default=None)` (argparse's default is None; not a flag's
    `action="store_true"`, whose default is False)."""
    found = set()
    for node in ast.walk(tree):
        if not (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "add_argument"):
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        default, action = keywords.get("default"), keywords.get("action")
        if action is not None or "required" in keywords or not (
                default is None or (type(default) is ast.Constant and default.value is None)):
            continue
        dest = keywords.get("dest")
        if type(dest) is ast.Constant and isinstance(dest.value, str):
            found.add(dest.value)
            continue
        names = [arg.value for arg in node.args if type(arg) is ast.Constant and isinstance(arg.value, str)]
        long = next((name for name in names if name.startswith("--")), None)
        if long is not None:
            found.add(long[2:].replace("-", "_"))
    return frozenset(found)


def _may_be_none(value: ast.AST, unset: FrozenSet[str]) -> bool:
    """`None`, or `args.<dest>` of an option that is None unless given."""
    return (type(value) is ast.Constant and value.value is None) or (type(value) is ast.Attribute and value.attr in unset)


def _unfilled_none(name: str, around: tuple, memo: Dict) -> bool:
    """`name` is a parameter of the innermost function around the call that binds it, defaulting to None,
    that the function never binds again (`def predict(model, device=None): return predict_dl(model,
    device=device)`): a call of the function that leaves it out hands None on."""
    for function in reversed(around):
        if function not in memo:
            memo[function] = _none_defaults(function)
        none_defaulted, bound = memo[function]
        if name in bound:
            return name in none_defaulted
    return False


def _none_defaults(function: ast.AST) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The function's parameters that default to None and that its body never assigns, and every name it
    binds (parameters and assignments, not those of functions inside it)."""
    params = parameter_names(function.args)  # type: ignore[attr-defined]
    assigned, pending = set(), list(function.body) if type(function) is not ast.Lambda else []  # type: ignore[attr-defined]
    while pending:
        node = pending.pop()
        if type(node) is ast.Name and type(node.ctx) is not ast.Load:
            assigned.add(node.id)
        elif type(node) in (ast.Global, ast.Nonlocal):
            assigned.update(node.names)
        if type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            pending.extend(ast.iter_child_nodes(node))
    none_defaulted = frozenset(arg.arg for _, arg, default in with_defaults(function.args)  # type: ignore[attr-defined]
                               if type(default) is ast.Constant and default.value is None and arg.arg not in assigned)
    return none_defaulted, frozenset(params | assigned)


def _wanted_name(node: ast.AST, wanted: Wanted, outside: FrozenSet[str]) -> Optional[str]:
    """The wanted name a name or attribute chain ends in, unless the chain starts at a name the module imports
    from outside the project (`subprocess.run`, `torch.nn.functional.one_hot`: another library's object of
    the same name)."""
    name = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute else None
    if name is None or not wanted.get(name):
        return None
    through = node
    while type(through) is ast.Attribute:
        through = through.value
    return None if type(through) is ast.Name and through.id in outside else name


# Builtins that read what they are handed and never call it (`super(Encoder, self)`, `isinstance(x, Encoder)`).
NEVER_CALLED = frozenset({"super", "isinstance", "issubclass", "type", "id", "hasattr", "getattr", "setattr", "delattr",
                          "repr", "str", "print", "callable", "vars", "dir", "hash", "len"})


def _note_handed_on(value: ast.AST, wanted: Wanted, outside: FrozenSet[str], found: Calls) -> None:
    """A wanted function or class handed to a call as a value (`ModelMeta(loader=Encoder)`, `partial(Encoder,
    ...)`, `registry.register(Encoder)`): whatever receives it may call it later with any arguments, so it
    counts as a call that may leave each parameter out."""
    name = _wanted_name(value, wanted, outside)
    if name is None:
        return
    for param, _ in wanted[name]:
        if param != TESTS_TOO:
            counts = found.setdefault(name, {}).setdefault(param, [0, 0, [], 0, 0])
            counts[0] += 1
            counts[1] += 1


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While)


def _other_functions(tree: ast.AST, wanted: Wanted) -> FrozenSet[str]:
    """The wanted names the module defines itself, at its top, as a function none of whose wanted parameters
    has a default (it lacks them, or requires them: `def random_init(data, device)`): a bare call of the name
    there calls that function, not one whose device parameter defaults to anything."""
    found = set()
    for statement in getattr(tree, "body", ()):
        if type(statement) in (ast.FunctionDef, ast.AsyncFunctionDef) and statement.name in wanted:
            defaulted = {arg.arg for _, arg, _ in with_defaults(statement.args)}
            if not any(param in defaulted for param, _ in wanted[statement.name] if param != TESTS_TOO):
                found.add(statement.name)
    return frozenset(found)


def _imported_from_outside(tree: ast.AST, own: FrozenSet[str]) -> FrozenSet[str]:
    """The names the module's import statements bind to modules, or to their members, from outside the
    project (a module whose top-level name is none of `own`; a relative import is the project's)."""
    found = set()
    pending = list(getattr(tree, "body", ()))
    while pending:
        statement = pending.pop()
        if type(statement) is ast.Import:
            found.update((alias.asname or alias.name.partition(".")[0]) for alias in statement.names
                         if alias.name.partition(".")[0] not in own)
        elif type(statement) is ast.ImportFrom:
            if statement.level == 0 and (statement.module or "").partition(".")[0] not in own:
                found.update(alias.asname or alias.name for alias in statement.names if alias.name != "*")
        elif isinstance(statement, _BLOCKS):
            for field in ("body", "orelse", "finalbody", "handlers"):
                pending.extend(getattr(statement, field, ()) or ())
        elif type(statement) is ast.ExceptHandler:
            pending.extend(statement.body)
    return frozenset(found)


def own_names(relatives: Iterable[str]) -> FrozenSet[str]:
    """Every folder name and module name in the project's paths: what an import of its own code may start
    with, whichever folder is its root (`src/pkg/x.py`: src, pkg, x)."""
    names = set()
    for relative in relatives:
        parts = relative.replace("\\", "/").split("/")
        names.update(parts[:-1])
        names.add(parts[-1].rpartition(".")[0] or parts[-1])
    return frozenset(names)


def _cuda_defaulted(function: ast.AST, outer: Dict[str, Optional[Tuple[str, str]]],
                    klass: Optional[str]) -> Dict[str, Optional[Tuple[str, str]]]:
    """The names whose value in the function's body may be a CUDA default of its own parameters ("cuda",
    "cuda:1", `torch.device("cuda")`), with those of the functions around it that it does not bind anew;
    each with the name a call of its function goes by (the class's for `__init__`) and the parameter, or
    None for a lambda or a nested function's (whose calls are not counted by name)."""
    bound = parameter_names(function.args)  # type: ignore[attr-defined]
    rebuilt = _rebuilt(function)
    own = [arg.arg for _, arg, default in with_defaults(function.args) if _names_cuda(default) and arg.arg not in rebuilt]
    if not own and not outer:
        return outer
    name = getattr(function, "name", None)
    called = klass if name == "__init__" else name if name is not None and not outer else None
    found = {key: value for key, value in outer.items() if key not in bound}
    found.update((param, (called, param) if called is not None else None) for param in own)
    return found


def _rebuilt(function: ast.AST) -> frozenset:
    """The parameters the function's body rebinds to what a call makes of them (`device =
    _validate_get_device(device)`): what it hands on after that is the call's answer, not its default."""
    found = set()
    for statement in getattr(function, "body", ()) if not isinstance(function, ast.Lambda) else ():
        if (type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
                and type(statement.value) is ast.Call
                and any(type(arg) is ast.Name and arg.id == statement.targets[0].id for arg in statement.value.args)):
            found.add(statement.targets[0].id)
    return frozenset(found)


def _names_cuda(default: ast.AST) -> bool:
    """"cuda", "cuda:1" or `torch.device("cuda")` as a parameter's default (the call read by its name)."""
    if type(default) is ast.Call and len(default.args) == 1 and not default.keywords:
        func = default.func
        if (func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None) != "device":
            return False
        default = default.args[0]
    return type(default) is ast.Constant and is_cuda_device(default.value)


def collect(
    modules: Iterable[Tuple[str, str, str]],
    wanted: Wanted,
    stored,
    read: Callable[[str], Optional[bytes]],
    parse: Callable[[bytes, str], Optional[ast.AST]],
) -> Tuple[Calls, Optional[list]]:
    """The project's table (summed over modules) and the cache entry to store. `modules` are (path on
    disk, path in the project, content digest); a module whose content and the names are those stored
    is not read again; one whose text names none of them is not parsed."""
    if not wanted:
        return {}, None
    modules = list(modules)
    own = own_names(relative for _, relative, _ in modules)
    names_digest = sha256(json.dumps([wanted, sorted(own)], sort_keys=True).encode()).hexdigest()
    previous = stored[1] if isinstance(stored, (list, tuple)) and len(stored) == 2 and stored[0] == names_digest and isinstance(stored[1], dict) else {}
    # a call of a name, or the name handed on as a value (`loader=Encoder`): any mention as a whole word
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in wanted) + rb")\b")
    entries: Dict[str, list] = {}
    total: Calls = {}
    for path, relative, content in modules:
        entry = previous.get(relative)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == content and _well_formed(entry[1]):
            calls = entry[1]
        else:
            data = read(path)
            lines = lines_of(pattern, data) if data is not None else []
            tree = parse(data, relative) if lines else None
            here = wanted if not test_module("", relative, data) else {
                name: params for name, params in wanted.items() if (TESTS_TOO, -1) in params}
            calls = calls_in(tree, here, lines, own) if tree is not None and here else {}
        entries[relative] = [content, calls]
        for name, params in calls.items():
            for param, (count, leaving, handed, chosen, unset) in params.items():
                counts = total.setdefault(name, {}).setdefault(param, [0, 0, [], 0, 0])
                counts[0] += count
                counts[1] += leaving
                counts[2].extend(pair for pair in handed if pair not in counts[2])
                counts[3] += chosen
                counts[4] += unset
    return total, [names_digest, entries]


def lines_of(pattern: "re.Pattern[bytes]", data: bytes) -> List[int]:
    """The lines (from 1, in order) where the pattern matches."""
    lines: List[int] = []
    line, position = 1, 0
    for found in pattern.finditer(data):
        line += data.count(b"\n", position, found.start())
        position = found.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _well_formed(calls) -> bool:
    """A stored module's calls as calls_in makes them (the cache sits in the linted tree: never trusted)."""
    return isinstance(calls, dict) and all(
        isinstance(name, str) and isinstance(params, dict) and all(
            isinstance(param, str) and isinstance(counts, list) and len(counts) == 5
            and type(counts[0]) is int and type(counts[1]) is int and isinstance(counts[2], list) and type(counts[3]) is int
            and type(counts[4]) is int
            and all(isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair)
                    for pair in counts[2])
            for param, counts in params.items()
        )
        for name, params in calls.items()
    )
