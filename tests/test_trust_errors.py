"""Issue 14, items 9, 10, 13, 14, 18: every way a run used to end in a traceback, a stall or a wrong
verdict now ends in a message (exit 2), a per-file CDL000 or "not fixed: ...", and the run goes on."""

import contextlib
import errno
import json
import os
import subprocess
import sys

import pytest
import torch

from conftest import ROOT, run_cli
from cudalint import compare, fileio, fixes
from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile
from cudalint.runner import lint_text

CUDA = "import torch\ntorch.cuda.synchronize()\n"
FIXABLE = 'import torch\ny = torch.device("cuda")\n'


def no_traceback(result):
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    return result


def default_settings(root):
    return Settings(select=frozenset(rule.code for rule in load_catalog() if rule.default) | {"CDL000"}, root=root)


# 9 -------------------------------------------------------------------------------------------------

def test_the_cpython_guard_holds_for_every_file_not_only_the_first(tmp_path):
    """A file that goes through libcst (which needs a deep recursion limit) must not loosen the guard
    for the next file: 4,000 nested subscripts get CDL000 from CPython's parser before and after."""
    deep = "import torch\nx = a" + "[0]" * 4000 + "\ntorch.cuda.synchronize()\n"
    refused = ("CDL000", "expression nested too deeply to analyse; the file was not checked")
    settings = default_settings(tmp_path)
    limit = sys.getrecursionlimit()
    assert [(f.code, f.message) for f in lint_text("deep.py", "python", deep, settings, "2.15")] == [refused]
    assert [f.code for f in lint_text("ok.py", "python", CUDA, settings, "2.15")] == ["CDL201"]
    assert sys.getrecursionlimit() == limit
    assert [(f.code, f.message) for f in lint_text("deep.py", "python", deep, settings, "2.15")] == [refused]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_past_the_time_limit_gets_cdl000_and_the_run_goes_on(tmp_path, jobs):
    """2,500 nested subscripts are valid Python that libcst's parser needs about a minute for."""
    (tmp_path / "slow.py").write_text("import torch\nx = a" + "[0]" * 2500 + "\ntorch.cuda.synchronize()\n")
    for index in range(20):
        (tmp_path / f"ok{index:02}.py").write_text(CUDA)
    (tmp_path / "pyproject.toml").write_text("[tool.cudalint]\nfile-timeout = 5\n")
    result = no_traceback(run_cli("check", "-q", "--no-cache", "-j", jobs, ".", cwd=tmp_path))
    lines = result.stdout.splitlines()
    assert [line.split(" ")[:2] for line in lines[:20]] == [[f"ok{i:02}.py:2:1:", "CDL201"] for i in range(20)]
    assert lines[20:] == ["slow.py:1:1: CDL000 took longer than 5 s to check (file-timeout); the file was not checked"]


# 10: names, configuration ------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_reported_in_every_format(tmp_path, fmt):
    (tmp_path / os.fsdecode(b"caf\xe9.py")).write_text(CUDA)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    result = no_traceback(run_cli("check", "--no-cache", "--format", fmt, ".", cwd=tmp_path, env=env))
    assert result.returncode == 1
    if fmt == "sarif":
        locations = json.loads(result.stdout)["runs"][0]["results"][0]["locations"]
        assert locations[0]["physicalLocation"]["artifactLocation"]["uri"] == "caf%E9.py"
    elif fmt == "text":
        assert result.stdout.startswith("caf\\udce9.py:2:1: CDL201 ")


@pytest.mark.parametrize(
    "table, message",
    [
        ("[tool]\ncudalint = 5\n", "[tool.cudalint] must be a table"),
        ("[tool.cudalint]\nselect = [1]\n", "[tool.cudalint] select must be a list of strings"),
        ("[tool.cudalint]\nexclude = [1]\n", "[tool.cudalint] exclude must be a list of strings"),
        ("[tool.cudalint]\nper-file-ignores = {'a.py' = [1]}\n", "per-file-ignores 'a.py' must map to a list of codes"),
        ("[tool.cudalint]\nmax-file-size = true\n", "[tool.cudalint] max-file-size must be a int"),
        ("[tool.cudalint]\nfile-timeout = -1\n", "file-timeout must be a positive number of seconds"),
    ],
)
def test_configuration_of_the_wrong_type_is_a_usage_error(tmp_path, table, message):
    (tmp_path / "pyproject.toml").write_text(table)
    (tmp_path / "a.py").write_text(CUDA)
    result = no_traceback(run_cli("check", "--no-cache", ".", cwd=tmp_path))
    assert result.returncode == 2
    assert message in result.stderr


def test_a_broken_pyproject_above_the_project_is_passed_over(tmp_path):
    (tmp_path / "pyproject.toml").write_text("x = " + "[" * 3000 + "]" * 3000 + "\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text(CUDA)
    result = no_traceback(run_cli("check", "-q", "--no-cache", "a.py", cwd=project))
    assert result.returncode == 1
    assert result.stdout.startswith("a.py:2:1: CDL201 ")
    named = no_traceback(run_cli("check", "--config", "../pyproject.toml", "a.py", cwd=project))
    assert (named.returncode, named.stderr) == (2, "cudalint: error: ../pyproject.toml: invalid TOML: nested too deeply\n")


# 10: a full or read-only disk under --fix ---------------------------------------------------------

@contextlib.contextmanager
def small_tmpfs(folder):
    """A real 64 KiB tmpfs where this process may mount one (root in a container), else None."""
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
                             capture_output=True).returncode == 0 if os.geteuid() == 0 else False
    try:
        yield folder if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder):
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


@pytest.mark.parametrize("problem", ["full", "read-only"])
def test_fix_on_a_full_or_read_only_disk_says_not_fixed_and_reports(tmp_path, monkeypatch, problem):
    with small_tmpfs(tmp_path / "disk") as disk:
        project = disk or tmp_path / "disk"
        (project / "a.py").write_text(FIXABLE)
        (project / "b.py").write_text(FIXABLE)
        if disk is not None:
            if problem == "full":
                fill(disk)
            else:
                subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        else:  # no tmpfs here: the same errors from the operating system's calls, raised by a stub
            code = errno.ENOSPC if problem == "full" else errno.EROFS

            def fail(*args, **kwargs):
                raise OSError(code, os.strerror(code))

            monkeypatch.setattr(fileio.os, "fsync" if problem == "full" else "replace", fail)
        settings = default_settings(project)
        outcomes = [fixes.fix_file(SourceFile(project / name, name, "python"), settings, "2.15", False, True)
                    for name in ("a.py", "b.py")]
        expected = "cannot write: No space left on device" if problem == "full" else "cannot write: Read-only file system"
        assert [outcome.error for outcome in outcomes] == [expected, expected]
        assert (project / "a.py").read_text() == FIXABLE
        assert sorted(p.name for p in project.iterdir() if p.name.startswith(fileio.TEMP_PREFIX)) == []


def test_the_cli_reports_after_a_failed_write(tmp_path, monkeypatch, capsys):
    """End to end: each file that could not be written is named, then the report, exit 1."""
    from cudalint.cli import main

    with small_tmpfs(tmp_path / "disk") as disk:
        project = disk or tmp_path / "disk"
        (project / "a.py").write_text(FIXABLE)
        if disk is not None:
            subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        else:
            def read_only(*args, **kwargs):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS))

            monkeypatch.setattr(fileio, "_new_temporary", read_only)
        monkeypatch.chdir(project)
        code = main(["check", "--fix", "--no-cache", "-j", "1", "."])
        out, err = capsys.readouterr()
        assert "cudalint: a.py: not fixed: cannot write: Read-only file system\n" in err
        assert out.startswith("a.py:2:18: CDL101 ")
        assert code == 1


# 10: --trace, --compare and --output ----------------------------------------------------------------

@pytest.mark.parametrize("content", ["[1, 2]", "{not json", "[" * 100000 + "]" * 100000,
                                     json.dumps({"format": "cudalint-trace", "ran": 5, "ops": 7})])
def test_a_malformed_trace_is_a_usage_error(tmp_path, content):
    (tmp_path / "trace.json").write_text(content)
    result = no_traceback(run_cli("report", "--trace", "trace.json", ".", cwd=tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith("cudalint: error: --trace trace.json: not ")


@pytest.mark.parametrize("content", ["{}", "[" * 100000 + "]" * 100000,
                                     json.dumps({"a": "x", "b": "y", "rtol": "q", "atol": None, "tensors": 5,
                                                 "missing_in_a": 3, "missing_in_b": None, "verdict": 7})])
def test_a_malformed_comparison_is_a_usage_error(tmp_path, content):
    (tmp_path / "compare.json").write_text(content)
    result = no_traceback(run_cli("report", "--compare", "compare.json", ".", cwd=tmp_path))
    assert result.returncode == 2
    assert result.stderr.startswith("cudalint: error: --compare compare.json: not ")


def test_trace_checks_its_output_before_running_the_program(tmp_path):
    (tmp_path / "prog.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('yes')\n")
    result = no_traceback(run_cli("trace", "--output", str(tmp_path / "missing" / "t.json"), "prog.py", cwd=tmp_path))
    assert result.returncode == 2
    assert result.stderr == f"cudalint: error: --output {tmp_path / 'missing' / 't.json'}: no such folder {tmp_path / 'missing'}\n"
    assert not (tmp_path / "ran").exists()


def test_compare_checks_its_output_first(tmp_path):
    torch.save({"x": torch.ones(2)}, tmp_path / "a.pt")
    result = no_traceback(run_cli("compare", "a.pt", "a.pt", "--output", str(tmp_path), cwd=tmp_path))
    assert (result.returncode, result.stderr) == (2, f"cudalint: error: --output {tmp_path}: is a directory\n")


def test_a_traced_program_that_closes_stdout_still_gets_its_report(tmp_path):
    (tmp_path / "prog.py").write_text("import sys, torch\ntorch.ones(2).sum()\nsys.stdout.close()\n")
    result = no_traceback(run_cli("trace", "prog.py", cwd=tmp_path))
    assert result.returncode == 0
    assert "cudalint trace: ran python prog.py; it exited with status 0." in result.stderr
    assert "Result: no operator this run reached would raise" in result.stderr


# 13 ------------------------------------------------------------------------------------------------

def test_os_exit_in_the_traced_program_still_writes_the_report(tmp_path):
    (tmp_path / "prog.py").write_text("import os, torch\ntorch.ones(2).sum()\nos._exit(3)\n")
    result = no_traceback(run_cli("trace", "--output", "t.json", "prog.py", cwd=tmp_path))
    assert result.returncode == 0  # cudalint's own verdict, not the program's status
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["ran"]["exit_code"] == 3
    assert "aten::sum" in {op["op"] for op in doc["ops"]}


def test_a_forked_child_does_not_write_the_report_again(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import os, torch\npid = os.fork()\nif pid == 0:\n    torch.ones(1).sum()\nelse:\n    os.waitpid(pid, 0)\n"
    )
    result = no_traceback(run_cli("trace", "prog.py", cwd=tmp_path))
    assert result.stderr.count("cudalint trace: ran python prog.py") == 1
    assert "It started 1 other process (DataLoader workers, multiprocessing, fork)" in result.stderr


def test_dataloader_workers_are_said_not_to_be_traced(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "if __name__ == '__main__':\n"
        "    for batch in DataLoader(list(range(4)), batch_size=2, num_workers=2):\n        batch.sum()\n"
    )
    result = no_traceback(run_cli("trace", "--output", "t.json", "prog.py", cwd=tmp_path))
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["ran"]["untraced_processes"] == 2
    assert result.returncode == 0


# 14 ------------------------------------------------------------------------------------------------

def test_compare_key_paths_never_collide(tmp_path):
    a = {"a": {"b": torch.zeros(1)}, "a.b": torch.ones(1), 1: torch.zeros(2), "1": torch.ones(2)}
    b = {"a": {"b": torch.zeros(1)}, "a.b": torch.full((1,), 5.0), 1: torch.zeros(2), "1": torch.ones(2)}
    torch.save(a, tmp_path / "a.pt")
    torch.save(b, tmp_path / "b.pt")
    doc = compare.compare(tmp_path / "a.pt", tmp_path / "b.pt")
    assert sorted((row["key"], row["within"]) for row in doc["tensors"]) == [
        ("['1']", True), ("['a']['b']", True), ("['a.b']", False), ("[1]", True)]
    assert doc["verdict"] == "fail"
    assert compare.flatten({"model": {"layer.weight": torch.ones(1)}, "out": [torch.ones(1)]}).keys() == {
        "model.layer.weight", "out[0]"}


@pytest.mark.parametrize("kind", ["sparse", "meta", "float8", "quantized", "deep"])
def test_compare_on_unusual_data_is_a_row_or_a_message(tmp_path, kind):
    if kind == "sparse":
        value = torch.eye(3).to_sparse()
    elif kind == "meta":
        value = torch.ones(2, device="meta")
    elif kind == "float8":
        value = torch.ones(2).to(torch.float8_e4m3fn)
    elif kind == "quantized":
        value = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8)
    else:
        value = torch.ones(1)
        for _ in range(5000):
            value = [value]
    path = tmp_path / "x.pt"
    try:
        torch.save({"t": value}, path)
    except RecursionError:  # torch cannot even save it: a file of nested lists as torch would write it
        path.write_bytes(b"\x80\x02" + b"]" * 5000 + b".")
    result = no_traceback(run_cli("compare", "x.pt", "x.pt", cwd=tmp_path))
    if kind in ("sparse", "float8", "quantized"):
        assert (result.returncode, result.stdout.split()[:2]) == (0, ["ok", "t"])
    elif kind == "meta":
        assert result.returncode == 1
        assert result.stdout.startswith("ERROR    t  shape (2,)  dtype float32  max_abs -  max_rel -  cannot compare: a meta tensor holds no data")
    else:
        assert result.returncode in (0, 2)
        assert result.returncode == 0 or result.stderr.startswith("cudalint: error: x.pt: cannot be loaded")


# 18 ------------------------------------------------------------------------------------------------

# This process's own peak is VmHWM, not getrusage(RUSAGE_SELF).ru_maxrss: Linux carries the
# forking parent's high-water mark across exec into ru_maxrss, so inside a pytest process that has
# grown to 500 MB (torch imported by other tests) a 40 MB child reported 530-570 MB.
PEAK_SCRIPT = """
import re, resource, sys
from cudalint.cli import main
code = main(["check", "-q", "--no-cache", "-j", "1", "--file-timeout", "600", sys.argv[1]])
with open("/proc/self/status") as status:
    own = int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(code, own // 1024, worker // 1024, max(own, worker) // 1024, file=sys.stderr)
"""


def test_a_100k_line_python_file_is_checked_under_500_mb(tmp_path):
    body = ["import torch", ""]
    index = 0
    while len(body) < 100_000:
        body += [f"def f{index}(x):", f"    y = x * {index}", "    return [y, 'text']", ""]
        index += 1
    body += ["torch.cuda.synchronize()"]
    (tmp_path / "big.py").write_text("\n".join(body) + "\n")
    result = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, "big.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    code, peak_mb = result.stderr.split()[-2:]
    assert result.stdout.splitlines()[0].startswith(f"big.py:{len(body)}:1: CDL201 ")
    assert int(peak_mb) < 500, result.stderr[-300:]  # about 90 MB, in the worker
