"""Suppression comments: where they are, what they silence, which of them silence nothing.

`# noqa` silences every finding on its line, `# noqa: CDL101, CDL2` the listed codes or
prefixes (case-insensitive, as in flake8 and ruff); `# cudalint: noqa` anywhere in a file
silences the whole file, `# cudalint: noqa: CDL1` those codes in it.

In Python the comments are found with the tokenizer, so "# noqa" inside a string is text,
not a directive. A line inside a multi-line string (or ending in a backslash) cannot hold a
comment, so a finding there is silenced by a directive on the last line of its statement;
a directive there also silences any finding of the statement, and `--add-noqa` writes to
the reported line when it can hold a comment, else to that last line. Other files are read
line by line.
"""

import io
import re
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from cudalint.findings import Edit, Finding, Fix, Safety, Severity
from cudalint.source import decode_text

# Patterns, compiled (and kept) by `re` on first use: a file that never mentions noqa never needs them.
CODE = r"[A-Z]+[0-9]+"
NOQA = rf"#\s*noqa(?::\s*(?P<codes>{CODE}(?:[\s,]+{CODE})*))?"
FILE_NOQA = rf"#\s*cudalint\s*:\s*noqa(?::\s*(?P<codes>{CODE}(?:[\s,]+{CODE})*))?"
PHYSICAL_LINE = r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z"  # Python's line breaks only (not form feed)
ALL = frozenset()  # bare noqa: every code
UNUSED_NOQA = "CDL001"
OWN_PREFIX = "CDL"  # codes under another prefix belong to other tools and are never judged


# The records below are NamedTuples: made once per process at import, a dataclass costs about ten
# times as much, and this module is loaded by every run.
class Code(NamedTuple):
    text: str  # as written
    start: int  # 0-based offsets in the physical line
    end: int

    @property
    def upper(self) -> str:
        return self.text.upper()


class Directive(NamedTuple):
    """One `# noqa[: codes]` on one physical line; offsets are 0-based characters in that line."""

    line: int
    start: int  # the directive's '#'
    end: int  # just past its last code (or past "noqa" when bare)
    comment_start: int  # the comment holding it
    comment_end: int
    codes: Optional[Tuple[Code, ...]]  # None: bare, silences everything

    def silences(self, code: str) -> bool:
        return self.codes is None or any(code.startswith(c.upper) for c in self.codes)


class Comments(NamedTuple):
    """A file's suppression comments and where comments may be written."""

    lines: List[str]
    directives: Dict[int, Directive]
    file_codes: Optional[FrozenSet[str]]  # None: no file-level directive; ALL: the whole file
    statement_end: Dict[int, int]  # a line of a multi-line statement -> the statement's last line
    blocked: Set[int]  # lines whose end is inside a string or a backslash continuation
    tokenized: bool

    def directive_for(self, line: int, code: str) -> Optional[Directive]:
        """The directive silencing `code` on `line`: its own line's, else its statement's last line's."""
        for candidate in (line, self.statement_end.get(line, line)):
            directive = self.directives.get(candidate)
            if directive is not None and directive.silences(code):
                return directive
        return None

    def file_silences(self, code: str) -> bool:
        return self.file_codes is not None and (
            self.file_codes == ALL or any(code.startswith(prefix) for prefix in self.file_codes)
        )

    def anchor(self, line: int) -> Optional[int]:
        """Where a directive for a finding on `line` goes: the line itself if it can hold a comment."""
        if line < 1 or line > len(self.lines):
            return None
        if line not in self.blocked:
            return line
        end = self.statement_end.get(line)
        return end if end is not None and end not in self.blocked else None


def __getattr__(name: str):
    if name == "NOQA_RE":  # the directive pattern, compiled (the language server's code actions)
        return re.compile(NOQA, re.IGNORECASE)
    raise AttributeError(f"module 'cudalint.noqa' has no attribute {name!r}")


def _directive(line: int, text: str, comment_start: int, comment_end: int) -> Optional[Directive]:
    comment = text[comment_start:comment_end]
    match = re.search(NOQA, comment, re.IGNORECASE)
    if match is None:
        return None
    codes = None
    if match.group("codes"):
        base = comment_start + match.start("codes")
        codes = tuple(Code(m.group(), base + m.start(), base + m.end()) for m in re.finditer(CODE, match.group("codes"), re.IGNORECASE))
    return Directive(line, comment_start + match.start(), comment_start + match.end(), comment_start, comment_end, codes)


def _file_codes(comment: str, current: Optional[FrozenSet[str]]) -> Optional[FrozenSet[str]]:
    match = re.search(FILE_NOQA, comment, re.IGNORECASE)
    if match is None or current == ALL:
        return current
    if not match.group("codes"):
        return ALL
    return (current or frozenset()) | {c.upper() for c in re.findall(CODE, match.group("codes"), re.IGNORECASE)}


def physical_lines(text: str, keepends: bool = False) -> List[str]:
    """The file's lines as line numbers count them: split at \\n, \\r\\n and \\r only."""
    found = re.findall(PHYSICAL_LINE, text)
    return found if keepends else [line.rstrip("\r\n") for line in found]


def scan(text: str, kind: str = "python") -> Comments:
    lines = physical_lines(text)
    if kind == "python":
        import tokenize  # only for a file that mentions noqa (see apply)

        try:
            return _scan_python(text, lines)
        except (tokenize.TokenError, SyntaxError, ValueError, IndentationError, RecursionError):
            pass
    directives: Dict[int, Directive] = {}
    file_codes: Optional[FrozenSet[str]] = None
    for number, line in enumerate(lines, start=1):
        position = line.find("#")
        if position < 0:
            continue
        directive = _directive(number, line, position, len(line))
        if directive is not None:
            directives[number] = directive
        file_codes = _file_codes(line[position:], file_codes)
    blocked = {number for number, line in enumerate(lines, start=1) if line.rstrip().endswith("\\")}
    return Comments(lines, directives, file_codes, {}, blocked, False)


def _scan_python(text: str, lines: List[str]) -> Comments:
    import tokenize

    directives: Dict[int, Directive] = {}
    file_codes: Optional[FrozenSet[str]] = None
    statement_end: Dict[int, int] = {}
    blocked: Set[int] = set()
    open_fstrings: List[int] = []
    comment_rows: Set[int] = set()
    statement_start: Optional[int] = None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        kind, (row, col), (end_row, end_col) = token.type, token.start, token.end
        if kind == tokenize.COMMENT:
            comment_rows.add(row)
            directive = _directive(row, lines[row - 1], col, end_col)
            if directive is not None:
                directives[row] = directive
            file_codes = _file_codes(token.string, file_codes)
            continue
        if kind in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if kind == tokenize.NEWLINE:
            if statement_start is not None and statement_start < row:
                for number in range(statement_start, row + 1):
                    statement_end[number] = row
            statement_start = None
            continue
        if statement_start is None:
            statement_start = row
        if kind == tokenize.STRING and end_row > row:
            blocked.update(range(row, end_row))
        elif kind == getattr(tokenize, "FSTRING_START", -1):
            open_fstrings.append(row)
        elif kind == getattr(tokenize, "FSTRING_END", -1) and open_fstrings:
            blocked.update(range(open_fstrings.pop(), end_row))
    for number, line in enumerate(lines, start=1):
        if line.endswith("\\") and number not in comment_rows:
            blocked.add(number)  # an explicit line joining: no comment can follow it
    return Comments(lines, directives, file_codes, statement_end, blocked, True)


def noqa_lines(text: str, kind: str = "python") -> Dict[int, FrozenSet[str]]:
    """line number -> codes silenced there (empty set = all)."""
    if not re.search("noqa", text, re.IGNORECASE):
        return {}
    return {
        line: ALL if d.codes is None else frozenset(c.upper for c in d.codes) for line, d in scan(text, kind).directives.items()
    }


def silenced(code: str, codes: Optional[FrozenSet[str]]) -> bool:
    if codes is None:
        return False
    return codes == ALL or any(code.startswith(prefix) for prefix in codes)


def apply(
    findings: Sequence[Finding],
    text: str,
    kind: str,
    path: str,
    *,
    enabled: FrozenSet[str],
    catalog=None,
) -> List[Finding]:
    """The findings no directive silences, plus a CDL001 finding for each directive's CDL codes that
    silenced nothing (when CDL001 is enabled and a catalog is given). The runner calls it only for a
    text that says "noqa" (without the word there is no directive, and this module is not loaded)."""
    judge = catalog is not None and UNUSED_NOQA in enabled
    if not (findings or judge):
        return list(findings)
    comments = scan(text, kind)
    kept: List[Finding] = []
    used: Dict[int, Set[str]] = {}
    for finding in findings:
        if comments.file_silences(finding.code):
            continue
        directive = comments.directive_for(finding.line, finding.code)
        if directive is None:
            kept.append(finding)
            continue
        if directive.codes is not None:
            used.setdefault(directive.line, set()).update(
                c.upper for c in directive.codes if finding.code.startswith(c.upper)
            )
    if judge:
        for directive in comments.directives.values():
            unused = _unused_noqa(directive, used.get(directive.line, set()), enabled, catalog, comments, path)
            if unused is not None and not comments.file_silences(UNUSED_NOQA):
                kept.append(unused)
    return kept


def _unused_noqa(directive: Directive, used: Set[str], enabled: FrozenSet[str], catalog, comments: Comments,
                 path: str) -> Optional[Finding]:
    """A directive's CDL codes that name no rule, or whose rules all ran here and silenced nothing."""
    if directive.codes is None:
        return None  # a bare noqa may be meant for another tool
    unknown, unused = [], []
    for code in directive.codes:
        name = code.upper
        if not name.startswith(OWN_PREFIX) or name in used:
            continue
        rules = catalog.codes_for(name) if catalog.is_selector(name) else []
        if not rules:
            unknown.append(code)
        elif all(rule in enabled for rule in rules):
            unused.append(code)
    if not unknown and not unused:
        return None
    parts = []
    if unused:
        parts.append("unused: " + ", ".join(c.text for c in unused))
    if unknown:
        parts.append("unknown: " + ", ".join(c.text for c in unknown))
    drop = {c.start for c in unknown + unused}
    line = comments.lines[directive.line - 1]
    fix = Fix(Safety.SAFE, "remove the unused noqa codes", (_removal(directive, drop, line),))
    return Finding(UNUSED_NOQA, path, directive.line, directive.start + 1, directive.line, directive.end + 1,
                   f"noqa directive silences nothing here ({'; '.join(parts)})", Severity.WARNING, fix)


def _removal(directive: Directive, drop: Set[int], line: str) -> Edit:
    """The edit that takes the dropped codes out, and the directive (or its whole comment) when none is left."""
    keep = [c for c in directive.codes if c.start not in drop]
    number = directive.line
    if keep:
        first, last = directive.codes[0], directive.codes[-1]
        joined = ", ".join(c.text for c in keep)
        return Edit(number, first.start + 1, number, last.end + 1, joined)
    rest = line[directive.end:directive.comment_end]
    if directive.start == directive.comment_start and not rest.strip():
        start = len(line[:directive.comment_start].rstrip())  # the comment and the space before it
        return Edit(number, start + 1, number, directive.comment_end + 1, "")
    if directive.start == directive.comment_start:  # "# noqa: CDL101 reason" -> "# reason"
        return Edit(number, directive.start + 1, number, directive.end + 1 + (len(rest) - len(rest.lstrip())), "# ")
    start = len(line[:directive.start].rstrip())  # "# type: ignore  # noqa: CDL101" -> "# type: ignore"
    return Edit(number, start + 1, number, directive.end + 1, "")


# ---- --add-noqa ------------------------------------------------------------------------------------

COMMENT_KINDS = ("python", "requirements", "pyproject", "pixi", "poetry_lock", "uv_lock")


def add_noqa(text: str, findings: Iterable[Finding], kind: str) -> Tuple[str, int, int]:
    """`text` with a `# noqa: CODE` for every finding, merged into the line's directive when it has one.
    Returns (new text, directives written or extended, findings that could not be given one)."""
    wanted: Dict[int, List[str]] = {}
    skipped = 0
    if kind not in COMMENT_KINDS:
        return text, 0, sum(1 for _ in findings)
    comments = scan(text, kind)
    if kind == "python" and not comments.tokenized:
        return text, 0, sum(1 for _ in findings)
    for finding in findings:
        if finding.code == UNUSED_NOQA:
            continue  # the fix removes it; silencing it would keep the stale directive
        anchor = comments.anchor(finding.line)
        if anchor is None or finding.code == "CDL000":
            skipped += 1
            continue
        codes = wanted.setdefault(anchor, [])
        if finding.code not in codes:
            codes.append(finding.code)
    if not wanted:
        return text, 0, skipped
    physical = physical_lines(text, keepends=True)
    for number, codes in sorted(wanted.items()):
        raw = physical[number - 1]
        body = raw.rstrip("\r\n")
        ending = raw[len(body):]
        directive = comments.directives.get(number)
        if directive is not None and directive.codes is not None:
            present = {c.upper for c in directive.codes}
            extra = [code for code in sorted(codes) if code not in present]
            body = body[: directive.end] + "".join(f", {code}" for code in extra) + body[directive.end :]
        elif directive is None:
            body = body.rstrip(" \t") + "  # noqa: " + ", ".join(sorted(codes))
        physical[number - 1] = body + ending
    return "".join(physical), len(wanted), skipped


def unchanged_meaning(before: str, after: str, kind: str) -> bool:
    """Only comments were added: the same Python syntax tree, the same TOML data."""
    if kind == "python":
        import ast

        try:
            return ast.dump(ast.parse(before)) == ast.dump(ast.parse(after))
        except (SyntaxError, ValueError, RecursionError):
            return False
    if kind in ("pyproject", "pixi", "poetry_lock", "uv_lock"):
        from cudalint.catalog import toml_parser

        tomllib = toml_parser()
        try:
            return tomllib.loads(before) == tomllib.loads(after)
        except tomllib.TOMLDecodeError:
            return False
    return True


def add_noqa_to_files(findings: Sequence[Finding]) -> Tuple[int, int, int]:
    """Write `# noqa` directives for `findings` into their files; (directives, files changed, findings left
    without one). A file is written only when its meaning is unchanged (same syntax tree, same TOML data),
    atomically and in its own encoding and line endings."""
    from pathlib import Path

    from cudalint.discover import kind_of
    from cudalint.source import decode_python

    by_path: Dict[str, List[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    added = changed = skipped = 0
    for display, found in sorted(by_path.items()):
        path = Path(display)
        kind = kind_of(path) or "python"
        if kind == "notebook":  # a comment goes into a cell's source, inside the JSON: not written here
            skipped += len(found)
            continue
        try:
            data = path.read_bytes()
        except OSError:
            skipped += len(found)
            continue
        decoded = decode_python(data) if kind == "python" else decode_text(data)
        if decoded.text is None:
            skipped += len(found)
            continue
        text, count, left = add_noqa(decoded.text, found, kind)
        if not count or not unchanged_meaning(decoded.text, text, kind) or not _write(path, text, decoded.encoding):
            skipped += len(found)
            continue
        added, changed, skipped = added + count, changed + 1, skipped + left
    return added, changed, skipped


def _write(path, text: str, encoding: str) -> bool:
    """Through the one safe writer --fix uses: atomic, never through a link out of the file's folder."""
    import os

    from cudalint.fileio import replace_file

    try:
        replace_file(path, text.encode(encoding), os.path.dirname(os.path.abspath(path)))
    except (OSError, UnicodeEncodeError):
        return False
    return True
