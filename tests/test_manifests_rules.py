"""The CDL5xx/CDL45x rule data: examples, the package catalog, version and marker logic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cudalint.catalog import load_catalog, rules_dir
from cudalint.manifests import check_manifest, dependencies, torch_version_from
from cudalint.manifests.markers import MarkerError, excludes_macos, parse_marker
from cudalint.manifests.packages import load_packages
from cudalint.manifests.versions import admits_at_least

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
MY_RULES = [rule for rule in load_catalog() if rule.code.startswith("CDL5") or rule.code.startswith("CDL45")]


@pytest.mark.parametrize("rule", MY_RULES, ids=lambda rule: rule.code)
def test_rule_examples(rule):
    bad = check_manifest(rule.example_file, rule.bad)
    assert bad and {f.code for f in bad} == {rule.code}
    assert all(f.severity is rule.severity for f in bad)
    assert check_manifest(rule.example_file, rule.good) == []


def test_rule_codes_and_fields():
    codes = [rule.code for rule in MY_RULES]
    assert codes == sorted(codes)
    assert all(451 <= int(code[3:]) <= 499 for code in codes if code.startswith("CDL4"))
    for rule in MY_RULES:
        assert rule.fix == "none"
        assert "\n" not in rule.summary
    assert [rule.code for rule in MY_RULES if not rule.default] == ["CDL453"]  # an inventory, opt-in


def _concrete(pattern: str) -> str:
    """A real-looking name for a glob: 'cupy-cuda*' -> 'cupy-cuda12', 'nvidia-*-cu1?' -> 'nvidia-x12-cu12'."""
    return pattern.replace("*", "x12").replace("?", "2")


def _pypi_lines():
    for pattern in load_packages().pypi:
        name = _concrete(pattern.name)
        extra = f"[{_concrete(pattern.extra)}]" if pattern.extra else ""
        version = "==0.41.0" if pattern.group.rule == "CDL505" else ""
        yield pattern, f"{name}{extra}{version}"


@pytest.mark.parametrize("pattern, line", list(_pypi_lines()), ids=lambda value: getattr(value, "name", value))
def test_every_package_is_detected_in_requirements(pattern, line):
    findings = check_manifest("requirements.txt", line + "\n")
    assert [(f.code, f.line, f.column) for f in findings] == [(pattern.group.rule, 1, 1)]


@pytest.mark.parametrize("pattern", load_packages().conda, ids=lambda pattern: pattern.name)
def test_every_conda_package_is_detected(pattern):
    text = f"channels:\n  - conda-forge\ndependencies:\n  - {_concrete(pattern.name)}\n"
    findings = check_manifest("environment.yml", text)
    assert [(f.code, f.line, f.column) for f in findings] == [(pattern.group.rule, 4, 5)]


@pytest.mark.parametrize("channel", load_packages().cuda_channels)
def test_every_cuda_channel_is_detected(channel):
    text = f"channels:\n  - {channel}\n  - https://example.org/{channel}/\ndependencies:\n  - {channel}::something\n"
    findings = check_manifest("environment.yml", text)
    assert [(f.code, f.line) for f in findings] == [("CDL509", 2), ("CDL509", 3), ("CDL509", 5)]


@pytest.mark.parametrize("name", ["torch", "numpy", "jax", "tensorflow", "onnxruntime", "faiss-cpu", "cupy-rocm-5-0",
                                  "spconv", "nvidia-riva", "mmcv-lite", "triton-windows", "bitsandbytes"])
def test_portable_packages_are_not_reported(name):
    assert check_manifest("requirements.txt", name + "\n") == []


def test_package_table_rows_say_what_they_need_and_why():
    for group in load_packages().groups:
        assert group.needs and group.evidence, group.group
        assert group.rule in {"CDL501", "CDL502", "CDL503", "CDL504", "CDL505"}
        for module in group.imports:
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module)


def test_cdl404_reads_its_import_names_from_the_package_table():
    modules = [entry["module"] for entry in load_catalog()["CDL404"].match["imports"]]
    assert modules == [module for group in load_packages().groups for module in group.imports]
    assert {"flash_attn", "xformers", "apex", "triton", "cupy", "mamba_ssm", "fla", "quack"} <= set(modules)
    assert "numba.cuda" not in modules  # Numba's CUDA target imports anywhere Numba does: CDL222 reports its runtime


def test_a_package_and_its_import_are_reported_alike():
    from cudalint.runner import lint_text
    from cudalint.config import Settings

    settings = Settings(select=frozenset(rule.code for rule in load_catalog()))
    python = lint_text("train.py", "python", "import mamba_ssm\n", settings, "2.5")
    assert [(f.code, f.line, f.column) for f in python] == [("CDL404", 1, 1)]
    assert python[0].message.startswith("import of mamba_ssm: mamba-ssm / causal-conv1d runs only on NVIDIA GPUs;")
    requirement = check_manifest("requirements.txt", "mamba-ssm\n")
    assert [(f.code, f.line, f.column) for f in requirement] == [("CDL501", 1, 1)]


def test_the_package_table_is_the_only_one():
    assert not (ROOT / "scripts" / "build_package_catalog.py").exists()
    assert "Generated" not in (rules_dir() / "packages.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "spec, reported",
    [
        ("==0.41.1", True),
        ("<0.46", True),
        (">=0.43,<0.50", True),
        ("~=0.45.0", True),
        ("==0.49.*", True),  # macOS CPU, but no MPS backend yet
        ("<=0.49.0", True),
        (">=0.41", False),
        ("", False),
        ("==0.50.2", False),
        ("~=0.50", False),
        (">=0.45,<1", False),
        ("!=0.45.0", False),
    ],
)
def test_bitsandbytes_range(spec, reported):
    findings = check_manifest("requirements.txt", f"bitsandbytes{spec}\n")
    assert [f.code for f in findings] == (["CDL505"] if reported else [])


@pytest.mark.parametrize(
    "spec, floor, expected",
    [("^0.41", "0.50.0", False), ("^1.0", "0.50.0", True), ("~0.49.1", "0.50.0", False), ("=0.45", "0.50", False),
     ("0.50.1", "0.50.0", True), ("0.49 || 0.50", "0.50", True), ("<0.50.0rc1", "0.50.0", False)],
)
def test_admits_at_least_poetry_and_conda_forms(spec, floor, expected):
    assert admits_at_least(spec, floor) is expected


def test_bitsandbytes_in_poetry_and_conda():
    poetry = '[tool.poetry.dependencies]\nbitsandbytes = "^0.45"\n'
    assert [f.code for f in check_manifest("pyproject.toml", poetry)] == ["CDL505"]
    conda = "dependencies:\n  - bitsandbytes=0.50\n  - bitsandbytes=0.43\n"
    assert [(f.code, f.line) for f in check_manifest("environment.yml", conda)] == [("CDL505", 3)]


@pytest.mark.parametrize(
    "marker",
    [
        'sys_platform == "linux"',
        "sys_platform != 'darwin'",
        'platform_system != "Darwin"',
        'platform_system == "Windows"',
        'platform_machine == "aarch64"',
        'python_version >= "3.9" and sys_platform == "linux"',
        '(sys_platform == "linux" or sys_platform == "win32") and extra == "gpu"',
        "'linux' in sys_platform",
        'platform_system != "Windows" and platform_system != "Darwin"',
        'sys_platform == "linux" or platform_system == "Windows"',
        'os_name == "nt"',
        'sys_platform not in "darwin"',
        '"darwin" not in sys_platform and python_version >= "3.8"',
    ],
)
def test_markers_false_on_every_mac_silence_the_entry(marker):
    assert check_manifest("requirements.txt", f"xformers; {marker}\n") == []
    assert excludes_macos(marker)


@pytest.mark.parametrize(
    "marker",
    ['python_version >= "3.9"', 'sys_platform == "darwin"', 'platform_machine == "x86_64"', 'extra == "cuda"',
     'python_version < "3.8" or sys_platform == "linux"', "sys_platform != 'win32'",
     'platform_release >= "20" and sys_platform == "linux" or implementation_name == "cpython"'],
)
def test_markers_that_may_hold_on_macos_keep_the_severity(marker):
    findings = check_manifest("requirements.txt", f"xformers; {marker}\n")
    assert [(f.code, f.severity) for f in findings] == [("CDL501", load_catalog()["CDL501"].severity)]


@pytest.mark.parametrize("marker", ['sys_platform = "linux"', 'os == "x"', "sys_platform ==", '(sys_platform == "a"'])
def test_invalid_markers(marker):
    with pytest.raises(MarkerError):
        parse_marker(marker)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("torch==2.3.1\n", "2.3.1"),
        ("torch>=2.1,<3\n", "2.1"),
        ("torch~=2.4.0\n", "2.4.0"),
        ("torch==2.1.0+cu118\n", "2.1.0"),
        ("Torch >= 2.2 ; python_version >= '3.9'\n", "2.2"),
        ("torch<3\n", None),
        ("torch\n", None),
        ("numpy==2.0\n", None),
        ("torch @ https://example.org/whl/cu121/torch-2.1.0%2Bcu121-cp311-cp311-linux_x86_64.whl\n", "2.1.0"),
    ],
)
def test_torch_version_from(text, expected):
    assert torch_version_from(dependencies("requirements.txt", text)) == expected


def test_torch_version_from_other_formats():
    poetry = '[tool.poetry.dependencies]\ntorch = "^2.2"\n'
    assert torch_version_from(dependencies("pyproject.toml", poetry)) == "2.2"
    conda = "dependencies:\n  - pytorch=2.1\n"
    assert torch_version_from(dependencies("environment.yml", conda)) == "2.1"


def test_torch_version_shapes_the_message():
    old = check_manifest("requirements.txt", "flash-attn\n", torch_version="1.13.1")
    assert "needs torch 2.0 or later" in old[0].message
    from_file = check_manifest("requirements.txt", "torch==1.13.1\nflash-attn\n")
    assert "targets torch 1.13.1" in from_file[0].message
    assert "needs torch" not in check_manifest("requirements.txt", "torch>=2.1\nflash-attn\n")[0].message


def test_messages_name_the_alternative():
    message = check_manifest("requirements.txt", "onnxruntime-gpu\n")[0].message
    assert "onnxruntime (CPU everywhere" in message
    assert re.search(r"faiss-cpu", check_manifest("requirements.txt", "faiss-gpu-cu12\n")[0].message)


def test_a_project_naming_its_own_extras_is_not_a_cuda_only_package():
    text = (
        '[project]\nname = "Fast_Kernels"\ndependencies = ["torch>=2.1"]\n'
        '[project.optional-dependencies]\ncuda = ["xformers"]\nall = ["fast-kernels[cuda]"]\n'
    )
    assert [(f.code, f.line, f.column) for f in check_manifest("pyproject.toml", text)] == [("CDL501", 5, 9)]


def test_any_package_asked_for_with_a_cuda_extra_is_its_cuda_build():
    text = (
        '[project]\nname = "demo"\ndependencies = ["torch>=2.5", "entropack[cuda13]>=0.1", "spacy[cuda12x]",'
        ' "rembg[gpu]", "optimum[onnxruntime-gpu]", "sentence-transformers[onnx]"]\n'
        '[project.optional-dependencies]\nquant = ["entropack[cuda13]"]\ncuda = ["thinc[cuda11x]"]\n'
        'all = ["demo[cuda]"]\n'
    )
    findings = check_manifest("pyproject.toml", text)
    assert [(f.code, f.line, f.column, f.severity.value) for f in findings] == [
        ("CDL502", 3, 31, "error"), ("CDL502", 3, 57, "error"), ("CDL502", 3, 75, "error"),
        ("CDL502", 3, 89, "error"), ("CDL502", 5, 10, "error"), ("CDL502", 6, 9, "error"),  # line 6: `all` pulls in the cuda extra
    ]
    assert findings[0].message.startswith("`entropack[cuda13]` is the CUDA build of a package")
    assert "the package without its CUDA extra" in findings[0].message
    assert check_manifest("requirements.txt", "jax[cuda12]\n")[0].message.count("plain jax (CPU)") == 1
