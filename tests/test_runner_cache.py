"""The runner's result cache, its crash isolation for parallel runs, and the progress line."""

import faulthandler
import io
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

import cudalint
from cudalint import cache as cache_module
from cudalint import runner
from cudalint.catalog import load_catalog, rules_dir
from cudalint.config import resolve
from cudalint.progress import Progress
from conftest import run_cli
from terminal import run_on_terminal

CUDA_FILE = "import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
VERSIONED = "import torch\nscaler = torch.cuda.amp.GradScaler()\n"  # its message names a torch release


def settings_for(root, **flags):
    return resolve(load_catalog(), config_path=None, **flags)


def lint(root, monkeypatch, cache=True, **flags):
    monkeypatch.chdir(root)
    return runner.run(["."], settings_for(root, **flags), jobs=1, cache=cache)


def as_rows(result):
    return [json.dumps(f.to_json(), sort_keys=True) for f in result.findings]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.py").write_text(CUDA_FILE)
    (tmp_path / "b.py").write_text(VERSIONED)
    (tmp_path / "c.py").write_text("x = 1\n")
    return tmp_path


def poison(root):
    """Replace every cached finding by a marker: a run that shows the marker answered from the cache."""
    count = 0
    for entry in (root / ".cudalint_cache").glob("*.json"):
        data = json.loads(entry.read_text())
        data["findings"] = [
            {
                "code": "CDL000",
                "path": "ignored",
                "line": 1,
                "column": 1,
                "end_line": 1,
                "end_column": 1,
                "message": "FROM CACHE",
                "severity": "error",
                "fix": None,
            }
        ]
        entry.write_text(json.dumps(data))
        count += 1
    return count


def from_cache(result):
    return sorted(f.path for f in result.findings if f.message == "FROM CACHE")


def test_warm_run_is_identical_and_the_folder_ignores_itself(project, monkeypatch):
    cold = lint(project, monkeypatch)
    folder = project / ".cudalint_cache"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert len(list(folder.glob("*.json"))) == 3
    assert not list(folder.glob(".tmp-*"))  # writes are renamed into place
    warm = lint(project, monkeypatch)
    assert as_rows(warm) == as_rows(cold)
    assert [f.code for f in warm.findings] == ["CDL102", "CDL201", "CDL205"]
    assert poison(project) == 3
    assert from_cache(lint(project, monkeypatch)) == ["a.py", "b.py", "c.py"]
    # a fixed finding comes back from the cache with its fix
    (project / "d.py").write_text('import torch\ndevice = torch.device("cuda")\n')
    first = [f for f in lint(project, monkeypatch).findings if f.path == "d.py"]
    second = [f for f in lint(project, monkeypatch).findings if f.path == "d.py"]
    assert first[0].fix is not None and second[0].fix == first[0].fix
    assert as_rows(RunResultLike(second)) == as_rows(RunResultLike(first))


class RunResultLike:
    def __init__(self, findings):
        self.findings = findings


def test_changed_content_invalidates_that_file_only(project, monkeypatch):
    lint(project, monkeypatch)
    poison(project)
    (project / "a.py").write_text(CUDA_FILE + "torch.cuda.empty_cache()\n")
    result = lint(project, monkeypatch)
    assert from_cache(result) == ["b.py", "c.py"]
    assert [f.code for f in result.findings if f.path == "a.py"] == ["CDL102", "CDL201", "CDL202"]


@pytest.mark.parametrize(
    "change",
    ["version", "code", "catalog", "coverage", "select", "per-file-ignores", "torch-version", "torch-from-manifest"],
)
def test_each_part_of_the_key_invalidates(project, monkeypatch, tmp_path_factory, change):
    flags = {}
    if change == "coverage":
        rules = tmp_path_factory.mktemp("rules")
        shutil.copytree(rules_dir(), rules, dirs_exist_ok=True)
        monkeypatch.setattr(cache_module, "rules_dir", lambda: rules)
    lint(project, monkeypatch)
    poison(project)
    assert len(from_cache(lint(project, monkeypatch))) == 3  # nothing changed: all from the cache
    if change == "version":
        monkeypatch.setattr(cudalint, "__version__", "99.0")
    elif change == "code":
        monkeypatch.setattr(cache_module, "_code_fingerprint", lambda: "edited")
    elif change == "catalog":
        monkeypatch.setattr(load_catalog(), "version", "another-catalog")
    elif change == "coverage":
        database = rules / "mps_coverage.json"
        database.write_bytes(database.read_bytes() + b"\n")
    elif change == "select":
        flags = {"extend_select": ["CDL210"]}
    elif change == "per-file-ignores":
        flags = {"per_file_ignores": ["a.py:CDL1"]}
    elif change == "torch-version":
        flags = {"torch_version": "2.4"}
    elif change == "torch-from-manifest":
        (project / "requirements.txt").write_text("torch>=2.2\n")
    result = lint(project, monkeypatch, **flags)
    assert from_cache(result) == []
    if change == "per-file-ignores":
        assert [f.code for f in result.findings if f.path == "a.py"] == ["CDL201"]


def test_corrupt_entries_are_misses_and_get_rewritten(project, monkeypatch):
    expected = as_rows(lint(project, monkeypatch))
    entries = sorted((project / ".cudalint_cache").glob("*.json"))
    entries[0].write_text("{not json")
    entries[1].write_bytes(b"\xff\xfe\x00garbage")
    entries[2].write_text(json.dumps({"key": "whatever", "findings": [{"code": 1}]}))
    assert as_rows(lint(project, monkeypatch)) == expected
    for entry in entries:
        json.loads(entry.read_text())  # rewritten whole
    assert as_rows(lint(project, monkeypatch)) == expected


def test_a_failed_write_leaves_no_partial_entry_and_the_run_goes_on(project, monkeypatch):
    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cache_module.os, "replace", refuse)
    result = lint(project, monkeypatch)
    assert [f.code for f in result.findings] == ["CDL102", "CDL201", "CDL205"]
    assert list((project / ".cudalint_cache").iterdir()) == [project / ".cudalint_cache" / ".gitignore"]


def test_no_cache_flag_and_cli_warm_run(project):
    cold = run_cli("check", "--no-cache", ".", cwd=project)
    assert not (project / ".cudalint_cache").exists()
    filled = run_cli("check", ".", cwd=project)
    warm = run_cli("check", ".", cwd=project)
    assert (project / ".cudalint_cache" / ".gitignore").is_file()
    assert cold.stdout == filled.stdout == warm.stdout
    assert cold.returncode == filled.returncode == warm.returncode == 1


# --- a worker that dies -------------------------------------------------------------------------


def _crash_on(name, how):
    real = runner.check_python

    def check_python(path, *args, **kwargs):
        if path.endswith(name):
            if how == "exit":
                os._exit(3)
            faulthandler.disable()  # pytest's handler would print the dead worker's stack
            os.kill(os.getpid(), signal.SIGSEGV)
        return real(path, *args, **kwargs)

    return check_python


@pytest.mark.parametrize("how", ["exit", "segfault"])
def test_a_crashing_worker_becomes_one_cdl000_and_the_run_completes(tmp_path, monkeypatch, how):
    for index in range(40):
        (tmp_path / f"m{index:02}.py").write_text(CUDA_FILE)
    monkeypatch.chdir(tmp_path)
    settings = settings_for(tmp_path)
    expected = [f for f in runner.run(["."], settings, jobs=1).findings if f.path != "m17.py"]
    # workers are forked, so they inherit the patched check
    monkeypatch.setattr(runner, "check_python", _crash_on("m17.py", how))
    result = runner.run(["."], settings, jobs=2, cache=True)
    crashed = [f for f in result.findings if f.path == "m17.py"]
    assert [(f.code, f.line, f.column) for f in crashed] == [("CDL000", 1, 1)]
    assert crashed[0].message.startswith("the worker process checking this file crashed")
    assert [f for f in result.findings if f.path != "m17.py"] == expected
    assert result.findings == sorted(result.findings, key=lambda f: f.sort_key)
    assert result.files == 40
    # the crash is not cached: with the check repaired the file is checked for real
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    again = runner.run(["."], settings, jobs=2, cache=True)
    assert [f.code for f in again.findings if f.path == "m17.py"] == ["CDL102", "CDL201"]


def test_two_crashing_files_in_a_parallel_run(tmp_path, monkeypatch):
    for index in range(40):
        (tmp_path / f"m{index:02}.py").write_text(CUDA_FILE)
    monkeypatch.chdir(tmp_path)
    settings = settings_for(tmp_path)
    first = _crash_on("m03.py", "exit")
    monkeypatch.setattr(runner, "check_python", lambda path, *a, **k: _crash_on("m31.py", "exit")(path, *a, **k)
                        if path.endswith("m31.py") else first(path, *a, **k))
    result = runner.run(["."], settings, jobs=2)
    assert sorted({f.path for f in result.findings if f.code == "CDL000"}) == ["m03.py", "m31.py"]
    assert len([f for f in result.findings if f.code != "CDL000"]) == 38 * 2


# --- progress -----------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_progress_shows_on_long_runs_to_a_terminal_and_erases_itself():
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, {}, clock=clock)
    for done in range(1, 202):
        clock.now += 0.2
        progress(done, 201)
    assert stream.getvalue().startswith("\rcudalint: checked 1/201 files (0%)")
    assert stream.getvalue().endswith("\rcudalint: checked 201/201 files (100%)")
    progress.close()
    assert stream.getvalue().endswith("\r" + " " * len("cudalint: checked 201/201 files (100%)") + "\r")


def test_progress_waits_two_seconds_on_small_runs():
    stream, clock = Terminal(), Clock()
    progress = Progress(stream, {}, clock=clock)
    progress(1, 10)
    clock.now += 1.9
    progress(2, 10)
    assert stream.getvalue() == ""
    clock.now += 0.2
    progress(3, 10)
    assert stream.getvalue() == "\rcudalint: checked 3/10 files (30%)"


@pytest.mark.parametrize("stream, environ", [(io.StringIO(), {}), (Terminal(), {"CI": "true"}), (Terminal(), {"CI": "1"})])
def test_progress_never_in_pipes_or_ci(stream, environ):
    progress = Progress(stream, environ, clock=Clock())
    for done in range(1, 1001):
        progress(done, 1000)
    progress.close()
    assert stream.getvalue() == ""


def test_progress_on_a_real_terminal_and_not_in_a_pipe(tmp_path):
    for index in range(210):
        (tmp_path / f"f{index:03}.py").write_text("x = 1\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    piped = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True, env=env,
        timeout=120,
    )
    assert piped.returncode == 0 and piped.stderr == ""
    code, shown, out = run_on_terminal(
        [sys.executable, "-m", "cudalint", "check", "--no-cache", "."], stream="stderr", cwd=tmp_path, env=env
    )
    assert code == 0
    assert b"cudalint: checked 210/210 files (100%)" in shown
    assert shown.endswith(b"\r")  # erased before the report
    assert out.decode() == "All clear: 210 files checked, target torch 2.15 (newest release cudalint knows).\n"
    ci = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "--no-cache", "."],
        cwd=tmp_path, capture_output=True, text=True, env={**env, "CI": "true"}, timeout=120,
    )
    assert ci.stderr == ""
