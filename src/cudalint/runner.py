"""The one entry point every front end calls: settings + paths -> findings."""

from __future__ import annotations

import _thread
import faulthandler
import fnmatch
import functools
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from cudalint import manifests
from cudalint.catalog import Catalog, load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile, discover, kind_of
from cudalint.fileio import UnreadableFile, read_regular, read_regular_text
from cudalint.findings import Finding, Severity
from cudalint.python.analyze import (
    PART_BYTES,
    PASSES,
    SETTLED,
    Pregates,
    check_python,
    checks_for,
    gate,
    package_root,
    unreadable,
)
from cudalint.source import decode_python, decode_text
from cudalint.versions import parse_version, plain_version

# Work for the libcst engine below both of these takes one worker process: more would cost more than they save.
PARALLEL_THRESHOLD = 16  # files
PARALLEL_BYTES = 1024 * 1024
# A run of fewer files and bytes than this is gated in this process: CPython's parse and the gates
# (linear in a file's size, which the size limit bounds) settle files without a worker until one
# needs libcst; the worker pool starts only then, with that file and the rest. A larger run sends
# every file to the pool, which does each whole file once.
GATE_HERE_FILES = 64
GATE_HERE_BYTES = 2 * 1024 * 1024
NEWEST_KNOWN_TORCH = "2.15"


class RunResult:
    """What one run found (a plain class: see findings.py on start-up cost)."""

    def __init__(
        self,
        findings: list[Finding] | None = None,
        files: int = 0,
        torch_version: str = NEWEST_KNOWN_TORCH,
        torch_version_source: str = "newest release cudalint knows",
        fixed: int = 0,
        notes: list[str] | None = None,  # said once: project-level advice (the suggested torch lower bound), why the cache was not used
        lint_version: str = NEWEST_KNOWN_TORCH,  # what files were linted for: the target and the oldest allowed release
        targets: dict[str, str] | None = None,  # subtree -> its own target, where it differs
        checked: list[str] | None = None,  # the display path of every file linted
        texts: dict[str, str] | None = None,  # the text of files linted from memory (stdin, an editor)
    ):
        self.findings: list[Finding] = [] if findings is None else findings
        self.files = files
        self.torch_version = torch_version
        self.torch_version_source = torch_version_source
        self.fixed = fixed
        self.notes: list[str] = [] if notes is None else notes
        self.lint_version = lint_version
        self.targets: dict[str, str] = {} if targets is None else targets
        self.checked: list[str] = [] if checked is None else checked
        self.texts: dict[str, str] = {} if texts is None else texts


def top_level_manifests(root: Path) -> list[SourceFile]:
    """The manifests at the top of the project (requirements*.txt, pyproject.toml, setup.py, ...)."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    found = []
    for path in entries:
        kind = manifests.manifest_kind(str(path)) if path.is_file() else None
        if kind is not None:
            found.append(SourceFile(path, os.path.relpath(path), kind))
    return found


def torch_requirement(settings: Settings, files: Sequence[SourceFile]) -> manifests.Dependency | None:
    """The project's torch requirement: in the manifests linted, nearest the top of what is linted first, then
    at the top of the project (so a pre-commit run on one changed file still sees it). A manifest below the
    top, in a folder that holds Python code linted in this run (a subproject, an example, a vendored package:
    `pkg/sub/environment.yml` beside `pkg/sub/dMC/*.py`), sets the target of that folder only
    (subtree_targets), not of the run; one in a folder of manifests (`requirements/base.txt`, a wheel's
    `NAME.dist-info/METADATA`) speaks for it."""
    folders = [source.path.resolve().parent for source in files]
    try:
        top = Path(os.path.commonpath(folders)) if folders else None
    except ValueError:  # (paths on different drives)
        top = None
    code = {above for source, folder in zip(files, folders) if source.kind == "python" for above in (folder, *folder.parents)}
    linted = []
    for source, folder in zip(files, folders):
        if source.kind == "python" and source.path.name != "setup.py":
            continue
        if folder != top and folder in code:
            continue
        linted.append((len(folder.parts), source))
    for source in [*(source for _, source in sorted(linted, key=lambda pair: pair[0])), *top_level_manifests(settings.root)]:
        try:
            text = read_regular_text(source.path, settings.max_file_bytes)
            found = manifests.torch_requirement(manifests.dependencies(source.display, text))
        except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
            continue
        if found is not None:
            return found
    return None


def target_torch(settings: Settings, files: Sequence[SourceFile]) -> tuple[str, str]:
    """--torch-version, else the newest covered release the project's torch requirement allows (what a
    user installing today gets; the text also carries the oldest allowed release, see
    versions.with_floor), else the newest known release."""
    if settings.torch_version:
        return settings.torch_version, "configured"
    dep = torch_requirement(settings, files)
    if dep is not None:
        from cudalint.coverage.target import project_target

        return project_target(dep)
    return NEWEST_KNOWN_TORCH, "newest release cudalint knows"


def run_text(display: str, text: str, settings: Settings) -> RunResult:
    """Lint a buffer (standard input, an editor's unsaved text) as the file `display` would be linted on disk:
    its kind from its name, the settings of its project, the project's target release (a manifest buffer's
    own torch pin first, as a manifest named on the command line would be)."""
    kind = kind_of(Path(display)) or "python"
    if settings.project is None and kind == "python":
        settings = settings.replace(project=project_index(settings, cache=True))
    torch_version, origin = target_torch(settings, [])
    if not settings.torch_version and (kind != "python" or Path(display).name == "setup.py"):
        try:
            own = manifests.torch_version_from(manifests.dependencies(display, text))
        except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
            own = None
        if own:
            torch_version, origin = own, f"from {display}"
    try:
        findings = lint_text(display, kind, text, settings, torch_version)
    except Exception as exc:  # noqa: BLE001 - a bug in one check must not take the front end down
        findings = [unreadable(display, f"internal error while checking: {type(exc).__name__}: {exc}")]
    return RunResult(
        findings=sorted(findings, key=lambda f: f.sort_key),
        files=1,
        torch_version=plain_version(torch_version),
        torch_version_source=origin,
        lint_version=torch_version,
        texts={display: text},
    )


def lint_text(
    display: str,
    kind: str,
    text: str,
    settings: Settings,
    torch_version: str,
    catalog: Catalog | None = None,
    *,
    noqa: bool = True,
    python_check: Callable[..., list[Finding]] | None = None,
) -> list[Finding]:
    """Lint text already in memory (used by the flake8 plugin and tests).

    `noqa=False` keeps findings on `# noqa` lines, for a front end that applies noqa itself.
    `python_check` replaces check_python (the runner's gate-only check for files linted here).
    """
    catalog = catalog or load_catalog()
    if kind == "notebook":
        return _lint_notebook(display, text, settings, torch_version, catalog, noqa, python_check)
    findings: list[Finding] = []
    if kind == "python":
        checks = checks_for(settings.select, tuple(catalog))
        findings.extend(
            (python_check or check_python)(
                display, text, checks, parse_version(torch_version), settings.device, settings.unsafe_fixes, settings.project
            )
        )
    if kind != "python" or Path(display).name == "setup.py":
        found = manifests.check_manifest(display, text, torch_version=plain_version(torch_version), kind=None if kind == "python" else kind)
        if any(finding.code == "CDL000" for finding in findings):  # setup.py: one CDL000 for a file that does not parse
            found = [finding for finding in found if finding.code != "CDL000"]
        findings.extend(found)
    return _filter(findings, text, display, settings, noqa, kind, catalog)


def _lint_notebook(display: str, text: str, settings: Settings, torch_version: str, catalog: Catalog, noqa: bool,
                   python_check: Callable[..., list[Finding]] | None) -> list[Finding]:
    """A Jupyter notebook: its code cells checked as one script (notebooks.py), the findings placed in the
    file; a file that is no notebook is reported as unreadable."""
    from cudalint.notebooks import NotANotebook, read_notebook
    from cudalint.python.analyze import unreadable

    notebook = read_notebook(text)
    if isinstance(notebook, NotANotebook):
        return [unreadable(display, f"{notebook}; the file was not checked", notebook.line, notebook.column)]
    found = lint_text(display, "python", notebook.script, settings, torch_version, catalog, noqa=noqa, python_check=python_check)
    return notebook.locate(found, display)


# A notebook keeps its cells' outputs (plots, tables, logs) beside its code: it is read to four times the
# size limit of other files.
NOTEBOOK_SIZE_FACTOR = 4


def read_limit(source: SourceFile, settings: Settings) -> int:
    return settings.max_file_bytes * (NOTEBOOK_SIZE_FACTOR if source.kind == "notebook" else 1)


def lint_file(source: SourceFile, settings: Settings, torch_version: str) -> list[Finding]:
    return lint_source(source, settings, torch_version)[1]


def lint_source(
    source: SourceFile, settings: Settings, torch_version: str, passed: "Passed" | None = None
) -> tuple[str | None, list[Finding]]:
    """Read the file once and lint exactly those bytes: (their content digest, the findings).
    The digest is None when nothing was read. `passed`: (digest, outline) of bytes an earlier parse
    found to pass both gates; for those bytes the gates are not run again."""
    from cudalint.cache import content_digest

    try:
        data = read_regular(source.path, read_limit(source, settings))
    except UnreadableFile as exc:
        return None, [unreadable(source.display, f"cannot read: {exc}")]
    digest = content_digest(data)
    check = functools.partial(check_python, passed=passed[1]) if passed is not None and passed[0] == digest else None
    return digest, lint_bytes(source, data, settings, torch_version, check)


def lint_bytes(
    source: SourceFile, data: bytes, settings: Settings, torch_version: str, python_check: Callable[..., list[Finding]] | None = None
) -> list[Finding]:
    decoded = decode_python(data) if source.kind == "python" else decode_text(data)
    if decoded.text is None:
        return [unreadable(source.display, f"{decoded.error}; the file was not checked", decoded.error_line, decoded.error_column)]
    try:
        return lint_text(source.display, source.kind, decoded.text, settings, torch_version, python_check=python_check)
    except NeedsEngine:
        raise
    except Exception as exc:  # noqa: BLE001 - one file's bug must not end the run
        return [unreadable(source.display, f"internal error while checking: {type(exc).__name__}: {exc}")]


class NeedsEngine(Exception):
    """A file linted in this process passed both gates: only a worker process may parse it with libcst."""


def _gate_only(path: str, text: str, checks, torch_version, device, unsafe_fixes, project) -> list[Finding]:
    """check_python up to libcst: the gates' findings, or NeedsEngine."""
    if len(text) > PART_BYTES:
        raise NeedsEngine(path)
    settled = gate(path, text, checks, torch_version, project)
    if not isinstance(settled, list):
        raise NeedsEngine(path)
    return settled


def lint_here(source: SourceFile, settings: Settings, torch_version: str) -> Outcome | None:
    """Lint a file in this process if the gates settle it (no libcst, no worker); None if it needs the engine."""
    from cudalint.cache import content_digest

    try:
        data = read_regular(source.path, read_limit(source, settings))
    except UnreadableFile as exc:
        return None, [unreadable(source.display, f"cannot read: {exc}")]
    try:
        return content_digest(data), lint_bytes(source, data, settings, torch_version, _gate_only)
    except NeedsEngine:
        return None


def _filter(findings: list[Finding], text: str, display: str, settings: Settings, use_noqa: bool = True,
            kind: str = "python", catalog: Catalog | None = None) -> list[Finding]:
    """Selection, per-file-ignores (patterns relative to the project root), `# noqa`, and fixes left out
    by `unfixable`."""
    ignored = set()
    names = _pattern_subjects(display, settings.root) if settings.per_file_ignores else ()
    for pattern, codes in settings.per_file_ignores:
        if any(fnmatch.fnmatchcase(name, pattern) for name in names):
            ignored |= codes
    enabled = frozenset(settings.select - ignored)
    kept = [finding for finding in findings if finding.code in enabled]
    if use_noqa and re.search("noqa", text, re.IGNORECASE):  # no directive without the word: noqa.py not loaded
        from cudalint.noqa import apply as apply_noqa

        kept = apply_noqa(kept, text, kind, display, enabled=enabled, catalog=catalog)
    if settings.unfixable:
        kept = [f._replace(fix=None) if f.fix is not None and f.code in settings.unfixable else f for f in kept]
    return kept


def _pattern_subjects(display: str, root: Path) -> tuple[str, ...]:
    """What a per-file-ignores pattern is matched against: the path as shown, the path relative to the project
    root (the folder of the configuration), and the file name."""
    subjects = [display, Path(display).name]
    try:
        subjects.append(Path(os.path.abspath(display)).relative_to(root.resolve()).as_posix())
    except ValueError:
        pass
    return tuple(subjects)


Outcome = tuple[str | None, list[Finding]]  # (digest of the bytes linted, findings)
Passed = tuple[str, list]  # (digest of bytes that pass both gates, the outline of their CPython tree)
TIMEOUT_MARK = "Timeout ("  # how faulthandler's watchdog starts what it writes when it fires


# The run's settings, project index included, as the workers inherit them when they are forked: a batch
# then carries None instead of a pickled copy (megabytes for a large project, unpickled again by the
# worker for every batch). Set only for the time of a pool, and only where workers are forked; pools
# of runs on several threads of one process take turns (_pool_turn), so none forks with another's.
_forked_settings: Settings | None = None
_pool_turn = _thread.allocate_lock()


def _sent_settings(settings: Settings) -> Settings | None:
    """What a batch carries for its settings: None where the workers are forked, after leaving the
    settings in _forked_settings for them to inherit; the settings themselves elsewhere."""
    import multiprocessing

    global _forked_settings
    if multiprocessing.get_start_method() != "fork":
        return settings  # spawn (macOS, Windows) or forkserver: a worker starts afresh and needs a copy
    _forked_settings = settings
    return None


def _lint_many(batch: "Batch", settings: Settings | None, journals: str, passed: dict[int, Passed] | None = None) -> list[Outcome]:
    """One worker's share, each file under the per-file time limit. The worker notes in its own journal
    which file it starts; when a file runs past the limit, faulthandler's watchdog (a C thread: it fires
    even while a parser holds the GIL) adds its timeout dump to that journal and ends the process, and
    the runner reads from the journal which file it was."""
    if settings is None:
        settings = _forked_settings
    outcomes = []
    with open(os.path.join(journals, str(os.getpid())), "a", encoding="utf-8") as journal:
        try:
            for index, source, torch_version in batch:
                journal.write(f"{index}\n")
                journal.flush()
                faulthandler.dump_traceback_later(settings.file_timeout, exit=True, file=journal)
                outcomes.append(lint_source(source, settings, torch_version, (passed or {}).get(index)))
        finally:
            faulthandler.cancel_dump_traceback_later()
    return outcomes


def timed_out(journals: str) -> set:
    """The files (run positions) during which a worker's watchdog fired."""
    found = set()
    for name in os.listdir(journals):
        try:
            text = read_regular_text(os.path.join(journals, name), encoding="latin-1")
        except UnreadableFile:
            continue
        for before in text.split(TIMEOUT_MARK)[:-1]:
            started = before.split()
            if started and started[-1].isdigit():
                found.add(int(started[-1]))
    return found


Progress = Callable[[int, int], None]  # (files done, files in the run)
Batch = list[tuple[int, SourceFile, str]]  # (position in the run, file, the release it is linted for)


# Allocations between two young-generation collections during a run (CPython's default is 700): a
# linted file's objects are short-lived and acyclic, a run's long-lived ones are frozen.
RUN_GC_THRESHOLD = 20000


def _collector_for_a_run(function):
    """During a run, the cyclic garbage collector leaves alone what lives to the run's end (the modules,
    the catalog; the project index and engine once built, frozen again before the workers fork, which
    inherit this) and runs less often; both are put back after."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import gc

        threshold = gc.get_threshold()
        gc.freeze()
        gc.set_threshold(max(threshold[0], RUN_GC_THRESHOLD), *threshold[1:])
        try:
            return function(*args, **kwargs)
        finally:
            gc.set_threshold(*threshold)
            gc.unfreeze()

    return wrapper


@_collector_for_a_run
def run(
    paths: Sequence[str],
    settings: Settings,
    jobs: int | None = None,
    *,
    cache: bool = False,
    progress: Progress | None = None,
) -> RunResult:
    """Lint the files under `paths`. `cache=True` reads and writes `.cudalint_cache/` under settings.root;
    `progress` is told how many files are done after each step."""
    files = list(discover(paths, settings.exclude, settings.root, include_docs=settings.include_docs))
    torch_version, origin = target_torch(settings, files)
    result = RunResult(files=len(files), torch_version=plain_version(torch_version), torch_version_source=origin,
                       lint_version=torch_version,
                       checked=[source.display for source in files])
    report = progress or (lambda done, total: None)
    per_file: dict[int, list[Finding]] = {}
    versions = subtree_targets(settings, files, torch_version, result)
    pregates = None
    if settings.project is None and any(source.kind == "python" for source in files):
        pregates = _pregates(settings, files, versions, cache)
        held: dict[str, tuple[bytes, object]] = {}
        if not _settled_without_index(files, settings, pregates, held):
            settings = settings.replace(project=project_index(settings, cache, _held_parse(held, pregates.parse)))
        held.clear()  # files outside the project root: the index never asked for them
    # A run without an index has only files the gates settled: a cheap parse, no result cache to consult.
    stores = {version: _open_cache(settings, version) for version in set(versions)} if cache and settings.project is not None else {}
    refusals = {store.refused for store in stores.values() if store.refused}
    result.notes.extend(sorted(refusals))
    todo: Batch = []
    for index, source in enumerate(files):
        store = stores.get(versions[index])
        # Python files only: they are the costly part, and a manifest's findings can depend on other
        # files (a requirements file's -r/-c includes) that its own content hash would not cover.
        if store is not None and source.kind == "python":
            from cudalint.cache import content_digest

            try:
                hit = store.get(source.display, source.kind, content_digest(read_regular(source.path, settings.max_file_bytes)))
            except UnreadableFile:
                hit = None  # the worker reports it
            if hit is not None:
                per_file[index] = hit
                continue
        todo.append((index, source, versions[index]))
    done = len(per_file)
    if done:
        report(done, len(files))

    def finished(index: int, outcome: Outcome, cacheable: bool = True) -> None:
        nonlocal done
        digest, findings = outcome
        per_file[index] = findings
        done += 1
        source = files[index]
        store = stores.get(versions[index])
        if store is not None and cacheable and digest is not None and source.kind == "python":
            store.put(source.display, source.kind, digest, findings)  # under the digest of the bytes linted

    if any(source.kind == "python" for _, source, _ in todo) and (pregates is None or pregates.prepare is not None):
        prepare_gates(settings, {version for _, source, version in todo if source.kind == "python"}, cache)
    passed: dict[int, Passed] = {}
    if pregates is not None:
        todo = _lint_pregated_here(todo, settings, pregates, passed, finished, lambda: report(done, len(files)))
    if len(todo) < GATE_HERE_FILES and _bytes(todo) < GATE_HERE_BYTES:
        todo = _lint_settled_here([item for item in todo if item[0] not in passed], settings, finished,
                                  lambda: report(done, len(files))) + [item for item in todo if item[0] in passed]
        todo.sort(key=lambda item: item[0])
    if todo:
        large = len(todo) >= PARALLEL_THRESHOLD or _bytes(todo) >= PARALLEL_BYTES
        workers = min(len(todo), jobs or os.cpu_count() or 1) if large else 1
        for version in sorted({version for _, _, version in todo}):
            _warm_up(settings, version)
        import gc

        gc.freeze()  # the project index and the warmed-up engine, too (see _collector_for_a_run)
        _lint_parallel(todo, settings, workers, finished, lambda: report(done, len(files)), passed)
    for index in sorted(per_file):
        result.findings.extend(per_file[index])
    if result.findings and not settings.torch_version:  # notes are about findings: none without them
        from cudalint.coverage.target import project_notes

        dep = torch_requirement(settings, files)
        result.findings, notes = project_notes(result.findings, dep, _reports_at(dep, files, settings))
        result.notes.extend(notes)
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def _reports_at(dep, files: Sequence[SourceFile], settings: Settings) -> bool:
    """Whether a finding may stand at the torch requirement: its file is one this run checks (a run on
    one changed Python file reports at the calls instead), and no `# noqa: CDL609` there silences it."""
    if dep is None:
        return False
    source = next((source for source in files if source.display == dep.path), None)
    if source is None:
        return False
    from cudalint.noqa import noqa_lines, silenced

    try:
        text = read_regular_text(source.path, settings.max_file_bytes)
        return not silenced("CDL609", noqa_lines(text, source.kind).get(dep.line))
    except Exception:  # noqa: BLE001 - unreadable now: it was reported when it was checked
        return False


def _bytes(batch: Batch) -> int:
    total = 0
    for _, source, _ in batch:
        try:
            total += os.stat(source.path).st_size
        except OSError:
            pass
    return total


def _pregates(settings: Settings, files: Sequence[SourceFile], versions: Sequence[str], cache: bool):
    """The gates, run on the project index's parse of each Python file to lint (one parse per file)."""
    from cudalint.project.paths import project_key

    root = os.path.abspath(str(settings.root))
    checks = checks_for(settings.select, tuple(load_catalog()))
    releases = {
        project_key(str(source.path), root): parse_version(version)
        for source, version in zip(files, versions) if source.kind == "python"
    }
    return Pregates(checks, releases, lambda: prepare_gates(settings, set(versions), cache))


def _settled_without_index(files: Sequence[SourceFile], settings: Settings, pregates, held: dict[str, tuple[bytes, object]]) -> bool:
    """Whether a small run needs no project index: every Python file to lint is settled by the gates
    whatever the project holds (no selected check can fire in it, and it has no import, attribute or
    keyword where a word of the project could count). The files are gated here, on their one CPython
    parse, up to the first that may need the index; the trees parsed are kept in `held` (path ->
    (bytes, tree)) for the index to read, so no file is parsed twice."""
    from cudalint.project.paths import project_key

    python = [source for source in files if source.kind == "python"]
    if len(python) >= GATE_HERE_FILES or _bytes([(0, source, "") for source in python]) >= GATE_HERE_BYTES:
        return False
    root = os.path.abspath(str(settings.root))
    for source in python:
        key = project_key(str(source.path), root)
        try:
            data = read_regular(source.path, settings.max_file_bytes)
        except UnreadableFile:
            continue  # its CDL000 says so, whatever the project holds
        held[key] = (data, pregates.parse(key, data))
        found = pregates.found.get(key)
        if found is None or found.mentions or found.seen:
            return False
    return True


def _held_parse(held: dict[str, tuple[bytes, object]], parse):
    """`parse` for the project index, answering from `held` for the bytes parsed before."""

    def parse_once(key: str, data: bytes):
        before = held.pop(key, None)
        if before is not None and before[0] == data:
            return before[1]
        return parse(key, data)

    return parse_once


def _lint_pregated_here(todo: Batch, settings: Settings, pregates, passed: dict[int, "Passed"],
                        finished: Callable[..., None], tick: Callable[[], None]) -> Batch:
    """Lint here every file the gates settled on the index's tree, and note in `passed` the outline of
    each that passed them (its worker then parses it with libcst only). A file whose bytes are not the
    ones the index parsed, or that the gates must read again, is left as it is."""
    from cudalint.project.paths import project_key

    root = os.path.abspath(str(settings.root))
    words = settings.project.gate_words if settings.project is not None else frozenset()
    rest: Batch = []
    for item in todo:
        index, source, version = item
        found = pregates.found.get(project_key(str(source.path), root)) if source.kind == "python" else None
        verdict = found.verdict(words, package_root(source.display, settings.project)) if found is not None else None
        if verdict != SETTLED:
            if verdict == PASSES:
                passed[index] = (found.digest, found.statements)
            rest.append(item)
        else:
            outcome = _lint_settled(source, settings, version, found.digest)
            if outcome is None:
                rest.append(item)
            else:
                finished(index, outcome)
                tick()
    return rest


def _lint_settled(source: SourceFile, settings: Settings, torch_version: str, digest: str) -> Outcome | None:
    """Lint a file the gates settled before, if its bytes are still those (None if they are not)."""
    from cudalint.cache import content_digest

    try:
        data = read_regular(source.path, settings.max_file_bytes)
    except UnreadableFile:
        return None
    if content_digest(data) != digest:
        return None
    return digest, lint_bytes(source, data, settings, torch_version, _settled)


def _settled(path: str, text: str, *args) -> list[Finding]:
    return []


def _lint_settled_here(todo: Batch, settings: Settings, finished: Callable[..., None], tick: Callable[[], None]) -> Batch:
    """Lint here the files the gates settle, up to the first that needs the engine; that file and
    the rest are left for the worker pool (each file is then parsed by CPython once more at most)."""
    for position, (index, source, version) in enumerate(todo):
        outcome = lint_here(source, settings, version)
        if outcome is None:
            return todo[position:]
        finished(index, outcome)
        tick()
    return []


def prepare_gates(settings: Settings, versions, cache: bool) -> None:
    """The gates' words for each release from the gate cache beside the result cache (so files the
    gates settle need no libcst), computed and stored when missing."""
    if not cache:
        return
    from cudalint.python.gate_cache import GateCache

    catalog = load_catalog()
    checks = checks_for(settings.select, tuple(catalog))
    store = GateCache(settings.root, catalog)
    for version in sorted(versions):
        release = parse_version(version)
        stored = store.get(settings.select, release)
        if stored is None:
            store.put(settings.select, release, checks.words(release))
        else:
            checks.prepare(release, stored)


def subtree_targets(settings: Settings, files: Sequence[SourceFile], default: str, result: RunResult) -> list[str]:
    """The release each file is linted for: the target of the nearest folder below the project root
    whose own manifest requires torch (an example or subproject of a monorepo), else the run's target.
    The folders with a target of their own are recorded in `result.targets`."""
    versions = [default] * len(files)
    if settings.torch_version:
        return versions
    root = settings.root.resolve()
    memo: dict[Path, tuple[str, str] | None] = {}
    for index, source in enumerate(files):
        found = _folder_target(source.path.resolve().parent, root, memo)
        if found is not None and found[0] != default:
            versions[index] = found[0]
            folder = os.path.relpath(found[2])
            result.targets[folder] = f"torch {plain_version(found[0])} ({found[1]})"
    return versions


def _folder_target(folder: Path, root: Path, memo) -> tuple[str, str, Path] | None:
    """(lint version, origin, folder) from the nearest folder between `folder` and the root (exclusive)
    whose manifests require torch; None when only the root's own manifests (the run's target) apply."""
    walked = []
    found = None
    current = folder
    while current != root and root in current.parents:
        if current in memo:
            found = memo[current]
            break
        walked.append(current)
        dep = None
        for source in top_level_manifests(current):
            try:
                dep = manifests.torch_requirement(manifests.dependencies(source.display, source.path.read_text(encoding="utf-8")))
            except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
                dep = None
            if dep is not None:
                break
        if dep is not None:
            from cudalint.coverage.target import project_target

            version, origin = project_target(dep)
            found = (version, origin, current)
            break
        current = current.parent
    for seen in walked:
        memo[seen] = found
    return found


def project_index(settings: Settings, cache: bool = False, parse=None):
    """The index of the whole project under settings.root (also for a run that lints only some files).
    `parse`: how the index parses a module (Pregates.parse, which also gates it)."""
    from cudalint.project import build_index
    from cudalint.python.guard_facts import guard_facts

    catalog = load_catalog()
    libraries = [spec["module"] for rule in catalog if rule.code == "CDL404" for spec in rule.match.get("imports", ())]
    facts = guard_facts()
    folder = settings.root / ".cudalint_cache" if cache else None
    return build_index(settings.root, libraries, facts.host_queries, facts.flags, folder, facts.skip_if, facts.skip_unless, parse)


WARM_UP_TEXT = (
    "import torch\nimport torch.nn.functional as F\n"
    "x = torch.ones(1, dtype=torch.float64).cuda()\ntorch.cuda.synchronize()\ny = F.grid_sample(x, x)\n"
)


def _warm_up(settings: Settings, torch_version: str) -> None:
    """Load, once and before the workers fork, what checking a first file loads lazily (the catalog, the
    rule handlers, the coverage database): a worker's time limit then measures each file's own work."""
    try:
        lint_text("warm-up.py", "python", WARM_UP_TEXT, settings, torch_version)
        requirements = manifests.manifest_kind("requirements.txt")
        if requirements:
            lint_text("requirements.txt", requirements, "torch==2.3\nflash-attn\n", settings, torch_version)
    except Exception:  # noqa: BLE001 - only a head start; a real file's error is reported with the file
        pass


def _open_cache(settings: Settings, torch_version: str):
    from cudalint.cache import ResultCache, run_fingerprint

    return ResultCache(settings.root, run_fingerprint(load_catalog(), settings, torch_version))


def _lint_parallel(
    todo: Batch,
    settings: Settings,
    jobs: int,
    finished: Callable[..., None],
    tick: Callable[[], None],
    passed: dict[int, Passed] | None = None,
) -> None:
    """Batches over a process pool (one worker for a small run: the time limit needs a process to end).
    A worker that dies (a segfault, the OOM killer, its watchdog at the time limit) breaks the whole
    pool. A file that ran past the limit gets its CDL000 from the journals; the other batches the pool
    took down are run again, each in a process of its own, and a batch that still kills its process is
    split until the file that does it is alone: that file gets a CDL000 and every other file is checked
    as usual."""
    with _pool_turn:
        _lint_in_pool(todo, settings, jobs, finished, tick, passed)


def _lint_in_pool(todo: Batch, settings: Settings, jobs: int, finished: Callable[..., None], tick: Callable[[], None],
                  passed: dict[int, Passed] | None) -> None:
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    global _forked_settings
    size = max(1, len(todo) // (jobs * 8))
    batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    suspects: list[Batch] = []
    sent = _sent_settings(settings)
    try:
        with tempfile.TemporaryDirectory(prefix="cudalint-journals-") as journals:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [(batch, pool.submit(_lint_many, batch, sent, journals, _passed_in(batch, passed))) for batch in batches]
                for batch, future in futures:
                    if _collect(batch, future, finished):
                        tick()
                    else:
                        suspects.append(batch)
            if suspects:
                _isolate(suspects, settings, sent, jobs, finished, tick, journals)
    finally:
        _forked_settings = None


def _passed_in(batch: Batch, passed: dict[int, Passed] | None) -> dict[int, Passed] | None:
    if not passed:
        return None
    return {index: passed[index] for index, _, _ in batch if index in passed} or None


def _collect(batch: Batch, future, finished: Callable[..., None]) -> bool:
    """Record a batch's outcome; False when its worker process died and the batch must be retried."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        results = future.result()
    except BrokenProcessPool:
        return False
    except Exception as exc:  # noqa: BLE001 - a worker's error becomes findings, not a dead run
        for index, source, _ in batch:
            message = f"worker failed while checking: {type(exc).__name__}: {exc}"
            finished(index, (None, [unreadable(source.display, message)]), False)
        return True
    for (index, _, _), outcome in zip(batch, results):
        finished(index, outcome)
    return True


def _too_slow(batch: Batch, settings: Settings, journals: str, finished: Callable[..., None]) -> Batch:
    """Give the files that ran past the time limit their CDL000; the rest of the batch, to run again."""
    slow = timed_out(journals)
    rest = []
    for index, source, version in batch:
        if index in slow:
            message = f"took longer than {settings.file_timeout:g} s to check (file-timeout); the file was not checked"
            finished(index, (None, [unreadable(source.display, message)]), False)
        else:
            rest.append((index, source, version))
    return rest


def _isolate(
    suspects: list[Batch],
    settings: Settings,
    sent: Settings | None,
    jobs: int,
    finished: Callable[..., None],
    tick: Callable[[], None],
    journals: str,
) -> None:
    """The batches a broken pool took down, each run again in a process of its own (see _lint_parallel);
    `sent` is what each batch carries for its settings (see _sent_settings)."""
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    queue: deque[Batch] = deque(rest for rest in (_too_slow(batch, settings, journals, finished) for batch in suspects) if rest)
    running: dict[object, tuple[Batch, ProcessPoolExecutor]] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                batch = queue.popleft()
                executor = ProcessPoolExecutor(max_workers=1)
                future = executor.submit(_lint_many, batch, sent, journals)
                running[future] = (batch, executor)
            completed, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in completed:
                batch, executor = running.pop(future)
                executor.shutdown(wait=True)
                if _collect(batch, future, finished):
                    tick()
                    continue
                rest = _too_slow(batch, settings, journals, finished)
                if len(rest) > 1:
                    queue.extend([item] for item in rest)
                elif rest:
                    index, source, _ = rest[0]
                    message = ("the worker process checking this file crashed (it died without an answer); "
                               "nothing in the file was checked")
                    finished(index, (None, [unreadable(source.display, message)]), False)
                if len(rest) <= 1:
                    tick()
    finally:
        for _, executor in running.values():
            executor.shutdown(wait=False, cancel_futures=True)


def count_by_severity(findings: Sequence[Finding]) -> dict:
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return counts
