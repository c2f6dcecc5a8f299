"""CDL455: dev containers and Compose services that ask Docker for NVIDIA GPUs, which Docker on a Mac
cannot give, so the container does not start (manifests/devcontainer.py, manifests/yaml_files.py)."""

import json
import subprocess
import sys

from cudalint.manifests import check_manifest, manifest_kind
from cudalint.manifests.devcontainer import MAX_DEPTH, parse

DEVCONTAINER = """{
  // the example folder's container
  "name": "pytorch-accelerated",
  "build": {"dockerfile": "Dockerfile", "args": {"VARIANT": "3.10",},},
  /* every container gets the host's GPUs */
  "runArgs": [
    "--gpus",
    "all",
    "--shm-size=8g"
  ],
  "postCreateCommand": "pip install -e .",
}
"""


def found(path, text):
    return [(f.code, f.line, f.column, f.end_column) for f in check_manifest(path, text)]


def test_devcontainer_files_are_read_by_name():
    assert manifest_kind(".devcontainer/devcontainer.json") == "devcontainer"
    assert manifest_kind("examples/nlp/.devcontainer/devcontainer.json") == "devcontainer"
    assert manifest_kind(".devcontainer.json") == "devcontainer"
    assert manifest_kind("package.json") is None


def test_gpus_in_run_args_with_comments_and_trailing_commas():
    findings = check_manifest(".devcontainer/devcontainer.json", DEVCONTAINER)
    assert [(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings] == [("CDL455", 7, 5, 7, 13)]
    assert findings[0].message.startswith("runArgs asks Docker for NVIDIA GPUs (`--gpus all`): Docker on a Mac has no")


def test_every_spelling_of_a_gpu_request():
    text = ('{"runArgs": ["--gpus=all", "--runtime", "nvidia", "--runtime=runc", "--gpus"],\n'
            ' "hostRequirements": {"cpus": 4, "gpu": true}}\n')
    assert found("devcontainer.json", text) == [
        ("CDL455", 1, 14, 26),  # --gpus=all
        ("CDL455", 1, 28, 39),  # --runtime nvidia
        ("CDL455", 1, 69, 77),  # a last --gpus without its value
        ("CDL455", 2, 34, 39),  # hostRequirements.gpu: true, at its key
    ]


def test_what_asks_for_no_gpu():
    assert found("devcontainer.json", '{"runArgs": ["--runtime=runc", "--shm-size=1g", "--gpus-note"]}') == []
    assert found("devcontainer.json", '{"hostRequirements": {"gpu": "optional"}}') == []
    assert found("devcontainer.json", '{"hostRequirements": {"gpu": false}, "image": "--gpus"}') == []
    assert found("devcontainer.json", '["--gpus", "all"]') == []  # not a configuration object
    assert found("devcontainer.json", '{"runArgs": "--gpus all"}') == []  # not a list: Docker would refuse it
    # An escaped string is read as JSON reads it.
    assert found("devcontainer.json", '{"runArgs": ["\\u002d-gpus", "all"]}') == [("CDL455", 1, 14, 27)]


def test_broken_configurations_get_one_clear_message_and_no_findings():
    for text, line, message in [
        ('{"runArgs": ["--gpus", "all"\n', 2, "the configuration ends early"),
        ('{\n  "runArgs": ["--gpus" "all"]\n}', 2, "expected ',' or ']'"),
        ('{\n  /* never closed\n  "runArgs": ["--gpus"]}', 2, "comment without its end"),
        ("{\n  runArgs: []\n}", 2, "expected a quoted key"),
        ('{"a": 1} {"b": 2}', 1, "unexpected text after the configuration"),
        ('{"a": "no end\n}', 1, "string without its closing quote"),
    ]:
        findings = check_manifest(".devcontainer/devcontainer.json", text)
        assert [(f.code, f.line) for f in findings] == [("CDL000", line)], text
        assert findings[0].message == f"line {line}: not a dev container configuration: {message}"


def test_hostile_nesting_is_refused_not_recursed():
    deep = "[" * 100_000 + "]" * 100_000
    findings = check_manifest(".devcontainer/devcontainer.json", deep)
    assert [(f.code, f.line, f.message) for f in findings] == [
        ("CDL000", 1, "line 1: not a dev container configuration: nested too deeply to read")]
    value, error = parse("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert error is None


COMPOSE = """services:
  trainer:
    build: .
    runtime: nvidia
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
  notebook:
    image: jupyter
    gpus: all
  worker:
    deploy:
      resources:
        reservations:
          devices:
            - capabilities: ["compute", "gpu"]
  web:
    image: nginx
    runtime: runc
    deploy:
      resources:
        limits:
          memory: 1g
"""


def test_compose_services_that_reserve_gpus():
    findings = check_manifest("docker-compose.yml", COMPOSE)
    assert [(f.code, f.line, f.column) for f in findings] == [
        ("CDL455", 4, 14), ("CDL455", 9, 23), ("CDL455", 14, 11), ("CDL455", 20, 41)]
    assert [f.message.split(":")[0] for f in findings] == [
        "service 'trainer' runs on the NVIDIA runtime (runtime",
        "service 'trainer' reserves NVIDIA GPUs (driver",
        "service 'notebook' asks for GPUs (gpus",
        "service 'worker' reserves GPUs (capabilities",
    ]


def test_compose_override_files_for_gpu_hosts_and_other_yaml_are_not_reported():
    assert found("compose.gpu.yaml", COMPOSE) == []
    assert found("docker-compose.cuda.yml", COMPOSE) == []
    assert found("config/train.yaml", "model:\n  runtime: nvidia\n") == []  # no `services` table
    assert found(".github/workflows/ci.yml", COMPOSE) == []  # a workflow is no Compose file


def test_the_command_line_reports_both_in_a_project(tmp_path):
    (tmp_path / ".devcontainer").mkdir()
    (tmp_path / ".devcontainer" / "devcontainer.json").write_text(DEVCONTAINER)
    (tmp_path / "compose.yaml").write_text("services:\n  app:\n    image: x\n    gpus: all\n")
    (tmp_path / "train.py").write_text("print('hello')\n")
    run = subprocess.run([sys.executable, "-m", "cudalint", "check", "--no-cache", "--format", "json", "."],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert [(f["path"], f["code"], f["line"], f["column"]) for f in json.loads(run.stdout)] == [
        (".devcontainer/devcontainer.json", "CDL455", 7, 5), ("compose.yaml", "CDL455", 4, 11)]
