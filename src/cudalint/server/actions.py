"""Code actions: a finding's own fix (a safe one is the preferred quick fix; an unsafe one says so in its title),
`# noqa: CODE` on the finding's line, and every safe fix of the file at once (`source.fixAll.cudalint`)."""

from __future__ import annotations

import io
import tokenize
from typing import List, Optional

from lsprotocol import types

from cudalint.findings import Edit, Finding, Safety
from cudalint.noqa import NOQA_RE, noqa_lines, silenced
from cudalint.server.lsp import Lines, split_lines, text_edit

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.cudalint"
FIX_ALL_TITLE = "Fix all safe cudalint problems"
# File kinds where `# ...` after the code on a line is a comment, so `# noqa: CODE` can go there
# (not a Dockerfile, a CUDA source or setup.cfg; not a lock file, which is written by a tool).
TRAILING_HASH_COMMENTS = frozenset({"python", "requirements", "pyproject", "pipfile", "pixi", "conda", "cmake"})


def workspace_edit(uri: str, version: Optional[int], edits: List[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    """The edit as the client can take it: tied to the document's version when the client supports that,
    so an edit computed for an older text is refused rather than misapplied."""
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def fix_action(finding: Finding, diagnostic: types.Diagnostic, lines: Lines, uri: str, version: Optional[int],
               versioned: bool) -> types.CodeAction:
    fix = finding.fix
    safe = fix.safety is Safety.SAFE
    label = "" if safe else " (unsafe: review the change)"
    return types.CodeAction(
        title=f"Fix {finding.code}{label}: {fix.description}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=safe,
        edit=workspace_edit(uri, version, [text_edit(edit, lines) for edit in fix.edits], versioned),
    )


def noqa_edit(text: str, line: int, code: str, kind: str) -> Optional[Edit]:
    """The edit that silences `code` on 1-based `line` with a `# noqa` comment: the code added to the line's
    `# noqa: ...` list, or a new comment at the end of the line. None where the file kind has no trailing
    comments, where the edited text would not silence the code (noqa.py decides), or, for Python, where the
    `#` would not start a comment (a line that ends inside a string)."""
    if kind not in TRAILING_HASH_COMMENTS:
        return None
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return None
    current = lines[line - 1]
    match = NOQA_RE.search(current) if "#" in current else None
    if match is not None and match.group("codes") is None:
        return None  # a bare noqa already silences every code
    if match is not None:
        column, sign = match.end("codes") + 1, match.start()
        edit = Edit(line, column, line, column, f", {code}")
    else:
        kept = len(current.rstrip())
        edit, sign = Edit(line, kept + 1, line, len(current) + 1, f"  # noqa: {code}"), kept + 2
    edited = _apply(lines, edit)
    if not silenced(code, noqa_lines(edited).get(line)):
        return None
    if kind == "python" and not _comment_starts_at(edited, line, sign):
        return None
    return edit


def noqa_action(finding: Finding, diagnostic: types.Diagnostic, text: str, kind: str, lines: Lines, uri: str,
                version: Optional[int], versioned: bool) -> Optional[types.CodeAction]:
    edit = noqa_edit(text, finding.line, finding.code, kind)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Silence {finding.code} on this line (# noqa: {finding.code})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=False,
        edit=workspace_edit(uri, version, [text_edit(edit, lines)], versioned),
    )


def fix_all_action(fixed: str, applied: int, lines: Lines, uri: str, version: Optional[int],
                   versioned: bool) -> types.CodeAction:
    whole = types.Range(start=types.Position(line=0, character=0), end=lines.end())
    return types.CodeAction(
        title=f"{FIX_ALL_TITLE} ({applied})",
        kind=FIX_ALL,
        edit=workspace_edit(uri, version, [types.TextEdit(range=whole, new_text=fixed)], versioned),
    )


def wanted(kind: str, only: Optional[List[str]]) -> bool:
    """Whether the client's `only` filter admits an action of `kind` (a filter entry admits its sub-kinds)."""
    return not only or any(kind == entry or kind.startswith(entry + ".") for entry in only)


def _apply(lines: List[str], edit: Edit) -> str:
    current = lines[edit.line - 1]
    changed = current[: edit.column - 1] + edit.content + current[edit.end_column - 1 :]
    return "\n".join(lines[: edit.line - 1] + [changed] + lines[edit.line :])


def _comment_starts_at(text: str, line: int, column: int) -> bool:
    """Whether Python's tokenizer sees a comment start at 1-based `line`, 0-based `column`."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start == (line, column):
                return True
            if token.start[0] > line:
                return False
    except (tokenize.TokenError, SyntaxError):
        return False
    return False
