"""Manifests a hostile repository can hold: nothing in them crashes the run, leaks a file, hangs or
eats memory; each defect is one finding on its line and the rest of the file is still checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from cudalint.manifests import check_manifest
from cudalint.manifests.includes import MAX_FILES

CUDA_LINE = "import torch; torch.cuda.synchronize()\n"
SECRET = "machine example.org password hunter2-SECRET"


def triples(findings):
    return [(f.code, f.line, f.column) for f in findings]


# -- a setup.py that would overflow the C stack --------------------------------------------------
@pytest.fixture
def deep_setup(tmp_path):
    (tmp_path / "setup.py").write_text("x = " + "[" * 2000 + "]" * 2000 + "\n")
    (tmp_path / "a.py").write_text(CUDA_LINE)
    return tmp_path


@pytest.mark.parametrize("jobs", [[], ["-j", "2"]])
def test_deep_setup_py_read_for_the_target_release(deep_setup, jobs):
    result = run_cli("check", "--no-cache", *jobs, "a.py", cwd=deep_setup)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines()[0].startswith("a.py:1:15: CDL201 ")


def test_deep_setup_py_linted_is_one_cdl000(deep_setup):
    result = run_cli("check", "--no-cache", "-q", ".", cwd=deep_setup)
    lines = result.stdout.splitlines()
    assert [line.split(" ")[:2] for line in lines] == [
        ["a.py:1:15:", "CDL201"], ["setup.py:1:205:", "CDL000"],
    ]
    # setup.py is Python too: CPython's own parse reports it once, for the file (the manifest reader's
    # CDL000 for the same line is dropped then)
    assert lines[1] == "setup.py:1:205: CDL000 syntax error: too many nested parentheses; the file was not checked"


def test_deep_setup_py_under_flake8(deep_setup):
    result = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "CDL", "a.py"],
                            cwd=deep_setup, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("a.py:1:15: CDL201 ")


def test_setup_py_that_the_python_checker_also_refuses_gets_one_cdl000():
    from cudalint.config import Settings
    from cudalint.catalog import load_catalog
    from cudalint.runner import lint_text

    text = "import torch\nsetup(install_requires=['xformers'" + "(" * 300 + "\n"
    settings = Settings(select=frozenset(rule.code for rule in load_catalog()))
    assert [f.code for f in lint_text("setup.py", "python", text, settings, "2.5")] == ["CDL000"]


# -- includes that leave the project ---------------------------------------------------------------
@pytest.fixture
def secrets(tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".netrc").write_text(SECRET + "\n")
    (project / "inside.txt").write_text("xformers\n")
    (project / "escape.txt").symlink_to(tmp_path / "home" / ".netrc")
    os.mkfifo(project / "pipe.txt")
    (project / "requirements.txt").write_text(
        "-r /etc/passwd\n-r ../home/.netrc\n-c ../home/.netrc\n--requirement=sub/../../home/.netrc\n"
        "-r escape.txt\n-r pipe.txt\n-r inside.txt\n-r ../home/missing.txt\n"
    )
    return project


def test_includes_outside_the_project_are_not_read(secrets):
    findings = check_manifest(str(secrets / "requirements.txt"), (secrets / "requirements.txt").read_text())
    assert [(f.code, f.line, f.column, f.message) for f in findings if f.code == "CDL000"] == [
        ("CDL000", 1, 1, "line 1: '/etc/passwd' was not read: it is outside the project"),
        ("CDL000", 2, 1, "line 2: '../home/.netrc' was not read: it is outside the project"),
        ("CDL000", 3, 1, "line 3: '../home/.netrc' was not read: it is outside the project"),
        ("CDL000", 4, 1, "line 4: 'sub/../../home/.netrc' was not read: it is outside the project"),
        ("CDL000", 5, 1, "line 5: 'escape.txt' was not read: it is outside the project"),  # a symlink out
        ("CDL000", 6, 1, "line 6: 'pipe.txt' was not read: it is not a regular file"),  # a FIFO: no hang
        # whether a file outside exists is not said either
        ("CDL000", 8, 1, "line 8: '../home/missing.txt' was not read: it is outside the project"),
    ]
    assert [(f.code, f.path) for f in findings if f.code != "CDL000"] == [("CDL501", str(secrets / "inside.txt"))]


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github"])
def test_no_report_quotes_an_included_file(secrets, output):
    result = run_cli("check", "--no-cache", "--format", output, ".", cwd=secrets)
    assert result.returncode == 1, result.stderr
    assert "hunter2" not in result.stdout + result.stderr
    assert "root:" not in result.stdout


def test_a_long_include_chain_stops_at_the_limit(tmp_path):
    (tmp_path / ".git").mkdir()
    count = 1500
    for number in range(count):
        (tmp_path / f"r{number}.txt").write_text(f"-r r{number + 1}.txt\n" if number + 1 < count else "xformers\n")
    findings = check_manifest(str(tmp_path / "requirements.txt"), "-r r0.txt\nflash-attn\n")
    assert triples(findings) == [("CDL000", 1, 1), ("CDL501", 2, 1)]
    assert findings[0].path == str(tmp_path / f"r{MAX_FILES - 2}.txt")
    assert findings[0].message == (f"line 1: 'r{MAX_FILES - 1}.txt' was not read: more than {MAX_FILES} requirement"
                                   " files are included from 'requirements.txt'")


# -- malformed input: one finding on its line, the rest still checked -----------------------------
BAD_URL = "https://[x"


@pytest.mark.parametrize(
    "path, text, expected",
    [
        ("requirements.txt", f"torch @ {BAD_URL}\n--extra-index-url {BAD_URL}\n{BAD_URL}/a.whl\nxformers\n",
         [("CDL000", 1, 1), ("CDL000", 2, 1), ("CDL000", 3, 1), ("CDL501", 4, 1)]),
        ("Pipfile", f'[[source]]\nurl = "{BAD_URL}"\nname = "a"\n[packages]\nxformers = "*"\nb = {{git = "{BAD_URL}"}}\n',
         [("CDL000", 2, 1), ("CDL501", 5, 1), ("CDL000", 6, 1)]),
        ("pixi.toml", f'[project]\nchannels = ["{BAD_URL}"]\n[pypi-options]\nindex-url = "{BAD_URL}"\n'
                      '[dependencies]\ncudatoolkit = "11.8"\n',
         [("CDL000", 2, 13), ("CDL000", 4, 1), ("CDL508", 6, 1)]),
        ("pyproject.toml", f'[project]\ndependencies = ["a @ {BAD_URL}", "xformers"]\n[[tool.uv.index]]\nurl = "{BAD_URL}"\n',
         [("CDL000", 2, 17), ("CDL501", 2, 35), ("CDL000", 4, 1)]),
        ("environment.yml", f'channels:\n  - {BAD_URL}\ndependencies:\n  - cudatoolkit\n  - pip:\n    - "{BAD_URL}"\n',
         [("CDL000", 2, 5), ("CDL508", 4, 5), ("CDL000", 6, 7)]),
        ("setup.py", f'setup(install_requires=["a @ {BAD_URL}", "xformers"], dependency_links=["{BAD_URL}"])\n',
         [("CDL000", 1, 25), ("CDL501", 1, 43), ("CDL000", 1, 74)]),
        ("Dockerfile", "FROM python:3.11\f\nRUN echo \u2028 x\nRUN pip install\x85x xformers\n"
                       "FROM nvidia/cuda:12.1.0-base-ubuntu22.04\nRUN pip install xformers\n",
         [("CDL454", 4, 6), ("CDL501", 5, 17)]),
        ("CMakeLists.txt", "project(x LANGUAGES CUDA)\n#[[ never closed\nenable_language(CUDA)\n",
         [("CDL451", 1, 21), ("CDL000", 2, 1)]),
        ("pyproject.toml", "[project]\ndependencies = " + "[" * 3000 + "]" * 3000 + "\n[tool.poetry.dependencies]\nxformers = '*'\n",
         [("CDL000", 2, 1), ("CDL501", 4, 1)]),
        ("environment.yml", "dependencies:\n  - cudatoolkit\n  - " + "[" * 3000 + "]" * 3000 + "\n  - cudnn\n",
         [("CDL508", 2, 5), ("CDL000", 3, 5), ("CDL000", 3, 67), ("CDL508", 4, 5)]),
        ("uv.lock", '[[package]]\nname = "a"\nwheels = [\n  { url = "x' + "\n" * 3 + '[[package]]\nname = "flash-attn"\n',
         [("CDL000", 3, 1), ("CDL501", 8, 1)]),  # the entry that never ends
    ],
)
def test_each_defect_is_one_finding_on_its_line(path, text, expected):
    assert triples(check_manifest(path, text)) == expected


def test_form_feed_and_unicode_line_separators_do_not_move_positions():
    text = "numpy\f\nxformers \u2028\n# \x85\nflash-attn\n"
    assert triples(check_manifest("requirements.txt", text)) == [("CDL501", 2, 1), ("CDL501", 4, 1)]
    cfg = "[options]\ninstall_requires =\n    numpy\u2028\n    xformers\n"
    assert triples(check_manifest("setup.cfg", cfg)) == [("CDL501", 4, 5)]


# -- memory -------------------------------------------------------------------------------------
def _write_lock(path: Path, size: int) -> int:
    """A uv.lock of about `size` bytes: a chain of Linux-only packages, then flash-attn (which the
    project depends on everywhere) on its last line but one; returns that line's number."""
    wheel = '    {{ url = "https://example.org/p{0}-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", hash = "sha256:{1}", size = 1 }},\n'
    written, number, lines = 0, 0, 0
    with path.open("w", encoding="utf-8") as stream:
        head = '[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { virtual = "." }\ndependencies = [{ name = "pkg0" }, { name = "flash-attn" }]\n'
        while written < size:
            part = head if number == 0 else (
                f'\n[[package]]\nname = "pkg{number - 1}"\nversion = "1.0"\nsource = {{ registry = "https://example.org/simple" }}\n'
                f'dependencies = [\n    {{ name = "pkg{number}", marker = "sys_platform == \'linux\'" }},\n]\n'
                "wheels = [\n" + "".join(wheel.format(number, "a" * 64) for _ in range(8)) + "]\n"
            )
            stream.write(part)
            written += len(part)
            lines += part.count("\n")
            number += 1
        stream.write('\n[[package]]\nname = "flash-attn"\nversion = "2.5.8"\n')
    return lines + 3


def test_a_50_mb_uv_lock_is_checked_in_bounded_memory(tmp_path):
    """The real command in a process of its own, which reports its peak resident memory at the end."""
    line = _write_lock(tmp_path / "uv.lock", 50_000_000)
    # VmHWM is the peak of this process image alone; ru_maxrss would start from the forking pytest's size.
    script = (
        "import re, sys\n"
        "from cudalint.cli import main\n"
        "code = main(['check', '--no-cache', '-q', '--max-file-size', '100000000', 'uv.lock'])\n"
        "status = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent / "src"))
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env,
                            timeout=900)
    assert result.returncode == 1, result.stderr
    assert [row.split(" ")[:2] for row in result.stdout.splitlines()] == [[f"uv.lock:{line}:1:", "CDL501"]]
    assert "(only installed off macOS here" not in result.stdout  # the project needs it on every platform
    assert int(result.stderr.split()[-1]) < 500 * 1024  # KiB


def test_setup_py_lists_that_name_themselves_are_read_once(tmp_path):
    """guidance's setup.py: `test_requires = test_requires + unittest_requires` reads the list bound before
    it; names that add each other (`a = b + [...]`, `b = a + [...]`) are expanded once each, in a process
    of its own so that an endless expansion would fail the test instead of hanging it."""
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "test_requires = ['pytest', 'flash-attn']\n"
        "unit = ['anytree']\n"
        "test_requires = test_requires + unit + ['xformers']\n"
        "a = ['numpy']\n"
        "b = a + ['triton']\n"
        "a = b + a + ['torch']\n"
        "setup(name='x', tests_require=test_requires, install_requires=a + b)\n"
    )
    script = "from cudalint.cli import main\nraise SystemExit(main(['check', '--no-cache', '-q', '--exit-zero', 'setup.py']))\n"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent / "src"))
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [" ".join(row.split(" ")[:2]) for row in result.stdout.splitlines()] == [
        "setup.py:2:28: CDL501", "setup.py:4:41: CDL501", "setup.py:6:10: CDL501"]
