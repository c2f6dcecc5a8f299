"""Jupyter notebooks: their code cells as one Python script, and the script's positions in the file.

A notebook (nbformat 4: a JSON object whose `cells` each have a `cell_type` and a `source`, a string
or a list of strings; nbformat 3 kept them under `worksheets`, the code in `input`) runs its code cells
in order, in one namespace, as a script runs its statements: the cells are checked as one module.
IPython's own syntax is not Python: a line magic or shell escape (`%matplotlib inline`, `!pip install
...`) becomes `pass` at its indentation; a cell under a cell magic is left out, unless the magic runs
its body as Python (`%%time`, `%%timeit`, `%%capture`) or writes a Python script (`%%writefile
train.py`); a cell that still does not parse (`x?`, `y = !ls`) is left out too, and the rest is
checked. Findings are reported where the line is written in the .ipynb file itself (nbformat writes
one source line per line of the file), so `path:line:col`, SARIF and an editor all point into the
file; they carry no fix (the file is JSON, not Python).
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from json.decoder import scanstring
from typing import Dict, List, NamedTuple, Sequence, Tuple, Union

from cudalint.findings import Finding

# Cell magics whose body IPython runs as Python (it times, profiles or captures it); `%%writefile x.py`
# writes a Python script the notebook goes on to run, and is checked as Python too.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
MAX_DEPTH = 64  # JSON nesting: nbformat's deepest is a handful of levels; more is no notebook
_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_MAGIC = re.compile(r"[ \t]*[%!]")


class NotANotebook(ValueError):
    """The file is not a notebook cudalint can read: why, and the 1-based line and column."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.line = line
        self.column = column


class _Text(str):
    """A JSON string's value, with the offset of its opening quote in the file."""

    offset = 0


class _Cell(NamedTuple):
    pieces: Sequence[_Text]  # the source as the file holds it (one piece per line in nbformat's layout)
    text: str  # the pieces joined


class Notebook:
    """A notebook read: `script`, its code cells as one module, and `place`, a script position's place
    in the file."""

    def __init__(self, text: str):
        self._text = text
        self._line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
        cells = _code_cells(_document(text))
        lines: List[str] = []
        self._lines: List[Tuple[int, int]] = []  # script line - 1 -> (cell, offset of the line in the cell's text)
        self._cells: List[_Cell] = []
        for number, cell in enumerate(cells):
            self._cells.append(cell)
            offset = 0
            for written, line in zip(cell.text.split("\n"), _runnable(cell.text).split("\n")):
                lines.append(line)
                self._lines.append((number, offset))
                offset += len(written) + 1
        self.script = "\n".join(lines) + "\n"

    def place(self, line: int, column: int) -> Tuple[int, int]:
        """The file's (line, column) of a script's 1-based (line, column)."""
        if not 1 <= line <= len(self._lines):
            return 1, 1
        number, start = self._lines[line - 1]
        cell = self._cells[number]
        offset = min(start + max(column, 1) - 1, len(cell.text))
        ends, total = [], 0
        for piece in cell.pieces:
            total += len(piece)
            ends.append(total)
        at = min(bisect.bisect_right(ends, offset), len(cell.pieces) - 1)
        piece = cell.pieces[at]
        within = offset - (ends[at] - len(piece))
        position = _raw_offset(self._text, piece.offset + 1, within)
        row = bisect.bisect_right(self._line_starts, position) - 1
        return row + 1, position - self._line_starts[row] + 1

    def locate(self, findings: Sequence[Finding], path: str) -> List[Finding]:
        """The findings of the script, placed in the file (their related places in it too); without fixes."""
        return [self._placed(finding)._replace(fix=None, related=tuple(
            self._placed(entry) if not entry.path or entry.path == path else entry for entry in finding.related))
            for finding in findings]

    def _placed(self, where):
        """A finding or related place (line, column, end_line, end_column) moved from the script to the file."""
        line, column = self.place(where.line, where.column)
        end_line, end_column = self.place(where.end_line, where.end_column)
        return where._replace(line=line, column=column, end_line=end_line, end_column=end_column)


def _runnable(text: str) -> str:
    """The cell as Python: magics and shell escapes as `pass`, a cell magic's cell empty unless it runs its
    body as Python, a cell that does not parse empty; the lines stay where they are."""
    lines = text.split("\n")
    first = lines[0].strip()
    if first.startswith("%%"):
        words = first[2:].split()
        python = words and (words[0] in PYTHON_CELL_MAGICS or (words[0] == "writefile" and words[-1].endswith(".py")))
        if not python:
            return "\n".join("" for _ in lines)
        lines[0] = ""
    for attempt in (lines, [line[: len(line) - len(line.lstrip())] + "pass" if _MAGIC.match(line) else line for line in lines]):
        runnable = "\n".join(attempt)
        try:
            ast.parse(runnable)
            return runnable  # as written first: a `%` line inside a string is the string's
        except (SyntaxError, ValueError):
            continue
    return "\n".join("" for _ in lines)  # IPython's `x?`, `y = !ls`, or code that is broken: left out


def _raw_offset(text: str, start: int, count: int) -> int:
    """Where in the file the `count`th character of a JSON string whose first character is at `start` is
    written (escapes take several characters of the file, a surrogate pair twelve)."""
    position = start
    for _ in range(count):
        if text[position] != "\\":
            position += 1
        elif text[position + 1] != "u":
            position += 2
        elif 0xD800 <= int(text[position + 2: position + 6], 16) < 0xDC00 and text[position + 6: position + 8] == "\\u":
            position += 12
        else:
            position += 6
    return position


def _document(text: str) -> object:
    """The JSON document, each string value a _Text that knows where it is written."""
    try:
        value, end = _value(text, _SPACE.match(text, 0).end(), 0)
        if _SPACE.match(text, end).end() == len(text):
            return value
    except NotANotebook:
        raise
    except (ValueError, IndexError):
        pass
    try:
        json.loads(text)  # for its message and place
    except ValueError as exc:
        raise NotANotebook(f"not a notebook: {getattr(exc, 'msg', exc)}", getattr(exc, "lineno", 1), getattr(exc, "colno", 1))
    raise NotANotebook("not a notebook: the JSON could not be read")


def _value(text: str, at: int, depth: int) -> Tuple[object, int]:
    if depth > MAX_DEPTH:
        raise NotANotebook("not a notebook: JSON nested more than 64 levels deep")
    first = text[at]
    if first == '"':
        value, end = scanstring(text, at + 1)
        found = _Text(value)
        found.offset = at
        return found, end
    if first == "{":
        found: Dict[str, object] = {}
        at = _SPACE.match(text, at + 1).end()
        if text[at] == "}":
            return found, at + 1
        while True:
            if text[at] != '"':
                raise ValueError("a key")
            key, at = scanstring(text, at + 1)
            at = _SPACE.match(text, at).end()
            if text[at] != ":":
                raise ValueError("a colon")
            found[key], at = _value(text, _SPACE.match(text, at + 1).end(), depth + 1)
            at = _SPACE.match(text, at).end()
            if text[at] == "}":
                return found, at + 1
            if text[at] != ",":
                raise ValueError("a comma")
            at = _SPACE.match(text, at + 1).end()
    if first == "[":
        items: List[object] = []
        at = _SPACE.match(text, at + 1).end()
        if text[at] == "]":
            return items, at + 1
        while True:
            item, at = _value(text, at, depth + 1)
            items.append(item)
            at = _SPACE.match(text, at).end()
            if text[at] == "]":
                return items, at + 1
            if text[at] != ",":
                raise ValueError("a comma")
            at = _SPACE.match(text, at + 1).end()
    scalar = _SCALAR.match(text, at)
    if scalar is None:
        raise ValueError("a value")
    return json.loads(scalar.group()), scalar.end()


def _code_cells(document: object) -> List[_Cell]:
    """The code cells, in order, with their sources (nbformat 4's `cells`, or nbformat 3's worksheets)."""
    if not isinstance(document, dict):
        raise NotANotebook("not a notebook: the JSON is not an object")
    cells, key = document.get("cells"), "source"
    if cells is None and isinstance(document.get("worksheets"), list):
        cells = [cell for sheet in document["worksheets"] if isinstance(sheet, dict)
                 for cell in (sheet.get("cells") if isinstance(sheet.get("cells"), list) else ())]
        key = "input"
    if not isinstance(cells, list):
        raise NotANotebook("not a notebook: it has no list of cells")
    found = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get(key)
        pieces = [source] if isinstance(source, _Text) else source if isinstance(source, list) else []
        pieces = [piece for piece in pieces if isinstance(piece, _Text)]
        if pieces:
            found.append(_Cell(pieces, "".join(pieces)))
    return found


def read_notebook(text: str) -> Union[Notebook, NotANotebook]:
    """The notebook in the file's text, or why it is none."""
    try:
        return Notebook(text)
    except NotANotebook as exc:
        return exc
    except RecursionError:
        return NotANotebook("not a notebook: JSON nested too deeply")

