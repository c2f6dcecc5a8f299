"""The gates' judgement of a call by its arguments, on CPython's tree.

Some coverage checks fire on an API only in some of its cases: `F.interpolate` with mode "area" on a
5-D input, `x.norm(p="nuc")`, `nn.Embedding(..., max_norm=...)`, or for a dtype the file must spell
out (`F.linear` on an int64 tensor). A file whose every call of such an API passes literals that
select cases running on MPS (`F.interpolate(x, scale_factor=2, mode="bilinear")`), and which names
none of those dtypes, cannot get a finding from them: the gate settles it without libcst. What the
gate cannot read (a name, `**kwargs`) may hold any value, so such a call counts; so does any mention
that is not a call's callee (`partial(F.interpolate, mode=m)`) and any import of the name.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from cudalint.op_cases import NOT_LITERAL, CallJudge


class CallGate:
    """Judges the calls of the argued words (analyze.Words' last map), memoised per word and argument shape."""

    def __init__(self, argued: Mapping[str, Mapping[str, object]]):
        self.specs = argued
        self._judges: dict[str, tuple[list[CallJudge], frozenset[str], int]] = {}
        self._verdicts: dict[tuple, bool] = {}

    def __contains__(self, word: str) -> bool:
        return word in self.specs

    def check(self) -> None:
        """Build every judge, and check the words' dtype lists: raises on a malformed table (a stored copy)."""
        for word, spec in self.specs.items():
            if not isinstance(word, str) or not all(isinstance(name, str) for name in spec["dtypes"]):  # type: ignore[union-attr]
                raise ValueError(f"argued word {word!r}: malformed")
            self._judges_of(word)

    def dtypes(self, word: str) -> frozenset[str]:
        """The words (`long`, `int64`, `randint`) without which no tensor can have a dtype the word's API lacks."""
        return frozenset(self.specs[word]["dtypes"])  # type: ignore[arg-type]

    def _judges_of(self, word: str) -> tuple[list[CallJudge], frozenset[str], int]:
        found = self._judges.get(word)
        if found is None:
            judges = [CallJudge(spec) for spec in self.specs[word]["calls"]]  # type: ignore[union-attr]
            keywords = frozenset(key for judge in judges for key in judge.reads)
            span = max((judge.span for judge in judges), default=0)
            found = self._judges[word] = (judges, keywords, span)
        return found

    def may_report(self, word: str, call: ast.Call) -> bool:
        """Whether this call of the word's API can be in a case with a gap, at some release the project runs."""
        judges, reads, span = self._judges_of(word)
        starred = any(type(arg) is ast.Starred for arg in call.args) or any(kw.arg is None for kw in call.keywords)
        keywords = {kw.arg: literal(kw.value) for kw in call.keywords if kw.arg in reads}
        positional = tuple(literal(arg) for arg in call.args[:span])
        key = (word, starred, tuple(sorted((name, _key(value)) for name, value in keywords.items())),
               tuple(_key(value) for value in positional))
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = any(judge.can_report(keywords, positional, starred) for judge in judges)
        return verdict


MAX_NESTING = 32  # tuples inside tuples read as a literal; deeper is NOT_LITERAL (any value)


def literal(node: ast.AST, depth: int = 0) -> object:
    """The value of an argument as op_coverage._literal reads it from libcst: a str, int, float, bool or None
    constant, a negated number, a tuple of those; NOT_LITERAL for anything else, and for a tuple nested
    deeper than MAX_NESTING (a hostile file's `((((...))))` or `- - - 1` cannot exhaust the stack here)."""
    negations = 0
    while type(node) is ast.UnaryOp and type(node.op) is ast.USub:  # type: ignore[attr-defined]
        negations += 1
        node = node.operand  # type: ignore[attr-defined]
    kind = type(node)
    if kind is ast.Constant:
        value = node.value  # type: ignore[attr-defined]
        if not negations:
            return value if value is None or type(value) in (str, int, float, bool) else NOT_LITERAL
        return value * (-1) ** negations if type(value) in (int, float) else NOT_LITERAL
    if kind is ast.Tuple and not negations and depth < MAX_NESTING:
        items = tuple(literal(item, depth + 1) for item in node.elts)  # type: ignore[attr-defined]
        return NOT_LITERAL if any(item is NOT_LITERAL for item in items) else items
    return NOT_LITERAL


def _key(value: object) -> object:
    """A memo key that tells 0 from False and 1 from 1.0 (equal in Python, not to the case tables)."""
    return "?" if value is NOT_LITERAL else (type(value).__name__, repr(value))

