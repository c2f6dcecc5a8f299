"""Findings and edits in the protocol's terms: 0-based lines, characters counted in the position encoding the
client and server agreed on (UTF-16 unless the client offers another), where cudalint counts code points."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalint.catalog import CatalogError, docs_dir
from cudalint.findings import Edit, Finding, Severity

SOURCE = "cudalint"
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line breaks CPython (and so cudalint) counts


def split_lines(text: str) -> List[str]:
    """The buffer's lines, without their line breaks, numbered as cudalint numbers them."""
    return _LINE_BREAK.split(text)


class Lines:
    """A buffer split into lines as cudalint numbers them, converting positions both ways."""

    def __init__(self, text: str, codec: PositionCodec):
        self.lines = split_lines(text)
        self.codec = codec

    def position(self, line: int, column: int) -> types.Position:
        """cudalint's 1-based line and code-point column -> an LSP position (clamped into the buffer)."""
        index = min(max(line - 1, 0), len(self.lines) - 1)
        text = self.lines[index]
        return types.Position(line=index, character=self.codec.client_num_units(text[: max(column - 1, 0)]))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        start = self.position(line, column)
        end = self.position(end_line, end_column)
        return types.Range(start=start, end=max(start, end, key=lambda p: (p.line, p.character)))

    def end(self) -> types.Position:
        return types.Position(line=len(self.lines) - 1, character=self.codec.client_num_units(self.lines[-1]))

    def location(self, position: types.Position) -> Tuple[int, int]:
        """An LSP position -> cudalint's 1-based (line, code-point column)."""
        copy = types.Position(line=position.line, character=position.character)  # the codec may clamp its argument
        server = self.codec.position_from_client_units(self.lines, copy)
        return server.line + 1, server.character + 1


def rule_doc_links() -> Dict[str, str]:
    """Rule code -> the file URI of its Markdown doc (docs/rules/, generated from the catalog)."""
    try:
        folder = docs_dir()
    except CatalogError:
        return {}
    return {path.stem: path.resolve().as_uri() for path in sorted(Path(folder).glob("CDL*.md"))}


def finding_range(finding: Finding, lines: Lines) -> types.Range:
    return lines.range(finding.line, finding.column, finding.end_line, finding.end_column)


def text_edit(edit: Edit, lines: Lines) -> types.TextEdit:
    return types.TextEdit(range=lines.range(edit.line, edit.column, edit.end_line, edit.end_column), new_text=edit.content)


def diagnostic(finding: Finding, lines: Lines, uri: str, links: Dict[str, str]) -> types.Diagnostic:
    """One diagnostic: severity, code and a link to the rule's doc; as related locations, the places the
    finding names (the device argument a value reaches) and those its fix also edits (an import, a device
    defined once after the imports)."""
    where = finding_range(finding, lines)
    related = [
        types.DiagnosticRelatedInformation(location=_place(place, lines, uri), message=place.message)
        for place in getattr(finding, "related", ())  # the engine's own related places, where it gives them
    ]
    if finding.fix is not None:
        for edit in finding.fix.edits:
            edited = lines.range(edit.line, edit.column, edit.end_line, edit.end_column)
            if not overlaps(edited, where):
                related.append(
                    types.DiagnosticRelatedInformation(
                        location=types.Location(uri=uri, range=edited),
                        message=f"the {finding.fix.safety.value} fix also {_describe(edit)}",
                    )
                )
    link = links.get(finding.code)
    return types.Diagnostic(
        range=where,
        message=finding.message,
        severity=SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=link) if link else None,
        source=SOURCE,
        related_information=related or None,
    )


def _place(place, lines: Lines, uri: str) -> types.Location:
    """A related place: in this document (columns converted from its text), or in another file of the project
    (`place.path`, whose text the server does not hold: columns passed as code points)."""
    path = getattr(place, "path", "")
    if not path:
        return types.Location(uri=uri, range=lines.range(place.line, place.column, place.end_line, place.end_column))
    start = types.Position(line=max(place.line - 1, 0), character=max(place.column - 1, 0))
    end = types.Position(line=max(place.end_line - 1, 0), character=max(place.end_column - 1, 0))
    return types.Location(uri=Path(os.path.abspath(path)).as_uri(), range=types.Range(start=start, end=end))


def _describe(edit: Edit) -> str:
    content = edit.content.strip().splitlines()[0] if edit.content.strip() else ""
    if len(content) > 60:
        content = content[:57] + "..."
    if (edit.line, edit.column) == (edit.end_line, edit.end_column):
        return f"inserts `{content}` here"
    return f"replaces this with `{content}`" if content else "deletes this"


def _key(position: types.Position) -> Tuple[int, int]:
    return position.line, position.character


def overlaps(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position (touching counts: a cursor at a diagnostic's edge selects it)."""
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def same_range(a: types.Range, b: types.Range) -> bool:
    return _key(a.start) == _key(b.start) and _key(a.end) == _key(b.end)


def diagnostic_for(finding: Finding, candidates: List[types.Diagnostic], lines: Lines) -> Optional[types.Diagnostic]:
    """The client's copy of a finding's diagnostic, when the request named it."""
    where = finding_range(finding, lines)
    for candidate in candidates:
        if candidate.code == finding.code and same_range(candidate.range, where):
            return candidate
    return None
