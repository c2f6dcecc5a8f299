"""The availability tests a module defines, for the project index (CPython's tree, no libcst).

`def is_triton_available(): return importlib.util.find_spec("triton") is not None` and
`_xformers_available = importlib.util.find_spec("xformers") is not None` (later set to False
when its version is wrong) are true only where a package imports. Another module's
`if is_triton_available(): import triton` then imports it only where that succeeds. The same
rules as the libcst side (cudalint.python.optional_imports), on module-level names and functions.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

from cudalint.project.reach import TRIES
from cudalint.python.optional_facts import optional_facts, requirement_module

MAX_DEPTH = 6


def availability_tests(tree: ast.Module, resolve: Callable[[ast.AST], Optional[str]], text: bytes = b"",
                       prefer: Callable[[str], bool] = lambda library: False) -> Dict[str, str]:
    """Module-level functions and names of this module that are true only where a package imports,
    each with the top-level module it tests ("" when that is not known). Where a test needs several
    packages, the one it names is the last `prefer` picks (a library that never imports on a Mac), else the last."""
    facts = optional_facts()
    if text and not any(word.encode() in text for word in facts.words) and not (b"try" in text and b"True" in text):
        return {}  # neither a query nor a `try: import ...` with a True in it
    functions: Dict[str, ast.AST] = {}
    assigned: Dict[str, List[ast.AST]] = {}
    _module_level(tree.body, functions, assigned)
    judge = _Judge(facts.queries, resolve, functions, assigned, facts.library_tested)
    for trial in _trials(tree.body):
        _scan_trial(trial, judge.trues)
    for function in functions.values():
        _scan_exits(function.body, judge.trues, prefer)
    found = {name: judge.function(name) for name in functions}
    found.update((name, judge.name(name)) for name in assigned)
    for name in functions:  # `_is_package_available(pkg_name)`: another module's call names the package
        if found.get(name) is None:
            position = judge.parameterized(name)
            if position is not None:
                found[name] = f"{PARAMETER}{position}"
    return {name: library for name, library in sorted(found.items()) if library is not None}


# A helper that tests the package its caller names: the library it tests is this prefix and the position of
# the parameter (`_is_package_available(pkg_name, ...)` -> "*0"); a call with a literal there tests that module.
PARAMETER = "*"


def called_library(tested: str, positional: List[Optional[str]], keywords: Dict[str, Optional[str]], params: List[str]) -> Optional[str]:
    """The library a call of a helper tests: its own, or for a parameterized helper the module its
    argument names (None when that argument is not a literal)."""
    if not tested.startswith(PARAMETER):
        return tested
    digits = tested[len(PARAMETER):]
    if not digits.isdigit():
        return None  # not an index this version wrote
    position = int(digits)
    text = positional[position] if position < len(positional) else keywords.get(params[position]) if position < len(params) else None
    return requirement_module(text) or None if isinstance(text, str) else None


def one_of(libraries) -> str:
    """Several libraries any one of which makes a test true ("msamp|transformer_engine"); "" when unknown."""
    return "" if "" in libraries or not libraries else ANY_OF.join(sorted(libraries))


ANY_OF = "|"


def library_of(module: str, libraries) -> Optional[str]:
    """The library among `libraries` that `module` is or lies under (`torch_xla.core.xla_model`: torch_xla)."""
    return next((library for library in libraries if module == library or module.startswith(library + ".")), None)


def libraries_of(tested: str) -> List[str]:
    """The libraries a test's answer names, any one of which makes it true ([] for a parameterized helper)."""
    return [] if not tested or tested.startswith(PARAMETER) else tested.split(ANY_OF)


def _proved(test: ast.AST, polarity: bool) -> Optional[ast.AST]:
    """The test that is true where a condition (a test and the outcome it had) holds: `not x` false -> x."""
    if not polarity and isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    return test if polarity else None


def _module_level(body, functions, assigned) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.If, ast.Try)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                _module_level(getattr(node, field, []) or [], functions, assigned)
            for handler in getattr(node, "handlers", []):
                _module_level(handler.body, functions, assigned)


class _Judge:
    def __init__(self, queries, resolve, functions, assigned, library_tested=None):
        self.queries = queries
        self.library_tested = library_tested or (lambda qualified: None)  # another library's helper -> the library it tests
        self.resolve = resolve
        self.functions = functions
        self.assigned = assigned
        self.visiting = set()
        self.trues: Dict[int, str] = {}  # id of a `True` set or returned after a guarded import -> the module
        self.positions: Dict[str, Optional[int]] = {}  # function -> the parameter whose package it tests

    def function(self, name: str, depth: int = 0) -> Optional[str]:
        """None: not an availability test; else the module it tests ("" when not known)."""
        node = self.functions.get(name)
        if node is None or ("def", name) in self.visiting or depth > MAX_DEPTH:
            return None
        self.visiting.add(("def", name))
        try:
            statements = list(_conditioned(node.body, ()))
            local = _local_values(statements)
            returns = []
            for ret, conditions in statements:
                if not isinstance(ret, ast.Return):
                    continue
                if isinstance(ret.value, ast.Name) and ret.value.id in local:
                    # `apex_available = True` after `import apex` in a try, `= False` in its handler, then
                    # `return apex_available`: what the function returns is what the name was bound to
                    returns.extend(local[ret.value.id])
                else:
                    returns.append((ret.value, conditions))
            return self._only_when_available(returns, depth)
        finally:
            self.visiting.discard(("def", name))

    def _holds(self, test: ast.AST, polarity: bool, depth: int) -> Optional[str]:
        """The library a condition (a test and the outcome it had) proves imports, else None."""
        proved = _proved(test, polarity)
        return self.test(proved, depth + 1) if proved is not None else None

    def name(self, name: str, depth: int = 0) -> Optional[str]:
        values = self.assigned.get(name)
        if not values or ("name", name) in self.visiting or depth > MAX_DEPTH:
            return None
        self.visiting.add(("name", name))
        try:
            return self._only_when_available([(value, ()) for value in values], depth)
        finally:
            self.visiting.discard(("name", name))

    def _only_when_available(self, values, depth) -> Optional[str]:
        """Every value (with the conditions it is returned or bound under) is False/None, true only where
        a package imports, or returned only once such a test held (`return version(...) >= ...` after
        `if not find_spec(...): return False`); the library, or None."""
        libraries = set()
        for value, conditions in values:
            if value is None or _falsy(value):
                continue
            library = self.trues.get(id(value)) or self.test(value, depth + 1)
            if library is None:
                library = next((found for found in (self._holds(test, polarity, depth) for test, polarity in conditions)
                                if found is not None), None)
            if library is None:
                return None
            libraries.add(library)
        if not libraries:
            return None
        return libraries.pop() if len(libraries) == 1 else ""

    def test(self, node: ast.AST, depth: int) -> Optional[str]:
        """True only where a package imports: the module it tests ("" when not known), else None."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, ast.BoolOp):
            found = [self.test(value, depth + 1) for value in node.values]
            known = {library for library in found if library is not None}
            if isinstance(node.op, ast.And) and not known or isinstance(node.op, ast.Or) and None in found:
                return None
            if len(known) == 1:
                return known.pop()
            return one_of(known) if isinstance(node.op, ast.Or) else ""
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            other = node.comparators[0]
            if isinstance(other, ast.Constant) and other.value is None:
                return self.test(node.left, depth + 1)
            return None
        if isinstance(node, ast.Call):
            qualified = self.resolve(node.func)
            if qualified in self.queries:
                return _queried_library(node)
            library = self.library_tested(qualified)
            if library is not None:  # transformers' is_flash_attn_2_available(), is_apex_available()
                return library
            if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1:
                return self.test(node.args[0], depth + 1)
            if not isinstance(node.func, ast.Name):
                return None
            library = self.function(node.func.id, depth + 1)
            if library is not None:
                return library
            position = self.parameterized(node.func.id)
            if position is None:
                return None
            function = self.functions[node.func.id]
            return called_library(f"{PARAMETER}{position}", *_literal_arguments(node, function))
        if isinstance(node, ast.Name):
            return self.name(node.id, depth + 1)
        return None

    def parameterized(self, name: str) -> Optional[int]:
        """`def _is_package_available(pkg_name, ...)`: the position of the parameter whose package the
        function tests, when every return it can reach with its other parameters at their defaults is
        a query of that package (through locals: `exists = find_spec(pkg_name) is not None`), a False or
        None, or a True returned only under such a query; None otherwise."""
        node = self.functions.get(name)
        if node is None:
            return None
        if name not in self.positions:  # asked for every function, then at every call of one
            self.positions[name] = _parameterized(node, self.queries, self.resolve)
        return self.positions[name]


def _local_values(statements) -> Dict[str, List[Tuple[ast.AST, tuple]]]:
    """Each name a function's own code assigns -> every value bound to it, with the conditions it is bound under."""
    local: Dict[str, List[Tuple[ast.AST, tuple]]] = {}
    for node, conditions in statements:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name):
                    local.setdefault(target.id, []).append((node.value, conditions))
    return local


def _queried_library(call: ast.Call) -> str:
    module = next((kw.value for kw in call.keywords if kw.arg == "module"), None)
    first = module or (call.args[0] if call.args else None)
    return requirement_module(first.value if isinstance(first, ast.Constant) else None)


IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _trials(body):
    """Every `try:` in a block, in its nested blocks and in the functions defined there (not in classes)."""
    for statement in body:
        if isinstance(statement, TRIES):
            yield statement
        if isinstance(statement, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list):
                yield from _trials(inner)
        for handler in getattr(statement, "handlers", ()):
            yield from _trials(handler.body)


def _scan_trial(statement, into: Dict[int, str]) -> None:
    """`try: import triton ... HAS_TRITON = True / return True except ImportError: ...`: a value bound or
    returned after the import (True, or `Version(triton.__version__) >= ...`) is bound only where the
    import succeeded."""
    if not any(_catches_import_error(h) for h in statement.handlers):
        return
    library = None
    for node in _in_order(statement.body):
        if library is None and isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.names[0].name if isinstance(node, ast.Import) else (node.module if not node.level else "")
            library = (module or "").split(".")[0]
        elif library and isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign)) and node.value is not None:
            into[id(node.value)] = library


def _scan_exits(body, into: Dict[int, str], prefer: Callable[[str], bool]) -> None:
    """`try: import pycuda.gl / except ImportError: return False`, then `return True`: a value returned
    after a `try:` whose every handler catches the import's failure and returns (or raises) is returned only
    where the import succeeded (where several such imports come first, all of them did: the last one
    `prefer` picks is named, else the last)."""
    library = None
    for statement in body:
        if isinstance(statement, TRIES) and statement.handlers and all(
                _catches_import_error(handler) and handler.body and isinstance(handler.body[-1], (ast.Return, ast.Raise))
                for handler in statement.handlers):
            first = next((node for node in statement.body if isinstance(node, (ast.Import, ast.ImportFrom))), None)
            if first is not None:
                module = first.names[0].name if isinstance(first, ast.Import) else (first.module if not first.level else "")
                imported = (module or "").split(".")[0]
                if imported and (library is None or prefer(imported) or not prefer(library)):
                    library = imported
            continue
        if library is None:
            continue
        for node in _own_returns(statement):
            if node.value is not None:
                into.setdefault(id(node.value), library)


def _own_returns(statement):
    """The `return` statements of a statement's own code (not of the functions and classes it defines)."""
    pending = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(kind, ast.Name) and kind.id in IMPORT_ERRORS for kind in kinds)


def _in_order(body):
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _in_order(node.body)


def _literal_arguments(call: ast.Call, function) -> Tuple[List[Optional[str]], Dict[str, Optional[str]], List[str]]:
    positional = [arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None for arg in call.args]
    keywords = {kw.arg: kw.value.value if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) else None
                for kw in call.keywords if kw.arg}
    return positional, keywords, [arg.arg for arg in [*function.args.posonlyargs, *function.args.args]]


def _parameterized(function, queries, resolve) -> Optional[int]:
    params = [arg.arg for arg in [*function.args.posonlyargs, *function.args.args]]
    defaults = dict(zip(reversed(params), reversed(function.args.defaults)))
    statements = list(_conditioned(function.body, ()))
    local = _local_values(statements)
    for position, param in enumerate(params):
        if param in ("self", "cls") or param in local:
            continue
        judge = _ParameterTest(param, queries, resolve, local)
        returns = [(node.value, conditions) for node, conditions in statements
                   if isinstance(node, ast.Return) and not _dead(conditions, param, defaults)]
        if judge.only_where_available(returns):
            return position
    return None


class _ParameterTest:
    """Is an expression, inside the helper, true only where the package its parameter names imports?"""

    def __init__(self, param, queries, resolve, local):
        self.param, self.queries, self.resolve, self.local = param, queries, resolve, local
        self.visiting = set()

    def only_where_available(self, values, depth: int = 0) -> bool:
        """Every value (with the conditions it is bound or returned under) is falsy, a test of the package,
        or bound only once such a test held; and at least one is a test."""
        tested = False
        for value, conditions in values:
            if value is None or _falsy(value):
                continue
            if self.test(value, depth + 1):
                tested = tested or not (isinstance(value, ast.Name) and value.id in self.visiting)
            elif any(self.holds(test, polarity, depth) for test, polarity in conditions):
                tested = True
            else:
                return False
        return tested

    def holds(self, test: ast.AST, polarity: bool, depth: int) -> bool:
        proved = _proved(test, polarity)
        return proved is not None and self.test(proved, depth + 1)

    def test(self, node: ast.AST, depth: int = 0) -> bool:
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            other = node.comparators[0]
            return isinstance(other, ast.Constant) and other.value is None and self.test(node.left, depth + 1)
        if isinstance(node, ast.BoolOp):
            found = [self.test(value, depth + 1) for value in node.values]
            return any(found) if isinstance(node.op, ast.And) else all(found)
        if isinstance(node, ast.Call):
            if self.resolve(node.func) in self.queries:
                module = next((kw.value for kw in node.keywords if kw.arg == "module"), None)
                first = module or (node.args[0] if node.args else None)
                return isinstance(first, ast.Name) and first.id == self.param
            if isinstance(node.func, ast.Name) and node.func.id == "bool" and len(node.args) == 1:
                return self.test(node.args[0], depth + 1)
            return False
        if isinstance(node, ast.Name) and node.id in self.local:
            if node.id in self.visiting:
                return True  # assumed while its own bindings are judged (`exists = True` under `if exists:`)
            self.visiting.add(node.id)
            try:
                return self.only_where_available(self.local[node.id], depth + 1)
            finally:
                self.visiting.discard(node.id)
        return False


def _falsy(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in (None, False)


def _dead(conditions, tested: str, defaults) -> bool:
    """A return under `if return_version:` with `return_version=False`: not reached by a call that leaves
    that parameter at its default (the tested parameter itself is what the caller gives)."""
    for test, polarity in conditions:
        if isinstance(test, ast.Name) and test.id != tested and test.id in defaults:
            default = defaults[test.id]
            if isinstance(default, ast.Constant) and bool(default.value) != polarity:
                return True
    return False


def _conditioned(body, conditions):
    """Each `return` and assignment of a function's own code, with the `if` tests (and their outcome) it
    sits under: those of the blocks around it, and those of earlier `if`s in its blocks that exit
    (`if not find_spec(name): return False` before the rest)."""
    for node in body:
        if isinstance(node, (ast.Return, ast.Assign, ast.AnnAssign)):
            yield node, conditions
        elif isinstance(node, ast.If):
            yield from _conditioned(node.body, conditions + ((node.test, True),))
            yield from _conditioned(node.orelse, conditions + ((node.test, False),))
            if not node.orelse and node.body and isinstance(node.body[-1], (ast.Return, ast.Raise)):
                conditions = conditions + ((node.test, False),)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        else:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _conditioned(inner, conditions)
            for handler in getattr(node, "handlers", ()):
                yield from _conditioned(handler.body, conditions)
