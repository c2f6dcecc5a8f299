"""API -> ATen op data checked against the real torch 2.13.0 (installed in CI; never skipped)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from cudalint.coverage import CoverageDB, OpStatus
from cudalint.coverage.api_ops import load_api_ops
from cudalint.coverage.dispatch_trace import record_ops
from cudalint.coverage.module_check import check_case, check_module_table
from cudalint.coverage.module_table import load_module_table
from cudalint.coverage.native_functions import installed_torch, read_native_functions

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "rules" / "mps_coverage.json"
# Registered for MPS outside native_functions.yaml in 2.13.0 (MPSFallback.mm): invisible to the yaml.
OUTSIDE_YAML_2_13 = {"_slow_conv2d_forward", "embedding_renorm", "embedding_renorm.out", "embedding_renorm_",
                     "linalg_svd", "linalg_svd.U"}


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_installed_torch_is_the_pinned_release():
    assert torch.__version__.split("+")[0] == "2.13.0"
    assert installed_torch()["version"] == "2.13.0"
    assert load_api_ops()["torch"] == "2.13.0"


def test_grid_sample_reaches_the_sampler_of_its_rank():
    image, grid = torch.randn(1, 2, 4, 4), torch.rand(1, 3, 3, 2) * 2 - 1
    assert "aten::grid_sampler_2d" in record_ops(F.grid_sample, image, grid, align_corners=False)
    volume, grid3d = torch.randn(1, 2, 3, 4, 4), torch.rand(1, 2, 2, 2, 3) * 2 - 1
    assert "aten::grid_sampler_3d" in record_ops(F.grid_sample, volume, grid3d, align_corners=False)
    traced = json.loads((REPO / "rules" / "api_ops.json").read_text(encoding="utf-8"))["apis"]
    cases = traced["torch.nn.functional.grid_sample"]["cases"]
    assert {(case["when"]["ndim"], tuple(case["ops"])) for case in cases} == {
        (4, ("aten::grid_sampler_2d",)), (5, ("aten::grid_sampler_3d",))}


def test_shipped_api_ops_match_a_fresh_trace():
    from torch.testing._internal.common_methods_invocations import op_db

    derive = _load_script("derive_api_ops")
    apis = load_api_ops()["apis"]
    wanted = {("nn.functional.interpolate", "bicubic"), ("linalg.eigh", ""), ("nn.functional.embedding_bag", "")}
    for opinfo in op_db:
        if (opinfo.name, opinfo.variant_test_name) not in wanted:
            continue
        traced = derive.trace_opinfo(torch, opinfo, 2)
        assert traced, opinfo.name
        for _, ops in traced:
            assert set(ops) <= set(apis["torch." + opinfo.name]["ops"]), opinfo.name
    assert apis["torch.linalg.eigh"]["ops"] == ["aten::_linalg_eigh"]
    assert "torch.Tensor.add" in apis and "torch.special.erf" in apis and "torch.fft.fft" in apis


def test_from_installed_torch_matches_the_data_set(tmp_path):
    output = tmp_path / "db.json"
    shutil.copyfile(SHIPPED, output)
    build = [sys.executable, str(REPO / "scripts" / "build_coverage_db.py"), "-o", str(output), "--from-installed-torch"]
    refused = subprocess.run(build, capture_output=True, text=True)
    assert refused.returncode != 0 and "--replace" in refused.stderr
    subprocess.run(build + ["--replace"], check=True, capture_output=True)

    merged, shipped = CoverageDB(json.loads(output.read_text())), CoverageDB.load()
    info = merged.release_info("2.13.0")
    assert info["source"] == "installed torch" and info["xfail"] == "absent" and info["callees_from"] == "2.12.1"
    assert not merged.dtype_limits("mode", "2.13.0").has_test_data
    differing = {op.split("::")[1] for op in shipped.ops()
                 if merged.status(op, "2.13.0") is not shipped.status(op, "2.13.0")}
    assert differing == OUTSIDE_YAML_2_13 - {"_slow_conv2d_forward"}
    assert merged.status("grid_sampler_3d", "2.13.0") is OpStatus.NATIVE
    assert merged.status("mode", "2.13.0") is OpStatus.NOT_IMPLEMENTED
    assert merged.status("embedding_renorm_", "2.12.1") is OpStatus.CPU_FALLBACK  # other releases untouched


def test_yaml_reader_agrees_with_the_data_set_on_native_kernels():
    yaml_ops = read_native_functions(installed_torch()["yaml"])
    shipped = CoverageDB.load()
    native_yaml = {name for name, facts in yaml_ops.items() if facts.kind == "native"}
    native = {op.split("::")[1]: shipped.source(op, "2.13.0") for op in shipped.ops()
              if op.startswith("aten::") and shipped.status(op, "2.13.0") is OpStatus.NATIVE}
    limits = {op for op in native if "[" in op}  # rows of kernel limits (corrections.toml), not operators
    assert native_yaml == {op for op, source in native.items() if source == "y"} - limits
    # what the yaml cannot show: a Python registration, and the functional call it serves (a correction)
    assert {op: source for op, source in native.items() if source != "y" and op not in limits} == {
        "linalg_lu_solve.out": "p", "linalg_lu_solve": "m"}


@pytest.mark.parametrize("name, when", [
    ("torch.nn.Conv3d", {}), ("torch.nn.Upsample", {"mode": "nearest", "ndim": 5}), ("torch.nn.EmbeddingBag", {}),
    ("torch.nn.CTCLoss", {}), ("torch.nn.LSTM", {}), ("torch.nn.Embedding", {"max_norm": True}),
])
def test_module_table_samples(name, when):
    db = CoverageDB.load()
    yaml_ops = read_native_functions(installed_torch()["yaml"])
    case = next(c for c in load_module_table() if c.name == name and c.when == when)
    assert check_case(torch, db, yaml_ops, case) == []


def test_whole_module_table():
    assert check_module_table() == []


def test_python_registrations_of_the_installed_torch_are_in_the_data_file():
    from cudalint.coverage.reviewed_facts import covering, load_registrations, scan_torch

    scanned = scan_torch(Path(torch.__file__).parent)
    assert scanned == {"linalg_lu_solve.out": "torch/_refs/linalg/__init__.py"}
    # the dispatcher answers for Python-registered kernels even on a CPU build
    dispatcher = {name[len("aten::"):] for name in torch._C._dispatch_get_registrations_for_dispatch_key("MPS")
                  if name.startswith("aten::")}
    assert dispatcher == set(scanned)
    known = load_registrations(REPO / "data" / "mps-coverage" / "python_registrations.toml")
    assert [r.op for r in known if r.span.covers("2.13.0")] == list(scanned)
    assert all(covering(known, op, "2.13.0")[0].file == file for op, file in scanned.items())
