"""Trust boundaries on the file system (issue 14): what a linted tree holds can neither hang, exhaust,
escape, nor be imported. Real FIFOs, symlinks, devices and subprocesses; concurrent writers are driven
by events, never by sleeps."""

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import run_cli
from cudalint import fileio, fixes, runner
from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile

CUDA = "import torch\ntorch.cuda.synchronize()\n"
CLEAN = "import torch\nx = torch.ones(1)\n"
FIXABLE = 'import torch\ny = torch.device("cuda")\n'
FIXED_MARK = 'torch.device("cuda")'


def lint(tmp_path, *args):
    result = run_cli("check", "-q", "--no-cache", *args, cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def settings(root):
    return Settings(select=frozenset(rule.code for rule in load_catalog() if rule.default) | {"CDL000"}, root=root)


# 3 -------------------------------------------------------------------------------------------------

def test_python_m_never_imports_from_the_linted_tree(tmp_path):
    """`python -m cudalint` in a checkout whose own modules shadow the libraries cudalint imports later."""
    marker = tmp_path / "imported"
    for name in ("yaml", "libcst", "tomllib", "json", "hashlib", "concurrent", "difflib"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\nraise SystemExit(99)\n")
    (tmp_path / "environment.yml").write_text("name: x\ndependencies:\n  - pytorch-cuda=12.1\n")
    (tmp_path / "train.py").write_text(CUDA)
    result = lint(tmp_path, ".")
    assert not marker.exists(), marker.read_text()
    assert result.returncode == 1
    assert "train.py:2:1: CDL201 " in result.stdout


def test_python_m_flake8_never_imports_our_dependencies_from_the_tree(tmp_path):
    marker = tmp_path / "imported"
    for name in ("yaml", "libcst"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r})\nraise SystemExit(99)\n")
    (tmp_path / "train.py").write_text(CUDA)
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "CDL", "train.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert not marker.exists(), marker.read_text()
    assert result.stdout.startswith("train.py:2:1: CDL201 "), result.stdout + result.stderr


# 4 -------------------------------------------------------------------------------------------------

def test_fix_never_writes_through_a_symlink_out_of_the_project(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.py").write_text(FIXABLE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "link.py").symlink_to(outside / "victim.py")
    (project / "own.py").write_text(FIXABLE)
    result = run_cli("check", "--fix", "--no-cache", ".", cwd=project)
    assert (outside / "victim.py").read_text() == FIXABLE
    assert (project / "own.py").read_text() != FIXABLE
    assert f"cudalint: link.py: not fixed: it is a symlink to {outside / 'victim.py'}, outside the project root" in result.stderr
    assert list(outside.iterdir()) == [outside / "victim.py"]  # no temporary file left there either


def test_a_symlink_inside_the_project_is_fixed_in_its_target(tmp_path):
    (tmp_path / "real.py").write_text(FIXABLE)
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    run_cli("check", "--fix", "--no-cache", "alias.py", cwd=tmp_path)
    assert (tmp_path / "alias.py").is_symlink()
    assert FIXED_MARK not in (tmp_path / "real.py").read_text()


def test_a_cache_folder_linked_out_of_the_project_is_not_used(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".cudalint_cache").symlink_to(elsewhere)
    (project / "a.py").write_text(CUDA)
    result = run_cli("check", "-q", ".", cwd=project)
    assert result.returncode == 1
    assert list(elsewhere.iterdir()) == []
    assert f"cudalint: warning: .cudalint_cache leads outside the project (to {elsewhere}); the cache is not used" in result.stderr


def test_a_cache_entry_that_is_a_link_is_replaced_not_followed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(CUDA)
    runner.run(["."], settings(tmp_path), cache=True)
    entry = next((tmp_path / ".cudalint_cache").glob("*.json"))
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    entry.unlink()
    entry.symlink_to(precious)
    (tmp_path / "a.py").write_text(CUDA + "# edited\n")
    runner.run(["."], settings(tmp_path), cache=True)
    assert precious.read_text() == "keep me\n"
    assert not entry.is_symlink()
    assert json.loads(entry.read_text())["findings"][0]["code"] == "CDL201"


# 5 -------------------------------------------------------------------------------------------------

def test_an_edit_saved_during_fix_is_never_overwritten(tmp_path, monkeypatch):
    """A writer saves the file after --fix read it and before the rename (held there by events)."""
    path = tmp_path / "train.py"
    path.write_text(FIXABLE)
    users_edit = FIXABLE + "y = 2  # saved by the user meanwhile\n"
    fixed_computed, user_saved = threading.Event(), threading.Event()
    real_fix_text = fixes.fix_text

    def fix_then_wait(*args, **kwargs):
        outcome = real_fix_text(*args, **kwargs)
        fixed_computed.set()
        assert user_saved.wait(30)
        return outcome

    def user():
        assert fixed_computed.wait(30)
        path.write_text(users_edit)
        user_saved.set()

    monkeypatch.setattr(fixes, "fix_text", fix_then_wait)
    writer = threading.Thread(target=user)
    writer.start()
    outcome = fixes.fix_file(SourceFile(path, "train.py", "python"), settings(tmp_path), "2.15", False, True)
    writer.join()
    assert path.read_text() == users_edit
    assert outcome.error == "the file changed during fix (an edit was saved meanwhile); nothing written"
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


def test_a_file_swapped_for_another_with_the_same_bytes_is_not_written(tmp_path, monkeypatch):
    """Identity counts too: the name now points to another file (a checkout replaced it)."""
    path = tmp_path / "train.py"
    path.write_text(FIXABLE)
    fixed_computed, swapped = threading.Event(), threading.Event()
    real_fix_text = fixes.fix_text

    def fix_then_wait(*args, **kwargs):
        outcome = real_fix_text(*args, **kwargs)
        fixed_computed.set()
        assert swapped.wait(30)
        return outcome

    def swap():
        assert fixed_computed.wait(30)
        (tmp_path / "copy").write_text(FIXABLE)
        os.replace(tmp_path / "copy", path)
        swapped.set()

    monkeypatch.setattr(fixes, "fix_text", fix_then_wait)
    thread = threading.Thread(target=swap)
    thread.start()
    outcome = fixes.fix_file(SourceFile(path, "train.py", "python"), settings(tmp_path), "2.15", False, True)
    thread.join()
    assert path.read_text() == FIXABLE
    assert outcome.error == "the file changed during fix (an edit was saved meanwhile); nothing written"


# 6 -------------------------------------------------------------------------------------------------

def test_the_cache_stores_findings_under_the_bytes_that_were_linted(tmp_path, monkeypatch):
    """The file changes between the cache look-up's read and the lint's read (a writer driven by events).
    The old code stored the new content's findings (none) under the old content's digest, so the old
    content, restored, was served as "All clear"."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "a.py"
    path.write_text(CUDA)
    reads, first_read, rewritten = [], threading.Event(), threading.Event()
    real_read = fileio.read_regular

    def read_and_notify(target, *args, **kwargs):
        data = real_read(target, *args, **kwargs)
        if Path(target).name == "a.py":
            reads.append(data)
            if len(reads) == 1:
                first_read.set()
                assert rewritten.wait(30)
        return data

    def writer():
        assert first_read.wait(30)
        path.write_text(CLEAN)
        rewritten.set()

    monkeypatch.setattr(runner, "read_regular", read_and_notify)
    thread = threading.Thread(target=writer)
    thread.start()
    changed = runner.run(["."], settings(tmp_path), jobs=1, cache=True)
    thread.join()
    assert [f.code for f in changed.findings] == []  # the bytes it linted were the clean ones
    monkeypatch.setattr(runner, "read_regular", real_read)
    path.write_text(CUDA)  # back to the first content: must not be answered "clean" from the cache
    again = runner.run(["."], settings(tmp_path), jobs=1, cache=True)
    assert [(f.code, f.line) for f in again.findings] == [("CDL201", 2)]


# 7 -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("poison", ["dev-zero", "fifo", "deep-json", "huge", "directory", "wrong-shape"])
def test_a_poisoned_cache_entry_is_no_entry(tmp_path, monkeypatch, poison):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(CUDA)
    runner.run(["."], settings(tmp_path), cache=True)
    entry = next((tmp_path / ".cudalint_cache").glob("*.json"))
    key = json.loads(entry.read_text())["key"]
    entry.unlink()
    if poison == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif poison == "fifo":
        os.mkfifo(entry)
    elif poison == "deep-json":
        entry.write_text('{"key": "%s", "findings": %s%s}' % (key, "[" * 100000, "]" * 100000))
    elif poison == "huge":
        with open(entry, "wb") as handle:
            handle.truncate(65 * 1024 * 1024)  # sparse: past ENTRY_MAX_BYTES without using the disk
    elif poison == "directory":
        entry.mkdir()
    else:
        entry.write_text(json.dumps({"key": key, "findings": [{"code": "CDL201", "line": []}]}))
    result = runner.run(["."], settings(tmp_path), cache=True)
    assert [(f.code, f.line) for f in result.findings] == [("CDL201", 2)]


# 8 -------------------------------------------------------------------------------------------------

def test_fifos_and_devices_in_the_tree_are_passed_over(tmp_path):
    os.mkfifo(tmp_path / "x.py")
    os.mkfifo(tmp_path / "requirements.txt")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "ok.py").write_text(CUDA)
    for jobs in ("1", "4"):
        result = lint(tmp_path, "-j", jobs, ".")
        assert [line.split(" ")[:2] for line in result.stdout.splitlines()] == [["ok.py:2:1:", "CDL201"]]
        assert result.returncode == 1


def test_special_files_named_on_the_command_line_get_a_clear_cdl000(tmp_path):
    os.mkfifo(tmp_path / "x.py")
    os.mkfifo(tmp_path / "requirements.txt")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    result = lint(tmp_path, "x.py", "requirements.txt", "zero.py", "/dev/null")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "/dev/null:1:1: CDL000 cannot read: a character device, not a regular file; not read",
        "requirements.txt:1:1: CDL000 cannot read: a FIFO (named pipe), not a regular file; not read",
        "x.py:1:1: CDL000 cannot read: a FIFO (named pipe), not a regular file; not read",
        "zero.py:1:1: CDL000 cannot read: a character device, not a regular file; not read",
    ]


def test_no_file_is_read_past_the_size_limit(tmp_path):
    (tmp_path / "big.py").write_text(CUDA + "#" * 5000 + "\n")
    (tmp_path / "pyproject.toml").write_text("[tool.cudalint]\nmax-file-size = 4096\n")
    (tmp_path / "small.py").write_text(CUDA)
    result = lint(tmp_path, ".")
    lines = result.stdout.splitlines()
    assert lines[0] == "big.py:1:1: CDL000 cannot read: larger than the size limit (5039 bytes; max-file-size is 4096); not read"
    assert lines[1].startswith("small.py:2:1: CDL201 ")
    flag = lint(tmp_path, "--max-file-size", "100000", "big.py")
    assert flag.stdout.startswith("big.py:2:1: CDL201 ")


def test_the_safe_reader_refuses_a_file_swapped_for_a_fifo(tmp_path):
    """The type is checked on the opened descriptor, so a name swapped after the first stat cannot hang it."""
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(fileio.UnreadableFile, match="FIFO"):
        fileio.read_regular(fifo)
    (tmp_path / "r").write_bytes(b"abc")
    assert fileio.read_regular(tmp_path / "r") == b"abc"
    with pytest.raises(fileio.UnreadableFile, match="larger than the size limit"):
        fileio.read_regular(tmp_path / "r", limit=2)


def test_a_gitignore_that_is_a_fifo_does_not_hang_the_walk(tmp_path):
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / "a.py").write_text(CUDA)
    assert lint(tmp_path, ".").stdout.startswith("a.py:2:1: CDL201 ")


# 12 ------------------------------------------------------------------------------------------------

KILLED_WRITER = """
import os, sys
from cudalint import fileio
real_replace = os.replace
def hold(src, dst):
    print("temporary written", flush=True)
    sys.stdin.readline()  # held here until killed
os.replace = hold
fileio.replace_file(sys.argv[1], b"new", sys.argv[2])
"""


def test_a_temporary_file_left_by_a_killed_fix_is_swept_on_the_next_run(tmp_path):
    (tmp_path / "train.py").write_text(FIXABLE)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path / "train.py"), str(tmp_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert writer.stdout.readline() == "temporary written\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait(30)
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(fileio.TEMP_PREFIX)]
    assert len(left) == 1 and left[0].endswith(fileio.TEMP_SUFFIX)
    keep = tmp_path / f"{fileio.TEMP_PREFIX}{os.getpid()}-live{fileio.TEMP_SUFFIX}"  # a live process's own
    keep.write_bytes(b"")
    run_cli("check", "--fix", "--no-cache", ".", cwd=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["train.py", keep.name])
    assert FIXED_MARK not in (tmp_path / "train.py").read_text()


# 16 ------------------------------------------------------------------------------------------------

def test_every_unparsable_python_file_gets_cdl000_trigger_words_or_not(tmp_path):
    (tmp_path / "plain.py").write_text("def f(:\n    return 1\n")
    (tmp_path / "cuda.py").write_text("import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    lines = lint(tmp_path, ".").stdout.splitlines()
    assert [line.split(" ")[:2] for line in lines] == [["cuda.py:2:7:", "CDL000"], ["plain.py:1:7:", "CDL000"]]
    assert lines[1] == "plain.py:1:7: CDL000 syntax error: invalid syntax; the file was not checked"


# 17 ------------------------------------------------------------------------------------------------

def test_fix_keeps_the_bytes_of_every_line_it_did_not_edit(tmp_path):
    """utf-7 spells one text in more than one way: re-encoding the whole file would rewrite lines the
    fix never touched. Only the edited line's bytes change."""
    untouched = b"# coding: utf-7\ns = '+AOk-t+AOk-'\nt = '+AOk-'\n"  # 'été' written with redundant shifts
    data = untouched + FIXABLE.encode()
    (tmp_path / "seven.py").write_bytes(data)
    assert data.decode("utf-7").encode("utf-7") != data  # the whole-file round trip would change them
    run_cli("check", "--fix", "--no-cache", "seven.py", cwd=tmp_path)
    written = (tmp_path / "seven.py").read_bytes()
    assert written.startswith(untouched)
    assert FIXED_MARK.encode() not in written
    assert written.decode("utf-7").count("\u00e9") == 3


def test_encode_edited_refuses_what_would_not_round_trip():
    with pytest.raises(ValueError, match="not encodable as ascii"):
        fixes.encode_edited(b"x = 1\n", "x = 1\n", "x = '\u00e9'\n", "ascii")
    assert fixes.encode_edited(b"\xef\xbb\xbfa\r\nb\r\n", "a\r\nb\r\n", "a\r\nc\r\n", "utf-8-sig") == (
        b"\xef\xbb\xbfa\r\nc\r\n"
    )
