"""The command line: exit codes, formats, selection, noqa, configuration, discovery."""

import json
import textwrap

import pytest

from conftest import run_cli

CUDA_FILE = "import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(CUDA_FILE)
    (tmp_path / "pkg" / "clean.py").write_text("import torch\nx = torch.ones(1)\n")
    return tmp_path


def test_exit_1_with_findings_and_text_format(project):
    result = run_cli("check", "pkg", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "pkg/train.py:2:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
    assert lines[1].startswith("pkg/train.py:3:1: CDL201 torch.cuda.synchronize only waits for CUDA")
    assert lines[2] == (
        "Found 2 problems (2 errors) in 2 files checked; 1 fixable with --fix (1 more with --unsafe-fixes); "
        "target torch 2.15 (newest release cudalint knows)."
    )


def test_exit_0_when_clean(project):
    result = run_cli("check", "pkg/clean.py", cwd=project)
    assert result.returncode == 0
    assert result.stdout == "All clear: 1 file checked, target torch 2.15 (newest release cudalint knows).\n"


def test_exit_zero_flag(project):
    assert run_cli("check", "--exit-zero", "pkg", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "missing_dir"], "missing_dir: no such file or directory"),
        (["check", "--select", "CDL999", "pkg"], "unknown rule code or prefix 'CDL999'"),
        (["check", "--ignore", "XYZ1", "pkg"], "unknown rule code or prefix 'XYZ1'"),
        (["check", "--torch-version", "banana", "pkg"], "is not a version"),
        (["explain", "CDL999"], "unknown rule code 'CDL999'"),
    ],
)
def test_usage_errors_exit_2(project, args, message):
    result = run_cli(*args, cwd=project)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_flag_exits_2(project):
    result = run_cli("check", "--no-such-flag", cwd=project)
    assert result.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in result.stderr


def test_json_format_is_stable(project):
    result = run_cli("check", "--format", "json", "pkg", cwd=project)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data[0] == {
        "code": "CDL102",
        "path": "pkg/train.py",
        "line": 2,
        "column": 19,
        "end_line": 2,
        "end_column": 23,
        "message": ".cuda() moves data to CUDA only; use .to(device)",
        "severity": "error",
        "fix": {
            "safety": "unsafe",
            "description": "use .to(device)",
            "edits": [
                {  # inline the line would be 97 characters: the call goes onto lines
                    "line": 2,
                    "column": 5,
                    "end_line": 2,
                    "end_column": 25,
                    "content": 'torch.ones(1).to(\n    torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu"),\n)',
                }
            ],
        },
        "related": [],
    }
    assert [(d["code"], d["line"]) for d in data] == [("CDL102", 2), ("CDL201", 3)]


def test_select_ignore_and_prefixes(project):
    only = run_cli("check", "--select", "CDL2", "-q", "pkg", cwd=project)
    assert [line.split()[1] for line in only.stdout.splitlines()] == ["CDL201"]
    ignored = run_cli("check", "--ignore", "CDL102,CDL201", "pkg", cwd=project)
    assert ignored.returncode == 0
    extended = run_cli("check", "--select", "CDL1", "--extend-select", "CDL201", "-q", "pkg", cwd=project)
    assert [line.split()[1] for line in extended.stdout.splitlines()] == ["CDL102", "CDL201"]


def test_statistics_and_quiet(project):
    result = run_cli("check", "--statistics", "-q", "pkg", cwd=project)
    assert result.stdout.splitlines()[-2:] == ["    1  CDL102", "    1  CDL201"]


def test_noqa_bare_specific_and_prefix(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\n"
        "a = torch.ones(1).cuda()  # noqa\n"
        "b = torch.ones(1).cuda()  # noqa: CDL102\n"
        "c = torch.ones(1).cuda()  # noqa: CDL1\n"
        "d = torch.ones(1).cuda()  # noqa: CDL201, CDL3\n"
        "torch.cuda.synchronize()  # NOQA:CDL201\n"
    )
    result = run_cli("check", "-q", "a.py", cwd=tmp_path)
    assert result.stdout.splitlines() == ["a.py:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"]


def test_pyproject_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.cudalint]
            ignore = ["CDL201"]
            extend-select = ["CDL210"]
            per-file-ignores = { "tests/*" = ["CDL1"] }
            extend-exclude = ["generated"]
            torch-version = "2.4"
            """
        )
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "generated").mkdir()
    (tmp_path / "main.py").write_text(CUDA_FILE + "torch.backends.cudnn.benchmark = True\n")
    (tmp_path / "tests" / "test_x.py").write_text(CUDA_FILE)
    (tmp_path / "generated" / "g.py").write_text(CUDA_FILE)
    result = run_cli("check", ".", cwd=tmp_path)
    assert [line.split(":")[0] + " " + line.split()[1] for line in result.stdout.splitlines()[:-1]] == [
        "main.py CDL102",
        "main.py CDL210",
    ]
    assert result.stdout.splitlines()[-1].endswith("target torch 2.4 (configured).")


@pytest.mark.parametrize(
    "table, message",
    [
        ('[tool.cudalint]\nselct = ["CDL1"]\n', "unknown key [tool.cudalint] 'selct'"),
        ('[tool.cudalint]\nselect = ["CDL9"]\n', "unknown rule code or prefix 'CDL9'"),
        ('[tool.cudalint]\nselect = "CDL1"\n', "select must be a list"),
        ("[tool.cudalint]\nselect = [\n", "invalid TOML"),
    ],
)
def test_bad_config_exits_2_naming_the_key(tmp_path, table, message):
    (tmp_path / "pyproject.toml").write_text(table)
    (tmp_path / "a.py").write_text(CUDA_FILE)
    result = run_cli("check", "a.py", "--config", "pyproject.toml", cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr


def test_discovery_skips_git_venvs_builds_and_gitignored(tmp_path):
    for folder in (".git", "venv_custom", "build", "node_modules", "ignored_dir", "src"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(CUDA_FILE)
    (tmp_path / "venv_custom" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / ".gitignore").write_text("ignored_dir/\n*.gen.py\n")
    (tmp_path / "src" / "x.gen.py").write_text(CUDA_FILE)
    result = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    assert sorted({d["path"] for d in json.loads(result.stdout)}) == ["src/m.py"]


def test_explicit_file_is_linted_even_if_excluded(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "m.py").write_text(CUDA_FILE)
    assert run_cli("check", "build/m.py", cwd=tmp_path).returncode == 1


def test_rules_and_explain(cli):
    listing = cli("rules")
    assert listing.returncode == 0
    assert "CDL101  cuda-device-literal" in listing.stdout
    assert "CDL210* cudnn-flag" in listing.stdout
    explained = cli("explain", "cdl101")
    assert explained.returncode == 0
    assert explained.stdout.startswith("CDL101 (cuda-device-literal) [error]")
    assert 'model = torch.nn.Linear(4, 2).to("cuda")' in explained.stdout


def test_no_colour_in_pipes_and_parallel_run_is_deterministic(tmp_path):
    for index in range(40):
        (tmp_path / f"m{index:02}.py").write_text(CUDA_FILE)
    one = run_cli("check", "-j", "1", ".", cwd=tmp_path)
    two = run_cli("check", "-j", "2", ".", cwd=tmp_path)
    assert one.stdout == two.stdout
    assert "\033[" not in two.stdout
    assert len(two.stdout.splitlines()) == 81


def test_python_dash_m_and_version(cli):
    assert cli("--version").stdout.startswith("cudalint ")


def test_target_release_comes_from_the_project_when_one_file_is_checked(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.4.1\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("import torch\n")
    result = run_cli("check", "src/m.py", cwd=tmp_path)
    assert result.stdout.strip().endswith("target torch 2.4.1 (from requirements.txt).")
