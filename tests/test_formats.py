"""Output formats: SARIF 2.1.0 (validated against the published schema), GitHub workflow
commands, and the text format's colour rules on a real terminal."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import run_cli
from cudalint.catalog import load_catalog
from cudalint.findings import Edit, Finding, Fix, Safety, Severity
from cudalint.report.github import escape_data, escape_property, render_github
from cudalint.report.sarif import sarif_log
from cudalint.config import Settings
from cudalint.runner import RunResult, lint_text
from terminal import run_on_terminal

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
CUDA_FILE = 'import torch\nx = torch.ones(1).cuda()\ndevice = torch.device("cuda")\ntorch.backends.cudnn.benchmark = True\n'


def validate(log):
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(log)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(CUDA_FILE)
    (tmp_path / "pkg" / "my file.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "requirements.txt").write_text("torch>=2.3\nflash-attn\n")
    return tmp_path


def test_sarif_is_valid_and_complete(project):
    result = run_cli("check", "--no-cache", "--format", "sarif", ".", cwd=project)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    validate(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("cudalint", "0.1.0")
    assert "informationUri" not in driver  # no placeholder web site
    catalog = load_catalog()
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in catalog]
    rule = driver["rules"][[r["id"] for r in driver["rules"]].index("CDL101")]
    assert rule["name"] == "cuda-device-literal"
    assert rule["shortDescription"] == {"text": catalog["CDL101"].summary}
    assert rule["fullDescription"]["text"].startswith('`torch.device("cuda")`, `.to("cuda:0")`')
    # the whole doc, as `cudalint explain` prints it and as Markdown; no helpUri placeholder
    assert rule["help"] == {"text": catalog["CDL101"].explain(), "markdown": catalog["CDL101"].markdown()}
    assert "## Use instead\n    import torch\n" in rule["help"]["text"]
    assert '```python\nimport torch\n\nmodel = torch.nn.Linear(4, 2).to("cuda")\n```' in rule["help"]["markdown"]
    sections = ["# CDL101 cuda-device-literal", "## What it does", "## Why is this bad", "## Example (`example.py`)",
                "## Use instead", "## Fix safety\nFix is safe: behaviour on a CUDA machine is unchanged"]
    positions = [rule["help"]["markdown"].index(section) for section in sections]
    assert positions == sorted(positions)
    assert all("helpUri" not in r for r in driver["rules"])
    assert rule["defaultConfiguration"] == {"level": "error", "enabled": True}
    cudnn = driver["rules"][[r["id"] for r in driver["rules"]].index("CDL210")]
    assert cudnn["defaultConfiguration"] == {"level": "note", "enabled": False}

    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert run["properties"] == {"filesChecked": 3, "torchVersion": "2.15",
                                 "torchVersionSource": "the newest release torch>=2.3 in requirements.txt allows",
                                 "torchVersionBySubtree": {}}
    got = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in run["results"]
    ]
    assert got == [
        ("CDL201", "error", "pkg/my%20file.py", 2),
        ("CDL102", "error", "pkg/train.py", 2),
        ("CDL101", "error", "pkg/train.py", 3),
        ("CDL501", "error", "requirements.txt", 2),
    ]
    for r in run["results"]:
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
        assert re.fullmatch(r"[0-9a-f]{32}:1", r["partialFingerprints"]["primaryLocationLineHash"])


def test_sarif_region_and_fix_match_the_json_finding(project):
    as_json = json.loads(run_cli("check", "--no-cache", "--format", "json", "pkg/train.py", cwd=project).stdout)
    log = json.loads(run_cli("check", "--no-cache", "--format", "sarif", "pkg/train.py", cwd=project).stdout)
    validate(log)
    finding = next(f for f in as_json if f["code"] == "CDL101")
    result = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "CDL101")
    assert result["message"] == {"text": finding["message"]}
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": finding["line"],
        "startColumn": finding["column"],
        "endLine": finding["end_line"],
        "endColumn": finding["end_column"],
    }
    assert finding["fix"] is not None and finding["fix"]["edits"]
    (fix,) = result["fixes"]
    assert fix["description"] == {"text": finding["fix"]["description"]}
    assert fix["properties"] == {"safety": finding["fix"]["safety"]}
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [
        {
            "deletedRegion": {
                "startLine": edit["line"],
                "startColumn": edit["column"],
                "endLine": edit["end_line"],
                "endColumn": edit["end_column"],
            },
            "insertedContent": {"text": edit["content"]},
        }
        for edit in finding["fix"]["edits"]
    ]


def test_sarif_by_hand_levels_absolute_paths_and_empty_runs(tmp_path):
    outside = tmp_path / "elsewhere" / "a b.py"
    findings = [
        Finding("CDL210", "x.py", 4, 1, 4, 31, "cudnn", Severity.INFO),
        Finding("CDL304", "x.py", 5, 9, 5, 27, "copy", Severity.WARNING),
        Finding(
            "CDL101",
            str(outside),
            1,
            5,
            1,
            11,
            "cuda",
            Severity.ERROR,
            Fix(Safety.UNSAFE, "use device", (Edit(1, 5, 1, 11, "device"), Edit(1, 1, 1, 1, "import x\n"))),
        ),
    ]
    (tmp_path / "repo").mkdir()
    log = sarif_log(RunResult(findings=findings, files=2), cwd=tmp_path / "repo")
    validate(log)
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["note", "warning", "error"]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "x.py", "uriBaseId": "%SRCROOT%"}
    assert results[2]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": outside.as_uri()}
    assert results[2]["fixes"][0]["properties"] == {"safety": "unsafe"}
    assert results[2]["fixes"][0]["artifactChanges"][0]["replacements"][1] == {
        "deletedRegion": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1},
        "insertedContent": {"text": "import x\n"},
    }
    empty = sarif_log(RunResult(), cwd=tmp_path)
    validate(empty)
    assert empty["runs"][0]["results"] == []


def test_github_format_exact_lines(project):
    result = run_cli("check", "--no-cache", "--format", "github", "--extend-select", "CDL210", ".", cwd=project)
    assert result.returncode == 1
    settings = Settings(select=frozenset({"CDL210", "CDL501"}))
    (cudnn,) = lint_text("pkg/train.py", "python", CUDA_FILE, settings, "2.3")
    (flash,) = lint_text("requirements.txt", "requirements", "torch>=2.3\nflash-attn\n", settings, "2.3")
    assert result.stdout.splitlines() == [
        "::error file=pkg/my file.py,line=2,col=1,endLine=2,endColumn=23,title=CDL201::"
        "torch.cuda.synchronize raises without CUDA; use torch.accelerator.synchronize() (torch >= 2.6)",
        "::error file=pkg/train.py,line=2,col=19,endLine=2,endColumn=23,title=CDL102::"
        ".cuda() moves data to CUDA only; use .to(device)",
        "::error file=pkg/train.py,line=3,col=23,endLine=3,endColumn=29,title=CDL101::"
        'device "cuda" is CUDA-only; choose the device at run time',
        f"::notice file=pkg/train.py,line=4,col=1,endLine=4,endColumn=31,title=CDL210::{escape_data(cudnn.message)}",
        f"::error file=requirements.txt,line=2,col=1,endLine=2,endColumn=11,title=CDL501::{escape_data(flash.message)}",
    ]
    assert result.stderr == ""


def test_github_warning_and_escaping():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    findings = [
        Finding("CDL304", "dir, x/a:b.py", 3, 7, 3, 25, "50% slower,\nsee: docs", Severity.WARNING),
    ]
    assert render_github(RunResult(findings=findings)) == (
        "::warning file=dir%2C x/a%3Ab.py,line=3,col=7,endLine=3,endColumn=25,title=CDL304::"
        "50%25 slower,%0Asee: docs\n"
    )
    assert render_github(RunResult()) == ""


def test_unknown_format_is_a_usage_error(project):
    result = run_cli("check", "--format", "xml", ".", cwd=project)
    assert result.returncode == 2
    assert "invalid choice: 'xml'" in result.stderr


def _on_terminal(args, cwd, extra_env):
    """Run the CLI with stdout on a pseudo-terminal; return what the terminal showed."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI")}
    env.update(extra_env)
    code, shown, _ = run_on_terminal([sys.executable, "-m", "cudalint", *args], cwd=cwd, env=env)
    return code, shown.decode().replace("\r\n", "\n")


@pytest.mark.parametrize(
    "args, env, coloured",
    [
        ([], {}, True),
        ([], {"NO_COLOR": "1"}, False),
        ([], {"NO_COLOR": ""}, True),  # no-color.org: an empty NO_COLOR does not count
        (["--no-color"], {}, False),
    ],
)
def test_colour_only_on_a_terminal_and_no_color_honoured(project, args, env, coloured):
    code, shown = _on_terminal(["check", "--no-cache", *args, "pkg/train.py"], project, env)
    assert code == 1
    plain = "pkg/train.py:2:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
    if coloured:
        assert "\033[1mpkg/train.py:2:19:\033[0m \033[31mCDL102\033[0m .cuda() moves data" in shown
    else:
        assert "\033[" not in shown
        assert shown.splitlines()[0] == plain


def test_summary_counts_severities_fixable_and_torch_release(project):
    result = run_cli("check", "--no-cache", "--extend-select", "CDL210", ".", cwd=project)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("Found 5 problems (4 errors, 1 info) in 3 files checked; 1 fixable")
    assert last.endswith("; target torch 2.15 (the newest release torch>=2.3 in requirements.txt allows).")


def git_init(folder):
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True, timeout=60)


def sarif_results(cwd, *paths):
    result = run_cli("check", "--no-cache", "--format", "sarif", *paths, cwd=cwd)
    log = json.loads(result.stdout)
    validate(log)
    return log["runs"][0]


def test_sarif_paths_are_relative_to_the_git_root_not_the_working_directory(project):
    git_init(project)
    run = sarif_results(project / "pkg", "train.py", "../requirements.txt")
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.resolve().as_uri() + "/"}}
    assert [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]) for r in run["results"]
    ] == [
        ("CDL501", {"uri": "requirements.txt", "uriBaseId": "%SRCROOT%"}),
        ("CDL102", {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}),
        ("CDL101", {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}),
    ]
    assert run["results"][1]["fixes"][0]["artifactChanges"][0]["artifactLocation"] == {
        "uri": "pkg/train.py",
        "uriBaseId": "%SRCROOT%",
    }


def fingerprints_by_line(run):
    return {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["partialFingerprints"][
            "primaryLocationLineHash"
        ]
        for r in run["results"]
    }


def test_sarif_fingerprints_survive_an_unrelated_edit_above_the_finding(project):
    git_init(project)
    train = project / "pkg" / "train.py"
    train.write_text(
        "import torch\n"
        "x = torch.ones(1).cuda()\n"
        "y = torch.ones(1).cuda()\n"
        "\n"
        "y = torch.ones(1).cuda()\n"
        "y = torch.ones(1).cuda()\n"
    )
    before = fingerprints_by_line(sarif_results(project, "pkg/train.py"))
    assert sorted(before) == [("CDL102", 2), ("CDL102", 3), ("CDL102", 5), ("CDL102", 6)]
    assert len(set(before.values())) == 4

    train.write_text(
        "import torch\n"
        "\n"
        "# set-up: a comment, a blank line and a statement added above every finding\n"
        "import os\n"
        "x = torch.ones(1).cuda()\n"
        "    \n"
        "y = torch.ones(1).cuda()\n"
        "\n"
        "y = torch.ones(1).cuda()\n"
        "y =  torch.ones(1).cuda()   \n"  # re-spacing is not a change either
    )
    after = fingerprints_by_line(sarif_results(project, "pkg/train.py"))
    assert sorted(after) == [("CDL102", 5), ("CDL102", 7), ("CDL102", 9), ("CDL102", 10)]
    assert after[("CDL102", 7)] == before[("CDL102", 3)]
    assert after[("CDL102", 9)] == before[("CDL102", 5)]
    assert after[("CDL102", 10)] == before[("CDL102", 6)]
    # the first finding's own neighbour changed (import torch -> import os): that one is a new alert
    assert after[("CDL102", 5)] != before[("CDL102", 2)]

    train.write_text(train.read_text().replace("y =  torch.ones(1).cuda()", "z = torch.ones(1).cuda()"))
    edited = fingerprints_by_line(sarif_results(project, "pkg/train.py"))
    assert edited[("CDL102", 10)] != after[("CDL102", 10)]  # the finding's own line changed
    assert edited[("CDL102", 7)] == after[("CDL102", 7)]


def test_sarif_identical_lines_in_identical_context_are_told_apart_by_their_order(project):
    (project / "pkg" / "train.py").write_text("import torch\n" + "a()\ny = torch.ones(1).cuda()\nb()\n" * 2)
    hashes = fingerprints_by_line(sarif_results(project, "pkg/train.py"))
    first, second = hashes[("CDL102", 3)], hashes[("CDL102", 6)]
    assert first.split(":")[0] == second.split(":")[0]
    assert (first[-2:], second[-2:]) == (":1", ":2")


def test_rule_docs_in_docs_rules_are_generated_from_the_catalog():
    from cudalint.catalog import docs_dir

    catalog = load_catalog()
    folder = docs_dir()
    assert sorted(path.stem for path in folder.glob("*.md")) == sorted(rule.code for rule in catalog)
    for rule in catalog:
        assert (folder / f"{rule.code}.md").read_text(encoding="utf-8") == rule.markdown(), (
            "run: python scripts/update_readme.py"
        )


def test_gitlab_code_quality_report(project):
    git_init(project)
    (project / "pkg" / "train.py").write_text(CUDA_FILE + "x = batch.to(torch.float64)\n")
    result = run_cli("check", "--no-cache", "--format", "gitlab", "--extend-select", "CDL210", ".", cwd=project / "pkg")
    assert result.returncode == 1
    issues = json.loads(result.stdout)
    fingerprints = [issue.pop("fingerprint") for issue in issues]
    assert all(re.fullmatch(r"[0-9a-f]{32}", value) for value in fingerprints)
    assert len(set(fingerprints)) == len(fingerprints)
    as_json = json.loads(run_cli("check", "--no-cache", "--format", "json", "--extend-select", "CDL210", ".",
                                 cwd=project / "pkg").stdout)
    severities = {"error": "major", "warning": "minor", "info": "info"}
    assert issues == [
        {
            "description": f"{f['code']} {f['message']}",
            "check_name": f["code"],
            "severity": severities[f["severity"]],
            "location": {"path": "pkg/" + f["path"], "lines": {"begin": f["line"], "end": f["end_line"]}},
        }
        for f in as_json
    ]
    assert [(i["check_name"], i["severity"], i["location"]["lines"]["begin"]) for i in issues] == [
        ("CDL201", "major", 2),
        ("CDL102", "major", 2),
        ("CDL101", "major", 3),
        ("CDL210", "info", 4),
        ("CDL601", "minor", 5),
    ]
    # the same issue keeps its fingerprint when lines are added above it
    train = project / "pkg" / "train.py"
    train.write_text("# ported later\n\n" + train.read_text())
    moved = json.loads(run_cli("check", "--no-cache", "--format", "gitlab", "pkg/train.py", cwd=project).stdout)
    assert {(i["check_name"], i["fingerprint"]) for i in moved} == {
        (i["check_name"], fp) for i, fp in zip(issues, fingerprints) if i["location"]["path"] == "pkg/train.py"
        and i["check_name"] != "CDL210"
    }
    assert run_cli("check", "--no-cache", "--format", "gitlab", "--exit-zero", "pkg/my file.py", "--select", "CDL1",
                   cwd=project).stdout == "[]\n"

