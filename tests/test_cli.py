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
    assert lines[1].startswith("pkg/train.py:3:1: CDL201 torch.cuda.synchronize raises without CUDA")
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
    assert result.stdout == (
        "1  CDL102  cuda-method       fixable with --unsafe-fixes\n"
        "1  CDL201  cuda-synchronize  fixable with --fix\n"
    )
    assert result.returncode == 1


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
    (tmp_path / "requirements.txt").write_text("torch>=2.4.1,<2.7\n")
    result = run_cli("check", "src/m.py", cwd=tmp_path)
    assert result.stdout.strip().endswith("target torch 2.6 (the newest release torch>=2.4.1,<2.7 in requirements.txt allows).")


# --- adopting on a big project: the conventions of ruff and flake8 -------------------------------------

SUMMARY_2 = (
    "Found 2 problems (2 errors) in 2 files checked; 1 fixable with --fix (1 more with --unsafe-fixes); "
    "target torch 2.15 (newest release cudalint knows)."
)


def test_statistics_without_quiet_follow_the_findings(project):
    result = run_cli("check", "--statistics", "--no-cache", "pkg", cwd=project)
    assert result.stdout.splitlines()[2:] == [
        "",
        "1  CDL102  cuda-method       fixable with --unsafe-fixes",
        "1  CDL201  cuda-synchronize  fixable with --fix",
        SUMMARY_2,
    ]


def test_show_fixes_before_and_after_fix(project):
    before = run_cli("check", "--show-fixes", "--no-cache", "-q", "pkg", cwd=project)
    assert before.stdout.splitlines()[2:] == ["Would fix 1 problem:", "- pkg/train.py:", "    1 \u00d7 CDL201 (cuda-synchronize)"]
    fixed = run_cli("check", "--fix", "--show-fixes", "--no-cache", "pkg", cwd=project)
    assert fixed.returncode == 1
    assert fixed.stdout.splitlines()[1:] == [
        "Fixed 1 problem:",
        "- pkg/train.py:",
        "    1 \u00d7 CDL201 (cuda-synchronize)",
        "Fixed 1 problem. Found 1 problem (1 error) in 2 files checked; 0 fixable with --fix (1 more with "
        "--unsafe-fixes); target torch 2.15 (newest release cudalint knows).",
    ]


def test_exit_non_zero_on_fix(tmp_path):
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    plain = run_cli("check", "--fix", "--no-cache", "a.py", cwd=tmp_path)
    assert plain.returncode == 0
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    strict = run_cli("check", "--fix", "--exit-non-zero-on-fix", "--no-cache", "a.py", cwd=tmp_path)
    assert strict.returncode == 1
    assert strict.stdout == "Fixed 1 problem. All clear: 1 file checked, target torch 2.15 (newest release cudalint knows).\n"


def test_fixable_and_unfixable_flags_and_config(tmp_path):
    source = "import torch\ntorch.cuda.synchronize()\nx = torch.ones(1, pin_memory=True)\n"
    (tmp_path / "a.py").write_text(source)
    run_cli("check", "--fix", "--unfixable", "CDL2", "--no-cache", "a.py", cwd=tmp_path)
    assert (tmp_path / "a.py").read_text() == source.replace("pin_memory=True", "pin_memory=torch.cuda.is_available()")
    (tmp_path / "a.py").write_text(source)
    run_cli("check", "--fix", "--fixable", "CDL201", "--no-cache", "a.py", cwd=tmp_path)
    assert "torch.cuda.synchronize()" not in (tmp_path / "a.py").read_text()
    assert "pin_memory=True" in (tmp_path / "a.py").read_text()
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text('[tool.cudalint]\nunfixable = ["CDL201", "CDL301"]\n')
    result = run_cli("check", "--fix", "--no-cache", "a.py", cwd=tmp_path)
    assert (tmp_path / "a.py").read_text() == source
    assert result.stdout.splitlines()[-1].endswith("0 fixable with --fix; target torch 2.15 (newest release cudalint knows).")


def test_isolated_ignores_the_configuration(tmp_path):
    (tmp_path / "a.py").write_text(CUDA_FILE)
    (tmp_path / "pyproject.toml").write_text('[tool.cudalint]\nignore = ["CDL1", "CDL2"]\n')
    assert run_cli("check", "--no-cache", "a.py", cwd=tmp_path).returncode == 0
    isolated = run_cli("check", "--isolated", "--no-cache", "-q", "a.py", cwd=tmp_path)
    assert [line.split(" ")[1] for line in isolated.stdout.splitlines()] == ["CDL102", "CDL201"]


def test_show_settings_names_the_file_and_the_torch_target_per_path(tmp_path):
    (tmp_path / "new").mkdir()
    (tmp_path / "old").mkdir()
    (tmp_path / "new" / "requirements.txt").write_text("torch>=2.6\n")
    (tmp_path / "old" / "requirements.txt").write_text("torch==2.3.1\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.cudalint]\nextend-select = ["CDL001"]\nignore = ["CDL304"]\nper-file-ignores = { "old/*" = ["CDL1"] }\n'
        'exclude = ["build"]\nunfixable = ["CDL201"]\n'
    )
    from cudalint.catalog import load_catalog

    catalog = load_catalog()
    selected = len(({rule.code for rule in catalog if rule.default} | {"CDL001"}) - {"CDL304"})
    result = run_cli("check", "--show-settings", "new", "old", cwd=tmp_path)
    assert result.returncode == 0
    device_rules = ", ".join(rule.code for rule in catalog if rule.code.startswith("CDL1"))
    assert result.stdout == (
        f"configuration file: {tmp_path / 'pyproject.toml'}\n"
        f"project root: {tmp_path}\n"
        f"rules: {selected} selected of {len(catalog.rules)}\n"
        "  added to the default set: CDL001\n"
        "  left out of the default set: CDL304\n"
        "per-file-ignores (patterns relative to the project root):\n"
        f"  old/* = {device_rules}\n"
        "exclude: build\n"
        "unfixable: CDL201\n"
        "unsafe fixes: off\n"
        "torch target:\n"
        "  new: torch 2.15 from 2.6 (the newest release torch>=2.6 in new/requirements.txt allows)\n"
        "  old: torch 2.3.1 (from old/requirements.txt)\n"
        "files to check: 2\n"
    )


def test_output_format_is_an_alias_of_format(project):
    assert run_cli("check", "--output-format", "json", "pkg", cwd=project).stdout == run_cli(
        "check", "--format", "json", "pkg", cwd=project
    ).stdout


def test_force_color_colours_a_pipe_and_no_color_wins(project):
    import os

    env = {**os.environ, "FORCE_COLOR": "1"}
    env.pop("NO_COLOR", None)
    coloured = run_cli("check", "-q", "pkg", cwd=project, env=env)
    assert coloured.stdout.splitlines()[0] == (
        "\x1b[1mpkg/train.py:2:19:\x1b[0m \x1b[31mCDL102\x1b[0m .cuda() moves data to CUDA only; use .to(device)"
    )
    assert "\x1b[" not in run_cli("check", "-q", "pkg", cwd=project, env={**env, "NO_COLOR": "1"}).stdout
    assert "\x1b[" not in run_cli("check", "-q", "--no-color", "pkg", cwd=project, env=env).stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "--statistcs"], "cudalint: error: unrecognized arguments: --statistcs; did you mean --statistics?"),
        (["check", "--select", "CDL2O1"], "cudalint: error: --select: unknown rule code or prefix 'CDL2O1'; did you mean CDL201?"),
        (["explain", "CDL21"], "cudalint: error: unknown rule code 'CDL21'; did you mean CDL201?; `cudalint rules` lists them"),
        (["chek"], "cudalint: error: argument COMMAND: invalid choice: 'chek' (choose from 'check', 'rules', 'coverage', "
                   "'explain', 'server', 'trace', 'report', 'compare'); did you mean check?"),
    ],
)
def test_did_you_mean(project, args, message):
    result = run_cli(*args, cwd=project)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == message


def test_rules_as_json():
    import json as json_module

    from cudalint.catalog import load_catalog

    result = run_cli("rules", "--format", "json")
    rules = json_module.loads(result.stdout)
    assert [rule["code"] for rule in rules] == [rule.code for rule in load_catalog()]
    assert rules[1] == {
        "code": "CDL001", "name": "unused-noqa", "family": "CDL0", "family_name": "unreadable input and unused noqa",
        "severity": "warning", "fix": "safe", "default": False,
        "summary": "A `# noqa: CDL...` code that silences nothing on its line, or that names no rule.",
        "why": load_catalog()["CDL001"].why.strip(), "bad": "import torch\n\nx = torch.ones(3)  # noqa: CDL102",
        "good": "import torch\n\nx = torch.ones(3).cuda()  # noqa: CDL102", "example_file": "example.py",
    }


def test_a_run_that_checks_no_file_warns_instead_of_all_clear(tmp_path):
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "a.py").write_text(CUDA_FILE)
    (tmp_path / "notes.md").write_text("torch.cuda\n")
    result = run_cli("check", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "Nothing checked: no file found to check, target torch 2.15 (newest release cudalint knows).\n"
    assert result.stderr == (
        "cudalint: warning: no file was checked: . holds no Python file or manifest that is not excluded\n"
    )


def test_per_file_ignores_are_relative_to_the_configuring_pyproject(tmp_path):
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    (tmp_path / "pkg" / "tests" / "t.py").write_text(CUDA_FILE)
    (tmp_path / "pkg" / "main.py").write_text(CUDA_FILE)
    (tmp_path / "pyproject.toml").write_text('[tool.cudalint]\nper-file-ignores = { "pkg/tests/*" = ["CDL1"] }\n')
    for cwd, paths in ((tmp_path, ["pkg"]), (tmp_path / "pkg", ["."]), (tmp_path / "pkg" / "tests", ["..", "."])):
        result = run_cli("check", "-q", "--no-cache", *paths, cwd=cwd)
        codes = sorted(line.split(" ")[0].split(":")[0].rsplit("/", 1)[-1] + " " + line.split(" ")[1]
                       for line in result.stdout.splitlines())
        assert codes == ["main.py CDL102", "main.py CDL201", "t.py CDL201"], cwd
