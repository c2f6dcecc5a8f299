"""Functions no check can fire in: the walk passes over their bodies.

A file reaches libcst because a check can fire somewhere in it (analyze.gate), but most of its
functions mention none of the words the checks read. A check fires at code that holds such a word
(an attribute, keyword, import or string of the gates), or a name bound elsewhere in the file by
code that holds one (`dev = "cuda"` at the top, `self.device = ...` in another method, an option
`--device` declared with a CUDA default), or a word of the project's own (a function of another
module with a CUDA default). A module-level function or a method of a module-level class whose text
(decorators, signature and body) holds none of these is quiet: the walk enters its signature, not
its body. The semantic model is built from the whole tree as before, so what the rest of the file
asks of a quiet function (its return values, its calls' arguments) is answered as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from cudalint.python.outline import STAR, Binding, Statement

_LINE_END = re.compile(r"\r\n|\r|\n")  # CPython's line ends, as its line numbers count them
_IDENTIFIER = re.compile(r"[^\W\d]\w*")

Path = tuple[str, ...]  # a module-level function's name, or a module-level class's and its method's


ROUNDS = 8  # passes over the bindings to find every name bound through another; past them, nothing is quiet


def quiet_functions(statements: Sequence[Statement], text: str, worded: Callable[[str], bool]) -> frozenset[Path]:
    """The module-level functions and methods of module-level classes whose text holds no word
    (`worded`) and no name bound, directly or through other names, to code that holds one (the
    bindings outline.py notes); a name defined twice is quiet only if every definition is."""
    starts = [0, *(match.end() for match in _LINE_END.finditer(text))]
    last = len(starts)

    def lines(first: int, end: int) -> str:
        return text[starts[first - 1]:starts[end] if end < last else len(text)]

    functions: list[tuple[Path, Statement]] = []
    bindings: list[Binding] = []
    defined: set[str] = set()  # the names of the file's functions, classes and methods
    for statement in statements:
        if statement.name is not None and not statement.function:  # a class: its statements one by one
            defined.add(statement.name)
            for member in statement.body or ():
                bindings.extend(member.binds)
                if member.function:
                    defined.add(member.name)
                    functions.append(((statement.name, member.name), member))
                    if member.name == "__init__":  # what the constructor's signature holds, a call of the class passes
                        bindings.extend((statement.name, *binding[1:]) for binding in member.binds[:1])
            continue
        bindings.extend(statement.binds)
        if statement.function:
            defined.add(statement.name)
            functions.append(((statement.name,), statement))
    pending = [binding for binding in bindings if not binding[3] or binding[0] in defined]
    bound = _bound(pending, lines, worded)
    if bound is None or STAR in bound:
        return frozenset()  # bound through too many names, or a star import of code with a word may bind any name
    quiet: set[Path] = set()
    loud: set[Path] = set()
    for path, statement in functions:
        code = lines(statement.first, statement.end)
        if worded(code) or (bound and not bound.isdisjoint(_IDENTIFIER.findall(code))):
            loud.add(path)
        else:
            quiet.add(path)
    return frozenset(quiet - loud)


def _bound(pending: list[Binding], lines: Callable[[int, int], str], worded: Callable[[str], bool]) -> set[str] | None:
    """The names bound to code that holds a word or a name so bound (None: not settled in ROUNDS passes)."""
    bound: set[str] = set()
    read: dict[tuple[int, int], tuple[bool, list[str]]] = {}  # lines -> (a word is in them, their identifiers)
    for _ in range(ROUNDS):
        waiting = []
        for binding in pending:
            name, first, end, _ = binding
            if name in bound:
                continue
            seen = read.get((first, end))
            if seen is None:
                code = lines(first, end)
                seen = read[(first, end)] = (worded(code), _IDENTIFIER.findall(code))
            if seen[0] or (bound and not bound.isdisjoint(seen[1])):
                bound.add(name)
            else:
                waiting.append(binding)
        if len(waiting) == len(pending):
            return bound
        pending = waiting
    return None
