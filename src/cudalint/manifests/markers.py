"""PEP 508 environment markers: syntax check and "can this hold on macOS?".

Only what a Mac fixes is known (sys_platform, platform_system, os_name and the
two machine names); everything else (python_version, extra, ...) is unknown, so
evaluation is three-valued: True, False or None for "depends".
"""

from __future__ import annotations

import re
from typing import Collection, FrozenSet, List, Optional, Set, Tuple

VARIABLES = {
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
    "extras",
    "dependency_groups",
    # Legacy spellings that pip still accepts.
    "os.name",
    "sys.platform",
    "platform.version",
    "platform.machine",
    "platform.python_implementation",
    "python_implementation",
}

# The values these variables can take on a Mac.
MACOS_VALUES = {
    "sys_platform": ("darwin",),
    "sys.platform": ("darwin",),
    "platform_system": ("Darwin",),
    "os_name": ("posix",),
    "os.name": ("posix",),
    "platform_machine": ("arm64", "x86_64"),
    "platform.machine": ("arm64", "x86_64"),
}

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<paren>[()])
    | (?P<string>"[^"]*"|'[^']*')
    | (?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)
    | (?P<bool>and\b|or\b)
    | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
    )""",
    re.VERBOSE,
)


class MarkerError(ValueError):
    pass


def _tokens(text: str) -> List[Tuple[str, str]]:
    tokens = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise MarkerError(f"unexpected {text[pos:].strip()[:20]!r} in marker")
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "name" and value not in VARIABLES:
            raise MarkerError(f"unknown marker variable {value!r}")
        tokens.append((kind, re.sub(r"\s+", " ", value)))
        pos = match.end()
    return tokens


class _Parser:
    """marker := and ('or' and)*; and := atom ('and' atom)*; atom := '(' marker ')' | value op value"""

    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> Tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ("end", "")

    def take(self) -> Tuple[str, str]:
        token = self.peek()
        self.pos += 1
        return token

    def parse(self):
        tree = self.disjunction()
        if self.peek()[0] != "end":
            raise MarkerError(f"unexpected {self.peek()[1]!r} in marker")
        return tree

    def disjunction(self):
        tree = self.conjunction()
        while self.peek() == ("bool", "or"):
            self.take()
            tree = ("or", tree, self.conjunction())
        return tree

    def conjunction(self):
        tree = self.atom()
        while self.peek() == ("bool", "and"):
            self.take()
            tree = ("and", tree, self.atom())
        return tree

    def atom(self):
        if self.peek() == ("paren", "("):
            self.take()
            tree = self.disjunction()
            if self.take() != ("paren", ")"):
                raise MarkerError("missing ')' in marker")
            return tree
        left = self.value()
        kind, op = self.take()
        if kind != "op":
            raise MarkerError("expected a comparison operator in marker")
        return ("cmp", left, op, self.value())

    def value(self):
        kind, text = self.take()
        if kind == "string":
            return ("str", text[1:-1])
        if kind == "name":
            return ("var", text)
        raise MarkerError("expected a marker variable or a quoted string" + (f", got {text!r}" if text else ""))


def parse_marker(text: str):
    """The marker as a small tree; MarkerError when it is not valid PEP 508."""
    if not text.strip():
        raise MarkerError("empty marker after ';'")
    return _Parser(text).parse()


def _compare(left: str, op: str, right: str) -> Optional[bool]:
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    if op == "in":
        return left in right
    if op == "not in":
        return left not in right
    return None  # version comparisons say nothing about the platform


def _candidates(value) -> Optional[Tuple[str, ...]]:
    kind, text = value
    if kind == "str":
        return (text,)
    return MACOS_VALUES.get(text)


def _evaluate(tree, exclusive: Collection[FrozenSet[str]] = ()) -> Optional[bool]:
    if tree[0] == "cmp":
        _, left, op, right = tree
        lefts, rights = _candidates(left), _candidates(right)
        if lefts is None or rights is None:
            return None
        results = {_compare(a, op, b) for a in lefts for b in rights}
        return results.pop() if len(results) == 1 else None
    first, second = _evaluate(tree[1], exclusive), _evaluate(tree[2], exclusive)
    if tree[0] == "and":
        if first is False or second is False or (exclusive and _asks_exclusive(tree, exclusive)):
            return False
        return True if first and second else None
    if first or second:
        return True
    return False if first is False and second is False else None


def _asks_exclusive(tree, exclusive: Collection[FrozenSet[str]]) -> bool:
    """A conjunction that needs two extras at once that no install can have together."""
    wanted = _extras_asked(tree)
    return any(len(wanted & group) > 1 for group in exclusive)


def _extras_asked(tree) -> Set[str]:
    """The extras a marker's conjunction needs (`extra == "cuda" and sys_platform == "linux"`)."""
    wanted, pending = set(), [tree]
    while pending:
        node = pending.pop()
        if node[0] == "and":
            pending += [node[1], node[2]]
        elif node[0] == "cmp" and node[2] == "==":
            sides = {node[1], node[3]}
            if ("var", "extra") in sides:
                wanted.update(text for kind, text in sides if kind == "str")
    return wanted


def extras_asked(marker: Optional[str]) -> Set[str]:
    """The extras a marker needs to hold (core metadata writes an extra's entries as
    `Requires-Dist: name; extra == "cuda"`); empty for no marker or one that cannot be read."""
    try:
        return _extras_asked(parse_marker(marker)) if marker else set()
    except MarkerError:
        return set()


def names_only_extras(marker: Optional[str]) -> bool:
    """The marker tests nothing but which extras are asked for (a wheel's `Requires-Dist: x; extra ==
    "cuda"`), or there is none: no platform, Python or version of its own. False for one that cannot be read."""
    if not marker:
        return True
    try:
        pending = [parse_marker(marker)]
    except MarkerError:
        return False
    while pending:
        node = pending.pop()
        if node[0] in ("and", "or"):
            pending += [node[1], node[2]]
        elif not (node[0] == "cmp" and ("var", "extra") in (node[1], node[3])):
            return False
    return True


def extra_and_marker(key: str) -> Tuple[str, Optional[str]]:
    """setuptools' extras_require key `name:marker` (`":sys_platform == 'linux'"` has no name):
    the extra's name and its marker, None when the key carries none."""
    name, colon, marker = key.partition(":")
    return name.strip(), (marker.strip() or None) if colon else None


def both(first: Optional[str], second: Optional[str]) -> Optional[str]:
    """Two markers that must both hold, as one marker."""
    if not (first and second):
        return first or second
    return f"({first}) and ({second})"


def excludes_macos(marker: Optional[str], exclusive: Collection[FrozenSet[str]] = ()) -> bool:
    """True when the marker is false on every Mac, so the entry is never installed there. `exclusive`:
    groups of extras of which an install has at most one (uv's declared conflicts: `cpu` and `cu124`),
    so a conjunction asking for two of one group is false."""
    if not marker:
        return False
    try:
        return _evaluate(parse_marker(marker), exclusive) is False
    except MarkerError:
        return False
