"""`cudalint report` on fixtures/demo: markdown and JSON sections, a trace folded in, HTML rendered in a
real headless Chromium (Debian's `chromium` package)."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from cudalint.cli import main

TRACE = FIXTURES / "trace"
CHECKLIST_IDS = ["dependencies", "operators", "cpu_fallbacks", "dtypes", "cuda_runtime", "numerics"]
FAMILY_COUNTS = {"CDL0": 0, "CDL1": 5, "CDL2": 6, "CDL3": 4, "CDL4": 0, "CDL5": 0, "CDL6": 1, "CDL7": 1}


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory):
    """A real trace of fixtures/trace/volume_model.py, made in this process for torch 2.5."""
    out = tmp_path_factory.mktemp("report") / "trace.json"
    here = os.getcwd()
    os.chdir(TRACE)
    try:
        assert main(["trace", "--torch-version", "2.5", "--output", str(out), "volume_model.py"]) == 1
    finally:
        os.chdir(here)
    return out


def report(capsys, *args):
    assert main(["report", "fixtures/demo", *args]) == 0
    return capsys.readouterr().out


@pytest.fixture
def in_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_json_without_trace(in_root, capsys):
    doc = json.loads(report(capsys, "--format", "json"))
    assert list(doc) == ["format", "format_version", "project", "files_checked", "torch", "findings_total",
                         "fixable_total", "families", "dependency_blockers", "op_coverage", "checklist", "overall"]
    import torch

    assert doc["torch"] == {"target": "2.9", "target_source": "from fixtures/demo/requirements.txt",
                            "database_release": "2.9.1", "database_note": "", "installed": torch.__version__,
                            "mps_built": torch.backends.mps.is_built(),
                            "mps_available": torch.backends.mps.is_available(), "note": "checked on this machine"}
    assert {f["family"]: f["findings"] for f in doc["families"]} == FAMILY_COUNTS
    assert doc["findings_total"] == 17
    check = json.loads(subprocess.run([sys.executable, "-m", "cudalint", "check", "--format", "json", "--no-cache",
                                       "fixtures/demo"], capture_output=True, text=True, timeout=120).stdout)
    assert doc["fixable_total"] == sum(f["fixable"] for f in doc["families"]) == sum(1 for f in check if f["fix"])
    assert doc["dependency_blockers"] == []
    assert doc["op_coverage"] == {"static": [], "traced": None}
    assert [(item["id"], item["verdict"], item["checked_against"]) for item in doc["checklist"]] == [
        ("dependencies", "pass", "torch 2.9.1"),
        ("operators", "pending", "torch 2.9.1"),
        ("cpu_fallbacks", "pending", "torch 2.9.1"),
        ("dtypes", "warning", "torch 2.9.1"),
        ("cuda_runtime", "fail", "torch 2.9.1"),
        ("numerics", "pending", "torch 2.9.1"),
    ]
    assert doc["checklist"][3]["evidence"] == [
        "fixtures/demo/train.py:26:39 CDL601 torch.float64 does not exist on MPS; use float32 "
        "(or keep this tensor on the CPU)"]
    assert doc["overall"] == "fail"


def test_json_with_trace_rechecked_against_the_target(in_root, capsys, trace_file):
    doc = json.loads(report(capsys, "--format", "json", "--trace", str(trace_file), "--torch-version", "2.3"))
    traced = doc["op_coverage"]["traced"]
    assert (traced["trace_release"], traced["release"]) == ("2.5.1", "2.3.1")
    assert (traced["operators"], traced["calls"]) == (15, 24)
    assert traced["verdicts"] == {"runs": 13, "raises": 1, "cpu_fallback": 1}
    assert [(op["op"], op["count"], op["first_supported"]) for op in traced["would_raise"]] == [
        ("aten::grid_sampler_3d", 3, "2.9.1")]
    assert [(op["op"], op["count"]) for op in traced["cpu_fallbacks"]] == [("aten::embedding_renorm_", 2)]
    verdicts = {item["id"]: item["verdict"] for item in doc["checklist"]}
    assert verdicts == {"dependencies": "pass", "operators": "fail", "cpu_fallbacks": "warning",
                        "dtypes": "warning", "cuda_runtime": "fail", "numerics": "pending"}
    evidence = {item["id"]: item["evidence"] for item in doc["checklist"]}
    assert evidence["operators"][0] == ("aten::grid_sampler_3d would raise NotImplementedError (3 calls, first from "
                                        "volume_model.py:12 in sample); runs on MPS from torch 2.9.1")
    assert evidence["cpu_fallbacks"][0] == ("aten::embedding_renorm_ runs on the CPU (2 calls, first from "
                                            "volume_model.py:25 in main)")
    assert evidence["dtypes"][-1] == "1 float64 tensor created by aten::ones at volume_model.py:26 in main"
    assert evidence["cuda_runtime"][-2:] == [
        "torch.cuda.empty_cache called (1 call, first from volume_model.py:27 in main)",
        "torch.cuda.manual_seed_all called (1 call, first from volume_model.py:17 in main)"]


def test_markdown_sections(in_root, capsys, trace_file):
    text = report(capsys, "--trace", str(trace_file), "--torch-version", "2.3")
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "# Portability report: fixtures/demo",
        "## Findings by family",
        "## Dependency blockers",
        "## Operator coverage",
        "### Static (torch 2.3.1)",
        "### Traced",
        "## Acceptance checklist",
        "### Dependencies and native code install on a Mac: pass",
        "### Operators run on MPS: fail",
        "### No silent CPU fallbacks: warning",
        "### No float64/complex128 on MPS: warning",
        "### No CUDA-only memory, stream or runtime code: fail",
        "### Numerical agreement with a CUDA baseline: pending",
    ]
    assert lines[2] == "Target torch: 2.3 (configured); the MPS coverage database answers for torch 2.3.1.  "
    assert lines[3].startswith("Installed torch: ") and "torch.backends.mps.is_available() is False" in lines[3]
    assert "| CDL2xx | CUDA-only runtime APIs | 6 |" in text
    assert "| aten::grid_sampler_3d | 3 | raises | 2.9.1 | volume_model.py:12 in sample |" in lines
    assert "| aten::embedding_renorm_ | 2 | cpu_fallback | - | volume_model.py:25 in main |" in lines
    start = lines.index("## Acceptance checklist")
    assert lines[start + 2:start + 10] == [
        "| item | verdict | checked against |",
        "|---|---|---|",
        "| Dependencies and native code install on a Mac | **pass** | torch 2.3.1 |",
        "| Operators run on MPS | **fail** | torch 2.3.1 |",
        "| No silent CPU fallbacks | **warning** | torch 2.3.1 |",
        "| No float64/complex128 on MPS | **warning** | torch 2.3.1 |",
        "| No CUDA-only memory, stream or runtime code | **fail** | torch 2.3.1 |",
        "| Numerical agreement with a CUDA baseline | **pending** | torch 2.3.1 |",
    ]


def test_without_torch_says_so():
    code = ("import sys; sys.modules['torch'] = None; from cudalint.cli import main; "
            "sys.exit(main(['report', 'fixtures/demo', '--torch-version', '2.8']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "Target torch: 2.8 (configured); the MPS coverage database answers for torch 2.8.0.  "
    assert lines[3] == ("Installed torch: none (torch is not installed in this Python environment: "
                        "MPS availability not checked).  ")


@pytest.mark.parametrize("args, message", [
    (["report", "no/such/dir"], "no/such/dir"),
    (["report", "fixtures/demo", "--trace", "fixtures/demo/requirements.txt"], "not JSON"),
    (["report", "fixtures/demo", "--trace", "missing.json"], "missing.json"),
    (["report", "fixtures/demo", "--torch-version", "banana"], "is not a version"),
])
def test_usage_errors_exit_2(args, message, in_root, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


CHROMIUM_MISSING = ("Chromium is not installed, so the HTML report was not rendered in a browser "
                    "(install Debian's chromium: apt-get install -y chromium)")


@pytest.fixture
def chromium_binary():
    """Debian's chromium. Without it the test does not run and says why in pytest's summary (-rs);
    under CI (the CI variable set, as .ci/run has it, which installs Chromium) its absence is a failure."""
    binary = shutil.which("chromium")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM_MISSING}; CI must run this test", pytrace=False)
        pytest.skip(f"NOT RUN: {CHROMIUM_MISSING}; CI runs it")
    return binary


def chromium(binary, *args, profile):
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=60)


def test_html_renders_in_headless_chromium(chromium_binary, in_root, capsys, trace_file, tmp_path):
    page = tmp_path / "report.html"
    assert main(["report", "fixtures/demo", "--trace", str(trace_file), "--torch-version", "2.3", "--format", "html",
                 "--output", str(page)]) == 0
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html) and "@import" not in html and "<script" not in html
    assert "<style>" in html and "<svg" in html

    shot = tmp_path / "report.png"
    rendered = chromium(chromium_binary, f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri(), profile=tmp_path / "p1")
    assert shot.is_file(), rendered.stderr
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 2000)
    assert len(data) > 30_000  # text, tables and bars, not a blank page

    dom = chromium(chromium_binary, "--dump-dom", page.as_uri(), profile=tmp_path / "p2").stdout
    assert re.findall(r'<tr class="checklist-row" data-id="([a-z_]+)">', dom) == CHECKLIST_IDS
    assert re.findall(r'<table class="check" id="check-([a-z_]+)" data-verdict="([a-z]+)">', dom) == [
        ("dependencies", "pass"), ("operators", "fail"), ("cpu_fallbacks", "warning"), ("dtypes", "warning"),
        ("cuda_runtime", "fail"), ("numerics", "pending")]
    bars = re.findall(r'<rect class="bar(?: empty)?" data-family="(CDL\d)" data-count="(\d+)"', dom)
    assert {family: int(count) for family, count in bars} == FAMILY_COUNTS
    assert 'data-target-release="2.3.1"' in dom
    assert "the MPS coverage database answers for torch 2.3.1" in dom
    assert "<code>aten::grid_sampler_3d</code>" in dom


def test_a_trace_that_stopped_early_passes_nothing(in_root, capsys, tmp_path):
    out = tmp_path / "fails.json"
    os.chdir(TRACE)
    try:
        assert main(["trace", "--output", str(out), "fails.py"]) == 0
    finally:
        os.chdir(ROOT)
    capsys.readouterr()
    doc = json.loads(report(capsys, "--format", "json", "--trace", str(out)))
    operators = doc["checklist"][1]
    assert (operators["id"], operators["verdict"]) == ("operators", "pending")
    assert operators["evidence"][-1] == ("the traced program exited with status 1 (RuntimeError: the program failed "
                                         "on purpose): it may have stopped early, so the trace may be partial")


def test_static_cdl6_findings_land_in_their_checklist_items():
    from cudalint.findings import Finding, Severity
    from cudalint.report.checklist import build_checklist

    def finding(code, severity):
        return Finding(code, "m.py", 1, 1, 1, 2, f"{code} message", severity)

    items = build_checklist([finding("CDL604", Severity.ERROR), finding("CDL605", Severity.WARNING),
                             finding("CDL608", Severity.WARNING)], 1, "2.5.1", None)
    by_id = {item.key: (item.verdict, item.evidence[0]) for item in items}
    assert by_id["operators"] == ("fail", "m.py:1:1 CDL604 CDL604 message")
    assert by_id["cpu_fallbacks"] == ("warning", "m.py:1:1 CDL605 CDL605 message")
    assert by_id["dtypes"] == ("warning", "m.py:1:1 CDL608 CDL608 message")
    assert by_id["numerics"][0] == "pending"
