"""Apply fixes: choose them, splice their edits, prove the result, write atomically.

A file is written only when the fixed text parses, a further round finds nothing
more to fix, and its encoding, BOM, line endings and trailing newline are what
they were. Fixes whose edits overlap an accepted fix wait for the next round
(the earlier one in the file wins); after MAX_ROUNDS the file is left alone.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from cudalint.config import Settings
from cudalint.discover import SourceFile
from cudalint.fileio import UnreadableFile, read_snapshot, replace_file, sweep_temporaries
from cudalint.findings import Edit, Finding, Safety
from cudalint.runner import RunResult, lint_file, lint_text
from cudalint.python.fixplan import DEFAULT_LINE_LENGTH
from cudalint.source import decode_python
from cudalint.versions import parse_version

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

MAX_ROUNDS = 8
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class FixOutcome:
    display: str
    original: str
    fixed: str
    applied: int
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.fixed != self.original

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.original.splitlines(True),
                self.fixed.splitlines(True),
                fromfile=f"a/{self.display}",
                tofile=f"b/{self.display}",
            )
        )


def applicable(findings: Iterable[Finding], unsafe: bool) -> List[Finding]:
    return [f for f in findings if f.fix is not None and (unsafe or f.fix.safety is Safety.SAFE)]


def _offsets(text: str) -> List[int]:
    starts = [0]
    starts.extend(match.end() for match in _LINE_BREAK.finditer(text))
    return starts


def _span(edit: Edit, starts: Sequence[int], size: int) -> Tuple[int, int]:
    def offset(line: int, column: int) -> int:
        if line > len(starts):
            return size
        return min(starts[line - 1] + column - 1, size)

    return offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)


def apply_fixes(text: str, findings: Sequence[Finding]) -> Tuple[str, int]:
    """Splice the edits of non-overlapping fixes; identical edits (a shared import) count once."""
    starts = _offsets(text)
    accepted: List[Tuple[int, int, str]] = []
    applied = 0
    ordered = sorted(findings, key=lambda f: (min(_span(e, starts, len(text)) for e in f.fix.edits), f.code))
    for finding in ordered:
        spans = [(*_span(edit, starts, len(text)), edit.content) for edit in finding.fix.edits]
        if any(_conflicts(span, other) for span in spans for other in accepted):
            continue
        accepted.extend(span for span in spans if span not in accepted)
        applied += 1
    # Insertions at one point: imports first, then definitions that may use them.
    accepted.sort(key=lambda s: (s[0], s[1], not s[2].startswith(("import ", "from ")), s[2]))
    pieces, cursor = [], 0
    for start, end, content in accepted:
        pieces.append(text[cursor:start])
        pieces.append(content)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), applied


def _conflicts(a: Tuple[int, int, str], b: Tuple[int, int, str]) -> bool:
    if a == b:
        return False
    (a_start, a_end, _), (b_start, b_end, _) = a, b
    if a_start == a_end or b_start == b_end:  # an insertion conflicts only strictly inside a replacement
        point, (lo, hi) = (a_start, (b_start, b_end)) if a_start == a_end else (b_start, (a_start, a_end))
        return lo < point < hi
    return a_start < b_end and b_start < a_end


def _parses(text: str) -> Optional[str]:
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True)
        cst.parse_module(text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError) as exc:
        return f"the fixed text does not parse ({exc})"
    return None


def project_style(root: Path, display: Optional[str] = None) -> Tuple[int, Optional[Tuple[int, ...]]]:
    """The line length the file's formatter keeps and the oldest torch release the project's
    manifests allow (None: no bound). The length comes from the configuration nearest the file
    (`ruff.toml`, `.ruff.toml`, or pyproject.toml's [tool.ruff] / [tool.black]), found the way ruff
    finds it, from the file's folder up to the project root and never above it; 88 by default."""
    length = DEFAULT_LINE_LENGTH
    for folder in _folders_up_to(str(root), display):
        found = _configured_length(folder)
        if found is not None:
            length = found[0] if found[0] is not None else DEFAULT_LINE_LENGTH
            break
    return length, _manifest_floor(str(root))


def _folders_up_to(root: str, display: Optional[str]) -> List[str]:
    root = os.path.normpath(os.path.abspath(root))
    folder = os.path.normpath(os.path.join(root, os.path.dirname(display))) if display else root
    if os.path.commonpath([root, folder]) != root:
        return [root]
    folders = [folder]
    while folder != root:
        folder = os.path.dirname(folder)
        folders.append(folder)
    return folders


@functools.lru_cache(maxsize=256)
def _configured_length(folder: str) -> Optional[Tuple[Optional[int]]]:
    """(line-length or None) when this folder holds a ruff or black configuration; None when it holds none."""
    for name, keys in (("ruff.toml", ()), (".ruff.toml", ()), ("pyproject.toml", ("tool", "ruff")), ("pyproject.toml", ("tool", "black"))):
        try:
            table = tomllib.loads((Path(folder) / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        for key in keys:
            table = table.get(key) if isinstance(table, dict) else None
        if not isinstance(table, dict):
            continue
        value = table.get("line-length")
        if isinstance(value, int) and not isinstance(value, bool) and 40 <= value <= 400:
            return (value,)
        return (None,)
    return None


@functools.lru_cache(maxsize=32)
def _manifest_floor(root: str) -> Optional[Tuple[int, ...]]:
    from cudalint import manifests
    from cudalint.runner import top_level_manifests

    floor = None
    for source in top_level_manifests(Path(root)):
        if source.kind == "python" and source.path.name != "setup.py":
            continue
        try:
            found = manifests.torch_version_from(manifests.dependencies(source.display, source.path.read_text(encoding="utf-8")))
            version = parse_version(found) if found else None
        except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
            continue
        if version is not None:
            floor = version if floor is None else min(floor, version)
    return floor


def fix_text(display: str, text: str, settings: Settings, torch_version: str, unsafe: bool) -> FixOutcome:
    length, floor = project_style(settings.root, display)
    device = settings.device._replace(line_length=length, floor=floor)
    settings = settings.replace(unsafe_fixes=unsafe, device=device)
    current, total = text, 0
    for _ in range(MAX_ROUNDS):
        fixable = applicable(lint_text(display, "python", current, settings, torch_version), unsafe)
        if not fixable:
            if current != text:
                pruned = drop_orphaned_imports(text, current)
                if pruned != current and _parses(pruned) is None:
                    current = pruned
            return FixOutcome(display, text, current, total)
        candidate, applied = apply_fixes(current, fixable)
        problem = _parses(candidate)
        if problem is not None:
            return FixOutcome(display, text, text, 0, problem)
        if applied == 0 or candidate == current:
            break
        current, total = candidate, total + applied
    return FixOutcome(display, text, text, 0, f"fixes did not settle after {MAX_ROUNDS} rounds; nothing written")


class _Uses(cst.CSTVisitor):
    """Names the code reads (not import aliases, attribute names or keyword-argument names)."""

    def __init__(self) -> None:
        self.names: set = set()
        self.skip: set = set()

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.skip.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.skip.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self.skip:
            self.names.add(node.value)


def _uses(module: cst.Module) -> set:
    visitor = _Uses()
    module.visit(visitor)
    return visitor.names


class _DropAliases(cst.CSTTransformer):
    def __init__(self, orphans: set) -> None:
        self.orphans = orphans

    def leave_ImportFrom(self, original, updated):
        if isinstance(updated.names, cst.ImportStar) or not (dotted_name(updated.module) or "").startswith("torch"):
            return updated
        kept = [alias for alias in updated.names if _bound(alias) not in self.orphans]
        if len(kept) == len(updated.names):
            return updated
        if not kept:
            return cst.RemoveFromParent()
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=kept)


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted_name(alias.name) or ""


def dotted_name(node) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


def drop_orphaned_imports(original: str, fixed: str) -> str:
    """`from torch.cuda.amp import GradScaler` whose every use a fix replaced: the name is no longer
    read, so the import goes (pyflakes would call it unused). Only names the original read and the
    fixed text no longer does, only from torch modules; anything else is left as it is."""
    try:
        before, after = cst.parse_module(original), cst.parse_module(fixed)
    except (cst.ParserSyntaxError, RecursionError):
        return fixed
    orphans = {name for name in _uses(before) - _uses(after) if f'"{name}"' not in fixed and f"'{name}'" not in fixed}
    if not orphans:  # a name still spelled in a string (`__all__`) is kept
        return fixed
    return after.visit(_DropAliases(orphans)).code


def _newline_signature(text: str) -> Tuple[bool, bool, bool]:
    return ("\r\n" in text, bool(re.search(r"(?<!\r)\n", text)), text.endswith(("\n", "\r")))


def fix_file(source: SourceFile, settings: Settings, torch_version: str, unsafe: bool, write: bool) -> Optional[FixOutcome]:
    """Fix one Python file; None when it cannot be read (the check already reported why)."""
    try:
        snapshot = read_snapshot(source.path, settings.max_file_bytes)
    except UnreadableFile:
        return None
    fixed = fix_bytes(source.display, snapshot.data, settings, torch_version, unsafe)
    if fixed is None:
        return None
    outcome, encoded = fixed
    if write and outcome.changed:
        try:
            sweep_temporaries(os.path.dirname(os.path.realpath(source.path)))
            replace_file(source.path, encoded, settings.root, expected=snapshot)
        except OSError as exc:  # outside the project, changed meanwhile, a full or read-only disk
            reason = str(exc) if not exc.strerror else f"cannot write: {exc.strerror}"
            return FixOutcome(source.display, outcome.original, outcome.original, 0, reason)
    return outcome


def fix_bytes(display: str, data: bytes, settings: Settings, torch_version: str, unsafe: bool) -> Optional[Tuple[FixOutcome, bytes]]:
    """Fix a Python file's bytes: the outcome and the bytes it leaves (lines the fixes left alone keep
    their bytes; the original bytes when nothing changed or the result is refused); None when the
    bytes do not decode."""
    decoded = decode_python(data)
    if decoded.text is None:
        return None
    outcome = fix_text(display, decoded.text, settings, torch_version, unsafe)
    if not outcome.changed:
        return outcome, data

    def refused(reason: str) -> Tuple[FixOutcome, bytes]:
        return FixOutcome(display, outcome.original, outcome.original, 0, reason), data

    if _newline_signature(outcome.fixed) != _newline_signature(outcome.original):
        return refused("line endings would change")
    try:
        encoded = encode_edited(data, outcome.original, outcome.fixed, decoded.encoding)
    except ValueError as exc:
        return refused(str(exc))
    return outcome, encoded


_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_TEXT_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def encode_edited(data: bytes, original: str, fixed: str, encoding: str) -> bytes:
    """The new bytes: every line the fixes left alone keeps its bytes exactly; only edited lines are
    encoded. ValueError when the result would not decode back to `fixed` (an encoding such as utf-7
    that spells the same text in more than one way), so such a file is refused rather than re-encoded."""
    bom = b"\xef\xbb\xbf" if encoding == "utf-8-sig" and data.startswith(b"\xef\xbb\xbf") else b""
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    old_bytes = _BYTE_LINE.findall(data[len(bom) :])
    old_text = _TEXT_LINE.findall(original[1:] if bom and original.startswith("\ufeff") else original)
    new_text = _TEXT_LINE.findall(fixed[1:] if bom and fixed.startswith("\ufeff") else fixed)
    if len(old_bytes) != len(old_text):
        raise ValueError(f"its encoding ({encoding}) does not keep lines apart byte for byte; not rewritten")
    pieces = [bom]
    matcher = difflib.SequenceMatcher(None, old_text, new_text, autojunk=False)
    try:
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                pieces.extend(old_bytes[i1:i2])
            else:
                pieces.extend(line.encode(codec) for line in new_text[j1:j2])
    except UnicodeEncodeError:
        raise ValueError(f"result is not encodable as {encoding}") from None
    result = b"".join(pieces)
    try:
        round_trip = result.decode(encoding)
    except UnicodeDecodeError:
        round_trip = None
    if round_trip != fixed:
        raise ValueError(f"its encoding ({encoding}) does not round-trip the edited lines; not rewritten")
    return result


def fix_all(result: RunResult, settings: Settings, *, unsafe: bool, write: bool, jobs: Optional[int] = None) -> List[FixOutcome]:
    """Fix every Python file of a run that has an applicable fix, in worker processes when there are many."""
    displays = sorted({f.path for f in applicable(result.findings, unsafe) if f.path.endswith((".py", ".pyi"))})
    sources = [SourceFile(Path(display), display, "python") for display in displays]
    arguments = (settings, result.lint_version, unsafe, write)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(sources) >= 8:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outcomes = list(pool.map(_fix_one, [(source, *arguments) for source in sources], chunksize=4))
    else:
        outcomes = [_fix_one((source, *arguments)) for source in sources]
    return [outcome for outcome in outcomes if outcome is not None]


def _fix_one(task) -> Optional[FixOutcome]:
    return fix_file(*task)


def refresh(result: RunResult, outcomes: Sequence[FixOutcome], settings: Settings) -> None:
    """After writing fixes, re-lint only the files that changed and count what was fixed."""
    changed = {outcome.display for outcome in outcomes if outcome.changed}
    if not changed:
        return
    kept = [finding for finding in result.findings if finding.path not in changed]
    for display in sorted(changed):
        kept.extend(lint_file(SourceFile(Path(display), display, "python"), settings, result.lint_version))
    result.findings = sorted(kept, key=lambda finding: finding.sort_key)
    result.fixed = sum(outcome.applied for outcome in outcomes if outcome.changed)
