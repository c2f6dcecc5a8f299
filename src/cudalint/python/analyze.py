"""Lint one Python source: decode, CPython's parse, two gates; a file that passes both goes to the
libcst engine (python/engine.py), which is imported only then."""

from __future__ import annotations

import _thread  # the lock without importing threading (a run that needs no deep stack never does)
import ast
import contextlib
import functools
import gc
import os
import re
import sys
import warnings
from collections.abc import Mapping

from cudalint.catalog import Rule
from cudalint.findings import Finding, Severity
from cudalint.python.call_gate import CallGate
from cudalint.python.device_setting import DeviceSetting

# libcst recurses once per nesting level; deep but valid code needs a deep stack.
PART_BYTES = 192 * 1024  # a larger file is checked in parts (parts.py): one tree of it would not fit in memory
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 30000  # on the deep-stack thread only, for the libcst stage, restored after each file
_CPYTHON_RECURSION_LIMIT = 1000  # CPython's default: its AST construction refuses deeper nesting under it

# names, words that begin a string a check reads as a value, words a check looks for anywhere in a
# string, keyword names, names that count only in a file importing one of their modules, names that
# count only as part of a name that can resolve under one, and the last parts of the modules the import
# checks read, which count only in an import of one of their libraries that is not the project's own
# (these three: word -> modules), methods that count wherever they are called, words whose calls
# count only with arguments that can reach a finding (word -> how to judge them: call_gate.py), and
# words that count only in a file that also holds one of some others (word -> those: its companions,
# see _Gates.mentions)
Words = tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], Mapping[str, frozenset[str]], Mapping[str, frozenset[str]],
              Mapping[str, frozenset[str]], frozenset[str], Mapping[str, Mapping[str, object]], Mapping[str, frozenset[str]]]
NO_PROJECT_WORDS: Mapping[str, frozenset[str]] = {}  # a run without a project index (one object: _Gates.later keys on it)
RELATIVE = "."  # in a file's imported modules: a relative import (of the file's own package)
STAR = "*"  # in a file's imported modules: `from m import *` (it may bring names of any module m imports)


class _Gates:
    """Both gates' words for one release, as the gates read them for every file."""

    def __init__(self, words: Words):
        self.words = words
        names, strings, texts, keywords, rooted, resolved, imports, called, argued, companions = words
        self.names = names
        self.argued = CallGate(argued) if argued else None
        self.called = called
        self.keywords = keywords
        self.rooted = rooted
        self.resolved = resolved
        self.imports = imports
        self.import_words = frozenset(imports)
        self.companions = companions
        self._later: dict[tuple[frozenset[str], int], tuple[Mapping[str, frozenset[str]], Mapping[str, frozenset[str]]]] = {}

    def later(self, own: frozenset[str], project_roots: Mapping[str, frozenset[str]]) -> Mapping[str, frozenset[str]]:
        """The words of the second pass, as resolved words: the import words less the libraries that are the
        project's own packages (the import checks never report those: linting xformers, `import xformers`
        is no CUDA-only library), with the project's own words (ProjectIndex.gate_roots_of). Worked out once
        per project and kind of file, not per file."""
        key = (own, id(project_roots))
        found = self._later.get(key)
        if found is None or found[0] is not project_roots:
            merged: dict[str, frozenset[str]] = {word: roots - own for word, roots in self.imports.items() if roots - own}
            for word, roots in project_roots.items():
                merged[word] = merged.get(word, frozenset()) | roots
            found = self._later[key] = (project_roots, merged)
        return found[1]

    # Compiled on first use (a file with no string, or that mentions no word, never needs them).
    @functools.cached_property
    def strings(self) -> "re.Pattern[str] | None":
        return _string_pattern(self.words[1], self.words[2])

    @functools.cached_property
    def prefilter(self) -> "re.Pattern[str] | None":
        names, strings, texts, keywords, rooted, resolved, imports, called, *_ = self.words
        return _word_pattern(names | strings | texts | keywords | rooted.keys() | resolved.keys() | imports.keys() | called)

    @functools.cached_property
    def _needing(self) -> "re.Pattern[str] | None":
        return _word_pattern(self.companions.keys())

    @functools.cached_property
    def _alone(self) -> tuple:
        """_mentions' word sets without the words that need a companion."""
        needing = self.companions.keys()
        return (self.names - needing, self.keywords - needing, {w: m for w, m in self.rooted.items() if w not in needing},
                {w: m for w, m in self.resolved.items() if w not in needing}, self.called - needing,
                CallGate({w: spec for w, spec in self.argued.specs.items() if w not in needing}) if self.argued else None)

    def mentions(self, tree: ast.AST, text: str, seen: set[str] | None = None) -> bool | frozenset[str]:
        """_mentions' answer with these words. A word with companions (a check that reports a float64 NumPy
        array only where the file moves a tensor: `from_numpy` with `to`, `cuda`, `device`, ...) counts only
        in a file that also holds one of them as an attribute, a keyword, an imported name or a whole string
        (a dict key spread into a call as keywords): the tree is read without such words first, which also
        collects those names, and again with them only when a companion of a word the text holds is there."""
        needing = [match.group(0) for match in self._needing.finditer(text)] if self._needing is not None else []
        if not needing:  # (the same answer as without them: a word the tree holds is a word of the text)
            return _mentions(tree, self.names, self.keywords, self.strings, seen, self.rooted, self.resolved, self.called, self.argued)
        offered = seen if seen is not None else set()
        names, keywords, rooted, resolved, called, argued = self._alone
        found = _mentions(tree, names, keywords, self.strings, offered, rooted, resolved, called, argued)
        wanted = frozenset().union(*(self.companions[word] for word in needing))
        if found is True or (offered.isdisjoint(wanted) and not _quoted(wanted).search(text)):
            return found
        return _mentions(tree, self.names, self.keywords, self.strings, seen, self.rooted, self.resolved, self.called, self.argued)


class Checks:
    """The gates and handlers for one selection of rules (built once per selection).

    The handlers need libcst: they are built by the first file that passes both gates, or to
    compute the gates' words when no stored copy of them was given (see `prepare`)."""

    def __init__(self, rules: dict[str, Rule], catalog_rules: tuple[Rule, ...] = ()):
        self.rules = rules
        self.catalog_rules = tuple(catalog_rules) or tuple(rules.values())
        self._engine = None
        self._gates: dict[tuple[int, ...], _Gates] = {}

    @property
    def engine(self):
        if self._engine is None:
            from cudalint.python.engine import Engine

            self._engine = Engine(self.rules, self.catalog_rules)
        return self._engine

    def words(self, torch_version: tuple[int, ...]) -> Words:
        return self.gates(torch_version).words

    def prepare(self, torch_version: tuple[int, ...], stored: Words | None) -> None:
        """Take a release's gate words from a stored copy (the runner's gate cache) instead of the engine."""
        if stored is not None and torch_version not in self._gates:
            self._gates[torch_version] = _Gates(stored)

    def gates(self, torch_version: tuple[int, ...]) -> _Gates:
        """Both gates' words for a release, computed once per release (they are read for every file)."""
        if torch_version not in self._gates:
            self._gates[torch_version] = _Gates(self.engine.words(torch_version))
        return self._gates[torch_version]

    def names(self, torch_version: tuple[int, ...]) -> frozenset[str]:
        """Words a file must contain for any selected check to fire at this target release."""
        return self.gates(torch_version).names

    def prefilter(self, torch_version: tuple[int, ...]) -> "re.Pattern[str]" | None:
        """The same words as a text search: the cheap first gate, before any parsing."""
        return self.gates(torch_version).prefilter


def _word_pattern(words) -> "re.Pattern[str] | None":
    """Whole words (`load` is not `download`); a word ending in `_` is a prefix (`NCCL_`)."""
    source = _word_source(words)
    return re.compile(source) if source is not None else None


def _word_source(words) -> str | None:
    """Any of the words, whole (one ending in `_` as a prefix), as one regular expression grouped by first
    character: at each place of a text the engine then tries the words of one group, not every word (a
    file holding none of them is searched to its end, and most files hold none). One level of grouping,
    not a trie: as fast, and no nesting that grows with a word's length (the project's words come from
    the linted code)."""
    if not words:
        return None
    groups: dict[str, list[str]] = {}
    for word in sorted(words, key=len, reverse=True):
        groups.setdefault(word[0], []).append(word)
    return r"\b(?:" + "|".join(
        re.escape(first) + "(?:" + "|".join(re.escape(word[1:]) + ("" if word.endswith("_") else r"\b") for word in group) + ")"
        for first, group in sorted(groups.items())
    ) + ")"


def _string_pattern(values, texts) -> "re.Pattern[str] | None":
    """A string a check may read: one that begins with a value word (a device, a variable's name: a
    docstring-like constant that only mentions `.to("cuda")` is none), or that holds a text word anywhere."""
    begins, anywhere = _word_source(values), _word_source(texts)
    parts = ([r"\A(?:" + begins + ")"] if begins is not None else []) + ([anywhere] if anywhere is not None else [])
    return re.compile("|".join(parts)) if parts else None


@functools.lru_cache(maxsize=8)
def checks_for(codes: frozenset[str], catalog_rules: tuple[Rule, ...]) -> Checks:
    return Checks({rule.code: rule for rule in catalog_rules if rule.code in codes}, catalog_rules)


def unreadable(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding("CDL000", path, line, column, line, column, message, Severity.ERROR)


def check_python(
    path: str,
    text: str,
    checks: Checks,
    torch_version: tuple[int, ...],
    device: DeviceSetting = DeviceSetting(),
    unsafe_fixes: bool = False,
    project=None,
    *,
    whole: bool = False,
    passed: list | None = None,
) -> list[Finding]:
    """`passed`: the outline of CPython's tree of exactly this text, from an earlier parse that found it
    passes both gates (the project index's, see Pregates): the gates are not run again."""
    if not whole and len(text) > PART_BYTES:  # too large for one tree in memory: in parts
        from cudalint.python import parts

        pieces = parts.split(text)
        if pieces and len(pieces) > 1:
            return parts.check_in_parts(
                pieces, lambda piece: check_python(path, piece, checks, torch_version, device, unsafe_fixes, project, whole=True)
            )
    if passed is not None:
        statements = passed
    else:
        tree = gate(path, text, checks, torch_version, project)
        if isinstance(tree, list):
            return tree  # settled without libcst: the engine is not even imported
        from cudalint.python.outline import outline

        # where statements start, for positions (None: no CPython tree, positions from libcst's)
        statements = outline(tree) if tree is not None else None
        del tree  # CPython's tree is as large as libcst's: not both at once
    from cudalint.python import engine

    return _deep_stack(
        engine.analyze_module, path, text, checks.rules, checks.engine, torch_version, device, unsafe_fixes, project, statements
    )


def gate(path: str, text: str, checks: Checks, torch_version: tuple[int, ...], project=None) -> list[Finding] | ast.AST | None:
    """CPython's parse and both gates, without libcst: the findings when they settle the file (its CDL000,
    or none because no selected check can fire in it), else CPython's tree of a file for the engine (None
    for a file in syntax newer than this Python's: the engine reads it without one)."""
    tree = cpython_tree(path, text)  # every file: one that does not parse always gets its CDL000
    if isinstance(tree, Finding) and not newer_syntax(text):
        return [tree]
    gates = checks.gates(torch_version)
    project_roots = project.gate_roots_of(path) if project is not None else NO_PROJECT_WORDS
    if (gates.prefilter is None or not gates.prefilter.search(text)) and not (project is not None and _any_word(project.gate_words, text)):
        return []
    if isinstance(tree, Finding):
        return None  # the text search is the only gate without CPython's tree
    root = package_root(path, project)
    if _counts(gates.mentions(tree, text), root):
        return tree
    # The import checks' words and the project's (another file's facts) count only as names under some
    # modules, which depend on the project: a pass of their own.
    later = gates.later(project.own_packages if project is not None else frozenset(), project_roots)
    if later and _counts(_mentions(tree, frozenset(), frozenset(), None, None, {}, later), root):
        return tree
    return []


def module_and_package(path: str, project) -> tuple[str | None, str]:
    """A file's module name in the project (None when not known) and the package its relative imports
    start from ("" when none)."""
    name = project.module_of(path) if project is not None else None
    if name is None:
        return None, ""
    return name, name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]


def package_root(path: str, project) -> str | None:
    """The first part of every name a relative import of the file resolves to (None: they resolve to nothing)."""
    package = module_and_package(path, project)[1]
    return package.split(".", 1)[0] if package else None


def _counts(found: bool | frozenset[str], root: str | None) -> bool:
    """_mentions' answer for a file whose relative imports start at package `root`."""
    return found is True or (bool(found) and root in found)


@functools.lru_cache(maxsize=8)
def _quoted(words: frozenset[str]) -> "re.Pattern[str]":
    """Any of the words as a whole string (`{"device": d}`: a key of keywords spread into a call)."""
    return re.compile("|".join(f"[\"']{re.escape(word)}[\"']" for word in sorted(words)))


def _any_word(words: frozenset[str], text: str) -> bool:
    return bool(words) and _word_pattern_cached(words).search(text) is not None


@functools.lru_cache(maxsize=8)
def _word_pattern_cached(words: frozenset[str]):
    return _word_pattern(words)


@contextlib.contextmanager
def without_collections():
    """No cyclic garbage collection while a parser builds a tree (CPython's, libcst's): a tree has no
    cycles, so the collections its allocations set off would only scan it, and the rest of the heap."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextlib.contextmanager
def _recursion_limit(limit: int):
    """The interpreter's recursion limit for one stage of one file, put back after: a limit raised for
    one file's libcst stage never loosens the CPython guard for the next file."""
    previous = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(limit)
    except RecursionError:  # already deeper than `limit` here: keep the limit as it is
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            sys.setrecursionlimit(previous)


def cpython_tree(path: str, text: str, top_level_await: bool = True) -> ast.AST | Finding:
    """CPython's own parser first: fast, exact messages, and it refuses nesting that would blow libcst's stack.
    Without `top_level_await`, a module-level `await` is a syntax error (the project index reads modules
    as they are imported); where both parse, the tree is the same."""
    flags = ast.PyCF_ONLY_AST | (ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if top_level_await else 0)
    try:
        with warnings.catch_warnings(), _recursion_limit(_CPYTHON_RECURSION_LIMIT), without_collections():
            warnings.simplefilter("ignore")
            return compile(text, path, "exec", flags, dont_inherit=True)
    except SyntaxError as exc:
        message = f"syntax error: {exc.msg}; the file was not checked"
        return unreadable(path, message, exc.lineno or 1, max(exc.offset or 1, 1))
    except (RecursionError, MemoryError):
        return unreadable(path, "expression nested too deeply to analyse; the file was not checked")
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        return unreadable(path, f"cannot parse: {exc}")


# Syntax of a later Python than the one running cudalint, which libcst's parser reads: (first Python, a
# line that may hold it). Python 3.12's type statements and type parameters (`type Alias = ...`, `class
# Box[T]:`); Python 3.14's exception types without parentheses (PEP 758: `except A, B:`).
NEWER_SYNTAX = (
    ((3, 12), re.compile(r"^\s*(?:type\s|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)", re.MULTILINE)),
    ((3, 14), re.compile(r"^\s*except\*?\s+[^(:#\n][^:#\n]*,", re.MULTILINE)),
)


def newer_syntax(text: str) -> bool:
    """Syntax of a later Python (NEWER_SYNTAX) in a file this Python's parser refused, and libcst's parser
    reads: valid code for the Python it is written for, checked from libcst's tree alone. Other text CPython
    refuses stays a syntax error."""
    if not any(sys.version_info < release and pattern.search(text) for release, pattern in NEWER_SYNTAX):
        return False
    import libcst as cst

    try:
        module = cst.parse_module(text)
    except Exception:  # noqa: BLE001 - libcst refuses it too: the CPython error stands
        return False
    stack: list = [module]
    while stack:
        node = stack.pop()
        if type(node) is cst.TypeAlias or getattr(node, "type_parameters", None) is not None:
            return True
        if type(node) in (cst.ExceptHandler, cst.ExceptStarHandler) and type(node.type) is cst.Tuple and not node.type.lpar:
            return True
        stack.extend(node.children)
    return False


DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _mentions(
    tree: ast.AST,
    names: frozenset[str],
    keywords: set[str],
    strings: "re.Pattern[str]" | None,
    seen: set[str] | None = None,
    rooted: Mapping[str, frozenset[str]] = {},
    resolved: Mapping[str, frozenset[str]] = {},
    called: frozenset[str] = frozenset(),
    argued: CallGate | None = None,
) -> bool | frozenset[str]:
    """The exact second gate, on the tree CPython already built: a check can fire only if an attribute,
    keyword or import the checks look for is in the code, or a string they read (a device, an
    environment variable) is. A bare name reaches an API only through an import, so names are
    judged at their import. Words in comments and docstrings no longer cost a libcst parse.

    Some words matter only with names under some modules (word -> modules), and the semantic model
    resolves a name only through an import of the file (`import m`, `from m import x`: names under
    `m`; a relative import: names under the file's own package; a name assigned a name or attribute:
    whatever that resolves to). A `rooted` word counts only in a file that imports one of its modules (`tf.nn.
    log_softmax` in a file without torch cannot reach torch's); a `resolved` word only as part of a
    name that can resolve under one: an attribute of a chain whose first name is imported from one
    (or may alias a name), or a part of such an import (`json.load` is not `torch.load`). A word in
    both maps is a tensor method whose check reads it only as a call's callee on a value it may know
    to be a tensor: a call's result, or a name the file assigns (`x = ...`) or annotates as a parameter
    (`x.norm()` there, `f(x).norm()`; not `self.norm = ...`, `self.norm(x)` with `self` unannotated and
    never assigned, `self.a.norm()`, `mode=` nor `x[0].norm()`, whose receiver the check knows nothing
    of): rooted there and at imports, resolved elsewhere (`torch.linalg.norm`, `n = torch.norm`). When only a
    relative import could supply the module, the answer is the set of those modules (the file's
    package root decides, see _counts). `seen` collects every word the file offers where `names` are
    looked for (for a False answer, all of them: another set of names can be judged later). A `called`
    word counts as the attribute a call calls (`x.cuda()`, not the `cuda` of `torch.cuda.is_available()`),
    besides whatever its entries in `rooted` and `resolved` say. An `argued` word's call counts only with
    arguments that can select a case with a gap (call_gate.py); when such a call's input is a call or an
    assigned name and the file spells a dtype the word's API lacks (`_dtype_reachable`), every mention
    counts as usual."""
    docstrings = set()
    # (modules a word needs, where the names at that place can come from; None: any import of the file),
    # for the end: an answer not known yet where the word is met (the import may come later)
    pending: list[tuple[frozenset[str], set[str] | None]] = []
    heads: list[tuple[str, frozenset[str]]] = []  # (first name of a chain, the modules its resolved word needs)
    imported: set[str] = set()  # the first part of each module the file imports (RELATIVE: its own package)
    bound: dict[str, set[str]] = {}  # a name an import binds -> the first parts of what it names
    aliases: set[str] = set()  # names an assignment may bind to another name (`tc = torch.cuda`)
    methods: set[int] = set()  # the callee of each call of a both-maps word's method on a call's result
    receivers: list[tuple[str, str]] = []  # (name, word) of each call of a both-maps word's method on a name
    known: set[str] = set()  # names the check may know a value of: assigned to a name, or annotated parameters
    judged: set[int] = set()  # the callee of each call of an argued word whose arguments reach no gap
    # of those, (the dtype words that would make it count after all, the expressions its input may be)
    dtyped: list[tuple[frozenset[str], tuple[ast.AST, ...]]] = []
    assigned: set[str] = set()  # names an assignment binds (op coverage knows a dtype only of such a name)
    stack: list = [tree]  # every node, each before its children (a docstring's holder before the docstring)
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if not isinstance(node, ast.AST):
            continue  # None and strings in lists of fields
        kind = type(node)
        if kind in _GATED:
            if kind is ast.Attribute:
                attr = node.attr
                if seen is not None:
                    seen.add(attr)
                if attr in names:
                    return True
                if judged and id(node) in judged:
                    pass
                elif attr in rooted and (attr not in resolved or id(node) in methods):
                    if not rooted[attr].isdisjoint(imported):
                        return True
                    pending.append((rooted[attr], None))
                elif attr in resolved:
                    head = node.value
                    while type(head) is ast.Attribute:
                        head = head.value
                    if type(head) is ast.Name:
                        modules = resolved[attr]
                        if not modules.isdisjoint(bound.get(head.id, ())) or (head.id in aliases and not modules.isdisjoint(imported)):
                            return True
                        heads.append((head.id, modules))
            elif kind is ast.Constant:
                if strings is not None and type(node.value) is str and id(node) not in docstrings:
                    if strings.search(node.value):
                        return True
            elif kind is ast.keyword:
                arg = node.arg
                if seen is not None and arg is not None:
                    seen.add(arg)
                if arg in keywords or arg in names:
                    return True
                if arg in rooted and arg not in resolved:
                    if not rooted[arg].isdisjoint(imported):
                        return True
                    pending.append((rooted[arg], None))
            elif kind is ast.Call:
                func = node.func
                if type(func) is ast.Attribute:
                    attr = func.attr
                    if argued is not None and attr in argued and not argued.may_report(attr, node):
                        judged.add(id(func))
                        dtypes = argued.dtypes(attr)
                        if dtypes:
                            dtyped.append((dtypes, _inputs(node)))
                    elif attr in called:
                        return True  # `model.cuda()`: a method the checks read where it is called
                    elif attr in resolved and attr in rooted:
                        if type(func.value) is ast.Call:
                            methods.add(id(func))
                        elif type(func.value) is ast.Name:
                            receivers.append((func.value.id, func.attr))
            elif kind is ast.Assign or kind is ast.AnnAssign:
                for target in node.targets if kind is ast.Assign else (node.target,):
                    _aliases(target, node.value, aliases)
                    if type(target) is ast.Name:
                        known.add(target.id)
                        assigned.add(target.id)
            elif kind is ast.Import or kind is ast.ImportFrom:
                if _import_mentions(node, kind, names, rooted, resolved, seen, imported, bound, pending):
                    return True
            elif kind in DOCUMENTED:
                if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    arguments = node.args
                    for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
                        if arg is not None and arg.annotation is not None:
                            known.add(arg.arg)  # an annotated parameter may be known to be a tensor
                if node.body:  # a module, function or class: its docstring is no code
                    first = node.body[0]
                    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                        docstrings.add(id(first.value))
        for field in kind._fields:
            child = getattr(node, field, None)
            if type(child) is list:
                extend(reversed(child))
            elif isinstance(child, ast.AST):
                stack.append(child)
    if dtyped and _dtype_reachable(tree, dtyped, assigned):
        return _mentions(tree, names, keywords, strings, seen, rooted, resolved, called)  # every call counts
    for receiver, word in receivers:
        if receiver in known:
            pending.append((rooted[word], None))
    if STAR in imported and (pending or heads):
        return True  # a star import may bind any name from any module: every word that waits counts
    for head, modules in heads:
        pending.append((modules, bound.get(head, set()) | (imported if head in aliases else set())))
    conditional: set[str] = set()  # modules that count if the file's package is one of them
    for modules, origins in pending:
        origins = imported if origins is None else origins
        if not modules.isdisjoint(origins):
            return True
        if RELATIVE in origins:
            conditional |= modules
    return frozenset(conditional) if conditional else False


def _inputs(call: ast.Call) -> tuple[ast.AST, ...]:
    """The expressions op coverage may take a call's input tensor from: the receiver of a method, the first
    positional argument, `input=`."""
    found = [call.func.value] if type(call.func) is ast.Attribute else []
    if call.args:
        found.append(call.args[0])
    found.extend(keyword.value for keyword in call.keywords if keyword.arg == "input")
    return tuple(found)


def _dtype_reachable(tree: ast.AST, dtyped, assigned: set[str]) -> bool:
    """Whether a judged call may still get a dtype finding: op coverage knows the dtype of an input only when
    it is a call (`x.long()`, `torch.randint(...)`) or a name an assignment binds, and only through one of
    the dtype words, which a file names as an attribute (`torch.int64`, `.long()`) or an import."""
    wanted: set[str] = set()
    for dtypes, inputs in dtyped:
        if any(type(node) is ast.Call or type(node) is ast.Name and node.id in assigned for node in inputs):
            wanted |= dtypes
    if not wanted:
        return False
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Attribute and node.attr in wanted:
            return True
        if kind is ast.alias and (node.name == "*" or node.name.rsplit(".", 1)[-1] in wanted or node.asname in wanted):
            return True
    return False


_GATED = frozenset({ast.Attribute, ast.Call, ast.Constant, ast.keyword, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, *DOCUMENTED})


def _import_mentions(node, kind, names, rooted, resolved, seen, imported, bound, pending) -> bool:
    """An import statement for _mentions: True when a name or module it names is a word that counts."""
    if kind is ast.Import:
        origins = [alias.name.split(".", 1)[0] for alias in node.names]
    else:
        origin = RELATIVE if node.level else (node.module or "").split(".", 1)[0]
        origins = [origin] * len(node.names)
        module = node.module.split(".") if node.module else []
        if seen is not None:
            seen.update(module)
        if any(part in names for part in module):
            return True
        imported.add(origin)
        if _words_at_import(module, origin, rooted, resolved, imported, pending):
            return True
    imported.update(origins)
    for alias, origin in zip(node.names, origins):
        if alias.name == "*":
            imported.add(STAR)
            continue
        parts = alias.name.split(".")
        if seen is not None:
            seen.update(parts)
            if alias.asname is not None:
                seen.add(alias.asname)
        if alias.asname in names or any(part in names for part in parts):
            return True
        if _words_at_import((alias.asname, *parts), origin, rooted, resolved, imported, pending):
            return True
        local = alias.asname or (parts[0] if kind is ast.Import else alias.name)
        bound.setdefault(local, set()).add(origin)
    return False


def _aliases(target: ast.AST, value: ast.AST | None, found: set[str]) -> None:
    """The names an assignment binds that the semantic model may resolve through their value: a name
    bound to a name or attribute chain (any name a tuple or list target binds, to be safe; not the
    names inside its attribute and subscript targets: `self.h, self.w = ...` binds no name `self`)."""
    if type(target) is ast.Name:
        if type(value) is ast.Name or type(value) is ast.Attribute:
            found.add(target.id)
        return
    targets = [target]
    while targets:
        target = targets.pop()
        kind = type(target)
        if kind is ast.Name:
            found.add(target.id)
        elif kind is ast.Tuple or kind is ast.List:
            targets.extend(target.elts)
        elif kind is ast.Starred:
            targets.append(target.value)


def _words_at_import(words, origin: str, rooted, resolved, imported: set[str], pending) -> bool:
    """The words of an import statement's names: a rooted word needs any import of the file, a resolved
    one this import's module. True when one counts already; the others wait in `pending`."""
    for word in words:
        if word in rooted:
            if not rooted[word].isdisjoint(imported):
                return True
            pending.append((rooted[word], None))
        elif word in resolved:
            if origin in resolved[word]:
                return True
            pending.append((resolved[word], {origin}))
    return False


class Pregate:
    """Both gates' answer for one file, taken from the project index's parse of it, before the
    project's own words (known once the whole index is built) are."""

    __slots__ = ("digest", "prefilter", "mentions", "seen", "statements", "imports")

    def __init__(self, digest: str, prefilter: bool, mentions: bool | frozenset[str], seen: frozenset[str],
                 statements: list | None, imports: frozenset[str] = frozenset()):
        self.digest = digest  # of the bytes parsed
        self.prefilter = prefilter  # the text search found a word of the checks (searched for a file that may mention one)
        self.mentions = mentions  # the tree holds one where the checks look (the project's words aside): _mentions' answer
        self.seen = seen  # when it may not: the words where the project's words would be looked for
        self.statements = statements  # the outline of the tree, for a file that may pass
        self.imports = imports  # the import checks' words at the file's release (they too wait for the project)

    def verdict(self, project_words: frozenset[str], root: str | None = None) -> str | None:
        """SETTLED when no check can fire in the file, PASSES when it passes both gates (its outline is
        kept), None when only the gates' own reading of the text can tell (gate() then runs as usual).
        `root`: the file's package root (see package_root)."""
        mentions = _counts(self.mentions, root)
        if not mentions and self.seen.isdisjoint(project_words) and self.seen.isdisjoint(self.imports):
            return SETTLED
        if self.prefilter and mentions and self.statements is not None:
            return PASSES
        return None


SETTLED, PASSES = "settled", "passes"


SENT_NESTING = 64  # blocks inside blocks in an outline handed to a worker (else the worker parses the file itself)


def _nesting(statements: list) -> int:
    deepest, stack = 0, [(statements, 1)]
    while stack:
        body, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((statement.body, depth + 1) for statement in body if statement.body)
    return deepest


class Pregates:
    """One CPython parse per file for the project index and the gates: the index hands each file it
    parses to `parse`, which parses it as gate() would (the same text, flags and recursion limit) and
    keeps both gates' answer for it."""

    def __init__(self, checks: Checks, releases: dict[str, tuple[int, ...]], prepare=lambda: None):
        self.checks = checks
        self.releases = releases  # the files to lint (by project path) -> the release each is linted for
        self.prepare = prepare  # called before the gates' words are first read (the runner's gate cache)
        self.found: dict[str, Pregate] = {}

    def parse(self, key: str, data: bytes) -> ast.Module | None:
        """CPython's tree of a module's bytes (None when it has none: the index then reads it its own way)."""
        from cudalint.python.outline import outline
        from cudalint.source import decode_python

        text = decode_python(data).text
        if text is None:
            return None
        tree = cpython_tree(key, text, top_level_await=False)
        if isinstance(tree, Finding):
            return None
        release = self.releases.get(key)
        if release is None:
            return tree
        # A file checked in parts (parts.py) may still be settled here, as a whole: each part holds only
        # names and imports the whole file holds, so no part can pass where the whole does not.
        whole = len(text) <= PART_BYTES
        if self.prepare is not None:
            self.prepare()
            self.prepare = None
        gates = self.checks.gates(release)
        seen: set[str] = set()
        mentions = gates.mentions(tree, text, seen)
        # Without a mention the text search cannot change the verdict (see Pregate.verdict): not run.
        prefilter = bool(mentions) and gates.prefilter is not None and gates.prefilter.search(text) is not None
        statements = outline(tree) if mentions and prefilter and whole else None
        if statements is not None and _nesting(statements) > SENT_NESTING:
            statements = None  # sent to a worker process, pickled: a recursive structure must stay shallow
        from cudalint.cache import content_digest

        self.found[key] = Pregate(content_digest(data), prefilter, mentions, frozenset(seen) if mentions is not True else frozenset(),
                                  statements, gates.import_words)
        return tree


_executor = None
_executor_lock = _thread.allocate_lock()


def _forget_executor_in_child() -> None:
    """A forked process (the runner's worker pool) inherits the executor object but not its thread:
    work submitted to it would wait forever. Start afresh in the child."""
    global _executor, _executor_lock
    _executor = None
    _executor_lock = _thread.allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_executor_in_child)


def _deep_stack(function, *args):
    """Run on a worker thread with a large stack; CPython's main thread stack is small."""
    global _executor
    with _executor_lock:
        if _executor is None:
            import concurrent.futures
            import threading

            previous = threading.stack_size(_STACK_BYTES)
            try:
                _executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalint")
                _executor.submit(lambda: None).result()
            finally:
                threading.stack_size(previous)
    return _executor.submit(_with_deep_limit, function, *args).result()


def _with_deep_limit(function, *args):
    with _recursion_limit(max(_RECURSION_LIMIT, sys.getrecursionlimit())):
        return function(*args)
