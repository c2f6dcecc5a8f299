"""The flake8 plugin, run through the real flake8: output, columns, selection, noqa, jobs, torch target,
and the same findings as `cudalint check` on the fixtures."""

import argparse
import json
import subprocess
import sys

import pytest

from conftest import FIXTURES, run_cli
from cudalint.catalog import load_catalog
from cudalint.flake8_plugin import CudalintChecker, codes_to_run

CUDA_FILE = (
    "import torch\n"
    "x = torch.ones(1).cuda()\n"
    "torch.cuda.synchronize()\n"
)
LINE_102 = "a.py:2:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
LINE_201 = (
    "a.py:3:1: CDL201 torch.cuda.synchronize raises without CUDA; use torch.accelerator.synchronize() (torch >= 2.6)"
)
ROW = "%(path)s|%(row)d|%(col)d|%(code)s"


def flake8(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.py").write_text(CUDA_FILE)
    return tmp_path


def test_exact_output_and_one_based_columns_as_flake8_prints_them(project):
    result = flake8("--isolated", "a.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [LINE_102, LINE_201]
    assert result.stderr == ""


def test_registered_under_cdl_with_the_version():
    result = flake8("--version", cwd=FIXTURES)
    assert "cudalint: 0.1.0" in result.stdout


def test_noqa_is_flake8s_own(project):
    (project / "a.py").write_text(
        "import torch\n"
        "a = torch.ones(1).cuda()  # noqa\n"
        "b = torch.ones(1).cuda()  # noqa: CDL102\n"
        "c = torch.ones(1).cuda()  # noqa: CDL1\n"
        "d = torch.ones(1).cuda()  # noqa: E501\n"
    )
    result = flake8("--isolated", "a.py", cwd=project)
    assert result.stdout.splitlines() == ["a.py:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"]
    everything = flake8("--isolated", "--disable-noqa", "--select", "CDL", "a.py", cwd=project)
    assert [line.split(":")[1] for line in everything.stdout.splitlines()] == ["2", "3", "4", "5"]


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--select", "CDL2"], [LINE_201]),
        (["--select", "CDL102"], [LINE_102]),
        (["--ignore", "CDL1"], [LINE_201]),
        (["--extend-ignore", "CDL201"], [LINE_102]),
        (["--select", "CDL", "--ignore", "CDL201"], [LINE_102]),
        (["--per-file-ignores", "a.py:CDL102"], [LINE_201]),
        (["--select", "E,W,F"], []),
        (["--ignore", "CDL"], []),
    ],
)
def test_select_and_ignore(project, options, expected):
    result = flake8("--isolated", *options, "a.py", cwd=project)
    assert result.stdout.splitlines() == expected
    assert result.returncode == (1 if expected else 0)


def test_rules_off_by_default_run_only_when_named(project):
    (project / "a.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n")
    assert flake8("--isolated", "a.py", cwd=project).stdout == ""
    for options in (["--extend-select", "CDL210"], ["--select", "CDL2"], ["--select", "CDL"]):
        result = flake8("--isolated", *options, "--format", ROW, "a.py", cwd=project)
        assert result.stdout.splitlines() == ["a.py|2|1|CDL210"], options


def test_codes_to_run_follows_flake8s_decision():
    catalog = load_catalog()
    default = {rule.code for rule in catalog if rule.default}

    def options(**values):
        base = dict(
            select=None, extend_select=None, ignore=None, extend_ignore=None,
            extended_default_select=["CDL"], extended_default_ignore=[],
        )
        base.update(values)
        return argparse.Namespace(**base)

    assert codes_to_run(options()) == default
    assert codes_to_run(options(select=["E", "W"])) == frozenset()
    assert codes_to_run(options(select=["C"])) == default  # a bare "C" does not reach the opt-in rules
    assert codes_to_run(options(extend_select=["CDL210"])) == default | {"CDL210"}
    assert codes_to_run(options(select=["CDL"])) == frozenset(rule.code for rule in catalog)
    assert codes_to_run(options(ignore=["CDL1", "CDL000"])) == {c for c in default if not c.startswith(("CDL1", "CDL000"))}
    assert codes_to_run(options(select=["CDL1"], extend_ignore=["CDL101"])) == {  # a named prefix reaches opt-in rules
        rule.code for rule in catalog if rule.code.startswith("CDL1") and rule.code != "CDL101"
    }


def test_no_work_at_all_when_no_cdl_code_is_selected(project, monkeypatch):
    """flake8 itself, in this process: the engine must not even be called."""
    from flake8.main.application import Application

    import cudalint.runner

    for name in ("selected", "torch_option", "_targets"):  # class state set by parse_options: restored after
        monkeypatch.setattr(CudalintChecker, name, getattr(CudalintChecker, name))
    calls = []
    real = cudalint.runner.lint_text
    monkeypatch.setattr(cudalint.runner, "lint_text", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    monkeypatch.chdir(project)
    app = Application()
    app.run(["--isolated", "-j", "1", "--select", "E,F,W", "a.py"])
    assert calls == [] and app.result_count == 0
    app = Application()
    app.run(["--isolated", "-j", "1", "--select", "CDL2", "--output-file", str(project / "out.txt"), "a.py"])
    assert calls == ["a.py"] and app.result_count == 1


def test_jobs_give_the_same_output(tmp_path):
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(CUDA_FILE)
    one = flake8("--isolated", "-j", "1", ".", cwd=tmp_path)
    two = flake8("--isolated", "-j", "2", ".", cwd=tmp_path)
    assert one.stdout == two.stdout
    assert len(two.stdout.splitlines()) == 24


def test_torch_version_option_config_manifest_and_default(project):
    (project / "a.py").write_text('import torch\nx = torch.linalg.eigvals(torch.ones(2, 2, device="mps"))\n')

    def message(*options):
        result = flake8(*options, "--format", "%(text)s", "a.py", cwd=project)
        assert result.returncode == 1, result.stderr
        return result.stdout.strip()

    newest = message("--isolated")
    from_option = message("--isolated", "--cudalint-torch-version", "2.2")
    assert "no MPS kernel in torch 2.15:" in newest
    assert "no MPS kernel in torch 2.2:" in from_option
    (project / "setup.cfg").write_text("[flake8]\ncudalint-torch-version = 2.2\n")
    assert message() == from_option
    (project / "setup.cfg").unlink()
    # from the project's manifest, like `cudalint check`: the newest release it allows
    (project / "requirements.txt").write_text("torch>=2.2\n")
    assert message("--isolated") == newest
    (project / "requirements.txt").write_text("torch>=2.2,<2.3\n")
    assert message("--isolated") == from_option
    (project / "pyproject.toml").write_text('[tool.cudalint]\ntorch-version = "2.15"\n')
    assert message("--isolated") == newest
    as_json = json.loads(run_cli("check", "--no-cache", "--format", "json", "a.py", "--torch-version", "2.2", cwd=project).stdout)
    assert from_option == as_json[0]["message"]
    bad = flake8("--isolated", "--cudalint-torch-version", "two", "a.py", cwd=project)
    assert bad.returncode != 0
    assert "'two' is not a torch version" in bad.stderr


@pytest.mark.parametrize("folder", ["demo", "python"])
def test_same_findings_as_cudalint_check(folder):
    cwd = FIXTURES / folder
    result = flake8("--isolated", "--format", ROW, ".", cwd=cwd)  # flake8's default selection
    got = sorted(
        (path[2:] if path.startswith("./") else path, int(line), int(col), code)
        for path, line, col, code in (row.split("|") for row in result.stdout.splitlines())
        if code.startswith("CDL")
    )
    checked = run_cli("check", "--no-cache", "--format", "json", ".", cwd=cwd)
    expected = sorted(
        (item["path"], item["line"], item["column"], item["code"])
        for item in json.loads(checked.stdout)
        if item["path"].endswith(".py")
    )
    assert expected, "the fixture has findings"
    assert got == expected


# flake8 run in this interpreter, then what the plugin's run imported and whether the catalog's TOML was read
FLAKE8_STARTUP = """
import sys
from cudalint import catalog
parsed = []
real = catalog._tables
catalog._tables = lambda *args: parsed.append(1) or real(*args)
from flake8.main.application import Application
app = Application()
app.run(sys.argv[1:])
print(app.result_count, "libcst" in sys.modules, bool(parsed))
"""


def test_a_clean_file_costs_no_libcst_and_no_toml_once_the_project_cache_holds_their_products(tmp_path):
    """The plugin keeps the gate words and the catalog's compact copy in the project's cache folder, as
    `cudalint check` does: from the second flake8 run on, a file the gates settle needs neither."""
    (tmp_path / "clean.py").write_text("x = 1\n")
    first = subprocess.run([sys.executable, "-c", FLAKE8_STARTUP, "--select=CDL", "clean.py"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert first.stdout.splitlines() == ["0 True True"], first.stderr
    stored = sorted(path.name.split("-")[0] for path in (tmp_path / ".cudalint_cache").iterdir())
    assert stored == [".gitignore", "catalog.data", "gates", "project"], stored
    again = subprocess.run([sys.executable, "-c", FLAKE8_STARTUP, "--select=CDL", "clean.py"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert again.stdout.splitlines() == ["0 False False"], again.stderr
    (tmp_path / "clean.py").write_text(CUDA_FILE)
    found = flake8("--select=CDL", "clean.py", cwd=tmp_path)
    assert found.stdout.splitlines() == [LINE_102.replace("a.py", "clean.py"), LINE_201.replace("a.py", "clean.py")]
