"""Conda package lists saved as requirements files: `conda list --export` and `conda list --explicit`."""

from __future__ import annotations

import subprocess
import sys

from cudalint.findings import Severity
from cudalint.manifests import check_manifest, dependencies, torch_version_from
from cudalint.manifests.conda_lists import is_package_list

EXPORT = """\
# This file may be used to create an environment using:
# $ conda create --name <env> --file <this file>
# platform: linux-64
_libgcc_mutex=0.1=main
numpy=1.26.4=pypi_0
nvidia-cublas-cu12=12.1.3.1=pypi_0
pytorch-cuda=12.1=ha16c6d3_5
torch=2.1.0=pypi_0
"""


def _found(findings):
    return [(f.code, f.line, f.column, f.severity) for f in findings]


def test_an_export_for_linux_is_read_as_conda_packages_kept_off_the_mac():
    # nvidia-cublas-cu12 (pip-installed) and pytorch-cuda are linux-64 builds: nothing a Mac installs
    assert [(d.name, d.off_mac) for d in dependencies("requirements.txt", EXPORT)] == [
        ("_libgcc_mutex", True), ("numpy", True), ("nvidia-cublas-cu12", True), ("pytorch-cuda", True), ("torch", True)]
    assert _found(check_manifest("requirements.txt", EXPORT)) == []


def test_a_list_without_a_platform_reports_at_the_rules_severity():
    text = "numpy=1.26.4=pypi_0\n  pytorch-cuda=12.1=ha16c6d3_5\n"
    assert is_package_list(text)
    assert [(f.code, f.line, f.column, f.severity) for f in check_manifest("requirements.txt", text)] == [
        ("CDL508", 2, 3, Severity.ERROR)]


def test_pip_installed_entries_are_pypi_packages_and_give_the_target_release():
    deps = dependencies("requirements.txt", EXPORT)
    assert [(d.name, d.specifier, d.ecosystem) for d in deps] == [
        ("_libgcc_mutex", "=0.1=main", "conda"), ("numpy", "==1.26.4", "pypi"),
        ("nvidia-cublas-cu12", "==12.1.3.1", "pypi"), ("pytorch-cuda", "=12.1=ha16c6d3_5", "conda"),
        ("torch", "==2.1.0", "pypi")]
    assert torch_version_from(deps) == "2.1.0"


def test_an_explicit_list_reads_package_urls_and_their_channel():
    text = ("# platform: osx-arm64\n@EXPLICIT\n"
            "https://example.invalid/nvidia/osx-arm64/cuda-nvcc-12.1.105-0.tar.bz2\n"
            "https://example.invalid/conda-forge/noarch/tqdm-4.66.1-pyhd8ed1ab_0.conda#0123abcd\n")
    deps = dependencies("requirements.txt", text)
    assert [(d.name, d.specifier, d.channel, d.off_mac) for d in deps] == [
        ("cuda-nvcc", "=12.1.105=0", "nvidia", False), ("tqdm", "=4.66.1=pyhd8ed1ab_0", "conda-forge", False)]
    assert [(f.code, f.line, f.severity) for f in check_manifest("requirements.txt", text)] == [
        ("CDL508", 3, Severity.ERROR)]


def test_an_explicit_list_without_a_header_takes_the_platform_of_each_url():
    text = "@EXPLICIT\nhttps://example.invalid/nvidia/linux-64/cuda-nvcc-12.1.105-0.tar.bz2\nnot a url\n"
    findings = check_manifest("requirements.txt", text)
    assert [(f.code, f.line, f.severity) for f in findings] == [("CDL000", 3, Severity.ERROR)]  # cuda-nvcc: linux-64
    assert findings[0].message == "line 3: not a conda package spec: 'not a url'"


def test_a_pip_requirements_file_is_no_package_list():
    assert not is_package_list("torch==2.1.0\nnumpy\n")
    assert not is_package_list("# platform notes\ntorch==2.1.0\n")
    assert not is_package_list("torch==2.1.0\nnumpy=1.26.4=pypi_0\n")  # a pip file with one bad line stays pip's
    assert not is_package_list("# comments only\n\n")


# the same export without its platform line: a list a Mac user may install from
UNPLACED = EXPORT.replace("# platform: linux-64\n", "")


def test_check_command_reads_a_conda_export(tmp_path):
    (tmp_path / "requirements.txt").write_text(UNPLACED)
    result = subprocess.run([sys.executable, "-m", "cudalint", "check", "--isolated", "--no-cache", "-q", "."],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1
    assert [line.split(" ", 2)[:2] for line in result.stdout.splitlines()] == [
        ["requirements.txt:5:1:", "CDL503"], ["requirements.txt:6:1:", "CDL508"]]


def test_a_conda_export_named_on_the_command_line_is_read_by_its_content(tmp_path):
    (tmp_path / "env-export.txt").write_text(UNPLACED)
    result = subprocess.run([sys.executable, "-m", "cudalint", "check", "--isolated", "--no-cache", "-q", "env-export.txt"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert [line.split(" ", 2)[:2] for line in result.stdout.splitlines()] == [
        ["env-export.txt:5:1:", "CDL503"], ["env-export.txt:6:1:", "CDL508"]], result.stderr


def test_a_hostile_explicit_list_is_read_in_linear_time():
    line = "https://example.invalid/c/linux-64/" + "a-" * 200_000 + "\n"
    findings = check_manifest("requirements.txt", "@EXPLICIT\n" + line)
    assert [(f.code, f.line) for f in findings] == [("CDL000", 2)]
