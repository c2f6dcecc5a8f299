"""A Python file too large to check in one piece, as parts of whole top-level statements.

libcst's tree costs about 450 bytes per byte of source and CPython's about 200, so a
2 MB file would need 2 GB at once. Above PART_BYTES a file is cut, with the tokenizer
(which streams), before top-level statements only, into parts of about PART_BYTES. Each
part is checked with the top-level imports met so far put before it, so a name imported
at the top still resolves; each finding is moved back to its line in the file. A finding
on one of those import lines belongs to the part the import is in, and a fix with an edit
outside its part's own lines (an import added at the top) is not offered for such a file.
Module-level values defined in one part are not seen from another: a large file is
checked statement group by statement group.
"""

import ast
import bisect
import gc
import io
import re
from typing import Callable, List, NamedTuple, Optional, Sequence

from cudalint.findings import Finding
from cudalint.python.analyze import PART_BYTES

_LINE_START = re.compile(r"\r\n|\r|\n")
_CONTINUES = frozenset({"else", "elif", "except", "finally"})  # part of the statement above, never a start


class Part(NamedTuple):  # made at every start (a dataclass costs about ten times as much)
    first_line: int  # 1-based line in the file where the part begins
    text: str


def line_starts(text: str) -> List[int]:
    return [0, *(match.end() for match in _LINE_START.finditer(text))]


def top_level_starts(text: str) -> Optional[List[int]]:
    """Lines where a top-level statement begins (not a decorated def's def, not an else/except);
    None when the tokenizer cannot read the file (CPython's parser then says why, on the whole file)."""
    import tokenize  # only for a file large enough to be cut into parts

    starts: List[int] = []
    depth, at_line_start, previous_first = 0, True, ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            kind = token.type
            if kind == tokenize.INDENT:
                depth += 1
                continue
            if kind == tokenize.DEDENT:
                depth -= 1
                continue
            if kind in (tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER):
                continue  # (the end marker sits on a line of its own, past the last one of a file without a final newline)
            if kind == tokenize.NEWLINE:
                at_line_start = True
                continue
            if at_line_start:
                at_line_start = False
                if depth == 0 and token.string not in _CONTINUES and previous_first != "@":
                    starts.append(token.start[0])
                previous_first = token.string
    except (tokenize.TokenError, SyntaxError):
        return None
    return starts


def split(text: str, size: int = PART_BYTES) -> Optional[List[Part]]:
    """Parts of whole top-level statements of about `size` characters; None when the file cannot be cut."""
    statement_lines = top_level_starts(text)
    if not statement_lines:
        return None
    offsets = line_starts(text)
    cuts = [0]
    for line in statement_lines[1:]:
        offset = offsets[line - 1]
        if offset - cuts[-1] >= size:
            cuts.append(offset)
    cuts.append(len(text))
    return [Part(bisect.bisect_right(offsets, start), text[start:end]) for start, end in zip(cuts, cuts[1:])]


def check_in_parts(parts: Sequence[Part], check: Callable[[str], List[Finding]]) -> List[Finding]:
    """`check` each part after the top-level imports of the parts before it; a part that does not parse
    makes its CDL000 the file's only finding, as for a file checked whole."""
    header: List[str] = []  # import lines met so far, as written
    header_lines: List[int] = []  # and where they are in the file
    findings: List[Finding] = []
    for part in parts:
        part_lines = part.text.splitlines(keepends=True) if "\r" not in part.text else _LINE_SPLIT.findall(part.text)
        line_map = header_lines + list(range(part.first_line, part.first_line + len(part_lines)))
        found = relocate(check("".join(header) + part.text), line_map, len(header))
        gc.collect()  # a part's trees hold reference cycles: free them before the next part is built
        if any(finding.code == "CDL000" for finding in found):
            return [finding for finding in found if finding.code == "CDL000"][:1]
        findings.extend(found)
        for line in _import_lines(part.text):
            header.append(part_lines[line - 1] if part_lines[line - 1].endswith(("\n", "\r")) else part_lines[line - 1] + "\n")
            header_lines.append(part.first_line + line - 1)
    return findings


_LINE_SPLIT = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _import_lines(text: str) -> List[int]:
    """The lines (in `text`) of its top-level imports."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines: List[int] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.extend(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def relocate(findings: Sequence[Finding], line_map: Sequence[int], header: int) -> List[Finding]:
    """Findings of a part checked as header + part, on the file's lines; those on header lines dropped."""
    def where(line: int) -> int:
        return line_map[line - 1] if line <= len(line_map) else line_map[-1] + (line - len(line_map))

    moved = []
    for finding in findings:
        if finding.line <= header:
            continue
        fix = finding.fix
        if fix is not None:
            own = all(edit.line > header and not (header and edit.line == header + 1 and edit.column == 1
                                                   and edit.line == edit.end_line and edit.column == edit.end_column)
                      for edit in fix.edits)
            fix = fix._replace(edits=tuple(
                edit._replace(line=where(edit.line), end_line=where(edit.end_line)) for edit in fix.edits
            )) if own else None
        moved.append(finding._replace(line=where(finding.line), end_line=where(finding.end_line), fix=fix))
    return moved
