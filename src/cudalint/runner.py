"""The one entry point every front end calls: settings + paths -> findings."""

from __future__ import annotations

import fnmatch
import os
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Deque, Dict, List, Optional, Sequence, Tuple

from cudalint import manifests
from cudalint.catalog import Catalog, load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile, discover, kind_of
from cudalint.findings import Finding, Severity
from cudalint.noqa import noqa_lines, silenced
from cudalint.python.analyze import checks_for, check_python, unreadable
from cudalint.source import decode_python, decode_text
from cudalint.versions import parse_version

PARALLEL_THRESHOLD = 16  # below this many files a process pool costs more than it saves
NEWEST_KNOWN_TORCH = "2.15"


@dataclass
class RunResult:
    findings: List[Finding] = field(default_factory=list)
    files: int = 0
    torch_version: str = NEWEST_KNOWN_TORCH
    torch_version_source: str = "newest release cudalint knows"
    fixed: int = 0
    texts: Dict[str, str] = field(default_factory=dict)  # the text of files linted from memory (stdin, an editor)


def top_level_manifests(root: Path) -> List[SourceFile]:
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


def target_torch(settings: Settings, files: Sequence[SourceFile]) -> Tuple[str, str]:
    """--torch-version, else the project's own pin or lower bound (in the files linted, then at the top
    of the project, so a pre-commit run on one changed file still sees the project's pin), else the
    newest known release."""
    if settings.torch_version:
        return settings.torch_version, "configured"
    for source in [*files, *top_level_manifests(settings.root)]:
        if source.kind == "python" and source.path.name != "setup.py":
            continue
        try:
            text = source.path.read_text(encoding="utf-8")
            found = manifests.torch_version_from(manifests.dependencies(source.display, text))
        except Exception:  # noqa: BLE001 - a broken manifest is reported by its own check
            continue
        if found:
            return found, f"from {source.display}"
    return NEWEST_KNOWN_TORCH, "newest release cudalint knows"


def run_text(display: str, text: str, settings: Settings) -> RunResult:
    """Lint a buffer (standard input, an editor's unsaved text) as the file `display` would be linted on disk:
    its kind from its name, the settings of its project, the project's target release (a manifest buffer's
    own torch pin first, as a manifest named on the command line would be)."""
    kind = kind_of(Path(display)) or "python"
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
        torch_version=torch_version,
        torch_version_source=origin,
        texts={display: text},
    )


def lint_text(
    display: str,
    kind: str,
    text: str,
    settings: Settings,
    torch_version: str,
    catalog: Optional[Catalog] = None,
    *,
    noqa: bool = True,
) -> List[Finding]:
    """Lint text already in memory (used by the flake8 plugin and tests).

    `noqa=False` keeps findings on `# noqa` lines, for a front end that applies noqa itself.
    """
    catalog = catalog or load_catalog()
    findings: List[Finding] = []
    if kind == "python":
        checks = checks_for(settings.select, tuple(catalog))
        findings.extend(check_python(display, text, checks, parse_version(torch_version), settings.device, settings.unsafe_fixes))
    if kind != "python" or Path(display).name == "setup.py":
        findings.extend(manifests.check_manifest(display, text, torch_version=torch_version))
    return _filter(findings, text, display, settings, noqa)


def lint_file(source: SourceFile, settings: Settings, torch_version: str, data: Optional[bytes] = None) -> List[Finding]:
    if data is None:
        try:
            data = source.path.read_bytes()
        except OSError as exc:
            return [unreadable(source.display, f"cannot read: {exc.strerror or exc}")]
    decoded = decode_python(data) if source.kind == "python" else decode_text(data)
    if decoded.text is None:
        return [unreadable(source.display, f"{decoded.error}; the file was not checked", decoded.error_line, decoded.error_column)]
    try:
        return lint_text(source.display, source.kind, decoded.text, settings, torch_version)
    except Exception as exc:  # noqa: BLE001 - one file's bug must not end the run
        return [unreadable(source.display, f"internal error while checking: {type(exc).__name__}: {exc}")]


def _filter(findings: List[Finding], text: str, display: str, settings: Settings, use_noqa: bool = True) -> List[Finding]:
    ignored = set()
    names = _pattern_subjects(display, settings.root) if settings.per_file_ignores else ()
    for pattern, codes in settings.per_file_ignores:
        if any(fnmatch.fnmatchcase(name, pattern) for name in names):
            ignored |= codes
    noqa = noqa_lines(text) if findings and use_noqa else {}
    return [
        finding
        for finding in findings
        if finding.code in settings.select
        and finding.code not in ignored
        and not silenced(finding.code, noqa.get(finding.line))
    ]


def _pattern_subjects(display: str, root: Path) -> Tuple[str, ...]:
    """What a per-file-ignores pattern is matched against: the path as shown, the path relative to the project
    root (the folder of the configuration), and the file name."""
    subjects = [display, Path(display).name]
    try:
        subjects.append(Path(os.path.abspath(display)).relative_to(root.resolve()).as_posix())
    except ValueError:
        pass
    return tuple(subjects)


def _lint_many(batch: Sequence[SourceFile], settings: Settings, torch_version: str) -> List[List[Finding]]:
    """One worker's share: the findings of each file of the batch, in order."""
    return [lint_file(source, settings, torch_version) for source in batch]


Progress = Callable[[int, int], None]  # (files done, files in the run)
Batch = List[Tuple[int, SourceFile]]  # (position in the run, file)


def run(
    paths: Sequence[str],
    settings: Settings,
    jobs: Optional[int] = None,
    *,
    cache: bool = False,
    progress: Optional[Progress] = None,
) -> RunResult:
    """Lint the files under `paths`. `cache=True` reads and writes `.cudalint_cache/` under settings.root;
    `progress` is told how many files are done after each step."""
    files = list(discover(paths, settings.exclude, settings.root))
    torch_version, origin = target_torch(settings, files)
    result = RunResult(files=len(files), torch_version=torch_version, torch_version_source=origin)
    report = progress or (lambda done, total: None)
    per_file: Dict[int, List[Finding]] = {}
    store = _open_cache(settings, torch_version) if cache else None
    digests: Dict[int, str] = {}
    todo: Batch = []
    for index, source in enumerate(files):
        # Python files only: they are the costly part, and a manifest's findings can depend on other
        # files (a requirements file's -r/-c includes) that its own content hash would not cover.
        if store is not None and source.kind == "python":
            from cudalint.cache import content_digest

            try:
                digests[index] = content_digest(source.path.read_bytes())
            except OSError:
                pass  # lint_file reports it
            else:
                hit = store.get(source.display, source.kind, digests[index])
                if hit is not None:
                    per_file[index] = hit
                    continue
        todo.append((index, source))
    done = len(per_file)
    if done:
        report(done, len(files))

    def finished(index: int, findings: List[Finding], cacheable: bool = True) -> None:
        nonlocal done
        per_file[index] = findings
        done += 1
        if store is not None and cacheable and index in digests:
            source = files[index]
            store.put(source.display, source.kind, digests[index], findings)

    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(todo) >= PARALLEL_THRESHOLD:
        _lint_parallel(todo, settings, torch_version, jobs, finished, lambda: report(done, len(files)))
    else:
        for index, source in todo:
            finished(index, lint_file(source, settings, torch_version))
            report(done, len(files))
    for index in sorted(per_file):
        result.findings.extend(per_file[index])
    result.findings.sort(key=lambda f: f.sort_key)
    return result


def _open_cache(settings: Settings, torch_version: str):
    from cudalint.cache import ResultCache, run_fingerprint

    return ResultCache(settings.root, run_fingerprint(load_catalog(), settings, torch_version))


def _lint_parallel(
    todo: Batch,
    settings: Settings,
    torch_version: str,
    jobs: int,
    finished: Callable[..., None],
    tick: Callable[[], None],
) -> None:
    """Batches over a process pool. A worker that dies (a segfault, os._exit, the OOM killer) breaks the
    whole pool; the batches it took down are then run again, each in a process of its own, and a batch
    that still kills its process is split until the file that does it is alone: that file gets a CDL000
    finding and every other file is checked as usual."""
    size = max(1, len(todo) // (jobs * 8))
    batches = [todo[i : i + size] for i in range(0, len(todo), size)]
    suspects: List[Batch] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(batch, pool.submit(_lint_many, [s for _, s in batch], settings, torch_version)) for batch in batches]
        for batch, future in futures:
            if _collect(batch, future, finished):
                tick()
            else:
                suspects.append(batch)
    if suspects:
        _isolate(suspects, settings, torch_version, jobs, finished, tick)


def _collect(batch: Batch, future, finished: Callable[..., None]) -> bool:
    """Record a batch's outcome; False when its worker process died and the batch must be retried."""
    try:
        results = future.result()
    except BrokenProcessPool:
        return False
    except Exception as exc:  # noqa: BLE001 - a worker's error becomes findings, not a dead run
        for index, source in batch:
            finished(
                index,
                [unreadable(source.display, f"worker failed while checking: {type(exc).__name__}: {exc}")],
                False,
            )
        return True
    for (index, _), findings in zip(batch, results):
        finished(index, findings)
    return True


def _isolate(
    suspects: List[Batch],
    settings: Settings,
    torch_version: str,
    jobs: int,
    finished: Callable[..., None],
    tick: Callable[[], None],
) -> None:
    queue: Deque[Batch] = deque(suspects)
    running: Dict[object, Tuple[Batch, ProcessPoolExecutor]] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                batch = queue.popleft()
                executor = ProcessPoolExecutor(max_workers=1)
                future = executor.submit(_lint_many, [s for _, s in batch], settings, torch_version)
                running[future] = (batch, executor)
            completed, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in completed:
                batch, executor = running.pop(future)
                executor.shutdown(wait=True)
                if _collect(batch, future, finished):
                    tick()
                elif len(batch) > 1:
                    queue.extend([item] for item in batch)
                else:
                    index, source = batch[0]
                    finished(
                        index,
                        [
                            unreadable(
                                source.display,
                                "the worker process checking this file crashed (it died without an answer); "
                                "nothing in the file was checked",
                            )
                        ],
                        False,
                    )
                    tick()
    finally:
        for _, executor in running.values():
            executor.shutdown(wait=False, cancel_futures=True)


def count_by_severity(findings: Sequence[Finding]) -> dict:
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return counts
