"""A TOML reader that keeps the position of every key and value.

tomllib decides whether a file is valid and words the error; it keeps no
positions, so this reader walks the same text again and records a span for
every value (also inside multi-line arrays and inline tables) and for every
`key = value` entry. It skips a line it cannot read and carries on, so the rest
of a broken file can still be checked.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudalint.manifests.base import LINE_BREAK, LineIndex, Problem, Span

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib


@dataclass
class Node:
    """value: str (strings), raw text (numbers, booleans, dates), List[Node] or Dict[str, Node]."""

    kind: str  # "string" | "scalar" | "array" | "table"
    value: Any
    span: Span
    entry: Span  # from the key to the end of the value; the header for a [table]
    source: str = ""  # the text of the entry (or of the value, for array items)

    def get(self, *keys) -> Optional["Node"]:
        node: Optional[Node] = self
        for key in keys:
            if node is None or node.kind != "table" or key not in node.value:
                return None
            node = node.value[key]
        return node

    def strings(self) -> List["Node"]:
        """The string items of an array node (other items skipped)."""
        if self.kind != "array":
            return []
        return [item for item in self.value if item.kind == "string"]

    def is_true(self) -> bool:
        return self.kind == "scalar" and self.value == "true"

    def tables(self) -> List["Node"]:
        """An array of tables (or a single table) as a list of table nodes."""
        if self.kind == "table":
            return [self]
        return [item for item in self.value if item.kind == "table"] if self.kind == "array" else []


class _Error(Exception):
    pass


MAX_DEPTH = 64  # arrays and inline tables inside each other; real manifests nest two or three deep


class _TooDeep(_Error):
    def __init__(self, offset: int):
        super().__init__(f"arrays or inline tables nested more than {MAX_DEPTH} levels deep")
        self.offset = offset


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR = re.compile(r"[^\s,\]\}#]+")
_PLAIN_RUN = re.compile(r'[^"\\\r\n]+')
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


_SKIP_TOKEN = re.compile(r"""[^"'\[\]{}\n]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[\[\]{}\n]""")


class _Reader:
    def __init__(self, text: str, first_line: int = 1, skip: frozenset = frozenset()):
        self.text = text
        self.index = LineIndex(text, first_line)
        self.pos = 0
        self.depth = 0
        self.skip = skip  # keys whose values nobody reads: passed over without building nodes
        self.too_deep: Optional[int] = None  # where the first too-deep value starts
        self.error: Optional[Tuple[int, str]] = None  # where the first line it could not read starts, and why
        start = self.index.span(0, 0)
        self.root = Node("table", {}, start, start)

    def span(self, start: int) -> Span:
        return self.index.span(start, self.pos)

    def peek(self, count: int = 1) -> str:
        return self.text[self.pos : self.pos + count]

    def skip_blanks(self) -> None:
        while self.peek() in (" ", "\t"):
            self.pos += 1

    def skip_space_and_comments(self) -> None:
        """Spaces, newlines and comments, as between array items."""
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t\r\n":
                self.pos += 1
            elif char == "#":
                self.skip_to_line_end()
            else:
                return

    def skip_to_line_end(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def expect(self, literal: str) -> None:
        if not self.text.startswith(literal, self.pos):
            raise _Error(f"expected {literal!r}")
        self.pos += len(literal)

    def read(self) -> Node:
        table = self.root
        while True:
            self.skip_space_and_comments()
            if self.pos >= len(self.text):
                return self.root
            line_start = self.pos
            try:
                if self.peek() == "[":
                    table = self.header()
                else:
                    self.entry(table)
                self.skip_blanks()
                if self.peek() == "#":
                    self.skip_to_line_end()
                if self.pos < len(self.text) and self.peek() not in ("\n", "\r"):
                    raise _Error("expected the end of the line")
            except _TooDeep as error:
                if self.too_deep is None:
                    self.too_deep = error.offset
                self.depth = 0
                self.pos = line_start
                self.skip_to_line_end()
            except _Error as error:
                if self.error is None:
                    self.error = (line_start, str(error))
                self.depth = 0
                self.pos = line_start
                self.skip_to_line_end()

    def keys(self) -> List[str]:
        keys = []
        while True:
            self.skip_blanks()
            char = self.peek()
            if char == '"':
                keys.append(self.basic_string())
            elif char == "'":
                keys.append(self.literal_string())
            else:
                match = _BARE_KEY.match(self.text, self.pos)
                if not match:
                    raise _Error("expected a key")
                keys.append(match.group(0))
                self.pos = match.end()
            self.skip_blanks()
            if self.peek() != ".":
                return keys
            self.pos += 1

    def header(self) -> Node:
        start = self.pos
        double = self.peek(2) == "[["
        self.pos += 2 if double else 1
        keys = self.keys()
        self.expect("]]" if double else "]")
        span = self.span(start)
        node = self.root
        for number, key in enumerate(keys):
            last = number == len(keys) - 1
            child = node.value.get(key)
            if last and double:
                table = Node("table", {}, span, span)
                if child is None:
                    node.value[key] = Node("array", [table], span, span)
                elif child.kind == "array":
                    child.value.append(table)
                else:
                    raise _Error("not an array of tables")
                return table
            if child is None:
                child = node.value[key] = Node("table", {}, span, span)
            elif child.kind == "array" and child.value and child.value[-1].kind == "table":
                child = child.value[-1]
            elif child.kind != "table":
                raise _Error("not a table")
            node = child
        return node

    def entry(self, table: Node) -> None:
        start = self.pos
        keys = self.keys()
        self.expect("=")
        self.skip_blanks()
        value = self.passed_over() if keys[-1] in self.skip else self.value()
        value.entry = self.span(start)
        value.source = self.text[start : self.pos]
        for key in keys[:-1]:
            child = table.value.get(key)
            if child is None:
                child = table.value[key] = Node("table", {}, value.entry, value.entry)
            elif child.kind != "table":
                raise _Error("not a table")
            table = child
        table.value[keys[-1]] = value

    def passed_over(self) -> Node:
        """Move past a value without reading it: strings and brackets are matched, nothing is built."""
        start, depth = self.pos, 0
        if self.text.startswith("[\n", self.pos) or self.text.startswith("[\r\n", self.pos):
            close = self.text.find("\n]", self.pos)  # a machine-written multi-line array closes at a line start
            if close >= 0:
                self.pos = close + 2
                span = self.span(start)
                return Node("scalar", "", span, span)
        while self.pos < len(self.text):
            token = _SKIP_TOKEN.match(self.text, self.pos)
            if token is None:
                raise _Error("unterminated string")
            first = token.group(0)[0]
            if first in "[{":
                depth += 1
            elif first in "]}":
                depth -= 1
            elif first == "\n" and depth == 0:
                break
            self.pos = token.end()
            if depth == 0 and first in "]}":
                break
        span = self.span(start)
        return Node("scalar", "", span, span)

    def value(self) -> Node:
        start = self.pos
        if self.peek() in ("[", "{"):
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _TooDeep(start)
            try:
                return self._value(start)
            finally:
                self.depth -= 1
        return self._value(start)

    def _value(self, start: int) -> Node:
        if self.peek(3) in ('"""', "'''"):
            text = self.multiline_string()
            kind, value = "string", text
        elif self.peek() == '"':
            kind, value = "string", self.basic_string()
        elif self.peek() == "'":
            kind, value = "string", self.literal_string()
        elif self.peek() == "[":
            kind, value = "array", self.array()
        elif self.peek() == "{":
            kind, value = "table", self.inline_table()
        else:
            match = _SCALAR.match(self.text, self.pos)
            if not match:
                raise _Error("expected a value")
            self.pos = match.end()
            kind, value = "scalar", match.group(0)
        span = self.span(start)
        return Node(kind, value, span, span, self.text[start : self.pos])

    def basic_string(self) -> str:
        self.pos += 1
        chars = []
        while True:
            char = self.peek()
            if char in ("", "\n", "\r"):
                raise _Error("unterminated string")
            if char == '"':
                self.pos += 1
                return "".join(chars)
            if char == "\\":
                chars.append(self.escape())
            else:
                run = _PLAIN_RUN.match(self.text, self.pos)
                chars.append(run.group(0))
                self.pos = run.end()

    def escape(self) -> str:
        code = self.text[self.pos + 1 : self.pos + 2]
        if code in _ESCAPES:
            self.pos += 2
            return _ESCAPES[code]
        width = {"u": 4, "U": 8, "x": 2}.get(code)
        digits = self.text[self.pos + 2 : self.pos + 2 + width] if width else ""
        if not width or not re.fullmatch(r"[0-9A-Fa-f]+", digits) or len(digits) != width:
            raise _Error("invalid escape")
        self.pos += 2 + width
        return chr(int(digits, 16))

    def literal_string(self) -> str:
        end = self.text.find("'", self.pos + 1)
        newline = self.text.find("\n", self.pos + 1)
        if end < 0 or (0 <= newline < end):
            raise _Error("unterminated string")
        value = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return value

    def multiline_string(self) -> str:
        quote = self.peek(3)
        self.pos += 3
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        chars = []
        while True:
            if self.pos >= len(self.text):
                raise _Error("unterminated string")
            if self.text.startswith(quote, self.pos):
                extra = 0  # up to two quotes may sit right before the closing three
                while extra < 2 and self.text.startswith(quote[0], self.pos + 3 + extra):
                    extra += 1
                chars.append(quote[0] * extra)
                self.pos += 3 + extra
                return "".join(chars)
            char = self.text[self.pos]
            if quote == '"""' and char == "\\":
                trimmed = re.match(r"\\[ \t]*\r?\n[\s]*", self.text[self.pos :])
                if trimmed:
                    self.pos += trimmed.end()
                else:
                    chars.append(self.escape())
                continue
            chars.append(char)
            self.pos += 1

    def array(self) -> List[Node]:
        self.pos += 1
        items = []
        while True:
            self.skip_space_and_comments()
            if self.peek() == "]":
                self.pos += 1
                return items
            items.append(self.value())
            self.skip_space_and_comments()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise _Error("expected ',' or ']' in array")

    def inline_table(self) -> Dict[str, Node]:
        self.pos += 1
        table = Node("table", {}, self.span(self.pos), self.span(self.pos))
        while True:
            self.skip_space_and_comments()
            if self.peek() == "}":
                self.pos += 1
                return table.value
            self.entry(table)
            self.skip_space_and_comments()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise _Error("expected ',' or '}' in inline table")


_AT = re.compile(r"\(at line (\d+), column (\d+)\)|\(at end of document\)")


def syntax_problem(path: str, text: str, first_line: int = 1) -> Optional[Problem]:
    """tomllib's verdict on the text: None when valid, else a problem at the line it names."""
    index = LineIndex(text, first_line)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _AT.search(message)
        if match and match.group(1):
            line = int(match.group(1)) + first_line - 1
        else:
            line = index.position(len(text.rstrip()))[0]
        reason = _AT.sub("", message).strip()
        return Problem(path, index.line_span(line), f"invalid TOML at line {line}: {reason}")
    except (RecursionError, MemoryError):
        return Problem(path, index.line_span(first_line), f"line {first_line}: TOML nested too deeply to read")
    return None


def read_toml(
    path: str, text: str, first_line: int = 1, skip: frozenset = frozenset(), validate: bool = True
) -> Tuple[Node, List[Problem]]:
    """The document as a tree of nodes, and at most one syntax problem.

    A value nested past MAX_DEPTH is that problem (tomllib is not asked: it would recurse as deep);
    the lines around it are still read. `validate=False` leaves tomllib out and reports the first
    line this reader could not read instead (for machine-written lock files, where speed counts)."""
    reader = _Reader(text, first_line, skip)
    root = reader.read()
    if reader.too_deep is not None:
        line = reader.index.position(reader.too_deep)[0]
        span = reader.index.line_span(line)
        return root, [Problem(path, span, f"line {line}: arrays or inline tables nested more than {MAX_DEPTH}"
                                          " levels deep; that entry was not read")]
    if not validate:
        if reader.error is None:
            return root, []
        line = reader.index.position(reader.error[0])[0]
        return root, [Problem(path, reader.index.line_span(line), f"invalid TOML at line {line}: {reader.error[1]}")]
    problem = syntax_problem(path, text, first_line)
    return root, [problem] if problem else []


_ARRAY_HEADER = r"^\[\[[ \t]*{}[ \t]*\]\][ \t]*(?:#[^\r\n]*)?$"


def read_toml_pieces(
    path: str, text: str, header: str, skip: frozenset = frozenset()
) -> Iterator[Tuple[Node, List[Problem]]]:
    """A large document one `[[header]]` table at a time (the part before the first one, then each
    table with the sub-tables that follow it), so memory stays proportional to one piece, not to the
    file: lock files hold thousands of `[[package]]` tables and can run to tens of megabytes."""
    starts = [0] + [m.start() for m in re.finditer(_ARRAY_HEADER.format(re.escape(header)), text, re.MULTILINE)]
    line = 1
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        if end <= start and number:
            continue
        piece = text[start:end]
        yield read_toml(path, piece, line, skip, validate=False)
        line += len(LINE_BREAK.findall(piece))
