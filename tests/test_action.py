"""action.yml, the composite GitHub Action: its shell steps run as the runner runs them (bash -eo pipefail,
inputs through the step's env, GITHUB_ACTION_PATH, GITHUB_OUTPUT, RUNNER_TEMP), installing cudalint
for real into a fresh environment; the steps that use other actions are checked for their wiring."""

import json
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import jsonschema
import pytest
import yaml

from conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
CONDITION = re.compile(r"^inputs\.([\w-]+) (==|!=) '([^']*)'$")


def test_inputs_outputs_and_the_steps_that_use_other_actions():
    assert ACTION["runs"]["using"] == "composite"
    assert {name: spec["default"] for name, spec in ACTION["inputs"].items()} == {
        "paths": ".", "torch-version": "", "format": "sarif", "fail-on": "error",
    }
    assert ACTION["outputs"]["report"]["value"] == "${{ steps.check.outputs.report }}"
    uses = [(step["uses"], step.get("if"), step.get("with")) for step in ACTION["runs"]["steps"] if "uses" in step]
    assert uses == [
        ("actions/setup-python@v5", None, {"python-version": "3.12"}),
        ("github/codeql-action/upload-sarif@v3", "inputs.format == 'sarif'",
         {"sarif_file": "${{ steps.check.outputs.report }}", "category": "cudalint"}),
    ]
    for step in ACTION["runs"]["steps"]:  # inputs reach the shell only through env, never spliced into a script
        assert "${{" not in step.get("run", "")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh environment, as the runner's: its own site-packages (cudalint's dependencies visible from this
    test environment), and the action's repository copied where GITHUB_ACTION_PATH points."""
    base = tmp_path_factory.mktemp("action")
    action_path = base / "action"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        source, target = ROOT / name, action_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        elif source.is_file():
            shutil.copy2(source, target)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    environment = {"action_path": action_path, "venv": venv, "base": base}
    workspace = base / "empty"
    workspace.mkdir()
    ran, _ = run_steps(environment, workspace, {}, only=INSTALL)  # once: each test then runs the other steps
    assert [(name, code) for name, code, _ in ran] == [(INSTALL, 0)], ran
    version = subprocess.run([str(venv / "bin" / "cudalint"), "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout == "cudalint 0.1.0\n"
    assert (purelib / "cudalint" / "_docs" / "CDL101.md").is_file()  # the rule docs are packaged
    return environment


INSTALL = "Install cudalint"


def run_steps(installed, workspace, inputs, only=None):
    """Run the action's shell steps in order, as the runner would, until one fails; (step name, exit code,
    output) for each, and the step outputs. `only` names the one step to run; by default every step but the
    install, which the `installed` fixture ran."""
    values = {name: spec["default"] for name, spec in ACTION["inputs"].items()}
    values.update(inputs)
    outputs = {}
    temp = workspace.parent / f"runner-temp-{len(list(workspace.parent.iterdir()))}"
    temp.mkdir()
    ran = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or not _holds(step.get("if"), values):
            continue
        if (step["name"] != only) if only else step["name"] == INSTALL:
            continue

        def render(text):
            def value(match):
                expression = match.group(1)
                if expression.startswith("inputs."):
                    return values[expression[len("inputs."):]]
                if expression.startswith("steps.check.outputs."):
                    return outputs[expression[len("steps.check.outputs."):]]
                raise AssertionError(f"an expression the test does not know: {expression}")

            return EXPRESSION.sub(value, text)

        output_file = temp / f"output-{len(ran)}"
        output_file.write_text("")
        env = {
            "PATH": f"{installed['venv'] / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(installed["base"]),
            "GITHUB_ACTION_PATH": str(installed["action_path"]),
            "GITHUB_OUTPUT": str(output_file),
            "RUNNER_TEMP": str(temp),
            **{key: render(str(value)) for key, value in step.get("env", {}).items()},
        }
        assert step["shell"] == "bash"
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=300)
        ran.append((step["name"], done.returncode, done.stdout + done.stderr))
        for line in output_file.read_text().splitlines():
            key, _, value = line.partition("=")
            outputs[key] = value
        if done.returncode != 0:
            break
    return ran, outputs


def _holds(condition, values):
    if condition is None:
        return True
    name, operator, expected = CONDITION.match(condition).groups()
    return (values[name] == expected) == (operator == "==")


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
    (root / "src" / "train.py").write_text("import torch\nx = torch.ones(1).cuda()\nopt = torch.optim.Adam([], fused=True)\n")
    (root / "src" / "ok.py").write_text("import torch\nprint(torch.ones(1))\n")
    (root / "requirements.txt").write_text("torch==2.4.1\n")
    return root


def test_sarif_run_installs_checks_writes_the_report_and_fails_on_errors(installed, workspace):
    ran, outputs = run_steps(installed, workspace, {"paths": "src requirements.txt"})
    assert [(name, code) for name, code, _ in ran] == [("Run cudalint", 0), ("Fail on findings", 1)]
    assert ran[1][2] == "cudalint: 1 error(s), 1 warning(s), 0 info; fail-on error: failing\n"
    log = json.loads(Path(outputs["report"]).read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    (run,) = log["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == workspace.resolve().as_uri() + "/"
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in run["results"]] == [
        ("CDL102", "src/train.py"), ("CDL705", "src/train.py"),  # target torch 2.4.1, from requirements.txt
    ]
    assert Path(outputs["report"]).parent != workspace and not (workspace / ".cudalint_cache").exists()


def test_github_annotations_torch_version_and_fail_on_levels(installed, workspace):
    ran, _ = run_steps(installed, workspace, {"format": "github", "torch-version": "2.6", "fail-on": "warning"})
    assert [(name, code) for name, code, _ in ran] == [("Run cudalint", 0), ("Fail on findings", 1)]
    assert ran[0][2].splitlines() == [
        "::error file=src/train.py,line=2,col=19,endLine=2,endColumn=23,title=CDL102::"
        ".cuda() moves data to CUDA only; use .to(device)",
    ]  # torch 2.6: fused Adam runs on MPS, no CDL705
    assert ran[1][2] == "cudalint: 1 error(s), 0 warning(s), 0 info; fail-on warning: failing\n"

    (workspace / "src" / "train.py").write_text("import torch\nopt = torch.optim.Adam([], fused=True)\n")
    ran, _ = run_steps(installed, workspace, {"format": "github", "fail-on": "error"})
    assert [(name, code) for name, code, _ in ran] == [("Run cudalint", 0), ("Fail on findings", 0)]
    assert ran[1][2] == "cudalint: 0 error(s), 1 warning(s), 0 info; fail-on error: passing\n"
    ran, _ = run_steps(installed, workspace, {"format": "github", "fail-on": "never"})
    assert [name for name, _, _ in ran] == ["Run cudalint"]


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"format": "xml"}, "::error title=cudalint::format must be sarif or github, not 'xml'"),
        ({"fail-on": "sometimes"}, "::error title=cudalint::fail-on must be error, warning, info or never, not 'sometimes'"),
        ({"paths": "missing"}, "cudalint: error: missing: no such file or directory"),
    ],
)
def test_bad_inputs_fail_the_run_step_with_a_message(installed, workspace, inputs, message):
    ran, _ = run_steps(installed, workspace, inputs)
    assert [(name, code) for name, code, _ in ran] == [("Run cudalint", 2)]
    assert message in ran[0][2]
