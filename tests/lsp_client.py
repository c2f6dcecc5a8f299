"""A real LSP client (pygls's) driving `python -m cudalint server` over stdio, for the tests and bench/."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SRC = Path(__file__).resolve().parents[1] / "src"
WAIT_S = 120  # a bound on a hung server, not a timing assertion


class Editor:
    """An editor with one workspace folder: opens, edits and saves documents, applies the server's edits,
    and keeps every notification the server sent."""

    def __init__(self, root: Path, encodings=(types.PositionEncodingKind.Utf16,), resolve: bool = False):
        self.root = root
        self.encodings = list(encodings)
        self.resolve = resolve  # resolve a code action's edit when it is chosen, as VS Code and Neovim do
        self.client = LanguageClient("cudalint-tests", "1")
        self.published: List[types.PublishDiagnosticsParams] = []
        self.messages: List[types.ShowMessageParams] = []
        self.texts: Dict[str, str] = {}
        self.versions: Dict[str, int] = {}
        self._arrived = asyncio.Event()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.append(params)
            self._arrived.set()

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params)

    async def start(self) -> types.InitializeResult:
        env = dict(os.environ, PYTHONPATH=str(SRC))
        await self.client.start_io(sys.executable, "-m", "cudalint", "server", cwd=str(self.root), env=env)
        capabilities = types.ClientCapabilities(
            general=types.GeneralClientCapabilities(position_encodings=self.encodings),
            workspace=types.WorkspaceClientCapabilities(
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
            ),
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                    related_information=True, version_support=True, code_description_support=True
                ),
                code_action=types.CodeActionClientCapabilities(
                    is_preferred_support=True,
                    data_support=self.resolve,
                    resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if self.resolve else None,
                ),
            ),
        )
        result = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(
                    process_id=os.getpid(),
                    root_uri=self.root.as_uri(),
                    capabilities=capabilities,
                    workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
                )
            ),
            WAIT_S,
        )
        self.client.initialized(types.InitializedParams())
        return result

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), WAIT_S)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), WAIT_S)

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    def open(self, relative: str, text: Optional[str] = None, language: str = "python") -> str:
        uri = self.uri(relative)
        text = (self.root / relative).read_text() if text is None else text
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
            )
        )
        return uri

    def change(self, uri: str, text: str) -> int:
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def diagnostics(self, uri: str, version: Optional[int] = None, after: int = 0) -> List[types.Diagnostic]:
        """The first diagnostics the server publishes for `uri` at `version` (default: its current one), among
        the notifications from position `after` on (`len(editor.published)` before an action: the next ones)."""
        version = self.versions.get(uri) if version is None else version

        async def wait() -> List[types.Diagnostic]:
            seen = after
            while True:
                for params in self.published[seen:]:
                    if params.uri == uri and params.version == version:
                        return params.diagnostics
                seen = len(self.published)
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(wait(), WAIT_S)

    async def cleared(self, uri: str) -> None:
        """Wait until the server publishes an empty, unversioned list for `uri` (what it sends on close)."""

        async def wait() -> None:
            seen = 0
            while True:
                if any(p.uri == uri and p.version is None and not p.diagnostics for p in self.published[seen:]):
                    return
                seen = len(self.published)
                self._arrived.clear()
                await self._arrived.wait()

        await asyncio.wait_for(wait(), WAIT_S)

    async def code_actions(self, uri: str, where: types.Range, diagnostics=(), only=None) -> List[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=where,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
        return await asyncio.wait_for(self.client.text_document_code_action_async(params), WAIT_S) or []

    async def resolve_action(self, action: types.CodeAction) -> types.CodeAction:
        return await asyncio.wait_for(self.client.code_action_resolve_async(action), WAIT_S)

    def apply(self, edit: types.WorkspaceEdit) -> Optional[str]:
        """Apply a workspace edit to our copy of the document and send the change, as an editor does; None
        (nothing applied) when the edit was made for another version of the document."""
        (change,) = edit.document_changes
        uri = change.text_document.uri
        if change.text_document.version != self.versions[uri]:
            return None
        text = apply_edits(self.texts[uri], change.edits, self.encodings[0])
        self.change(uri, text)
        return text


def apply_edits(text: str, edits, encoding=types.PositionEncodingKind.Utf16) -> str:
    """Splice LSP text edits (non-overlapping; positions in `encoding` units) into `text`."""
    lines = text.splitlines(True)

    def offset(position: types.Position) -> int:
        start = sum(len(line) for line in lines[: position.line])
        if position.line >= len(lines):
            return len(text)
        line, units, index = lines[position.line], 0, 0
        while index < len(line) and units < position.character:
            units += _units(line[index], encoding)
            index += 1
        return start + index

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def _units(char: str, encoding) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(char.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return 1
    return 2 if ord(char) > 0xFFFF else 1
