"""Manifest and build-file readers: exact positions, severities and bad input, per format."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalint.catalog import load_catalog
from cudalint.findings import Severity
from cudalint.manifests import check_manifest, dependencies, manifest_kind, torch_version_from

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"
INFO = "info"


def severity(code: str) -> str:
    return load_catalog()[code].severity.value


def found(path: str, text: str = None):
    """(code, line, column, severity) for a fixture, checked from inside the fixtures folder."""
    if text is None:
        text = (FIXTURES / path).read_text(encoding="utf-8")
    return [(f.code, f.line, f.column, f.severity.value) for f in check_manifest(path, text)]


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch):
    monkeypatch.chdir(FIXTURES)


@pytest.mark.parametrize(
    "path, kind",
    [
        ("requirements.txt", "requirements"),
        ("requirements-dev.in", "requirements"),
        ("requirements/base.txt", "requirements"),
        ("requirements/gpu.in", "requirements"),
        ("constraints-ci.txt", "requirements"),
        ("base.txt", None),
        ("pkg/pyproject.toml", "pyproject"),
        ("setup.py", "setup_py"),
        ("setup.cfg", "setup_cfg"),
        ("environment.yml", "conda"),
        ("environment-cuda.yaml", "conda"),
        ("conda.yml", "yaml"),  # what a YAML file is comes from its content
        ("cog.yaml", "yaml"),
        (".github/workflows/ci.yml", "yaml"),
        ("scripts/install.sh", "shell"),
        ("Makefile", "makefile"),
        ("tox.ini", "tox"),
        ("README.md", None),  # only with --include-docs
        ("Pipfile", "pipfile"),
        ("Pipfile.lock", None),
        ("poetry.lock", "poetry_lock"),
        ("uv.lock", "uv_lock"),
        ("pixi.toml", "pixi"),
        ("CMakeLists.txt", "cmake"),
        ("cmake/FindFoo.cmake", "cmake"),
        ("csrc/kernel.cu", "cuda_source"),
        ("csrc/kernel.cuh", "cuda_source"),
        ("Dockerfile", "dockerfile"),
        ("docker/Dockerfile.gpu", "dockerfile"),
        ("gpu.dockerfile", "dockerfile"),
        ("train.py", None),
    ],
)
def test_manifest_kind(path, kind):
    assert manifest_kind(path) == kind


def test_requirements_positions_markers_includes():
    assert found("pip/requirements.txt") == [
        ("CDL503", 1, 1, severity("CDL503")),  # base.txt, included with -r
        ("CDL502", 3, 1, severity("CDL502")),  # common.txt, included from base.txt (which it includes back)
        ("CDL507", 4, 1, severity("CDL507")),
        ("CDL506", 5, 1, severity("CDL506")),  # continued onto the --hash line
        # 7 (sys_platform == "linux") and 8-10 (three continued lines, platform_system != "Darwin"): no finding,
        # their markers are false on every Mac, so pip never installs them there
        ("CDL501", 11, 1, severity("CDL501")),  # git+...flash-attention
        ("CDL501", 12, 1, severity("CDL501")),  # apex @ git+...
        ("CDL505", 13, 1, severity("CDL505")),
    ]


def test_requirements_finding_paths_and_spans():
    findings = check_manifest("pip/requirements.txt", (FIXTURES / "pip/requirements.txt").read_text())
    by_code = {(f.code, f.line): f for f in findings}
    assert by_code["CDL503", 1].path == str(Path("pip/base.txt"))
    assert by_code["CDL502", 3].path == str(Path("pip/common.txt"))
    torch = by_code["CDL506", 5]
    assert (torch.end_line, torch.end_column) == (5, 19)  # the --hash option is not part of the entry
    assert "flash-attn" in by_code["CDL501", 11].message
    assert "`bitsandbytes>=0.50.0`" in by_code["CDL505", 13].message


def test_requirements_file_named_for_cuda_is_not_what_a_mac_installs():
    assert found("pip/requirements-cuda.txt") == []


def test_requirements_dependencies_record():
    deps = dependencies("pip/requirements.txt", (FIXTURES / "pip/requirements.txt").read_text())
    xformers = next(dep for dep in deps if dep.name == "xformers")
    assert xformers.specifier == ">=0.0.23"
    assert xformers.marker == 'platform_system != "Darwin"'
    assert (xformers.line, xformers.column, xformers.end_line) == (8, 1, 10)
    kinds = {dep.kind for dep in deps}
    assert {"package", "index-url", "vcs"} <= kinds
    assert any(dep.path == str(Path("pip/base.txt")) for dep in deps)


def test_missing_include_is_cdl000_at_the_line():
    findings = check_manifest("pip/requirements.txt", "numpy\n-r nowhere.txt\n")
    assert [(f.code, f.line, f.column) for f in findings] == [("CDL000", 2, 1)]
    assert "nowhere.txt" in findings[0].message


def test_a_line_option_after_a_requirement_is_accepted_and_ignored_as_pip_does():
    # torchkbnufft's docs/requirements.txt: pip parses every option on a requirement line and applies
    # only the requirement's own; an unknown option is still a problem
    text = "torch --extra-index-url https://example.invalid/cpu\nnumpy --pre\nscipy --frobnicate\n"
    findings = check_manifest("pip/requirements.txt", text)
    assert [(f.code, f.line, f.column) for f in findings] == [("CDL000", 3, 7)]
    deps = dependencies("pip/requirements.txt", text)
    assert [(dep.name, dep.kind) for dep in deps] == [("torch", "package"), ("numpy", "package")]


def test_pep621_pyproject():
    assert found("pep621/pyproject.toml") == [
        ("CDL501", 10, 5, severity("CDL501")),  # 'xformers' in a multi-line array
        # 11: nvidia-nccl-cu12 carries sys_platform == 'linux'
        ("CDL502", 12, 5, severity("CDL502")),
        ("CDL505", 19, 12, severity("CDL505")),  # quoted key "quant"
        ("CDL501", 19, 33, severity("CDL501")),
        ("CDL504", 22, 46, severity("CDL504")),  # after an inline table in a dependency group
    ]


def test_poetry_pyproject():
    assert found("poetry/pyproject.toml") == [
        ("CDL506", 7, 1, severity("CDL506")),
        ("CDL505", 8, 1, severity("CDL505")),  # ^0.41.1 means <0.42
        # 9 (markers), 10 (platform = "linux") and 12 (the linux alternative): markers false on every Mac
        ("CDL501", 13, 5, severity("CDL501")),  # the darwin alternative of a multiple-constraint entry
        ("CDL507", 21, 1, severity("CDL507")),  # explicit, but used by torch on every platform
        ("CDL507", 26, 1, severity("CDL507")),
    ]


def test_uv_pyproject_sources_and_indexes():
    assert found("uv/pyproject.toml") == [
        # 5:33 triton; sys_platform == 'linux'
        ("CDL507", 8, 20, severity("CDL507")),  # extra-index-url applies to everything
        ("CDL507", 29, 1, severity("CDL507")),  # explicit, but torchvision uses it everywhere
    ]


def test_uv_torch_version_is_taken_from_the_manifest():
    deps = dependencies("uv/pyproject.toml", (FIXTURES / "uv/pyproject.toml").read_text())
    assert torch_version_from(deps) == "2.4.0"


def test_conda_environment():
    assert found("conda/environment.yml") == [
        ("CDL509", 4, 5, severity("CDL509")),
        ("CDL508", 9, 5, severity("CDL508")),
        ("CDL508", 10, 5, severity("CDL508")),  # a quoted scalar
        ("CDL508", 11, 5, severity("CDL508")),  # nvidia::cuda-nvcc is reported as the package
        ("CDL509", 12, 5, severity("CDL509")),  # nvidia::libcurand: known only by its channel
        ("CDL508", 14, 5, severity("CDL508")),  # *cuda* build string
        ("CDL508", 15, 5, severity("CDL508")),
        ("CDL501", 19, 9, severity("CDL501")),  # pip: subsection
        ("CDL507", 20, 9, severity("CDL507")),
    ]


def test_pipfile():
    assert found("pipfile/Pipfile") == [
        ("CDL501", 13, 1, severity("CDL501")),
        # 14: flash-attn with markers = "platform_system == 'Linux'"
        ("CDL504", 17, 1, severity("CDL504")),
    ]


def test_pixi():
    assert found("pixi/pixi.toml") == [
        ("CDL509", 3, 28, severity("CDL509")),  # inline-table channel
        ("CDL508", 9, 1, severity("CDL508")),
        ("CDL501", 12, 1, severity("CDL501")),
        ("CDL508", 15, 1, severity("CDL508")),  # [system-requirements] cuda
        ("CDL507", 24, 21, severity("CDL507")),
    ]


def test_uv_lock_follows_markers_through_the_graph():
    # What the lock resolves only for other platforms is no finding: flash-attn behind a Linux marker
    # (line 19), torch's nvidia-cudnn-cu12 on Linux x86-64 (24), nvidia-cublas-cu12 only through it (32),
    # the +cu124 fork resolved for Linux (45). A Mac installs nothing of it, and the lock is generated.
    assert found("locks/uv.lock") == [
        ("CDL501", 53, 1, severity("CDL501")),  # xformers: unconditional
    ]
    locked = {dep.line: dep.off_mac for dep in dependencies("locks/uv.lock", (FIXTURES / "locks/uv.lock").read_text())}
    assert {line: locked[line] for line in (19, 24, 32, 45, 53)} == {19: True, 24: True, 32: True, 45: True, 53: False}


UV_LOCK_WITH_CONFLICTS = """\
version = 1
conflicts = [[
    { package = "bench", extra = "cpu" },
    { package = "bench", extra = "cu124" },
]]

[[package]]
name = "bench"
source = { editable = "." }
dependencies = [
    { name = "torch", marker = "extra == 'extra-5-bench-cpu' or extra == 'extra-5-bench-cu124'" },
]

[[package]]
name = "torch"
version = "2.6.0"
dependencies = [
    { name = "nvidia-cudnn-cu12", marker = "(sys_platform == 'linux' and extra == 'extra-5-bench-cu124') or (extra == 'extra-5-bench-cpu' and extra == 'extra-5-bench-cu124')" },
    { name = "triton", marker = "extra == 'extra-5-bench-cpu' and extra == 'extra-5-bench-cu124'" },
    { name = "xformers", marker = "extra == 'extra-5-bench-cpu' and extra == 'extra-4-other-cu124'" },
]

[[package]]
name = "nvidia-cudnn-cu12"
version = "9.1.0.70"

[[package]]
name = "triton"
version = "3.2.0"

[[package]]
name = "xformers"
version = "0.0.29"
"""


def test_uv_lock_edges_that_need_two_conflicting_extras_at_once_are_never_installed():
    # uv writes `extra == A and extra == B` for extras its `conflicts` table keeps apart: no install has
    # both, so nvidia-cudnn-cu12 (Linux, or both extras) and triton (both extras) are off the Mac; xformers
    # asks for extras of two packages, which may well be installed together.
    assert [(f.code, f.line) for f in check_manifest("uv.lock", UV_LOCK_WITH_CONFLICTS)] == [("CDL501", 32)]


def test_poetry_lock():
    assert found("locks/poetry.lock") == [
        ("CDL505", 4, 1, severity("CDL505")),
        ("CDL504", 40, 1, severity("CDL504")),
    ]


def test_setup_py_read_statically():
    assert found("setup/setup.py") == [
        ("CDL501", 6, 5, severity("CDL501")),  # through the module-level REQUIRES list
        ("CDL503", 11, 34, severity("CDL503")),
        ("CDL505", 14, 19, severity("CDL505")),
        ("CDL506", 16, 30, severity("CDL506")),  # setup_requires tuple
        ("CDL507", 17, 23, severity("CDL507")),  # dependency_links
    ]


def test_setup_py_that_does_not_parse_is_one_cdl000():
    findings = check_manifest("setup.py", 'setup(install_requires=["flash-attn"]\n')
    assert [(f.code, f.line, f.column) for f in findings] == [("CDL000", 1, 6)]
    assert findings[0].message == "line 1: syntax error: '(' was never closed; the requirements in it were not read"


def test_setup_cfg():
    assert found("setup/setup.cfg") == [
        ("CDL501", 8, 5, severity("CDL501")),  # inline comment dropped
        # 9: causal-conv1d; sys_platform == "linux"
        ("CDL501", 10, 18, severity("CDL501")),  # value on the key's line
        ("CDL504", 15, 5, severity("CDL504")),
    ]


def test_cmake():
    assert found("cmake/CMakeLists.txt") == [
        ("CDL451", 4, 17, severity("CDL451")),  # the CUDA word of a multi-line project()
        ("CDL451", 7, 1, severity("CDL451")),
        ("CDL452", 8, 1, severity("CDL452")),
        ("CDL452", 9, 1, severity("CDL452")),  # optional, but nothing tests CUDA_FOUND
    ]


def test_cmake_guarded_and_checked_lookups_are_fine():
    assert found("cmake/cuda.cmake") == []


def test_cuda_sources():
    findings = check_manifest("cmake/kernel.cu", (FIXTURES / "cmake/kernel.cu").read_text())
    assert [(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings] == [("CDL453", 1, 1, 1, 34)]
    assert found("cmake/empty.cuh") == []


def test_dockerfile():
    assert found("docker/Dockerfile") == [
        ("CDL454", 3, 6, severity("CDL454")),  # image name from an ARG default
        ("CDL454", 10, 6, severity("CDL454")),  # on a continuation line, after --platform
        ("CDL454", 12, 6, severity("CDL454")),  # pytorch/pytorch with a cuda tag
    ]


@pytest.mark.parametrize(
    "text, lines",
    [
        # scvi-tools: a leftover unnamed CUDA stage above the stage that is built
        ("FROM nvidia/cuda:12.4.0-runtime-ubuntu22.04\nFROM python:3.12 AS base\nFROM base AS build\n", []),
        # read by a later stage, by number or through a mount
        ("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nFROM python:3.12\nCOPY --from=0 /usr/local/cuda /cuda\n", [1]),
        ("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM python:3.12\nRUN --mount=type=bind,from=0,target=/x ls\n", [1]),
        # a named stage is a `--target`; the last stage is the one built
        ("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04 AS gpu\nFROM python:3.12\n", [1]),
        ("FROM python:3.12\nFROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n", [2]),
    ],
)
def test_cuda_stages_nothing_builds_are_not_reported(text, lines):
    assert [f.line for f in check_manifest("Dockerfile", text)] == lines


@pytest.mark.parametrize(
    "path, text, expected",
    [
        (
            "requirements.txt",
            "torch==\n--foo bar\n-r\nflash-attn\nnumpy ; bogus == 1\n",
            [("CDL000", 1, 1), ("CDL000", 2, 1), ("CDL000", 3, 1), ("CDL501", 4, 1), ("CDL000", 5, 1)],
        ),
        (
            "requirements.txt",
            "torch \\\n  >=  \\\n  ; sys_platform == 'linux'\nxformers\n",
            [("CDL000", 1, 1), ("CDL501", 4, 1)],
        ),
        (
            "pyproject.toml",
            '[project]\ndependencies = [\n  "flash-attn",\n  "x>=",\n]\nname = \n'
            '[tool.poetry.dependencies]\nxformers = "*"\n',
            [("CDL501", 3, 3), ("CDL000", 4, 3), ("CDL000", 6, 1), ("CDL501", 8, 1)],
        ),
        ("environment.yml", "channels:\n  - nvidia\ndependencies:\n  - python\n  - [unclosed\n", [("CDL000", 6, 1)]),
        ("environment.yml", "dependencies: 3\n", [("CDL000", 1, 15)]),
        ("Pipfile", '[packages]\nxformers = "*"\nbroken = \n', [("CDL501", 2, 1), ("CDL000", 3, 1)]),
        ("uv.lock", '[[package]\nname = "x"\n[[package]]\nname = "flash-attn"\n', [("CDL000", 1, 1), ("CDL501", 4, 1)]),
        (
            "poetry.lock",
            '[[package]]\nname = "xformers\n[[package]]\nname = "flash-attn"\n',
            [("CDL000", 2, 1), ("CDL501", 4, 1)],
        ),
        ("pixi.toml", '[dependencies]\ncudatoolkit = "11.8"\n= oops\n', [("CDL508", 2, 1), ("CDL000", 3, 1)]),
        (
            "setup.cfg",
            "[options\ninstall_requires =\n    flash-attn\n[options]\ninstall_requires =\n    xformers\n    torch==\n",
            [("CDL000", 1, 1), ("CDL000", 3, 1), ("CDL501", 6, 5), ("CDL000", 7, 5)],
        ),
        ("CMakeLists.txt", "project(x LANGUAGES CUDA)\nadd_library(foo a.cpp\n", [("CDL451", 1, 21), ("CDL000", 2, 1)]),
        (
            "Dockerfile",
            "FORM ubuntu\nFROM\nFROM nvidia/cuda:12.1.0-base-ubuntu22.04\n",
            [("CDL000", 1, 1), ("CDL000", 2, 1), ("CDL454", 3, 6)],
        ),
    ],
)
def test_malformed_input_gives_cdl000_and_the_rest_is_checked(path, text, expected):
    findings = check_manifest(path, text)
    assert [(f.code, f.line, f.column) for f in findings] == expected
    for finding in findings:
        if finding.code == "CDL000":
            assert f"line {finding.line}" in finding.message
            assert finding.severity is Severity.ERROR


@pytest.mark.parametrize("path", ["requirements.txt", "pyproject.toml", "environment.yml", "Pipfile", "uv.lock",
                                  "poetry.lock", "pixi.toml", "setup.cfg", "setup.py", "CMakeLists.txt", "Dockerfile",
                                  "kernel.cu"])
@pytest.mark.parametrize("text", ["", "\x00\x01", "[[[", "- - -\n  :", '"""', "\\\n\\", "((", "\ufeff#"])
def test_never_raises(path, text):
    for finding in check_manifest(path, text):
        assert finding.line >= 1 and finding.column >= 1


def test_toml_positions_after_escapes_comments_and_literal_strings():
    text = (
        '[project]\n'
        'description = "a \\"quoted\\" \\u00e9 word" # comment with "quotes" and [brackets]\n'
        "dependencies = [ 'numpy' , # first\n"
        '  """xformers""", "é-pkg", "flash-attn"]\n'
    )
    assert [(f.code, f.line, f.column, f.end_column) for f in check_manifest("pyproject.toml", text)] == [
        ("CDL501", 4, 3, 17),
        ("CDL000", 4, 19, 26),  # not a valid distribution name; columns count characters, not bytes
        ("CDL501", 4, 28, 40),
    ]


def test_a_config_files_cuda_device_entry_is_a_cuda_default():
    """A Hydra/OmegaConf configuration's `device: cuda:0` (mbrl's conf/main.yaml, diffq's config.yaml) is
    the default every run that does not override it gets: CDL108 at the value. Other keys, other
    devices, a value that is no plain CUDA device, and CI workflows are not reported."""
    text = (
        "seed: 0\n"
        "device: \"cuda:0\"\n"
        "trainer:\n"
        "  eval_device: cuda\n"
        "  devices: cuda\n"
        "  device: ${oc.env:DEVICE,cpu}\n"
        "  backend: cuda\n"
        "runs:\n"
        "  - device: cuda:1\n"
        "  - device: mps\n"
        "note: cuda\n"
    )
    assert found("conf/main.yaml", text) == [
        ("CDL108", 2, 9, "warning"),
        ("CDL108", 4, 16, "warning"),
        ("CDL108", 9, 13, "warning"),
    ]
    assert found(".github/workflows/ci.yml", "jobs:\n  test:\n    env:\n      device: cuda\n") == []
    # optimum-benchmark's examples/cuda_pytorch_bert.yaml beside mps_pytorch_bert.yaml: CUDA is its point
    assert found("examples/cuda_pytorch_bert.yaml", text) == []
    assert found("examples/mps_pytorch_bert.yaml", text) == found("conf/main.yaml", text)


def test_a_config_files_cuda_accelerator_and_nccl_backend_are_reported():
    """sam2's training config: `accelerator: cuda` (CDL108; "gpu" lets the trainer pick CUDA or MPS) and
    `backend: nccl` (CDL706) are what every run that does not override them gets."""
    text = (
        "trainer:\n"
        "  accelerator: cuda\n"
        "  distributed:\n"
        "    backend: nccl\n"
        "    comms_dtype: null\n"
        "other:\n"
        "  accelerator: gpu\n"
        "  dist_backend: gloo\n"
    )
    assert found("configs/train.yaml", text) == [("CDL108", 2, 16, "warning"), ("CDL706", 4, 14, "warning")]
    assert found("configs/dist.yaml", "dist_backend: nccl\n") == [("CDL706", 1, 15, "warning")]
