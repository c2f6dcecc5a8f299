"""The one-file start-up floor: a run loads only what its files need. A file the gates settle whatever
the project holds builds no project index (nor imports its modules), reads no TOML and loads no
tokenizer, temporary-file, threading, OpenSSL, typing or output-format module it does not use; a file whose answer may depend on
the project still gets the index, and the same findings as when the index is always built."""

import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from cudalint import runner
from cudalint.catalog import load_catalog
from cudalint.config import resolve

WATCHED = (
    "cudalint.project.index", "cudalint.project.facts", "cudalint.project.reach", "cudalint.project.availability",
    "cudalint.python.guard_facts", "cudalint.python.optional_facts", "cudalint.python.engine", "libcst", "tomllib",
    "tempfile", "shutil", "cudalint.manifests.checks", "cudalint.report.json_format", "cudalint.python.fixplan",
    "concurrent.futures.process", "_hashlib", "threading", "tokenize", "typing",
)

# Runs cudalint's main as the console script would, then says which watched modules it loaded.
PROBE = f"""
import sys
from cudalint.cli import main
code = main(sys.argv[1:])
print(code, sorted(name for name in {WATCHED!r} if name in sys.modules))
"""


def probe(cwd, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("text", ["x = 1\n", "", '"""A module with only a docstring."""\n', "def f(a, b=2):\n    return a + b\n"])
def test_a_file_the_gates_settle_alone_loads_no_index_toml_or_temporary_files(tmp_path, text):
    (tmp_path / "clean.py").write_text("x = 0\n")
    probe(tmp_path, "check", "-q", "clean.py")  # the first run stores the gate words and the catalog's copy
    (tmp_path / "clean.py").write_text(text)
    assert probe(tmp_path, "check", "-q", "clean.py") == ["0 []"]
    assert sorted(path.name for path in (tmp_path / ".cudalint_cache").iterdir() if path.name.startswith("project-index")) == []


def test_a_file_whose_answer_may_depend_on_the_project_gets_the_index(tmp_path):
    """`import fused_ops_cuda` names nothing the checks look for; only the index knows that setup.py
    builds it as a CUDA extension (CDL406). Checked alone, the file still gets that finding."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", project)
    (project / "solo.py").write_text("import fused_ops_cuda\n")
    probe(project, "check", "-q", "utils.py")
    lines = probe(project, "check", "-q", "solo.py")
    assert lines[0].startswith("solo.py:1:1: CDL406 ")
    code, loaded = lines[-1].split(" ", 1)
    assert code == "1"
    assert {"cudalint.project.index", "cudalint.project.facts", "cudalint.project.reach"} <= set(ast.literal_eval(loaded))


def test_a_pyproject_toml_is_read_with_the_toml_parser(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.cudalint]\nextend-exclude = ["build2"]\n')
    (tmp_path / "clean.py").write_text("x = 1\n")
    probe(tmp_path, "check", "-q", "clean.py")
    [line] = probe(tmp_path, "check", "-q", "clean.py")
    code, loaded = line.split(" ", 1)
    assert code == "0"  # the configuration and the manifest reader read it; still no index
    assert [name for name in ast.literal_eval(loaded) if name.startswith(("tomllib", "cudalint.project"))] == ["tomllib"]


# Texts the gates settle whatever the project holds, beside texts they do not (an import, a keyword,
# an attribute of a name the project defines, a syntax error): a project whose index has words of its own.
TEXTS = {
    "empty.py": "",
    "assign.py": "fused_ops_cuda = 1\nDEVICE = 2\n",
    "doc.py": '"""cuda everywhere, in a docstring: no finding."""\n',
    "noqa.py": "x = 1  # noqa: CDL101\n",
    "imports.py": "import fused_ops_cuda\n",
    "attribute.py": "from utils import get_batch\nget_batch()\n",
    "keyword.py": "f(device=DEVICE)\n",
    "broken.py": "def f(:\n",
    "await.py": "await x\n",
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_findings_are_the_same_with_the_index_built_first(tmp_path, monkeypatch, name):
    """Checked alone, each file gets exactly the findings it gets when the run is handed a project
    index built beforehand (which never skips the index)."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", project)
    (project / name).write_text(TEXTS[name])
    monkeypatch.chdir(project)
    settings = resolve(load_catalog(), config_path=None, select=["ALL"])
    alone = runner.run([name], settings, jobs=1)
    settings.project = runner.project_index(settings)
    given = runner.run([name], settings, jobs=1)
    rows = [(f.path, f.code, f.line, f.column, f.message) for f in given.findings]
    assert [(f.path, f.code, f.line, f.column, f.message) for f in alone.findings] == rows
    expected = {"attribute.py": ["CDL113"], "broken.py": ["CDL000"], "imports.py": ["CDL406"], "noqa.py": ["CDL001"]}.get(name, [])
    assert [row[1] for row in rows] == expected


def test_the_index_is_skipped_only_for_files_settled_whatever_the_project_holds(tmp_path, monkeypatch):
    built = []
    real = runner.project_index
    monkeypatch.setattr(runner, "project_index", lambda *args, **kwargs: built.append(1) or real(*args, **kwargs))
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", project)
    for name, text in TEXTS.items():
        (project / name).write_text(text)
    monkeypatch.chdir(project)
    settings = resolve(load_catalog(), config_path=None)
    settled = ["empty.py", "assign.py", "doc.py", "noqa.py"]
    assert runner.run(settled, settings, jobs=1).findings == []
    assert built == []
    for name in ("imports.py", "attribute.py", "keyword.py", "broken.py"):
        runner.run([*settled, name], settings, jobs=1)
        assert len(built) == 1, name
        built.clear()


def test_files_settled_without_the_index_are_not_answered_from_or_written_to_the_result_cache(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    settings = resolve(load_catalog(), config_path=None)
    assert runner.run(["a.py"], settings, jobs=1, cache=True).findings == []
    folder = tmp_path / ".cudalint_cache"
    assert list(folder.glob("*.json")) == [] and list(folder.glob("project-index-*")) == []
    assert [json.loads(path.read_text())["names"] != [] for path in folder.glob("gates-*.data")] == [True]
    (tmp_path / "a.py").write_text("import os\nx = os.getcwd()\n")  # may depend on the project: index, cache
    assert runner.run(["a.py"], settings, jobs=1, cache=True).findings == []
    assert len(list(folder.glob("*.json"))) == 1 and len(list(folder.glob("project-index-*"))) == 1
