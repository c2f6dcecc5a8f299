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
CHECKLIST_IDS = ["dependencies", "device_selection", "operators", "cpu_fallbacks", "dtypes", "cuda_runtime", "numerics"]
FAMILY_COUNTS = {"CDL0": 0, "CDL1": 4, "CDL2": 6, "CDL3": 3, "CDL4": 0, "CDL5": 0, "CDL6": 0, "CDL7": 1}


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
    assert list(doc) == ["format", "format_version", "project", "verdict", "files_checked", "torch", "findings_total",
                         "fixable_total", "fixable_with_fix", "blockers", "families", "files", "folders",
                         "entry_points", "findings", "rules", "op_coverage", "checklist", "overall"]
    assert doc["verdict"] == "Not ready for MPS with torch 2.15: no blocker, 14 findings, 7 fixable with `--fix`."
    import torch

    assert doc["torch"] == {"target": "2.15",
                            "target_source": "the newest release torch>=2.9 in fixtures/demo/requirements.txt allows",
                            "database_release": "2.15.0", "database_note": "", "installed": torch.__version__,
                            "mps_built": torch.backends.mps.is_built(),
                            "mps_available": torch.backends.mps.is_available(), "note": "checked on this machine"}
    assert {f["family"]: f["findings"] for f in doc["families"]} == FAMILY_COUNTS
    assert doc["findings_total"] == 14
    check = json.loads(subprocess.run([sys.executable, "-m", "cudalint", "check", "--format", "json", "--no-cache",
                                       "fixtures/demo"], capture_output=True, text=True, timeout=120).stdout)
    assert doc["fixable_total"] == sum(f["fixable"] for f in doc["families"]) == sum(1 for f in check if f["fix"])
    assert doc["blockers"] == []
    assert doc["entry_points"] == [{"kind": "script", "name": "fixtures/demo/train.py", "source": "fixtures/demo/train.py",
                                    "command": "cudalint trace --output trace.json -- python fixtures/demo/train.py"}]
    assert sorted(doc["rules"]) == sorted({f["code"] for f in check})
    assert doc["op_coverage"] == {"static": [], "traced": None}
    assert [(item["id"], item["verdict"], item["checked_against"]) for item in doc["checklist"]] == [
        ("dependencies", "pass", "torch 2.15.0"),
        ("device_selection", "fail", "torch 2.15.0"),
        ("operators", "pending", "torch 2.15.0"),
        ("cpu_fallbacks", "pending", "torch 2.15.0"),
        ("dtypes", "pass", "torch 2.15.0"),
        ("cuda_runtime", "fail", "torch 2.15.0"),
        ("numerics", "pending", "torch 2.15.0"),
    ]
    assert [line.split(" ")[:2] for line in doc["checklist"][1]["evidence"]] == [
        ["fixtures/demo/train.py:15:10", "CDL101"],
        ["fixtures/demo/train.py:20:45", "CDL108"], ["fixtures/demo/train.py:36:75", "CDL102"],
        ["fixtures/demo/train.py:55:27", "CDL109"]]
    # train.py:26 makes float64 data on the CPU, narrowed with .float() before each batch moves
    assert doc["checklist"][4]["evidence"] == ["no float64 or complex128 found statically"]
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
    assert verdicts == {"dependencies": "pass", "device_selection": "fail", "operators": "fail", "cpu_fallbacks": "warning",
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
        "## Blockers",
        "## Work left per file",
        "## Findings by family",
        "## Operator coverage",
        "### Static (torch 2.3.1)",
        "### Traced",
        "## Entry points",
        "## Acceptance checklist",
        "### Dependencies and native code install on a Mac: pass",
        "### The device is chosen at run time (no hard-coded CUDA): fail",
        "### Operators run on MPS: fail",
        "### No silent CPU fallbacks: warning",
        "### No float64/complex128 on MPS: warning",
        "### No CUDA-only memory, stream or runtime code: fail",
        "### Numerical agreement with a CUDA baseline: pending",
    ]
    assert lines[2] == "**Not ready for MPS with torch 2.3: no blocker, 14 findings, 5 fixable with `--fix`.**"
    assert lines[4] == "Target torch: 2.3 (configured); the MPS coverage database answers for torch 2.3.1.  "
    assert lines[5].startswith("Installed torch: ") and "torch.backends.mps.is_available() is False" in lines[5]
    assert "| CDL2xx | CUDA-only runtime APIs | 6 |" in text
    assert "| aten::grid_sampler_3d | 3 | raises | 2.9.1 | volume_model.py:12 in sample |" in lines
    assert "| aten::embedding_renorm_ | 2 | cpu_fallback | - | volume_model.py:25 in main |" in lines
    start = lines.index("## Acceptance checklist")
    assert lines[start + 2:start + 11] == [
        "| item | verdict | checked against |",
        "|---|---|---|",
        "| Dependencies and native code install on a Mac | **pass** | torch 2.3.1 |",
        "| The device is chosen at run time (no hard-coded CUDA) | **fail** | torch 2.3.1 |",
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
    assert lines[4] == "Target torch: 2.8 (configured); the MPS coverage database answers for torch 2.8.0.  "
    assert lines[5] == ("Installed torch: none (torch is not installed in this Python environment: "
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


def chromium_binary():
    """Debian's chromium. Without it the test does not run and says why in pytest's summary (-rs);
    under CI (the CI variable set, as .ci/run has it, which installs Chromium) its absence is a failure."""
    binary = shutil.which("chromium")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM_MISSING}; CI must run this test", pytrace=False)
        pytest.skip(f"NOT RUN: {CHROMIUM_MISSING}; CI runs it")
    return binary


def chromium(*args, profile):
    binary = chromium_binary()
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=60)


# Headless Chromium keeps its window at least 500 px wide, so a narrow screen is an iframe of that width. Its
# srcdoc shares the wrapper's origin; once it has loaded, a script writes the report's layout into the wrapper,
# which --dump-dom prints.
PROBE = """<!DOCTYPE html><html><body style="margin:0"><iframe id="f" style="border:0;width:{width}px;height:900px"
srcdoc="{page}" onload="
var d = this.contentDocument, e = d.documentElement, w = this.contentWindow;
var wide = [].slice.call(d.querySelectorAll('body *')).filter(function (n) {{
  return n.getBoundingClientRect().right > e.clientWidth + 0.5 && !n.closest('.scroll'); }}).length;
document.body.insertAdjacentHTML('beforeend', '<pre id=probe>' + JSON.stringify({{scroll: e.scrollWidth,
  client: e.clientWidth, wide: wide, dark: w.matchMedia('(prefers-color-scheme: dark)').matches,
  background: w.getComputedStyle(d.body).backgroundColor}}) + '</pre>');"></iframe></body></html>"""


def layout(page_html, width, tmp_path, *flags):
    """scrollWidth and clientWidth of the page's root at `width` px, elements sticking out, colour scheme."""
    from html import escape

    wrapper = tmp_path / f"probe-{width}{''.join(flags)}.html"
    wrapper.write_text(PROBE.format(width=width, page=escape(page_html, quote=True)), encoding="utf-8")
    dom = chromium(*flags, "--window-size=1280,1000", "--dump-dom", wrapper.as_uri(),
                   profile=tmp_path / f"profile-{wrapper.stem}").stdout
    found = re.search(r'<pre id="probe">([^<]*)</pre>', dom)
    assert found, dom[-2000:]
    return json.loads(found.group(1))


def screenshot(page, width, tmp_path):
    shot = tmp_path / f"report-{width}.png"
    rendered = chromium(f"--screenshot={shot}", f"--window-size={width},2000", page.as_uri(),
                        profile=tmp_path / f"shot-{width}")
    assert shot.is_file(), rendered.stderr
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (width, 2000)
    assert len(data) > 30_000  # text, tables and bars, not a blank page


def test_the_layout_probe_sees_overflow(tmp_path):
    probe = layout('<!DOCTYPE html><body><div style="width:600px">wide</div></body>', 390, tmp_path)
    assert probe["scroll"] > probe["client"] and probe["wide"] == 1


def test_html_renders_in_headless_chromium(in_root, capsys, trace_file, tmp_path):
    page = tmp_path / "report.html"
    assert main(["report", "fixtures/demo", "--trace", str(trace_file), "--torch-version", "2.3", "--format", "html",
                 "--output", str(page)]) == 0
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html) and "@import" not in html and "<script" not in html
    assert "<style>" in html and "prefers-color-scheme: dark" in html
    screenshot(page, 1280, tmp_path)

    dom = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "p2").stdout
    assert re.findall(r'<tr class="checklist-row" data-id="([a-z_]+)">', dom) == CHECKLIST_IDS
    assert re.findall(r'<table class="check" id="check-([a-z_]+)" data-verdict="([a-z]+)">', dom) == [
        ("dependencies", "pass"), ("device_selection", "fail"), ("operators", "fail"), ("cpu_fallbacks", "warning"),
        ("dtypes", "warning"), ("cuda_runtime", "fail"), ("numerics", "pending")]
    assert re.findall(r'data-folder="([^"]*)" data-work-left="(\d+)"', dom) == [(".", "9")]
    assert 'data-target-release="2.3.1"' in dom
    assert "the MPS coverage database answers for torch 2.3.1" in dom
    assert "<code>aten::grid_sampler_3d</code>" in dom
    # every rule a finding names is documented in the page, and each link has its target
    links = set(re.findall(r'href="#rule-(CDL\d{3})"', dom))
    targets = set(re.findall(r'<details class="rule" id="rule-(CDL\d{3})">', dom))
    assert links == targets == {"CDL101", "CDL102", "CDL108", "CDL109", "CDL201", "CDL202", "CDL203",
                                "CDL205", "CDL301", "CDL304", "CDL701"}
    assert dom.count('<li class="finding">') == 14


@pytest.mark.parametrize("project", ["fixtures/demo", "fixtures/report/fastops"])
def test_html_fits_1280_and_390_px_in_light_and_dark(in_root, project, tmp_path):
    page = tmp_path / "report.html"
    assert main(["report", project, "--format", "html", "--output", str(page)]) == 0
    html = page.read_text()
    for width in (1280, 390):
        probe = layout(html, width, tmp_path)
        assert (probe["scroll"], probe["wide"], probe["dark"]) == (probe["client"], 0, False), width
        assert probe["background"] == "rgb(255, 255, 255)"
    dark = layout(html, 390, tmp_path, "--force-dark-mode")
    assert (dark["scroll"], dark["wide"], dark["dark"], dark["background"]) == (dark["client"], 0, True, "rgb(20, 23, 28)")
    screenshot(page, 390 if project.endswith("fastops") else 1280, tmp_path)


def test_a_trace_that_stopped_early_passes_nothing(in_root, capsys, tmp_path):
    out = tmp_path / "fails.json"
    os.chdir(TRACE)
    try:
        assert main(["trace", "--output", str(out), "fails.py"]) == 0
    finally:
        os.chdir(ROOT)
    capsys.readouterr()
    doc = json.loads(report(capsys, "--format", "json", "--trace", str(out)))
    operators = doc["checklist"][2]
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


def section(text, heading):
    lines = text.splitlines()
    start = lines.index(heading)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return lines[start:end]


def test_markdown_blockers_and_work_per_file_on_the_demo(in_root, capsys):
    text = report(capsys)
    assert text.splitlines()[2] == "**Not ready for MPS with torch 2.15: no blocker, 14 findings, 7 fixable with `--fix`.**"
    assert section(text, "## Blockers") == [
        "## Blockers",
        "",
        "None: no dependency, native build or import stops the project from installing or importing on a Mac.",
        "",
    ]
    assert section(text, "## Work left per file") == [
        "## Work left per file",
        "",
        "Sorted by what `--fix` leaves to do by hand.",
        "",
        "| file | CDL1xx | CDL2xx | CDL3xx | CDL7xx | findings | fixable with `--fix` | left |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        "| train.py | 4 | 6 | 3 | 1 | 14 | 7 | 7 |",
        "",
    ]
    assert section(text, "## Entry points") == [
        "## Entry points", "", "- script `fixtures/demo/train.py`: "
        "`cudalint trace --output trace.json -- python fixtures/demo/train.py`", ""]


def test_markdown_blockers_name_extension_importers_and_what_to_do(monkeypatch, capsys):
    monkeypatch.chdir(FIXTURES / "report")
    assert main(["report", "fastops"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[2] == "**Not ready for MPS with torch 2.15: 6 blockers, 12 findings, 3 fixable with `--fix`.**"
    assert section(text, "## Blockers") == [
        "## Blockers",
        "",
        "What stops the project from installing, building or importing on a Mac, in file order:",
        "",
        "1. `fastops/fastops/attention.py:1` (import, CDL404): import of flash_attn: flash-attn runs only on NVIDIA GPUs; "
        "use torch.nn.functional.scaled_dot_product_attention (attn_implementation='sdpa' in transformers)  ",
        "   To do: Import it inside `try: ... except ImportError:` (or behind a CUDA check) and fall back to a portable "
        "implementation.",
        "2. `fastops/fastops/attention.py:4` (import, CDL401): imports fastops._C, the CUDA extension built at "
        "fastops/setup.py:7  ",
        "   To do: Import the extension inside `try: ... except ImportError:` and fall back to a pure-PyTorch "
        "implementation, so the module imports where the extension was not built.",
        "3. `fastops/fastops/layers.py:3` (import, CDL401): imports fastops._C, the CUDA extension built at "
        "fastops/setup.py:7  ",
        "   To do: Import the extension inside `try: ... except ImportError:` and fall back to a pure-PyTorch "
        "implementation, so the module imports where the extension was not built.",
        "4. `fastops/pyproject.toml:4` (install, CDL501): `xformers` runs only on NVIDIA GPUs; it cannot be installed or "
        "used on macOS or CPU-only machines. Use torch.nn.functional.scaled_dot_product_attention instead  ",
        "   To do: Move it to an optional extra for CUDA machines (or give it the marker `; sys_platform != 'darwin'`) "
        "and use the portable replacement the finding names.",
        "5. `fastops/requirements.txt:2` (install, CDL501): `flash-attn` runs only on NVIDIA GPUs; it cannot be "
        "installed or used on macOS or CPU-only machines. Use torch.nn.functional.scaled_dot_product_attention "
        "(attn_implementation='sdpa' in transformers) instead  ",
        "   To do: Move it to an optional extra for CUDA machines (or give it the marker `; sys_platform != 'darwin'`) "
        "and use the portable replacement the finding names.",
        "6. `fastops/setup.py:7` (build, CDL401): torch.utils.cpp_extension.CUDAExtension needs nvcc and the CUDA "
        "toolkit; provide a CppExtension or pure-torch fallback  ",
        "   To do: Build the extension with CppExtension when CUDA is absent (or skip it) and keep a pure-PyTorch path "
        "for its operators.",
        "",
    ]
    assert section(text, "## Work left per file")[4:] == [
        "| file | CDL1xx | CDL2xx | CDL4xx | CDL5xx | findings | fixable with `--fix` | left |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        "| fastops/train.py | 2 | 1 |  |  | 3 | 1 | 2 |",
        # + CDL406: it imports the extension setup.py builds; nothing imports the module, and its function runs
        # only once flash_attn imported: its CUDA call is not reported (cuda_imports.defined_after_import)
        "| fastops/attention.py |  |  | 2 |  | 2 | 0 | 2 |",
        "| tools/bench.py | 1 | 1 |  |  | 2 | 1 | 1 |",
        "| fastops/layers.py |  |  | 1 |  | 1 | 0 | 1 |",
        "| pyproject.toml |  |  |  | 1 | 1 | 0 | 1 |",
        "| requirements.txt |  |  |  | 1 | 1 | 0 | 1 |",
        "| setup.py |  |  | 1 |  | 1 | 0 | 1 |",
        "| fastops/evaluate.py | 1 |  |  |  | 1 | 1 | 0 |",
        "",
    ]
    assert section(text, "## Entry points")[2:] == [
        "- console script `fastops-eval` (fastops.evaluate:main, fastops/pyproject.toml): its module has no "
        "`__main__` guard, trace it through a script that calls it",
        "- console script `fastops-train` (fastops.train:main, fastops/setup.py): "
        "`cudalint trace --output trace.json -m fastops.train`",
        "- package `fastops` (fastops/fastops/__main__.py): `cudalint trace --output trace.json -m fastops`",
        "- script `fastops/fastops/train.py`: `cudalint trace --output trace.json -- python fastops/fastops/train.py`",
        "- script `fastops/tools/bench.py`: `cudalint trace --output trace.json -- python fastops/tools/bench.py`",
        "",
    ]
    assert ("- no trace given: static analysis cannot see every operator a run reaches; trace an entry point of the "
            "project, e.g. `cudalint trace --output trace.json -m fastops.train`; "
            "`cudalint trace --output trace.json -m fastops`; "
            "`cudalint trace --output trace.json -- python fastops/fastops/train.py` (and 1 more entry points), "
            "and pass --trace") in text.splitlines()


def test_folder_chart_data_counts_work_left_per_top_level_folder(monkeypatch, capsys):
    monkeypatch.chdir(FIXTURES / "report")
    assert main(["report", "fastops", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(f["folder"], f["files"], f["findings"], f["fixable"], f["work_left"]) for f in doc["folders"]] == [
        ("fastops", 4, 7, 2, 5), (".", 3, 3, 0, 3), ("tools", 1, 2, 1, 1)]  # csrc/*.cu: CDL453 is opt-in


@pytest.mark.parametrize("fail_on, code", [(None, 0), ("fail", 1), ("warning", 1)])
def test_fail_on_gives_ci_an_exit_code(in_root, capsys, fail_on, code):
    args = ["report", "fixtures/demo"] + (["--fail-on", fail_on] if fail_on else [])
    assert main(args) == code


def test_fail_on_warning_but_not_fail_for_a_project_with_warnings_only(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.py").write_text("import torch\ndef widen(x):\n    return x.to(torch.float64)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["report", ".", "--fail-on", "fail"]) == 0
    assert main(["report", ".", "--fail-on", "warning"]) == 1
    assert capsys.readouterr().out.splitlines()[2] == (
        "**Nearly ready for MPS with torch 2.15: no blocker, 1 finding, 0 fixable with `--fix`.**")


def test_relative_and_aliased_extension_imports_are_blockers(tmp_path, monkeypatch):
    from cudalint.catalog import load_catalog
    from cudalint.findings import Finding, Severity
    from cudalint.report.portability_plan import blockers

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "setup.py").write_text('from torch.utils.cpp_extension import CUDAExtension as E\n'
                                       'ext = [E(name="pkg.sub._ops", sources=["k.cu"])]\n')
    for name, text in {"pkg/__init__.py": "", "pkg/sub/__init__.py": "from ._ops import f\n",
                       "pkg/sub/use.py": "from .. import sub\nfrom . import _ops as o\n",
                       "pkg/other.py": "import pkg.sub._ops\nfrom pkg.sub import _ops\nfrom pkg import sub\n",
                       "pkg/text.py": 's = "pkg.sub._ops"\n'}.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    site = Finding("CDL401", "setup.py", 2, 8, 2, 9, "CUDAExtension", Severity.ERROR)
    checked = ["setup.py", "pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/use.py", "pkg/other.py", "pkg/text.py"]
    found = [(b["kind"], b["path"], b["line"]) for b in blockers([site], load_catalog(), checked)]
    assert found == [("import", "pkg/other.py", 1), ("import", "pkg/other.py", 2), ("import", "pkg/sub/__init__.py", 1),
                     ("import", "pkg/sub/use.py", 2), ("build", "setup.py", 2)]
