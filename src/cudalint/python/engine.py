"""The libcst half of linting one file: parse, the semantic model, one walk of all checks, positions.

Only files that pass both gates of analyze.py come here, so a run whose files all fail them
never imports libcst.
"""

from __future__ import annotations

import threading
from typing import Dict, List, Mapping, Optional, Tuple

import libcst as cst

from cudalint.findings import Finding, Related, Safety
from cudalint.python import idioms, matchers
from cudalint.python.analyze import Words, cpython_tree, module_and_package, unreadable, without_collections
from cudalint.python.context import FileContext
from cudalint.python.device_setting import DeviceSetting
from cudalint.python.fixplan import FileFixer
from cudalint.discover import is_notebook
from cudalint.python.host_tests import host_tests, places_on_device
from cudalint.python.op_coverage import TORCH_DTYPES
from cudalint.python.outline import Statement
from cudalint.python.positions import Positions, statement_chain, whole_module
from cudalint.python.semantic import SemanticModel
from cudalint.python.visitor import Registry, Walker

DTYPE_NAMES = frozenset(TORCH_DTYPES)


class Engine:
    """The handlers of one selection of rules, and the words they can fire on."""

    def __init__(self, rules, catalog_rules):
        idioms.validate(catalog_rules)
        python_rules = [rule for rule in rules.values() if rule.example_file.endswith(".py") and rule.match]
        self.index = matchers.MatchIndex(python_rules, {name: (check.roots, check.names) for name, check in idioms.CHECKS.items()})
        self.registry = Registry()
        matchers.register(self.index, self.registry)
        custom = {rule.match["check"] for rule in python_rules if "check" in rule.match}
        for name in sorted(custom):
            idioms.CHECKS[name].register(self.registry)
        self.called = frozenset(word for name in custom for word in idioms.CHECKS[name].called)
        self.release_words = [(idioms.RELEASE_WORDS[name], idioms.RELEASE_METHODS.get(name), idioms.CHECKS[name],
                               idioms.RELEASE_ARGUED.get(name)) for name in sorted(custom) if name in idioms.RELEASE_WORDS]

    def words(self, torch_version: Tuple[int, ...]) -> Words:
        """The words a check can fire on at a release: names, words that begin a string's value, words
        anywhere in a string, keyword names, the names that count only in a file importing one of their
        modules, those that count only as part of a name that can resolve under one, the modules the import checks read (these three:
        word -> those modules), the methods that count only where they are called (`x.cuda()`, not
        `torch.cuda.is_available()`), the words whose calls count only with arguments that can reach a
        finding (word -> what the gates judge those by, see python/call_gate.py), and the words that count
        only beside one of their companions (word -> those, see analyze._Gates.mentions)."""
        names = set(self.index.words)
        rooted = {word: set(roots) for word, roots in self.index.rooted.items()}
        resolved = {word: set(roots) for word, roots in self.index.resolved.items()}
        methods_only = set()  # rooted only as a method that a check reads only where it is called (see analyze._mentions)
        anywhere_else = set(rooted)  # rooted for a check that reads the word anywhere
        argued: Dict[str, Mapping[str, object]] = {}
        # A word another check reads too counts as that check reads it: judged by no call's arguments.
        read_elsewhere = (set(names) | set(rooted) | set(resolved) | set(self.index.import_words) | set(self.index.called) | set(self.called)
                          | set(self.index.keyword_words))
        for release_words, methods, check, argued_words in self.release_words:
            anywhere = methods(torch_version) if methods is not None else frozenset()
            words = release_words(torch_version)
            if argued_words is None:
                read_elsewhere |= words
            else:
                argued.update(argued_words(torch_version))
            for word in words:
                if not check.roots:
                    names.add(word)
                elif word in anywhere or (methods is None and not check.names):
                    rooted.setdefault(word, set()).update(check.roots)
                    (methods_only if word in anywhere else anywhere_else).add(word)
                else:
                    resolved.setdefault(word, set()).update(check.roots)
        # An import word another check reads elsewhere too counts anywhere, as a name.
        names.update(word for word in self.index.import_words if word in names or word in rooted or word in resolved)
        # A word both rooted and resolved is rooted only as the method of a call on a name or a call's
        # result, and resolved elsewhere (its roots: both maps' modules, so it still counts wherever either did).
        called = methods_only - anywhere_else - names
        resolved = {word: frozenset(roots | rooted.get(word, set())) for word, roots in resolved.items()
                    if word not in names and (word not in rooted or word in called)}
        resolved.update({word: frozenset(rooted[word]) for word in called if word not in resolved})
        rooted_words = {word: frozenset(roots) for word, roots in rooted.items() if word not in names}
        imports = {word: frozenset(roots) for word, roots in self.index.import_words.items() if word not in names}
        argued = {word: spec for word, spec in argued.items() if word not in read_elsewhere and word not in names}
        # A word that some check reads without a companion counts alone (the catalog's `words_with`).
        release = set().union(*(release_words(torch_version) for release_words, *_ in self.release_words))
        companions = {word: wanted for word, wanted in self.index.companions.items() if word not in release and word not in self.called}
        return (frozenset(names), frozenset(self.index.string_words), frozenset(self.index.text_words),
                frozenset(self.index.keyword_words), rooted_words, resolved, imports, frozenset((self.index.called | self.called) - names),
                argued, companions)


def analyze_module(
    path: str,
    text: str,
    rules,
    engine: Engine,
    torch_version: Tuple[int, ...],
    device: DeviceSetting,
    unsafe_fixes: bool,
    project=None,
    statements: Optional[List[Statement]] = None,
) -> List[Finding]:
    # No cyclic collection while the file's trees are alive: its passes would only scan them again and
    # again (libcst's tree has no cycles; what the checks build is freed with the tree, at the end).
    with without_collections():
        return _analyze(path, text, rules, engine, torch_version, device, unsafe_fixes, project, statements)


def _analyze(path, text, rules, engine, torch_version, device, unsafe_fixes, project, statements) -> List[Finding]:
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as exc:
        return [unreadable(path, f"syntax error: {exc.message}; the file was not checked", exc.raw_line, exc.raw_column + 1)]
    except RecursionError:
        return [unreadable(path, "expression nested too deeply to analyse; the file was not checked")]
    model = _model(module, path, project, torch_version, text)
    try:
        return _findings(path, text, module, model, rules, engine, torch_version, device, unsafe_fixes, statements)
    finally:
        model.release()


def _findings(path, text, module, model, rules, engine, torch_version, device, unsafe_fixes, statements) -> List[Finding]:
    try:
        ctx = _AnchoredContext(rules, torch_version, model, path)
        Walker(ctx, engine.registry.visit, engine.registry.leave).walk(module)
    except RecursionError:
        return [unreadable(path, "expression nested too deeply to analyse; the file was not checked")]
    if any(rules[hit.code].silenced_in_test_modules for hit in ctx.hits) and model.in_tests:
        ctx.hits = [hit for hit in ctx.hits if not rules[hit.code].silenced_in_test_modules]
    host_ranges: Optional[List[Tuple[int, int]]] = []
    if any(rules[hit.code].silenced_in_host_tests for hit in ctx.hits):
        host_ranges = _host_test_ranges(model, path, text)
        if host_ranges is None:
            ctx.hits = [hit for hit in ctx.hits if not rules[hit.code].silenced_in_host_tests]
            host_ranges = []
    if not ctx.hits:
        return []
    fixer = None
    if any(hit.fix is not None for hit in ctx.hits):
        # Fix planning reads the positions of every call, f-string and function body: one whole pass.
        positions = whole_module(module)
        fixer = FileFixer(module, positions, ctx.model, torch_version, device, text)
        fixer.decide([hit.fix for hit in ctx.hits if hit.fix is not None and (unsafe_fixes or hit.fix.safety is Safety.SAFE)])
    else:
        positions = _anchored(module, statements, ctx)
    findings = []
    for hit in ctx.hits:
        where = positions[hit.node]
        if host_ranges and rules[hit.code].silenced_in_host_tests and any(
                first <= where.start.line <= last for first, last in host_ranges):
            continue  # in a test that places no tensor on a device
        findings.append(
            Finding(
                code=hit.code,
                path=path,
                line=where.start.line,
                column=where.start.column + 1,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                message=hit.message,
                severity=rules[hit.code].severity,
                fix=fixer.build(hit.fix) if hit.fix is not None else None,
                related=tuple(
                    _related(positions, place, what) for place, what in hit.related if place in positions or isinstance(place, tuple)
                ),
            )
        )
    return findings


def _host_test_ranges(model: SemanticModel, path: str, text: str) -> Optional[List[Tuple[int, int]]]:
    """In a test module: None where the module places no tensor on a device, else the line ranges of its
    tests that place none (host_tests.py); [] outside test modules. A Jupyter notebook (a program no module
    imports, checked as its cells' script) that places no tensor on a device runs on the CPU too: None."""
    if not model.in_tests and not is_notebook(path):
        return []
    tree = cpython_tree(path, text)
    if isinstance(tree, Finding):
        return []
    return None if not places_on_device(tree, DTYPE_NAMES) else host_tests(tree, DTYPE_NAMES)


_VALIDATE = getattr(cst.CSTNode, "__post_init__", None)
_parse_lock = threading.Lock()


def _trusted(node) -> None:
    """No validation for a node libcst's parser builds (see parse_module)."""


def parse_module(text: str) -> cst.Module:
    """libcst's tree of a text CPython's parser has accepted, without libcst checking each node its own
    parser builds (`CSTNode.__post_init__` validates every node constructed: a fifth of the parse, and
    a check of invariants the parser's output already holds). The same tree as `cst.parse_module`."""
    if _VALIDATE is None:  # a libcst that does not validate that way
        return cst.parse_module(text)
    with _parse_lock, without_collections():  # the class attribute is the whole process's: one parse at a time changes it
        cst.CSTNode.__post_init__ = _trusted
        try:
            return cst.parse_module(text)
        finally:
            cst.CSTNode.__post_init__ = _VALIDATE


def _model(module: cst.Module, path: str, project, torch_version, text: Optional[str] = None) -> SemanticModel:
    """The file's semantic model, told its module name (for relative imports), the project index, the
    target release and its text (whether a `test.py` holds tests)."""
    name, package = module_and_package(path, project)
    if name is None:
        return SemanticModel(module, project, path=path, torch_version=torch_version, text=text)
    return SemanticModel(module, project, name, package, project.siblings_of(path), path=path, torch_version=torch_version, text=text)


def _related(positions, place, message: str) -> Related:
    """A node of this file, or (path, line, column) in another file of the project."""
    if isinstance(place, tuple):
        path, line, column = place
        return Related(line, column, line, column, message, path=path)
    where = positions[place]
    return Related(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, message)


class _AnchoredContext(FileContext):
    """The file's context, also noting the statements each reported node lies in (for positions)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.chains: Dict[int, Tuple[cst.CSTNode, ...]] = {}

    def report(self, code, node, message, fix=None, related=(), covers=()):
        super().report(code, node, message, fix, related, covers)
        self.chains.setdefault(id(node), statement_chain(self.stack))


def _anchored(module: cst.Module, statements: Optional[List[Statement]], ctx: _AnchoredContext) -> Positions:
    """Positions for the nodes the hits name: each hit's node and its related nodes lie, as a rule,
    in the statements the walk was in when the hit was reported."""
    positions = Positions(module, statements)
    for hit in ctx.hits:
        chain = ctx.chains.get(id(hit.node), ())
        positions.anchor(hit.node, chain)
        for place, _ in hit.related:
            if not isinstance(place, tuple):
                positions.anchor(place, chain)
    return positions
