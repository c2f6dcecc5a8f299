"""Where each coverage answer comes from, and the cases the extracted facts alone got wrong (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import findings_of, run_cli
from cudalint.coverage import CoverageDB
from cudalint.coverage.reviewed_facts import (
    Span,
    load_corrections,
    load_registrations,
    registrations_in_source,
)
from cudalint.coverage.shared_facts import always_listed
from cudalint.coverage.why import reason

REPO = Path(__file__).resolve().parents[1]
FACTS = REPO / "data" / "mps-coverage"


@pytest.fixture(scope="module")
def db() -> CoverageDB:
    return CoverageDB.load()


def test_python_registrations_make_ops_run(db):
    # torch/backends/mps/__init__.py registered torch._refs.var_mean for MPS in 2.0-2.2
    assert db.codes("var_mean.correction")[:5] == "ENNNN"
    assert db.sources("var_mean.correction")[:5] == "ypppy"
    assert db.registrations("var_mean.correction", "2.1")[0]["file"] == "torch/backends/mps/__init__.py"
    assert db.codes("native_group_norm_backward") == "E" + "N" * 16
    assert db.sources("native_group_norm_backward") == "y" + "p" * 13 + "yyy"
    # torch/_refs/linalg registers linalg_lu_solve.out for MPS in 2.10-2.13 (pytorch/pytorch#167569)
    assert db.codes("linalg_lu_solve.out")[10:] == "ENNNNNN"
    assert db.sources("linalg_lu_solve.out")[10:] == "yppppyy"
    assert db.source("linalg_lu_solve", "2.11") == "m"


def test_var_mean_runs_at_2_0():
    text = "import torch\nx = torch.randn(3, device=dev)\nv, m = torch.var_mean(x)\n"
    assert findings_of(text, torch_version="2.0") == []
    [finding] = findings_of(text, torch_version="1.13")
    assert (finding.code, finding.line, finding.column) == ("CDL604", 3, 8)
    assert "supported on MPS from torch 2.0, you target 1.13" in finding.message


def test_conv3d_raises_until_2_2(db):
    assert db.codes("conv3d") == "XXX" + "C" * 14
    assert db.sources("conv3d") == "m" * 17
    assert "pytorch/pytorch#114183" in db.corrections("conv3d", "2.1")[0]["reference"]
    text = "import torch.nn as nn\nc = nn.Conv3d(2, 3, 3)\n"
    [finding] = findings_of(text, torch_version="2.1")
    assert (finding.code, finding.line, finding.column) == ("CDL604", 2, 5)
    assert finding.message.startswith("torch.nn.Conv3d reaches aten::conv3d, which has no MPS kernel in torch 2.1")
    assert findings_of(text, torch_version="2.2") == []


def test_conv_transpose3d_raises_until_2_8(db):
    assert db.codes("conv_transpose3d.input") == "X" * 9 + "C" * 8
    text = "import torch.nn as nn\nc = nn.ConvTranspose3d(2, 3, 3)\n"
    assert [f.code for f in findings_of(text, torch_version="2.7")] == ["CDL604"]
    assert findings_of(text, torch_version="2.8") == []


def test_the_convolutions_take_the_mps_branch_by_correction_not_heuristic(db):
    assert db.codes("conv2d") == "C" * 17 and db.sources("conv2d") == "m" * 17
    assert db.blocked_by("conv2d", "2.0") == ((), ())
    # an ordinary composite is resolved from its callees, with no correction
    assert db.sources("kthvalue") == "y" * 17


def test_put_had_no_mps_kernel_at_1_13(db):
    assert db.codes("put_")[:2] == "EE"
    assert db.source("put_", "1.13") == "m"
    assert "pytorch/pytorch#94231" in db.corrections("put_", "1.13")[0]["reference"]
    assert db.codes("put")[0] == "X"  # the composite calling put_ follows the correction


def test_cpu_fallbacks_come_from_the_binary(db):
    assert db.source("linalg_svd", "2.13") == "b"
    assert reason(db, "linalg_svd", "2.13") == (
        "binary: explicit CPU fallback registered by MPSFallback.mm (found in the release's macOS libtorch)")
    assert db.source("linalg_svd", "2.14") == "y"


def test_conditional_test_list_dtypes_keep_what_every_branch_lists(db):
    assert always_listed("[torch.int32, torch.int64] if MACOS_VERSION < 15.0 else [torch.int64]") == ("int64",)
    assert always_listed("[torch.int32] if X else [torch.int64]") == ()
    assert always_listed("torch.int64") == ()
    limits = db.dtype_limits("scatter_reduceamax", "2.8")
    assert limits.unsupported_dtypes == {"int64"}
    assert db.dtype_limits("scatter_reduceamax", "2.13").unsupported_dtypes == frozenset()


def test_every_correction_and_registration_names_a_reference():
    corrections = load_corrections(FACTS / "corrections.toml")
    registrations = load_registrations(FACTS / "python_registrations.toml")
    assert len(corrections) == 10 and len(registrations) == 4  # 9 operators, 1 kernel limit
    assert all(c.reference and c.why for c in corrections)
    assert all(r.reference and r.file for r in registrations)


def test_a_correction_without_reference_is_refused(tmp_path):
    bad = tmp_path / "corrections.toml"
    bad.write_text('[[op]]\nops = ["put_"]\nfrom = "1.13"\ncode = "E"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="corrections.toml: op correction 1: every correction needs a reference"):
        load_corrections(bad)
    bad.write_text('[[op]]\nops = ["put_"]\nfrom = "1.13"\ncode = "Q"\nreference = "r"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="unknown status code 'Q'"):
        load_corrections(bad)


@pytest.mark.parametrize("version, covered", [("1.13.1", False), ("2.0", True), ("2.2.2", True), ("2.3", False)])
def test_spans_are_inclusive_minor_releases(version, covered):
    assert Span("2.0", "2.2").covers(version) is covered
    assert Span("2.0", None).covers("2.15.0")


def test_python_registrations_are_read_from_source_without_running_it():
    old_style = (
        "from torch.library import Library as _Library\n_lib = None\n"
        "def _init():\n    global _lib\n    _lib = _Library('aten', 'IMPL')\n"
        "    _lib.impl('var_mean.correction', var_mean, 'MPS')\n"
        "    _lib.impl('native_group_norm', native_group_norm, 'MPS')\n"
        "    _lib.impl('add.Tensor', add, 'CUDA')\n"
    )
    assert registrations_in_source(old_style) == ["var_mean.correction", "native_group_norm"]
    keyed = "import torch\nmps_lib = torch.library.Library('aten', 'IMPL', 'MPS')\nmps_lib.impl('aten::linalg_lu_solve.out', f)\n"
    assert registrations_in_source(keyed) == ["linalg_lu_solve.out"]
    assert registrations_in_source("lib = Library('mylib', 'IMPL', 'MPS')\nlib.impl('x', f)\n") == []
    assert registrations_in_source("def (:\n") == []


def test_why_names_each_source():
    result = run_cli("coverage", "torch.var_mean", "--why")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    start = lines.index("why, per release:")
    assert lines[start + 1:start + 5] == [
        "aten::var_mean.correction",
        "  1.13      E  yaml: no MPS kernel in native_functions.yaml, while CPU and CUDA have one",
        "  2.0-2.2   N  Python registration in torch/backends/mps/__init__.py [pytorch/pytorch "
        "torch/backends/mps/__init__.py, _init(): 'Register prims as implementation of var_mean and group_norm' "
        "(torch._refs.var_mean for MPS); gone once the yaml lists var_mean_mps (2.3)]",
        "  2.3-2.15  N  yaml: MPS kernel in native_functions.yaml (directly or through its structured delegate)",
    ]
    assert "    2.11-2.12  MPS test list of the release: var_mean UNIMPLEMENTED_XFAILLIST (uint8, int8, int32, int16, bool)" in lines
    assert "    2.3-2.7    no test-list data for this release" in lines


def test_why_for_a_corrected_composite():
    lines = run_cli("coverage", "aten::conv3d", "--why").stdout.splitlines()
    start = lines.index("why, per release:")
    assert lines[start + 2].startswith("  1.13-2.1  X  manual correction: before 2.2 the MPS convolution backend handled "
                                       "2-D only")
    assert lines[start + 3].startswith("  2.2-2.15  C  manual correction: from 2.2 select_conv_backend()")
