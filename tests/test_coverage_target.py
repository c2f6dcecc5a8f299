"""What the target release means: the newest release the project's torch requirement allows, notes for
operators that fail in older allowed releases, and the suggested lower bound."""

from __future__ import annotations

import json

import pytest

from conftest import findings_of, run_cli, triples
from cudalint.coverage import CoverageDB
from cudalint.coverage.target import allowed_releases, range_note, satisfies, suggested_floor
from cudalint.versions import TorchTarget, parse_version, plain_version, with_floor

MODEL = (
    "import torch\n"
    "import torch.nn as nn\n"
    "x = torch.randn(3, device=dev)\n"
    "y = torch.cumprod(x, 0)\n"
    'up = nn.Upsample(scale_factor=2, mode="bicubic")\n'
    'again = nn.Upsample(scale_factor=2, mode="bicubic")\n'
    "m = x.mode()\n"
)
PYPROJECT = '[project]\nname = "demo"\ndependencies = [\n    "numpy",\n    "torch>=2.0",\n]\n'


@pytest.mark.parametrize("spec, version, expected", [
    (">=2.0", "2.15.0", True), (">=2.0", "1.13.1", False), (">=2.0,<2.5", "2.5.0", False), (">=2.0,<2.5", "2.4.1", True),
    ("==2.4.*", "2.4.1", True), ("==2.4.*", "2.5.0", False), ("==2.4.1", "2.4.1", True), ("!=2.4.1", "2.4.1", False),
    ("~=2.4.0", "2.4.9", True), ("~=2.4.0", "2.5.0", False), ("^2.2", "2.15.0", True), ("^2.2", "3.0.0", False),
    ("~2.2", "2.2.5", True), ("~2.2", "2.3.0", False), ("=2.1", "2.1.2", True), ("=2.1", "2.10.0", False),
    ("", "2.7.1", True), (">=2.1 <2.3", "2.2.2", True), ("<2.0|>=2.9", "2.5.1", False), ("<2.0|>=2.9", "2.9.1", True),
])
def test_satisfies(spec, version, expected):
    assert satisfies(spec, version) is expected


def test_allowed_releases_answer_for_a_minor_series():
    releases = CoverageDB.load().versions()
    assert allowed_releases(">=2.10", releases) == ("2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")
    assert allowed_releases("==2.4.0", releases) == ("2.4.1",)  # 2.4.1 answers for the 2.4 series
    assert allowed_releases("<1.13", releases) == ()


def test_target_text_carries_the_oldest_allowed_release():
    target = parse_version(with_floor("2.15", "2.0"))
    assert target == TorchTarget((2, 15, 0), (2, 0, 0)) and target.floor == (2, 0, 0)
    assert target != (2, 15, 0) and tuple(target) == (2, 15, 0) and target >= (2, 6, 0)
    assert parse_version("2.15") == (2, 15, 0) and not isinstance(parse_version("2.15"), TorchTarget)
    assert with_floor("2.4", "2.4") == "2.4" and plain_version("2.15 from 2.0") == "2.15"


def test_ops_failing_in_older_allowed_releases_are_notes_not_errors():
    found = findings_of(MODEL, torch_version="2.15 from 2.0")
    assert triples(found) == [("CDL609", 4, 5), ("CDL609", 5, 6), ("CDL604", 7, 5)]
    assert [f.message for f in found[:2]] == [
        "torch.cumprod reaches aten::cumprod, which has no MPS kernel in torch 2.0 of the releases the project "
        "allows (2.0-2.15); it runs on MPS from torch 2.1",
        "torch.nn.Upsample (mode='bicubic') reaches aten::upsample_bicubic2d, which has no MPS kernel in torch "
        "2.0-2.5 of the releases the project allows (2.0-2.15); it runs on MPS from torch 2.6",
    ]
    assert found[1].severity.value == "info"
    # pinned to one release: no range, the old errors
    assert triples(findings_of(MODEL, torch_version="2.0")) == [("CDL604", 4, 5), ("CDL604", 5, 6), ("CDL604", 6, 9),
                                                                 ("CDL604", 7, 5)]


def test_range_notes_round_trip_to_the_suggestion():
    notes = [range_note(f.message) for f in findings_of(MODEL, torch_version="2.15 from 2.0") if f.code == "CDL609"]
    assert notes[0].ops == ("aten::cumprod",) and notes[0].first == "2.1"
    assert suggested_floor(notes) == ("2.6", ["cumprod", "upsample_bicubic2d"])
    assert range_note("torch.x reaches aten::x, which has no MPS kernel in torch 2.0: it raises") is None


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def test_check_targets_the_newest_allowed_release_and_reports_the_lower_bound_at_the_requirement(project):
    """The operators that fail only in older releases the requirement allows are one CDL609 at the
    requirement (what a port changes: its lower bound), each operator's first call related."""
    result = run_cli("check", "--no-cache", ".", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "model.py:7:5: CDL604 torch.Tensor.mode reaches aten::mode, which has no MPS kernel in torch 2.15: it raises "
        "NotImplementedError on MPS unless PYTORCH_ENABLE_MPS_FALLBACK=1; no torch release up to 2.15 runs it on MPS",
        "pyproject.toml:5:5: CDL609 raise torch>=2.0 to torch>=2.6 to get MPS kernels for cumprod, upsample_bicubic2d: "
        "the older releases it allows have no MPS kernel for them (first call: model.py:4)",
        "Found 2 problems (1 error, 1 info) in 2 files checked; 0 fixable with --fix; target torch 2.15 (the newest "
        "release torch>=2.0 in pyproject.toml allows).",
    ]
    found = json.loads(run_cli("check", "--no-cache", "--format", "json", "--select", "CDL609", ".", cwd=project).stdout)
    assert [(f["path"], f["line"], [(r["path"], r["line"], r["column"]) for r in f["related"]]) for f in found] == [
        ("pyproject.toml", 5, [("model.py", 4, 5), ("model.py", 5, 6)])]


def test_a_run_that_does_not_check_the_requirement_reports_at_the_calls(project):
    # pre-commit on one changed file: the requirement is read for the target, the notes stay at the calls
    result = run_cli("check", "--no-cache", "model.py", cwd=project)
    lines = result.stdout.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines[:3]] == [
        ["model.py:4:5:", "CDL609"], ["model.py:5:6:", "CDL609"], ["model.py:7:5:", "CDL604"]]
    assert lines[3] == "note: raise torch>=2.0 to torch>=2.6 in pyproject.toml:5 to get MPS kernels for cumprod, upsample_bicubic2d"


def test_a_noqa_at_the_requirement_silences_it(project):
    text = (project / "pyproject.toml").read_text().replace('"torch>=2.0"', '"torch>=2.0",  # noqa: CDL609', 1)
    (project / "pyproject.toml").write_text(text)
    result = run_cli("check", "--no-cache", "--select", "CDL609", ".", cwd=project)
    assert [line.split(" ", 2)[:2] for line in result.stdout.splitlines()[:2]] == [
        ["model.py:4:5:", "CDL609"], ["model.py:5:6:", "CDL609"]]


def test_one_note_per_operator_across_files(project):
    (project / "other.py").write_text("import torch\nz = torch.cumprod(torch.ones(2, device=dev), 0)\n")
    result = run_cli("check", "--no-cache", "--select", "CDL609", "--format", "json", ".", cwd=project)
    found = json.loads(result.stdout)
    assert [(r["path"], r["line"]) for f in found for r in f["related"]] == [("model.py", 4), ("model.py", 5)]


def test_torch_version_still_pins_one_release(project):
    result = run_cli("check", "--no-cache", "--torch-version", "2.0", ".", cwd=project)
    lines = result.stdout.splitlines()
    assert [line.split(" ", 2)[1] for line in lines[:-1]] == ["CDL604"] * 4
    assert lines[-1].endswith("target torch 2.0 (configured).")


def test_fixes_must_work_on_the_oldest_allowed_release(tmp_path):
    (tmp_path / "m.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "requirements.txt").write_text("torch>=2.3\n")
    old = findings_of("import torch\ntorch.cuda.synchronize()\n", torch_version="2.15 from 2.3")
    assert [(f.code, f.fix) for f in old] == [("CDL201", None)]  # torch.accelerator.synchronize needs 2.6
    [new] = findings_of("import torch\ntorch.cuda.synchronize()\n", torch_version="2.15 from 2.6")
    assert new.fix is not None and new.fix.description.startswith("use torch.accelerator.synchronize")


def test_coverage_project(project):
    result = run_cli("coverage", "--project", ".", cwd=project)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        ".: target torch 2.15 (the newest release torch>=2.0 in pyproject.toml allows)",
        "",
        "  aten::cumprod             fails in an older allowed release; runs on MPS from torch 2.1  (first at model.py:4:5)",
        "  aten::mode                fails in the target release (CDL604)  (first at model.py:7:5)",
        "  aten::upsample_bicubic2d  fails in an older allowed release; runs on MPS from torch 2.6  (first at model.py:5:6)",
        "",
        "suggested lower bound: raise torch>=2.0 to torch>=2.6 in pyproject.toml:5 to get MPS kernels for cumprod, "
        "upsample_bicubic2d",
    ]
    assert run_cli("coverage", cwd=project).stderr == "cudalint: error: coverage: give a QUERY or --project PATH\n"


def test_coverage_project_of_a_clean_project(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=2.9\n")
    (tmp_path / "m.py").write_text("import torch\ny = torch.cumprod(torch.ones(2, device=dev), 0)\n")
    assert run_cli("coverage", "--project", ".", cwd=tmp_path).stdout.splitlines() == [
        ".: target torch 2.15 (the newest release torch>=2.9 in requirements.txt allows)",
        "every operator the project reaches runs on MPS in every release it allows",
    ]
