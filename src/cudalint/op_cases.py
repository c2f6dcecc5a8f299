"""Which case of an API a call is in, and whether every case it can be in has an MPS gap.

Pure logic over the case tables (no libcst, no database): the engine's op-coverage check asks it
with the values libcst shows (python/op_coverage.py), and the file gates ask it with the values
CPython's tree shows (python/call_gate.py), so that a file whose calls of `F.interpolate`,
`x.norm()` or `nn.Embedding` can only be in cases that run on MPS is settled without libcst. The
gate's side (`CallJudge`) assumes the worst of every value it cannot see, so it never settles a call
the engine would report.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping, Sequence
from itertools import product

UNKNOWN = object()  # an argument value the source does not show (or a required argument's default)


class Case(namedtuple("Case", "when gaps otherwise", defaults=(False,))):
    """One case of an operator's coverage: when, a mapping of the argument values / input rank it
    stands for; gaps, a tuple of (operator, RAISES or ON_CPU); otherwise, True for the default case,
    which holds when no other case does. (A namedtuple, not a dataclass: this module loads with the
    gates, on every run.)"""

    __slots__ = ()


class _Tensor:
    def __repr__(self) -> str:
        return "<tensor>"


TENSOR = _Tensor()  # an argument known to be a tensor (not a literal)


def same(expected: object, given: object) -> bool:
    """``true`` in the tables means "set to anything but None/False" (Embedding's max_norm);
    ``{kind = "number"}`` a number literal (isin's scalar)."""
    if expected is True:
        return given is not None and given is not False
    if isinstance(expected, dict):
        return expected.get("kind") == "number" and isinstance(given, (int, float)) and not isinstance(given, bool)
    return expected == given


def possible(case: Case, values: Mapping[str, object], ndim: int | None, defaults: Mapping) -> bool:
    """Whether a call with these visible values can be in ``case``; a key the case lacks holds its default."""
    for key, given in values.items():
        if given is UNKNOWN:
            continue
        if key not in case.when:
            default = defaults.get(key, (None, UNKNOWN))[1]
            if default is not UNKNOWN and not same(default, given):
                return False
        elif not same(case.when[key], given):
            return False
    wanted = case.when.get("ndim")
    return ndim is None or wanted is None or wanted == ndim


def certain(case: Case, values: Mapping[str, object], ndim: int | None) -> bool:
    """Whether the visible values put the call in ``case`` for sure."""
    for key, expected in case.when.items():
        given = ndim if key == "ndim" else values.get(key, UNKNOWN)
        if given is UNKNOWN or given is None and key == "ndim" or not same(expected, given):
            return False
    return True


def possible_cases(cases: Sequence[Case], values: Mapping[str, object], ndim: int | None,
                   defaults: Mapping) -> list[Case]:
    """The cases a call can be in; the default case holds unless another case certainly does."""
    specific = [case for case in cases if not case.otherwise]
    found = [case for case in specific if possible(case, values, ndim, defaults)]
    if any(case.otherwise for case in cases) and not any(certain(case, values, ndim) for case in specific):
        found += [case for case in cases if case.otherwise]
    return found


def case_gaps(cases: Sequence[Case], values: Mapping[str, object], ndim: int | None, defaults: Mapping,
              reached: set[tuple[str, str]], forced: set[tuple[str, str]]) -> list[set[tuple[str, str]]] | None:
    """The gaps of each case the call can be in (those of its operators it reaches, and the `forced` ones an
    argument brings in whatever the case), when every such case has one; else None."""
    gaps = [(set(case.gaps) & reached) | forced for case in possible_cases(cases, values, ndim, defaults)]
    return gaps if gaps and all(gaps) else None


# -- the gates' side: can any call with these visible arguments be reported? -------------
NOT_LITERAL = object()  # an argument the gate sees but cannot read (a name, a call, ...)
_ABSENT = object()  # an argument the call leaves out
_OTHER_NDIM = -1  # an input rank no case names
MAX_COMBINATIONS = 50_000  # a judge's whole search (the largest table today needs a few hundred)


def call_spec(arguments: Mapping[str, tuple[int, object]], releases: Iterable[Sequence[Case]],
              needs: Mapping[str, tuple[str, int | None, frozenset[object] | None]],
              pools: Mapping[str, tuple[str, int | None]]) -> dict:
    """What the gate needs to judge a call of one API, as plain data (JSON, for the gate cache): the
    case-choosing arguments (position, default; no default: left out), the cases at each release the
    project may run, and the operators an argument brings in (`needs`, `pools`: see op_coverage)."""
    return {
        "arguments": {key: [position, None if default is UNKNOWN else default, default is UNKNOWN]
                      for key, (position, default) in arguments.items()},
        "releases": [[[dict(case.when), [list(gap) for gap in case.gaps], case.otherwise] for case in cases]
                     for cases in releases],
        "needs": {op: [keyword, position, None if values is None else sorted(values, key=repr)]
                  for op, (keyword, position, values) in needs.items()},
        "pools": {op: [keyword, position] for op, (keyword, position) in pools.items()},
    }


class CallJudge:
    """One API's `call_spec`, read back: `can_report(keywords, positional, starred)` says whether a call
    with these arguments may be reported at some release, for some input rank and for any value of the
    arguments the gate cannot read (a name may hold any value, a tensor among them)."""

    def __init__(self, spec: Mapping):
        self.defaults: dict[str, tuple[int | None, object]] = {
            key: (position, UNKNOWN if missing else _value(default))
            for key, (position, default, missing) in spec["arguments"].items()}
        self.releases = [[Case(_when(when), tuple((op, kind) for op, kind in gaps), otherwise)
                          for when, gaps, otherwise in cases] for cases in spec["releases"]]
        self.needs = {op: (keyword, position, None if values is None else frozenset(_value(v) for v in values))
                      for op, (keyword, position, values) in spec["needs"].items()}
        self.pools = {op: (keyword, position) for op, (keyword, position) in spec["pools"].items()}
        keys = {key for cases in self.releases for case in cases for key in case.when if key != "ndim"}
        self.keys = sorted(keys)
        self.ndims = sorted({case.when["ndim"] for cases in self.releases for case in cases if "ndim" in case.when})
        # every value a case tells apart, for an argument the gate cannot read
        self.choices = {key: _choices(key, self.releases) for key in self.keys}
        # the keywords it reads, and how many positional arguments
        places = [(key, self.defaults.get(key, (None, UNKNOWN))[0]) for key in self.keys]
        places += [(keyword, position) for keyword, position, _ in self.needs.values()]
        places += list(self.pools.values())
        self.reads = frozenset(keyword for keyword, _ in places)
        self.span = max((position + 1 for _, position in places if position is not None and position >= 0), default=0)
        combinations = len(self.releases) * (len(self.ndims) + 2)
        for key in self.keys:
            combinations *= len(self.choices[key])
        if combinations > MAX_COMBINATIONS:
            raise ValueError(f"{combinations} combinations of arguments to try: more than {MAX_COMBINATIONS}")

    @staticmethod
    def _given(key: str, position: int | None, keywords: Mapping[str, object], positional: Sequence[object]):
        if key in keywords:
            return keywords[key]
        if position is not None and 0 <= position < len(positional):
            return positional[position]
        return _ABSENT

    def can_report(self, keywords: Mapping[str, object], positional: Sequence[object], starred: bool) -> bool:
        if starred:
            return True  # `f(*args, **kwargs)`: anything may be passed
        options = []
        for key in self.keys:
            position, default = self.defaults.get(key, (None, UNKNOWN))
            given = self._given(key, position, keywords, positional)
            options.append([default] if given is _ABSENT else self.choices[key] if given is NOT_LITERAL else [given])
        reached_ops = set()
        for op, (keyword, position, values) in self.needs.items():
            given = self._given(keyword, position, keywords, positional)
            if given is NOT_LITERAL or (given is not _ABSENT and given is not None and (values is None or given in values)):
                reached_ops.add(op)
        for op, (keyword, position) in self.pools.items():
            given = self._given(keyword, position, keywords, positional)
            if given is NOT_LITERAL or (given is not _ABSENT and visible_sizes(given) not in (None, {1})):
                reached_ops.add(op)
        unreached = set(self.needs) | set(self.pools)
        for cases in self.releases:
            gaps = {gap for case in cases for gap in case.gaps}
            reached = {gap for gap in gaps if gap[0] not in unreached or gap[0] in reached_ops}
            forced = {gap for gap in reached if gap[0] in self.needs}
            for chosen in product(*options):
                values = dict(zip(self.keys, chosen))
                for ndim in (None, *self.ndims, _OTHER_NDIM):
                    if case_gaps(cases, values, ndim, self.defaults, reached, forced) is not None:
                        return True
        return False


def _value(value: object) -> object:
    return tuple(_value(item) for item in value) if isinstance(value, list) else value


def _when(when: Mapping[str, object]) -> dict[str, object]:
    return {key: _value(value) for key, value in when.items()}


def _choices(key: str, releases: Sequence[Sequence[Case]]) -> list[object]:
    """The values an unreadable argument may hold, one of each kind the cases tell apart: each value a case
    names, None, False, True, a number and a string no case names, a tensor, and a value the engine cannot
    read either."""
    named = []
    for cases in releases:
        for case in cases:
            value = case.when.get(key, UNKNOWN)
            if value is not UNKNOWN and not isinstance(value, dict) and value not in named:
                named.append(value)
    return [*named, None, False, True, -(2 ** 61), "\x00unnamed", TENSOR, UNKNOWN]


def visible_sizes(value: object) -> set | None:
    """The set of sizes in an int or tuple of ints; None when not all visible."""
    sizes = set(value) if isinstance(value, tuple) else {value}
    return None if not sizes or any(not isinstance(size, int) or isinstance(size, bool) for size in sizes) else sizes
