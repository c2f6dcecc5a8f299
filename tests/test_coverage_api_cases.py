"""Argument-aware API -> operator cases (rules/api_cases.toml) and torchvision.ops (issue 15)."""

from __future__ import annotations

import pytest

from conftest import findings_of, run_cli, triples
from cudalint.coverage import CoverageDB, api_ops
from cudalint.coverage.api_ops import load_api_ops

OPS = {"CDL604", "CDL605", "CDL606", "CDL609"}


def found(text, version):
    return [(f.code, f.line, f.column, f.message) for f in findings_of(text, torch_version=version, select=OPS)]


def test_norms_take_the_mps_branch_of_torch_functional():
    assert api_ops("torch.nn.functional.normalize")[1] == (
        "aten::clamp_min", "aten::div.Tensor", "aten::expand", "aten::norm.ScalarOpt_dim")
    assert load_api_ops()["apis"]["torch.norm"]["source"].startswith("torch/functional.py norm()")
    assert load_api_ops()["apis"]["torch.cumsum"]["source"] == "cpu trace"
    text = "import torch\nimport torch.nn.functional as F\nx = torch.randn(2, 3, device=dev)\ny = F.normalize(x, dim=1)\n" \
           "n = torch.norm(x)\nm = x.norm(2, 1)\n"
    assert found(text, "2.0") == []  # norm.ScalarOpt_dim and frobenius_norm run on MPS in every release
    nuc = "import torch\nx = torch.randn(2, 3, device=dev)\nm = x.norm(p='nuc')\n"
    assert triples(findings_of(nuc, torch_version="2.13")) == [("CDL604", 3, 5)]
    assert findings_of(nuc, torch_version="2.14") == []


def test_linalg_svd_agrees_between_check_and_coverage():
    text = "import torch\nx = torch.randn(3, 3, device=dev)\nu, s, vh = torch.linalg.svd(x)\n"
    [finding] = findings_of(text, torch_version="2.13")
    assert finding.code == "CDL605"
    assert finding.message.startswith("torch.linalg.svd reaches aten::linalg_svd, which runs on the CPU in torch 2.13")
    table = run_cli("coverage", "torch.linalg.svd").stdout.splitlines()
    assert table[3].split() == ["aten::linalg_svd"] + ["F"] * 15 + ["C", "C"]


def test_svd_stops_at_the_cpu_fallback_of_linalg_svd_and_only_svdvals_raises():
    """torch.svd / Tensor.svd / svd_lowrank reach linalg_svd on MPS (the trace shows _linalg_svd, what it
    decomposes to on the CPU), which MPSFallback.mm runs on the CPU; compute_uv=False takes linalg_svdvals."""
    text = ("import torch\nx = torch.randn(3, 3, device=dev).to('mps')\nu, s, v = torch.svd(x)\nt = torch.svd(x, compute_uv=False)\n"
            "w = x.svd()\ny = x.svd(True, False)\nz = torch.svd(x, some, uv)\nl = torch.svd_lowrank(x)\n")
    result = found(text, "2.9")
    assert [(code, line, column) for code, line, column, _ in result] == [
        ("CDL605", 3, 11), ("CDL604", 4, 5), ("CDL605", 5, 5), ("CDL604", 6, 5), ("CDL605", 7, 5), ("CDL604", 8, 5)]
    assert result[0][3].startswith("torch.svd reaches aten::linalg_svd, which runs on the CPU in torch 2.9")
    assert result[1][3].startswith("torch.svd (compute_uv=False) reaches aten::linalg_svdvals, which has no MPS kernel")
    assert result[4][3].startswith("torch.svd (compute_uv not visible, every case) reaches aten::linalg_svd, which runs on the CPU")
    assert result[5][3].startswith("torch.svd_lowrank reaches aten::linalg_qr, which has no MPS kernel in torch 2.9")
    assert [code for code, _, _, _ in found(text, "2.13")] == ["CDL605", "CDL604", "CDL605", "CDL604", "CDL605", "CDL605"]
    assert found(text, "2.14") == []


def test_unique_dim_raises_until_2_10():
    text = "import torch\nx = torch.randn(2, 3, device=dev)\nu = torch.unique(x, dim=0)\nv = torch.unique(x)\nw = x.unique(dim=1)\n" \
           "z = torch.unique(x, dim=None)\n"
    assert [(code, line) for code, line, _, _ in found(text, "2.9")] == [("CDL604", 3), ("CDL604", 5)]
    assert found(text, "2.9")[0][3].startswith("torch.unique (dim=0) reaches aten::unique_dim, which has no MPS kernel")
    assert found(text, "2.10") == []


def test_isin_with_a_scalar_raises_until_2_8():
    text = "import torch\nx = torch.randn(2, 3, device=dev)\na = torch.isin(x, 3)\nb = torch.isin(x, x)\nc = torch.isin(2, x)\n" \
           "d = torch.isin(x, t)\n"
    assert [(code, line, message.split(" reaches ")[0]) for code, line, _, message in found(text, "2.7")] == [
        ("CDL604", 3, "torch.isin (elements=<tensor>, test_elements=3)"),
        ("CDL604", 5, "torch.isin (elements=2, test_elements=<tensor>)"),
    ]  # d: `t` is not visible, and isin on two tensors runs: the conservative answer is silence
    assert "reaches aten::isin.Tensor_Scalar, which" in found(text, "2.7")[0][3]
    assert found(text, "2.8") == []


def test_interpolate_antialias_and_5d_nearest():
    text = ("import torch\nimport torch.nn.functional as F\nx = torch.randn(1, 3, 8, 8, device=dev)\n"
            "a = F.interpolate(x, scale_factor=2, mode='bilinear', antialias=True)\n"
            "b = F.interpolate(x, scale_factor=2, mode='bilinear')\n"
            "c = F.interpolate(x, scale_factor=2, mode='bilinear', antialias=flag)\n"
            "v = torch.randn(1, 3, 4, 8, 8, device=dev)\nd = F.interpolate(v, scale_factor=2)\n")
    result = found(text, "2.5")
    assert [(code, line) for code, line, _, _ in result] == [("CDL604", 4), ("CDL605", 8)]
    assert result[0][3].startswith("torch.nn.functional.interpolate (antialias=True, mode='bilinear', 4-D input) "
                                   "reaches aten::_upsample_bilinear2d_aa, which has no MPS kernel in torch 2.5")
    assert "reaches aten::upsample_nearest3d.vec, which runs on the CPU in torch 2.5" in result[1][3]
    assert found(text, "2.8") == []


@pytest.mark.parametrize("call, code, op", [
    ("torch.pdist(x)", "CDL604", "aten::_pdist_forward"),
    ("F.fold(x, (4, 4), 2)", "CDL605", "aten::col2im"),
    ("x.put_(i, s)", "CDL604", "aten::put_"),
])
def test_apis_the_trace_lacked(call, code, op):
    text = f"import torch\nimport torch.nn.functional as F\nx = torch.randn(4, 3, device=dev)\ny = {call}\n"
    [(got, line, _, message)] = found(text, "2.5")
    assert (got, line) == (code, 4) and f"reaches {op}, which" in message


def test_in_place_variants_follow_their_method():
    assert load_api_ops()["apis"]["torch.Tensor.add_"] == {"ops": ["aten::add_.Tensor"],
                                                          "source": "in-place form of torch.Tensor.add"}
    text = "import torch\nx = torch.randn(3, device=dev)\nx.cumprod_(0)\n"
    [(code, line, column, message)] = found(text, "2.0")
    assert (code, line, column) == ("CDL604", 3, 1)
    assert message.startswith("torch.Tensor.cumprod_ reaches aten::cumprod_, which has no MPS kernel in torch 2.0")


def test_multi_tensor_optimizers():
    text = ("import torch\nopt = torch.optim.AdamW(p, foreach=True)\nslow = torch.optim.AdamW(p)\n"
            "sgd = torch.optim.SGD(p, lr=0.1, foreach=True)\nunknown = torch.optim.SGD(p, lr=0.1, foreach=flag)\n")
    result = found(text, "2.3")
    assert [(code, line) for code, line, _, _ in result] == [("CDL604", 2), ("CDL604", 4)]
    assert result[0][3].startswith("torch.optim.AdamW (foreach=True) reaches aten::_foreach_add_.Scalar")
    assert "reaches aten::_foreach_add_.List, which" in result[1][3]
    assert found(text, "2.4") == []


def test_torchvision_ops_by_their_paired_release():
    db = CoverageDB.load()
    assert db.codes("torchvision::nms") == "EE" + "N" * 15
    assert db.codes("torchvision::deform_conv2d") == "E" * 9 + "N" * 8
    assert db.torchvision()["pairs"]["2.1"] == "0.16" and db.source("torchvision::nms", "2.0") == "t"
    text = ("import torchvision\nfrom torchvision.ops import nms, deform_conv2d\nkeep = nms(b, s, 0.5)\n"
            "y = deform_conv2d(x, o, w)\nk = torchvision.ops.roi_align(f, r, 7)\n")
    assert [(code, line) for code, line, _, _ in found(text, "2.0")] == [("CDL604", 3), ("CDL604", 4), ("CDL604", 5)]
    [(code, line, _, message)] = found(text, "2.7")
    assert (code, line) == ("CDL604", 4)
    assert message == ("torchvision.ops.deform_conv2d reaches torchvision::deform_conv2d, which has no MPS kernel in "
                       "torch 2.7: it raises NotImplementedError on MPS unless PYTORCH_ENABLE_MPS_FALLBACK=1; "
                       "supported on MPS from torch 2.8 (torchvision 0.23), you target 2.7")
    assert found(text, "2.8") == []
    why = run_cli("coverage", "torchvision.ops.nms", "--why").stdout.splitlines()
    assert why[-2].startswith("  1.13-2.0  E  the torchvision release paired with this torch has no MPS kernel; "
                              "MPS from torchvision 0.16 (torch 2.1) [pytorch/vision#7643")


def test_grid_sample_border_padding_is_a_kernel_limit():
    text = ("import torch\nimport torch.nn.functional as F\nx = torch.randn(1, 3, 8, 8, device=dev)\n"
            "a = F.grid_sample(x, g, padding_mode='border')\nb = F.grid_sample(x, g)\n"
            "c = F.grid_sample(x, g, padding_mode=mode)\n")
    [(code, line, _, message)] = found(text, "2.12")
    assert (code, line) == ("CDL604", 4)
    assert message.startswith("torch.nn.functional.grid_sample (padding_mode='border', 4-D input) reaches "
                              "aten::grid_sampler_2d[padding_mode='border'], which has no MPS kernel in torch 2.12")
    assert found(text, "2.13") == []


def test_spot_check_agreement():
    import subprocess
    import sys

    from conftest import ROOT

    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "spot_check_coverage.py")],
                            capture_output=True, text=True, timeout=300)
    lines = result.stdout.splitlines()
    assert result.returncode == 0
    assert lines[-2:] == ["test list: 420 checks, 413 verifiable, 405 agree (98.1%)",
                          "reference: 18 checks, 18 verifiable, 18 agree (100.0%)"]
    assert sum(line.startswith("DISAGREE") for line in lines) == 8


def test_dtype_limits_of_an_opinfo_variant_follow_the_argument():
    text = ("import torch\nimport torch.nn.functional as F\nx = torch.zeros(1, 3, 8, 8, dtype=torch.uint8, device=dev)\n"
            "y = F.interpolate(x, scale_factor=2, mode='bicubic')\nz = F.interpolate(x, scale_factor=2, mode='bilinear')\n")
    [(code, line, column, message)] = found(text, "2.15")
    assert (code, line, column) == ("CDL606", 4, 5)
    assert message == ("torch.nn.functional.interpolate (bicubic) on a tensor of dtype uint8 is listed as not "
                       "implemented on MPS in torch 2.15 (PyTorch's MPS test list: 'Failures due to lack of op "
                       "implementation on MPS backend'); still listed in torch 2.15; use a float32 tensor")
