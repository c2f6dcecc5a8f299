"""Lint one Python source: decode, gate, parse once, one pass of all checks, positions."""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import functools
import os
import re
import sys
import threading
import warnings
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from cudalint.catalog import Rule
from cudalint.findings import Finding, Related, Safety, Severity
from cudalint.python import idioms, matchers, parts
from cudalint.python.context import FileContext
from cudalint.python.fixplan import DeviceSetting, FileFixer
from cudalint.python.semantic import SemanticModel
from cudalint.python.visitor import Registry, Walker

# libcst recurses once per nesting level; deep but valid code needs a deep stack.
_STACK_BYTES = 512 * 1024 * 1024
_RECURSION_LIMIT = 30000  # on the deep-stack thread only, for the libcst stage, restored after each file
_CPYTHON_RECURSION_LIMIT = 1000  # CPython's default: its AST construction refuses deeper nesting under it


class Checks:
    """The handlers and prefilter for one selection of rules (built once per selection)."""

    def __init__(self, rules: Dict[str, Rule]):
        self.rules = rules
        python_rules = [rule for rule in rules.values() if rule.example_file.endswith(".py") and rule.match]
        self.index = matchers.MatchIndex(python_rules)
        self.registry = Registry()
        matchers.register(self.index, self.registry)
        custom = {rule.match["check"] for rule in python_rules if "check" in rule.match}
        for name in sorted(custom):
            idioms.CHECKS[name].register(self.registry)
        self.release_words = [idioms.RELEASE_WORDS[name] for name in sorted(custom) if name in idioms.RELEASE_WORDS]
        self._prefilters: Dict[Tuple[int, ...], Tuple[FrozenSet[str], Optional["re.Pattern[str]"]]] = {}

        self.strings = _word_pattern(self.index.string_words)

    def names(self, torch_version: Tuple[int, ...]) -> FrozenSet[str]:
        """Words a file must contain for any selected check to fire at this target release."""
        return self._gates(torch_version)[0]

    def prefilter(self, torch_version: Tuple[int, ...]) -> Optional["re.Pattern[str]"]:
        """The same words as a text search: the cheap first gate, before any parsing."""
        return self._gates(torch_version)[1]

    def _gates(self, torch_version: Tuple[int, ...]):
        """Both gates' words for a release, computed once per release (they are read for every file)."""
        if torch_version not in self._prefilters:
            names = set(self.index.words)
            for release_words in self.release_words:
                names |= release_words(torch_version)
            pattern = _word_pattern(names | self.index.string_words | self.index.keyword_words)
            self._prefilters[torch_version] = (frozenset(names), pattern)
        return self._prefilters[torch_version]


def _word_pattern(words) -> "re.Pattern[str] | None":
    """Whole words (`load` is not `download`); a word ending in `_` is a prefix (`NCCL_`)."""
    if not words:
        return None
    ordered = sorted(words, key=len, reverse=True)
    return re.compile("|".join(r"\b" + re.escape(w) + ("" if w.endswith("_") else r"\b") for w in ordered))


@functools.lru_cache(maxsize=8)
def checks_for(codes: FrozenSet[str], catalog_rules: Tuple[Rule, ...]) -> Checks:
    idioms.validate(catalog_rules)
    return Checks({rule.code: rule for rule in catalog_rules if rule.code in codes})


def unreadable(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding("CDL000", path, line, column, line, column, message, Severity.ERROR)


def check_python(
    path: str,
    text: str,
    checks: Checks,
    torch_version: Tuple[int, ...],
    device: DeviceSetting = DeviceSetting(),
    unsafe_fixes: bool = False,
    project=None,
    *,
    whole: bool = False,
) -> List[Finding]:
    if not whole and len(text) > parts.PART_BYTES:  # too large for one tree in memory: in parts
        pieces = parts.split(text)
        if pieces and len(pieces) > 1:
            return parts.check_in_parts(
                pieces, lambda piece: check_python(path, piece, checks, torch_version, device, unsafe_fixes, project, whole=True)
            )
    tree = _cpython_tree(path, text)  # every file: one that does not parse always gets its CDL000
    if isinstance(tree, Finding):
        return [tree]
    prefilter = checks.prefilter(torch_version)
    project_words = project.gate_words if project is not None else frozenset()
    if (prefilter is None or not prefilter.search(text)) and not _any_word(project_words, text):
        return []
    if not _mentions(tree, checks.names(torch_version) | project_words, checks.index.keyword_words, checks.strings):
        return []
    del tree  # CPython's tree is as large as libcst's: not both at once
    return _deep_stack(_analyze, path, text, checks, torch_version, device, unsafe_fixes, project)


def _any_word(words: FrozenSet[str], text: str) -> bool:
    return bool(words) and _word_pattern_cached(words).search(text) is not None


@functools.lru_cache(maxsize=8)
def _word_pattern_cached(words: FrozenSet[str]):
    return _word_pattern(words)


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


def _cpython_tree(path: str, text: str) -> Union[ast.AST, Finding]:
    """CPython's own parser first: fast, exact messages, and it refuses nesting that would blow libcst's stack."""
    try:
        with warnings.catch_warnings(), _recursion_limit(_CPYTHON_RECURSION_LIMIT):
            warnings.simplefilter("ignore")
            return compile(text, path, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        message = f"syntax error: {exc.msg}; the file was not checked"
        return unreadable(path, message, exc.lineno or 1, max(exc.offset or 1, 1))
    except (RecursionError, MemoryError):
        return unreadable(path, "expression nested too deeply to analyse; the file was not checked")
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        return unreadable(path, f"cannot parse: {exc}")


DOCUMENTED = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _mentions(tree: ast.AST, names: FrozenSet[str], keywords: Set[str], strings: Optional["re.Pattern[str]"]) -> bool:
    """The exact second gate, on the tree CPython already built: a check can fire only if an attribute,
    keyword or import the checks look for is in the code, or a string they read (a device, an
    environment variable) is. A bare name reaches an API only through an import, so names are
    judged at their import. Words in comments and docstrings no longer cost a libcst parse."""
    docstrings = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Attribute:
            if node.attr in names:
                return True
        elif kind is ast.keyword:
            if node.arg in keywords or node.arg in names:
                return True
        elif kind is ast.alias:
            if node.asname in names or any(part in names for part in node.name.split(".")):
                return True
        elif kind is ast.ImportFrom:
            if node.module and any(part in names for part in node.module.split(".")):
                return True
        elif kind is ast.Constant:
            if strings is not None and isinstance(node.value, str) and id(node) not in docstrings:
                if strings.search(node.value):
                    return True
        elif kind in DOCUMENTED and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return False


def _analyze(
    path: str, text: str, checks: Checks, torch_version: Tuple[int, ...], device: DeviceSetting, unsafe_fixes: bool, project=None
) -> List[Finding]:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return [unreadable(path, f"syntax error: {exc.message}; the file was not checked", exc.raw_line, exc.raw_column + 1)]
    except RecursionError:
        return [unreadable(path, "expression nested too deeply to analyse; the file was not checked")]
    try:
        ctx = FileContext(checks.rules, torch_version, _model(module, path, project), path)
        Walker(ctx, checks.registry.visit, checks.registry.leave).walk(module)
    except RecursionError:
        return [unreadable(path, "expression nested too deeply to analyse; the file was not checked")]
    if not ctx.hits:
        return []
    positions = _positions(module)
    fixer = FileFixer(module, positions, ctx.model, torch_version, device, text)
    fixer.decide([hit.fix for hit in ctx.hits if hit.fix is not None and (unsafe_fixes or hit.fix.safety is Safety.SAFE)])
    findings = []
    for hit in ctx.hits:
        where = positions[hit.node]
        findings.append(
            Finding(
                code=hit.code,
                path=path,
                line=where.start.line,
                column=where.start.column + 1,
                end_line=where.end.line,
                end_column=where.end.column + 1,
                message=hit.message,
                severity=checks.rules[hit.code].severity,
                fix=fixer.build(hit.fix) if hit.fix is not None else None,
                related=tuple(_related(positions, place, what) for place, what in hit.related if place in positions or isinstance(place, tuple)),
            )
        )
    return findings


def _model(module: cst.Module, path: str, project) -> SemanticModel:
    """The file's semantic model, told its module name (for relative imports) and the project index."""
    name = project.module_of(path) if project is not None else None
    if name is None:
        return SemanticModel(module, project)
    package = name if os.path.basename(path) == "__init__.py" else name.rpartition(".")[0]
    return SemanticModel(module, project, name, package)


def _related(positions, place, message: str) -> Related:
    """A node of this file, or (path, line, column) in another file of the project."""
    if isinstance(place, tuple):
        path, line, column = place
        return Related(line, column, line, column, message, path=path)
    where = positions[place]
    return Related(where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, message)


def _positions(module: cst.Module):
    """Every node's range from one code generation pass.

    MetadataWrapper.resolve(PositionProvider) also runs a full rebuilding traversal first;
    calling the provider directly does only the code generation it needs.
    """
    provider = PositionProvider()
    try:
        provider._gen_impl(module)
        return provider._computed
    except AttributeError:  # a libcst without these internals: the public, slower way
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


_executor = None
_executor_lock = threading.Lock()


def _forget_executor_in_child() -> None:
    """A forked process (the runner's worker pool) inherits the executor object but not its thread:
    work submitted to it would wait forever. Start afresh in the child."""
    global _executor, _executor_lock
    _executor = None
    _executor_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_executor_in_child)


def _deep_stack(function, *args):
    """Run on a worker thread with a large stack; CPython's main thread stack is small."""
    global _executor
    with _executor_lock:
        if _executor is None:
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
