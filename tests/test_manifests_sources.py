"""Manifests as a reviewer reads them: files found by content, install commands wherever they are
written, CUDA builds inside wheel URLs and indexes. Each example of the issue, with exact positions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import run_cli
from cudalint.catalog import load_catalog
from cudalint.manifests import check_manifest, dependencies, sniff_kind, torch_version_from

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"


def severity(code: str) -> str:
    return load_catalog()[code].severity.value


def found(path: str):
    text = (FIXTURES / path).read_text(encoding="utf-8")
    return [(f.code, f.line, f.column, f.severity.value) for f in check_manifest(path, text)]


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch):
    monkeypatch.chdir(FIXTURES)


def test_conda_environment_named_conda_yaml():
    assert found("conda/conda.yaml") == [
        ("CDL509", 2, 21, severity("CDL509")),  # channels: [pytorch, nvidia, xformers]
        ("CDL509", 2, 29, severity("CDL509")),
        ("CDL508", 5, 5, severity("CDL508")),  # pytorch::pytorch-cuda=11.7.0
        ("CDL507", 7, 11, severity("CDL507")),  # NVIDIA's own index, in a flow-style pip: list
        ("CDL501", 7, 67, severity("CDL501")),  # xformers==0.0.18
    ]


def test_conda_environments_by_content_whatever_their_name():
    assert found("conda/conda-extras.yaml") == [("CDL508", 2, 5, severity("CDL508"))]
    assert found("conda/env/gpu.yml") == []  # a file named for the GPU: not what a Mac user installs


def test_yaml_that_is_not_an_environment_gives_nothing():
    chart = "apiVersion: v2\nname: app\ndependencies:\n  - name: cuda\n    version: 1.0\n"
    assert check_manifest("Chart.yaml", chart) == []
    assert check_manifest("config.yaml", "model: {device: cuda}\n  : bad: [yaml\n") == []  # not ours: no CDL000
    assert [f.code for f in check_manifest("environment-gpu.yml", "dependencies: [\n")] == ["CDL000"]


def test_cog_yaml():
    assert found("cog/cog.yaml") == [
        ("CDL454", 3, 9, severity("CDL454")),  # cuda: "11.8" builds on an NVIDIA CUDA image
        ("CDL501", 7, 7, severity("CDL501")),  # build.python_packages
        ("CDL501", 9, 19, severity("CDL501")),  # build.run: a command string
        ("CDL506", 10, 29, severity("CDL506")),  # build.run: {command: ...}, inside quotes
        ("CDL507", 10, 67, severity("CDL507")),
    ]


def test_cog_yaml_with_gpu_only():
    text = "build:\n  gpu: true\n  python_packages: ['numpy']\n"
    assert [(f.code, f.line, f.column) for f in check_manifest("cog.yaml", text)] == [("CDL454", 2, 8)]
    assert check_manifest("cog.yaml", "build:\n  gpu: false\n") == []


def test_cuda_builds_in_wheel_urls_and_indexes():
    assert found("wheels/requirements.txt") == [
        # 1: +cu124 in a bare wheel URL; `; platform_system == "Linux"` keeps it off a Mac: no finding
        ("CDL506", 2, 1, severity("CDL506")),  # PEP 508 direct reference
        ("CDL507", 3, 1, severity("CDL507")),  # .../cu121torch2.4/
        ("CDL507", 4, 1, severity("CDL507")),  # a host of NVIDIA's own
        # 5: %2Bcu121torch2.3, behind a Linux marker
    ]


@pytest.mark.parametrize(
    "url, cuda",
    [
        ("https://example.org/whl/cu118", True),
        ("https://example.org/whl/nightly/cu128/", True),
        ("https://example.org/jp6/cu126", True),
        ("https://example.org/whl/cu121torch2.4/", True),
        ("https://example.org/wheels/cuda-12.1/", True),
        ("https://example.org/torch-2.1.0+cu118.html", True),
        ("https://download.nvidia.example/compute/redist/", True),
        ("https://example.org/whl/cpu", False),
        ("https://example.org/simple/cuda-python/", False),
        ("https://example.org/docu123/", False),
        ("https://example.org/whl/rocm6.2", False),
    ],
)
def test_which_index_urls_serve_cuda_builds(url, cuda):
    findings = check_manifest("requirements.txt", f"--extra-index-url {url}\n")
    assert [f.code for f in findings] == (["CDL507"] if cuda else [])


def test_markers_false_on_macos_silence_every_rule_alike():
    text = (
        'torch==2.1.0+cu118 ; sys_platform == "linux"\n'
        'https://example.org/r/x-1.0+cu121-py3-none-any.whl ; platform_system == "Linux"\n'
        'flash-attn ; platform_system != "Darwin"\n'
        'nvidia-cudnn-cu12 ; sys_platform == "win32"\n'
        'bitsandbytes==0.43.0 ; platform_machine == "x86_64" and sys_platform == "linux"\n'
    )
    assert check_manifest("requirements.txt", text) == []
    unmarked = "".join(line.split(" ; ")[0] + "\n" for line in text.splitlines())
    assert [(f.code, f.line) for f in check_manifest("requirements.txt", unmarked)] == [
        ("CDL506", 1), ("CDL506", 2), ("CDL501", 3), ("CDL503", 4), ("CDL505", 5),
    ]


def test_hatch_and_pdm_scripts_and_environments():
    assert found("hatch/pyproject.toml") == [
        ("CDL501", 6, 27, severity("CDL501")),  # [tool.hatch.envs.ci] dependencies
        ("CDL506", 9, 22, severity("CDL506")),  # a command in the scripts table
        ("CDL507", 9, 53, severity("CDL507")),
        ("CDL501", 14, 37, severity("CDL501")),  # cmd = [...] as separate words
    ]


def test_dockerfile_run_lines():
    assert found("docker/Dockerfile.install") == [
        ("CDL501", 3, 17, severity("CDL501")),  # after && on a continuation line
        ("CDL501", 4, 67, severity("CDL501")),  # after RUN --mount=..., python -m pip, in quotes
        ("CDL501", 5, 25, severity("CDL501")),  # exec form
        ("CDL509", 6, 25, severity("CDL509")),  # conda install -c nvidia
        ("CDL508", 6, 32, severity("CDL508")),
        ("CDL508", 6, 45, severity("CDL508")),
    ]


def test_shell_script():
    assert found("shell/install.sh") == [
        ("CDL507", 4, 38, severity("CDL507")),  # the comment line above is not read
        ("CDL508", 5, 18, severity("CDL508")),
        ("CDL509", 5, 50, severity("CDL509")),
        ("CDL501", 6, 17, severity("CDL501")),  # uv pip install "vllm>=0.4"
        ("CDL501", 7, 29, severity("CDL501")),  # after sudo -E, and past the unknown $EXTRA
        ("CDL501", 8, 22, severity("CDL501")),  # inside bash -c "..."
    ]


def test_makefile_recipes():
    assert found("shell/Makefile") == [
        ("CDL501", 3, 18, severity("CDL501")),  # @$(PIP) install
        ("CDL504", 4, 3, severity("CDL504")),  # on the continuation line
    ]


def test_ci_workflow_run_steps():
    assert found("shell/.github/workflows/ci.yml") == [
        ("CDL501", 15, 23, severity("CDL501")),  # a block scalar, a matrix runner that may be macOS
    ]


def test_tox_ini():
    text = "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    pytest\n    flash-attn\ncommands =\n" \
           "    pip install xformers\n    pytest\n"
    assert [(f.code, f.line, f.column) for f in check_manifest("tox.ini", text)] == [("CDL501", 7, 5), ("CDL501", 9, 17)]


def test_tox_factor_conditions_and_combined_pip_options():
    # `factor: dependency` applies the dependency to those environments; `-Ur file` is `pip install -U -r file`
    text = ("[testenv]\ndeps =\n    py311,!docs: pytest>=7\n    build: build[virtualenv]\n"
            "    -Ur{toxinidir}/docs/requirements.txt\n    gpu: flash-attn\n    torch @ https://example.invalid/t.whl\n")
    assert [(f.code, f.line, f.column) for f in check_manifest("tox.ini", text)] == [("CDL501", 6, 10)]
    assert [dep.name for dep in dependencies("tox.ini", text)] == ["pytest", "build", "flash-attn", "torch"]


def test_readme_code_blocks():
    assert found("docs/README.md") == [("CDL501", 4, 15, severity("CDL501"))]  # the python block is not shell


def test_install_commands_do_not_set_the_target_release():
    text = "RUN pip install torch==2.1.0\n"
    assert [dep.name for dep in dependencies("Dockerfile", text)] == ["torch"]
    assert torch_version_from(dependencies("Dockerfile", "FROM python\n" + text)) is None


@pytest.mark.parametrize(
    "text",
    [
        "pip install $TORCH_SPEC\n",
        "pip install \"$(cat reqs.txt)\"\n",
        "pip install -r requirements-cuda.txt\n",
        "pip install -c flash-attn.txt numpy\n",
        "pip install numpy > flash-attn\n",
        "echo pip install flash-attn\n",
        "pipx run flash-attn\n",
        "conda env create -f flash-attn.yml\n",
    ],
)
def test_words_that_are_not_requirements(text):
    assert check_manifest("install.sh", text) == []


def test_sniffing_a_file_named_on_the_command_line(tmp_path):
    (tmp_path / "envspec").write_text((FIXTURES / "conda/conda.yaml").read_text())
    (tmp_path / "install").write_text("#!/bin/sh\npip install xformers\n")
    (tmp_path / "deps.txt").write_text("numpy>=1.24\nxformers\n")
    (tmp_path / "Buildfile").write_text("# syntax=docker/dockerfile:1\nFROM python:3.11\nRUN pip install xformers\n")
    (tmp_path / "tool").write_text("#!/usr/bin/env python3\nprint(1)\n")
    (tmp_path / "notes").write_text("import os\n")
    (tmp_path / "env.toml").write_text('[workspace]\nchannels = ["conda-forge"]\n[dependencies]\ncudatoolkit = "*"\n')
    (tmp_path / "meta.toml").write_text('[project]\nname = "x"\ndependencies = ["xformers"]\n')
    names = ("envspec", "install", "deps.txt", "Buildfile", "tool", "notes", "env.toml", "meta.toml")
    kinds = {name: sniff_kind(str(tmp_path / name)) for name in names}
    assert kinds == {"envspec": "yaml", "install": "shell", "deps.txt": "requirements", "Buildfile": "dockerfile",
                     "tool": "python", "notes": "python", "env.toml": "pixi", "meta.toml": "pyproject"}


def test_conda_yaml_on_the_command_line_gets_its_findings(tmp_path):
    shutil.copy(FIXTURES / "conda/conda.yaml", tmp_path / "conda.yaml")
    result = run_cli("check", "--no-cache", "conda.yaml", cwd=tmp_path)
    assert result.returncode == 1
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-1]] == [
        ["conda.yaml:2:21:", "CDL509"], ["conda.yaml:2:29:", "CDL509"], ["conda.yaml:5:5:", "CDL508"],
        ["conda.yaml:7:11:", "CDL507"], ["conda.yaml:7:67:", "CDL501"],
    ]


def test_walking_finds_environments_scripts_and_docs_only_when_asked(tmp_path):
    shutil.copytree(FIXTURES / "shell", tmp_path / "shell")
    shutil.copytree(FIXTURES / "docs", tmp_path / "docs")
    (tmp_path / "env").mkdir()
    shutil.copy(FIXTURES / "conda/conda-extras.yaml", tmp_path / "env/conda-extras.yaml")
    plain = run_cli("check", "--no-cache", "-q", ".", cwd=tmp_path)
    files = sorted({line.split(":")[0] for line in plain.stdout.splitlines()})
    assert files == ["env/conda-extras.yaml", "shell/.github/workflows/ci.yml", "shell/Makefile", "shell/install.sh"]
    with_docs = run_cli("check", "--no-cache", "-q", "--include-docs", ".", cwd=tmp_path)
    assert with_docs.stdout.splitlines()[0].startswith("docs/README.md:4:15: CDL501 ")


def test_entries_a_mac_does_not_install_are_not_reported():
    pyproject = (
        '[project]\nname = "pkg"\ndependencies = ["torch"]\n\n[project.optional-dependencies]\n'
        'marlin-cuda = ["nvidia-cuda-runtime>=13.4"]\nextra = ["xformers"]\n'
        'linux = ["flash-attn; sys_platform == \'linux\'"]\n'
    )
    found = [(f.code, f.line, f.column) for f in check_manifest("pyproject.toml", pyproject)]
    assert found == [("CDL501", 7, 10)]  # the extra a Mac user may choose; not the CUDA one, nor the Linux-only marker
    assert check_manifest("requirements-gpu.txt", "xformers\n") == []
    assert [f.code for f in check_manifest("requirements.txt", "xformers\n")] == ["CDL501"]


def test_an_extra_named_for_cuda_that_another_extra_pulls_in_is_installed_on_a_mac():
    pyproject = (
        '[project]\nname = "My_Pkg"\ndependencies = ["torch"]\n\n[project.optional-dependencies]\n'
        'cuda = ["xformers"]\ngpu = ["my-pkg[cuda]"]\nall = ["my.pkg[gpu]"]\ncu12 = ["flash-attn"]\n'
        'cu12-all = ["my-pkg[cu12]"]\n'
    )
    found = [(f.code, f.line, f.column) for f in check_manifest("pyproject.toml", pyproject)]
    assert found == [("CDL501", 6, 9)]  # xformers, through `all` -> `gpu` -> `cuda`; flash-attn only through CUDA extras


def test_extras_named_for_other_hardware_are_not_what_a_mac_installs():
    # flash-linear-attention: one extra per backend; only the plain and `cpu` ones are a Mac user's choice.
    pyproject = (
        '[project]\nname = "pkg"\ndependencies = ["torch"]\n\n[project.optional-dependencies]\n'
        'cuda = ["xformers"]\nrocm = ["xformers"]\nxpu = ["xformers"]\nnpu = ["xformers"]\ncpu = ["xformers"]\n'
    )
    found = [(f.code, f.line, f.severity.value, "a Mac does not install it" in f.message)
             for f in check_manifest("pyproject.toml", pyproject)]
    assert found == [("CDL501", 10, "error", False)]


WHEEL_METADATA = """\
Metadata-Version: 2.1
Name: pkg
License: MIT License
        \x20
        Copyright (c) the authors
Requires-Dist: torch (>=2.4)
Requires-Dist:  nvidia-ml-py
Requires-Dist: cupy-cuda12x ; extra == "cuda"
Requires-Dist: nvidia-cublas-cu12
Requires-Dist: flash-attn>=2; sys_platform == "linux"
Requires-Dist: sphinx-rtd-theme; extra == "docs"
Requires-Dist: bad name [

Requires-Dist: xformers
"""


def test_a_wheels_core_metadata_is_its_manifest():
    path = "pkg-1.0.dist-info/METADATA"
    assert [(f.code, f.line, f.column) for f in check_manifest(path, WHEEL_METADATA)] == [
        ("CDL504", 7, 17),  # nvidia-ml-py, however many spaces after the colon (a License's blank line folded)
        ("CDL503", 9, 16),  # nvidia-cublas-cu12
        ("CDL000", 12, 16),  # a value that is no requirement; the description after the empty line is not read
    ]  # cupy-cuda12x sits in the `cuda` extra, flash-attn is Linux-only
    deps = dependencies(path, WHEEL_METADATA)
    assert [(dep.name, dep.section) for dep in deps][2] == ("cupy-cuda12x", "extra.cuda")
    assert torch_version_from(deps) is not None
    assert dependencies("pkg.egg-info/PKG-INFO", WHEEL_METADATA) == []  # an sdist's copy of its manifests
    assert dependencies("METADATA", WHEEL_METADATA) == []  # outside a .dist-info folder: not core metadata


def test_a_tree_unpacked_from_a_wheel_targets_the_torch_its_metadata_allows(tmp_path):
    (tmp_path / "pkg-1.0.dist-info").mkdir()
    (tmp_path / "pkg-1.0.dist-info" / "METADATA").write_text("Name: pkg\nRequires-Dist: torch>=2.4,<2.6\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "main.py").write_text("import torch\n")
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "All clear: 2 files checked, target torch 2.5 (the newest release torch>=2.4,<2.6 in pkg-1.0.dist-info/METADATA allows)" in result.stdout
