"""The shipped MPS coverage database and its query API (no torch needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudalint.coverage import CoverageDB, OpStatus, Resolution, api_ops, assess_api, rules_dir
from cudalint.coverage.database_format import FORMAT_VERSION
from cudalint.coverage.release_facts import KIND_COMPOSITE, KIND_MISSING, KIND_NATIVE, OpFacts
from cudalint.coverage.resolve import reachable_gaps, resolve_release

REPO = Path(__file__).resolve().parents[1]
FACTS = REPO / "data" / "mps-coverage"
SHIPPED = REPO / "rules" / "mps_coverage.json"
RELEASES = ("1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1",
            "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")


@pytest.fixture(scope="module")
def db() -> CoverageDB:
    return CoverageDB.load()


def test_shipped_file_is_small_and_loads():
    assert SHIPPED.stat().st_size < 3_000_000
    assert CoverageDB(json.loads(SHIPPED.read_text(encoding="utf-8"))).newest() == "2.15.0"


def test_header(db):
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert data["format_version"] == FORMAT_VERSION
    assert data["release_info"]["2.1.2"]["xfail"] == "approximate"
    assert data["release_info"]["2.5.1"]["xfail"] == "absent"
    assert data["release_info"]["2.13.0"]["git_version"].startswith("cf30153c4c13")
    assert db.versions() == RELEASES
    assert db.newest() == "2.15.0"


def test_rules_dir_is_the_checkout_rules_folder():
    assert rules_dir() == REPO / "rules"
    assert CoverageDB.load() is CoverageDB.load(SHIPPED)


@pytest.mark.parametrize("spelling", ["aten::grid_sampler_3d", "grid_sampler_3d", "aten::grid_sampler_3d.default"])
def test_native_kernel_arrives(db, spelling):
    assert db.status(spelling, "2.8.0") is OpStatus.NOT_IMPLEMENTED
    assert db.status(spelling, "2.9.1") is OpStatus.NATIVE
    assert db.first_supported(spelling) == "2.9.1"


def test_overloads_are_distinct(db):
    assert db.status("aten::add.Tensor", "1.13.1") is OpStatus.NATIVE
    assert db.status("aten::upsample_nearest3d.vec", "2.0.1") is OpStatus.CPU_FALLBACK
    assert db.status("aten::upsample_nearest3d.vec", "2.8.0") is OpStatus.COMPOSITE
    assert db.status("aten::upsample_nearest3d", "2.7.1") is OpStatus.NOT_IMPLEMENTED


def test_cpu_fallbacks(db):
    assert db.status("linalg_svd", "2.13.0") is OpStatus.CPU_FALLBACK
    assert db.status("linalg_svd", "2.14.1") is OpStatus.COMPOSITE
    assert db.resolution("linalg_svd", "2.14.1") is Resolution.RUNS
    assert db.first_supported("linalg_svd") == "2.14.1"
    assert all(db.status("embedding_renorm_", v) is OpStatus.CPU_FALLBACK for v in RELEASES)
    assert db.first_supported("embedding_renorm_") is None
    # FFT: CPU fallback in 1.13.1, then dropped without a kernel, native from 2.3.1
    assert [db.status("_fft_c2c", v) for v in ("1.13.1", "2.0.1", "2.3.1")] == [
        OpStatus.CPU_FALLBACK, OpStatus.NOT_IMPLEMENTED, OpStatus.NATIVE]


def test_composite_resolution(db):
    assert db.resolution("kthvalue", "2.8.0") is Resolution.FAILS
    assert db.resolution("kthvalue", "2.9.1") is Resolution.RUNS
    assert db.first_supported("kthvalue") == "2.9.1"
    assert db.callees("kthvalue", "2.9.1") == ("aten::empty.memory_format", "aten::kthvalue.values")
    # the convolution composites call _mps_convolution: the slow CPU kernels they also reach are other devices' paths
    assert db.resolution("aten::conv2d", "1.13.1") is Resolution.RUNS
    # linalg.pinv reaches eigh/svd kernels MPS lacks in 2.13.0, and the linalg_svd CPU fallback
    assert db.resolution("linalg_pinv", "2.13.0") is Resolution.PARTIAL
    gaps, fallbacks = db.blocked_by("linalg_pinv", "2.13.0")
    assert gaps == ("aten::_linalg_eigh", "aten::_linalg_svd")
    assert fallbacks == ("aten::linalg_svd",)
    assert db.resolution("aten::add.Tensor", "2.13.0") is None


def test_resolution_survives_cycles_in_any_order():
    ops = {
        "a": OpFacts(KIND_COMPOSITE, ("b", "native_op")),
        "b": OpFacts(KIND_COMPOSITE, ("a", "gap")),
        "c": OpFacts(KIND_COMPOSITE, ("b",)),
        "only_gaps": OpFacts(KIND_COMPOSITE, ("gap", "view")),
        "native_op": OpFacts(KIND_NATIVE),
        "gap": OpFacts(KIND_MISSING),
        "view": OpFacts(KIND_NATIVE),
    }
    codes = resolve_release(ops)
    assert codes["a"] == codes["b"] == codes["c"] == "P"
    assert codes["only_gaps"] == "X"
    assert reachable_gaps("c", ops) == (("gap",), ())
    assert resolve_release(dict(reversed(list(ops.items())))) == codes


def test_first_supported_after(db):
    assert db.first_supported("_embedding_bag") == "2.10.0"
    assert db.first_supported("_embedding_bag", after="2.9") == "2.10.0"
    assert db.first_supported("_embedding_bag", after="2.10") == "2.11.0"
    assert db.first_supported("mode") is None


def test_absent_and_unknown_ops(db):
    assert db.status("_scaled_dot_product_attention_math_for_mps", "2.4.1") is OpStatus.UNKNOWN
    assert db.status("_scaled_dot_product_attention_math_for_mps", "2.5.1") is OpStatus.NATIVE
    assert db.status("no_such_op", "2.5.1") is OpStatus.UNKNOWN
    assert not db.has_op("no_such_op")


@pytest.mark.parametrize("given, release", [
    ("2.3", "2.3.1"), ("2.3.0", "2.3.1"), (">=2.1", "2.1.2"), ("2.13.0+cpu", "2.13.0"), ("~=2.4.0", "2.4.1"),
    ("2.16", "2.15.0"), ("3.0", "2.15.0"), ("1.13", "1.13.1"), ("1.12", None),
])
def test_nearest_release(db, given, release):
    assert db.nearest_release(given) == release


def test_versions_are_mapped_and_too_old_raises(db):
    assert db.status("grid_sampler_3d", "2.9") is OpStatus.NATIVE
    with pytest.raises(ValueError):
        db.status("grid_sampler_3d", "1.12")


def test_dtype_limits(db):
    limits = db.dtype_limits("aten::addmm", "2.8.0")
    assert limits.has_test_data and not limits.approximate
    assert limits.unsupported_dtypes == {"int8", "int16", "int32", "int64", "uint8"}
    conv = db.dtype_limits("nn.functional.conv2d", "2.13.0")
    assert conv.unsupported_dtypes == {"int64"} and conv.complex == "supported"
    assert db.dtype_limits("mode", "2.13.0").all_dtypes_unsupported
    assert not db.dtype_limits("mode", "2.5.1").has_test_data
    assert db.dtype_limits("mode", "2.2.2").approximate
    assert db.dtype_limits("add", "2.13.0").float64_supported is False


def test_known_failures(db):
    failures = db.known_failures("nn.functional.grid_sample", "2.15.0")
    assert [(f.list_name, f.kind, f.grad, f.dtypes) for f in failures] == [
        ("SKIPLIST", "skip", False, ("float16", "bfloat16")),
        ("UNIMPLEMENTED_XFAILLIST", "xfail", False, ("float32",)),
        ("XFAILLIST_GRAD", "xfail", True, ("float32",)),
    ]
    assert "5-D bicubic" in failures[1].reason
    assert all(len(f.reason) <= 80 for f in failures)
    assert db.known_failures("nn.functional.grid_sample", "2.5.1") == ()


def test_assess_api_without_torch():
    verdicts = assess_api("torch.nn.functional.grid_sample", "2.5", ndim=5)
    assert [(v.op, v.status, v.first_supported, v.release) for v in verdicts] == [
        ("aten::grid_sampler_3d", OpStatus.NOT_IMPLEMENTED, "2.9.1", "2.5.1")]
    both = assess_api("nn.functional.grid_sample", "2.5")
    assert {v.op for v in both} == {"aten::grid_sampler_2d", "aten::grid_sampler_3d"}  # padding_mode="zeros"
    border = assess_api("nn.functional.grid_sample", "2.12", kwargs={"padding_mode": "border"}, ndim=4)
    assert [(v.op, v.runs_on_mps, v.first_supported) for v in border] == [
        ("aten::grid_sampler_2d[padding_mode='border']", False, "2.13.0")]
    bicubic = assess_api("torch.nn.functional.interpolate", "2.5", kwargs={"mode": "bicubic"}, ndim=4)
    assert [(v.op, v.runs_on_mps) for v in bicubic] == [("aten::upsample_bicubic2d", False)]
    assert assess_api("torch.no_such_api", "2.5") == []


def test_module_table_cases():
    assert api_ops("torch.nn.Upsample", kwargs={"mode": "nearest"}, ndim=5) == ((), ("aten::upsample_nearest3d",))
    assert api_ops("torch.nn.Embedding", kwargs={"max_norm": 1.0})[1] == ("aten::embedding", "aten::embedding_renorm_")
    assert api_ops("torch.nn.Embedding")[1] == ("aten::embedding",)
    lstm = assess_api("torch.nn.LSTM", "2.0")
    assert [(v.op, v.entry, v.runs_on_mps) for v in lstm] == [("aten::lstm.input", True, True)]
    ctc = {v.op: v for v in assess_api("nn.CTCLoss", "2.13")}
    assert ctc["aten::_ctc_loss.Tensor"].first_supported == "2.14.1"


def test_rebuild_from_the_facts_in_the_repository_is_byte_identical(tmp_path):
    output = tmp_path / "mps_coverage.json"
    shutil.copyfile(SHIPPED, output)  # releases once added from an installed torch are carried over
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_coverage_db.py"), str(FACTS), "-o", str(output)],
                   check=True, capture_output=True)
    assert output.read_bytes() == SHIPPED.read_bytes()
