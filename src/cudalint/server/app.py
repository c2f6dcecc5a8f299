"""The language server: the editor's buffers in, diagnostics and code actions out.

Each open document is linted by `runner.run_text` as the file it is on disk would be: the nearest
`pyproject.toml` with `[tool.cudalint]` gives its settings (else the workspace folder holding it is the
project root), so per-file-ignores and the target torch release are the command line's. Linting runs
in one worker thread, at once when it is free; a change that arrives while it is busy cancels the
document's lint still waiting (so a burst of keystrokes costs at most the lint in progress and one
more), and a result is published only if the document still has the version it was computed for:
stale work is dropped, never shown.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from cudalint import __version__
from cudalint.catalog import load_catalog
from cudalint.config import ConfigError, Settings, find_pyproject, resolve
from cudalint.discover import kind_of
from cudalint.findings import Safety
from cudalint.fixes import fix_text
from cudalint.runner import RunResult, run_text
from cudalint.server.actions import FIX_ALL, FIX_ALL_TITLE, fix_action, fix_all_action, noqa_action, wanted
from cudalint.server.lsp import Lines, diagnostic, diagnostic_for, finding_range, overlaps, rule_doc_links

log = logging.getLogger(__name__)


@dataclass
class Analysis:
    """One document version's findings and what produced them."""

    version: Optional[int]
    text: str
    display: str
    kind: str
    settings: Settings
    result: RunResult


class ProjectSettings:
    """Settings per configuration file, read again when the file changes on disk."""

    def __init__(self) -> None:
        self._cache: Dict[Tuple, Tuple[Settings, Optional[str]]] = {}

    def clear(self) -> None:
        self._cache.clear()

    def for_file(self, path: Optional[Path], folders: List[Path]) -> Tuple[Settings, Optional[str]]:
        """The settings for a document at `path` (None: not on disk) and the configuration error, if any."""
        config = find_pyproject(path) if path is not None else None
        root = config.parent if config else _folder_holding(path, folders)
        try:
            stamp = config.stat().st_mtime_ns if config else None
        except OSError:
            stamp = None
        key = (config, stamp, root)
        if key not in self._cache:
            catalog = load_catalog()
            error = None
            try:
                settings = resolve(catalog, config_path=config)
            except ConfigError as exc:
                settings, error = resolve(catalog, config_path=None), f"cudalint: {exc}; using the default settings"
            self._cache[key] = (settings.replace(root=root), error)
        return self._cache[key]


def _folder_holding(path: Optional[Path], folders: List[Path]) -> Path:
    """The innermost workspace folder holding `path`, else the file's own folder (else the working directory)."""
    if path is not None:
        holding = [folder for folder in folders if folder == path or folder in path.parents]
        if holding:
            return max(holding, key=lambda folder: len(folder.parts))
        return path.parent
    return folders[0] if folders else Path.cwd()


class CudalintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("cudalint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalint-lint")
        self.pending: Dict[str, asyncio.Task] = {}
        self.analyses: Dict[str, Analysis] = {}
        self.projects = ProjectSettings()
        self.links = rule_doc_links()
        self.config_errors_shown: set = set()

    # -- documents ----------------------------------------------------------------------------------

    def folders(self) -> List[Path]:
        found = []
        for folder in self.workspace.folders.values():
            path = to_fs_path(folder.uri)
            if path:
                found.append(Path(path).resolve())
        return found

    def describe(self, uri: str, language: Optional[str]) -> Optional[Tuple[str, str, Optional[Path]]]:
        """(display path, file kind, path on disk) for a document cudalint reads; None for any other."""
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if fs_path is None:
            return ("untitled.py", "python", None) if language == "python" else None
        path = Path(os.path.abspath(fs_path))
        kind = kind_of(path) or ("python" if language == "python" else None)
        if kind is None:
            return None
        return str(path), kind, path

    def schedule(self, uri: str) -> None:
        """Lint `uri` and publish the result, replacing any lint of it not yet started."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_and_publish(uri))

    async def _lint_and_publish(self, uri: str) -> None:
        try:
            analysis = await self.analyse(uri)
        except asyncio.CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - one document's failure must not stop the server
            log.exception("linting %s failed", uri)
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"cudalint: {uri}: {exc}"))
            return
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]
        if analysis is not None:
            self.publish(uri, analysis)

    async def analyse(self, uri: str) -> Optional[Analysis]:
        """Lint the document's current text in the worker; None when it is not a file cudalint reads, or when
        it changed (or closed) while the lint ran: that result is stale and a newer lint is on its way."""
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        described = self.describe(uri, document.language_id)
        if described is None:
            return None
        display, kind, path = described
        version, text = document.version, document.source
        settings, error = self.projects.for_file(path, self.folders())
        if error and error not in self.config_errors_shown:
            self.config_errors_shown.add(error)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=error))
        result = await asyncio.get_running_loop().run_in_executor(self.worker, run_text, display, text, settings)
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return None
        analysis = Analysis(version, text, display, kind, settings, result)
        self.analyses[uri] = analysis
        return analysis

    async def current(self, uri: str) -> Optional[Analysis]:
        """The analysis of the document's current version, linting it now if the last one is older."""
        document = self.workspace.text_documents.get(uri)
        analysis = self.analyses.get(uri)
        if document is not None and analysis is not None and analysis.version == document.version:
            return analysis
        return await self.analyse(uri)

    def publish(self, uri: str, analysis: Analysis) -> None:
        lines = Lines(analysis.text, self.workspace.position_codec)
        diagnostics = [diagnostic(finding, lines, uri, self.links) for finding in analysis.result.findings]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=analysis.version, diagnostics=diagnostics)
        )

    def forget(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.analyses.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_all(self) -> None:
        self.projects.clear()
        self.config_errors_shown.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)

    # -- code actions -------------------------------------------------------------------------------

    def versioned_edits(self) -> bool:
        capabilities = self.client_capabilities.workspace
        edit = capabilities.workspace_edit if capabilities else None
        return bool(edit and edit.document_changes)

    async def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        analysis = await self.current(uri)
        if analysis is None:
            return []
        lines = Lines(analysis.text, self.workspace.position_codec)
        only = params.context.only
        versioned = self.versioned_edits()
        fixes: List[types.CodeAction] = []
        silences: List[types.CodeAction] = []
        quick = wanted(types.CodeActionKind.QuickFix, only)
        for finding in analysis.result.findings if quick else ():
            if not overlaps(finding_range(finding, lines), params.range):
                continue
            shown = diagnostic_for(finding, params.context.diagnostics, lines) or diagnostic(finding, lines, uri, self.links)
            if finding.fix is not None and finding.fix.edits:
                fixes.append(fix_action(finding, shown, lines, uri, analysis.version, versioned))
            silence = noqa_action(finding, shown, analysis.text, analysis.kind, lines, uri, analysis.version, versioned)
            if silence is not None:
                silences.append(silence)
        actions = fixes + silences
        safe = any(f.fix is not None and f.fix.safety is Safety.SAFE for f in analysis.result.findings)
        if analysis.kind == "python" and safe and wanted(FIX_ALL, only):
            if only is None and self.resolves_edits():
                # the light bulb asks on every cursor move: the whole-file fix is computed only when chosen
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL,
                                                data={"uri": uri, "version": analysis.version}))
            else:
                action = await self.fix_all(uri, analysis)
                if action is not None:
                    actions.append(action)
        return actions

    def resolves_edits(self) -> bool:
        text_document = self.client_capabilities.text_document
        action = text_document.code_action if text_document else None
        support = action.resolve_support if action else None
        return bool(support and "edit" in support.properties)

    async def fix_all(self, uri: str, analysis: Analysis) -> Optional[types.CodeAction]:
        """Every safe fix of the document at once, as `cudalint check --fix` would write it."""
        outcome = await asyncio.get_running_loop().run_in_executor(
            self.worker, fix_text, analysis.display, analysis.text, analysis.settings, analysis.result.torch_version,
            False,
        )
        if not outcome.changed:
            return None
        lines = Lines(analysis.text, self.workspace.position_codec)
        return fix_all_action(outcome.fixed, outcome.applied, lines, uri, analysis.version, self.versioned_edits())

    async def resolve_action(self, action: types.CodeAction) -> types.CodeAction:
        """Fill in the edit of a fix-all action offered without one; an action for an older version of the
        document stays without an edit (the client then has nothing to apply)."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        analysis = await self.current(uri) if isinstance(uri, str) else None
        if analysis is None or analysis.version != data.get("version"):
            return action
        return await self.fix_all(uri, analysis) or action


def build_server() -> CudalintServer:
    server = CudalintServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CudalintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CudalintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: CudalintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        described = ls.describe(uri, None)
        if described is not None and (described[1] != "python" or Path(described[0]).name == "setup.py"):
            ls.relint_all()  # a configuration or manifest: settings and the target release may have changed
        else:
            ls.schedule(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: CudalintServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: CudalintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        return await ls.code_actions(params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: CudalintServer, action: types.CodeAction) -> types.CodeAction:
        return await ls.resolve_action(action)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: CudalintServer, params: None) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.worker.shutdown(wait=False, cancel_futures=True)

    return server
