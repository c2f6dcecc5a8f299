"""Op coverage on MPS (CDL604-CDL606) and float64 reaching the device (CDL607, CDL608)."""

import pytest

from conftest import FIXTURES, findings_of, triples

OP_CODES = {"CDL604", "CDL605", "CDL606", "CDL607", "CDL608"}


def lint_fixture(relative, **options):
    return findings_of((FIXTURES / relative).read_text(encoding="utf-8"), path=relative, **options)


def op_findings(text, version, select=OP_CODES):
    return triples(findings_of(text, torch_version=version, select=select))


def test_ops_fixture_at_torch_2_3():
    assert triples(lint_fixture("python/ops.py", torch_version="2.3")) == [
        ("CDL604", 10, 9),  # interpolate mode="bicubic"
        ("CDL604", 11, 9),  # interpolate mode="trilinear"
        ("CDL604", 20, 12),  # grid_sample on a visible 5-D tensor
        ("CDL604", 26, 5),  # nn.Upsample(mode="bicubic")
        ("CDL604", 29, 5),  # nn.EmbeddingBag
        ("CDL604", 30, 5),  # nn.CTCLoss
        ("CDL605", 31, 5),  # nn.Unfold: im2col falls back to the CPU
        ("CDL605", 32, 5),  # nn.Embedding(max_norm=...)
        ("CDL604", 35, 5),  # nn.AdaptiveAvgPool3d((2, 2, 2))
        ("CDL604", 43, 13),  # x.mode() on a parameter annotated torch.Tensor
        ("CDL604", 46, 14),  # x.round(decimals=1)
        ("CDL605", 60, 9),  # torch.linalg.svd: explicit CPU fallback
        ("CDL604", 62, 11),  # torch.norm(p="nuc")
    ]


def test_ops_fixture_at_torch_2_8_has_test_list_dtypes():
    assert triples(lint_fixture("python/ops.py", torch_version="2.8")) == [
        ("CDL604", 20, 12),
        ("CDL604", 29, 5),
        ("CDL604", 30, 5),
        ("CDL605", 32, 5),
        ("CDL604", 35, 5),
        ("CDL606", 42, 14),  # F.linear on int64 tensors
        ("CDL604", 43, 13),
        ("CDL606", 56, 12),  # histc on float16
        ("CDL605", 60, 9),
        ("CDL604", 62, 11),
    ]


def test_ops_fixture_at_newest_release_keeps_only_real_gaps():
    assert triples(lint_fixture("python/ops.py")) == [
        ("CDL605", 32, 5),  # embedding_renorm_ never got an MPS kernel
        ("CDL604", 35, 5),  # neither did _adaptive_avg_pool3d
        ("CDL606", 42, 14),
        ("CDL604", 43, 13),  # nor aten::mode
    ]


def test_message_names_op_target_and_first_supported_release():
    text = "import torch\nimport torch.nn.functional as F\ny = F.grid_sample(torch.randn(1, 3, 4, 8, 8, device=dev), g)\n"
    [finding] = findings_of(text, torch_version="2.3")
    assert finding.message == (
        "torch.nn.functional.grid_sample (5-D input) reaches aten::grid_sampler_3d, which has no MPS kernel "
        "in torch 2.3: it raises NotImplementedError on MPS unless PYTORCH_ENABLE_MPS_FALLBACK=1; "
        "supported on MPS from torch 2.9, you target 2.3"
    )
    assert findings_of(text, torch_version="2.9") == []


def test_message_when_no_release_runs_it():
    [finding] = findings_of("import torch.nn as nn\nemb = nn.Embedding(10, 3, max_norm=1.0)\n")
    assert finding.code == "CDL605"
    assert "embedding_renorm_" in finding.message
    assert finding.message.endswith("no torch release up to 2.15 runs it on MPS")


@pytest.mark.parametrize(
    "call, expected",
    [
        ("F.interpolate(x, scale_factor=2)", []),  # nearest, rank unknown: 2-D runs
        ("F.interpolate(x, scale_factor=2, mode='bilinear')", []),
        ("F.interpolate(x, scale_factor=2, mode='bicubic')", [("CDL604", 4, 5)]),
        ("F.interpolate(x, None, 2, 'bicubic')", [("CDL604", 4, 5)]),  # positional mode
        ("F.interpolate(x, scale_factor=2, mode=m)", []),  # mode not visible
        ("F.interpolate(v, scale_factor=2)", [("CDL605", 4, 5)]),  # 5-D nearest: upsample_nearest3d.vec
        ("F.grid_sample(x, g)", []),
        ("F.grid_sample(v, g)", [("CDL604", 4, 5)]),
        ("nn.Upsample(scale_factor=2)", []),
        ("nn.Upsample(scale_factor=2, mode='trilinear')", [("CDL604", 4, 5)]),
        ("nn.Conv3d(3, 8, 3)", []),
        ("nn.AdaptiveAvgPool3d((1, 1, 1))", []),  # global pooling is a mean
    ],
)
def test_arguments_and_rank_select_the_operator(call, expected):
    lines = [
        "import torch, torch.nn as nn, torch.nn.functional as F",
        "x = torch.randn(1, 3, 8, 8, device=dev)",
        "v = torch.randn(1, 3, 4, 8, 8, device=dev)",
        f"y = {call}",
    ]
    assert op_findings("\n".join(lines) + "\n", "2.3") == expected


def test_tensor_methods_need_a_known_tensor():
    text = (
        "import torch\n"
        "def f(a: torch.Tensor, b, c: int):\n"
        "    t = torch.zeros(3, device=dev)\n"
        "    return a.mode(), b.mode(), c.mode(), t.mode(), t.float().mode(), torch.zeros(2, device=dev).mode()\n"
    )
    assert op_findings(text, "2.15") == [("CDL604", 4, 12), ("CDL604", 4, 42), ("CDL604", 4, 52), ("CDL604", 4, 70)]


def test_names_are_per_function_and_rebinding_forgets():
    text = (
        "import torch\n"
        "t = torch.zeros(3, device=dev)\n"
        "def f(t):\n"
        "    return t.mode()\n"  # another t
        "t = load()\n"
        "t.mode()\n"  # no longer known to be a tensor
    )
    assert op_findings(text, "2.15") == []


def test_code_that_runs_only_on_cuda_hosts_is_not_checked():
    text = "import torch\nif torch.cuda.is_available():\n    torch.linalg.eig(torch.randn(3, 3, device=dev))\n"
    assert op_findings(text, "2.15") == []
    assert op_findings(text.replace("if torch.cuda.is_available():\n    ", ""), "2.15") == [("CDL604", 2, 1)]


def test_dtype_rule_follows_the_test_lists_of_the_target_release():
    text = "import torch\nh = torch.randn(100, dtype=torch.float16, device=dev)\ntorch.histc(h, bins=10)\n"
    [finding] = findings_of(text, torch_version="2.8")
    assert (finding.code, finding.line, finding.column) == ("CDL606", 3, 1)
    assert "float16" in finding.message and "no longer listed from torch 2.12, you target 2.8" in finding.message
    assert findings_of(text, torch_version="2.15") == []
    assert findings_of(text, torch_version="2.3") == []  # no test lists for 2.3: nothing is claimed
    assert findings_of(text.replace("float16", "float32"), torch_version="2.8") == []


def test_float64_to_device_fixture():
    assert triples(lint_fixture("python/float64_device.py")) == [
        ("CDL607", 13, 10),  # from_numpy(np.random.rand(...)).to(device)
        ("CDL607", 15, 10),  # as_tensor(np.array([floats]), device=device)
        ("CDL102", 16, 26),  # .cuda() (an int64 tensor: no CDL607)
        ("CDL607", 19, 10),  # t = from_numpy(linspace(...)); t.to(device)
        ("CDL608", 27, 9),  # tensor(..., dtype=torch.float64).to(device): replaces CDL601
        ("CDL608", 28, 9),  # zeros(dtype=torch.complex128, device=device)
        ("CDL608", 31, 13),  # widened.cuda(): replaces CDL602 at .double()
        ("CDL102", 31, 21),
    ]


def test_float64_messages():
    found = {f.code: f.message for f in lint_fixture("python/float64_device.py")}
    assert "NumPy's default float" in found["CDL607"] and ".float()" in found["CDL607"]
    assert found["CDL608"].startswith("a float64 tensor moves to the device: MPS has no float64 and raises")
    made = {(f.line, f.message) for f in lint_fixture("python/float64_device.py") if f.code == "CDL608"}
    assert (28, "a complex128 tensor is made on the device: MPS has no complex128 and raises; make it complex64 there, "
                "or make it on the CPU where precision needs complex128") in made


def test_float64_dtype_still_reported_when_the_move_rule_is_off():
    text = "import torch\ndef f(device):\n    return torch.tensor([0.5], dtype=torch.float64).to(device)\n"
    assert op_findings(text, "2.15", select={"CDL601", "CDL608"}) == [("CDL608", 3, 12)]
    assert op_findings(text, "2.15", select={"CDL601"}) == [("CDL601", 3, 38)]


@pytest.mark.parametrize("relative", ["demo/train.py", "demo/portable.py"])
@pytest.mark.parametrize("version", ["2.3", "2.15"])
def test_demo_files_gain_no_op_coverage_findings(relative, version):
    assert [f for f in lint_fixture(relative, torch_version=version) if f.code in OP_CODES] == []


def test_an_operator_on_an_input_made_on_the_host_runs_on_the_cpu():
    text = (
        "import torch\n"
        "\n"
        "\n"
        "def orth(size, device):\n"
        "    x = torch.randn(size, size)\n"
        "    q, _ = torch.linalg.qr(x)\n"
        "    w, _ = torch.linalg.qr(torch.randn(size, size))\n"
        "    y = torch.randn(4, 4)\n"
        "    y = y.to(device)\n"
        "    z = torch.linalg.qr(y)\n"
        "    return torch.linalg.qr(torch.randn(3, 3).to(device)), torch.linalg.qr(torch.randn(3, 3, device=device))\n"
    )
    # a name assigned twice (moved) is not known to be on the host, nor a factory moved or given a device
    assert op_findings(text, "2.9") == [("CDL604", 10, 9), ("CDL604", 11, 12), ("CDL604", 11, 59)]


def test_an_operator_whose_result_is_read_by_numpy_runs_on_the_cpu():
    text = (
        "import torch\n"
        "\n"
        "\n"
        "def one_hot(rows, cols):\n"
        "    r, c = torch.stack([rows, cols], dim=0).unique(dim=1).numpy()\n"
        "    a = torch.stack([rows, cols]).unique(dim=1).numpy(force=True)\n"
        "    b = torch.stack([rows, cols]).unique(dim=1).cpu().numpy()\n"
        "    return r, c, a, b\n"
    )
    # `.numpy(force=True)` copies from any device, and `.cpu()` first says nothing of where the operator ran
    assert op_findings(text, "2.9") == [("CDL604", 6, 9), ("CDL604", 7, 9)]


def test_a_factory_with_no_device_runs_its_operator_on_the_cpu():
    text = (
        "import math\n"
        "import torch\n"
        "\n"
        "\n"
        "def schedule(start, end, n, device):\n"
        "    steps = torch.logspace(math.log10(start), math.log10(end), n, dtype=torch.double).tolist()\n"
        "    moved = torch.logspace(0, 1, n).to(device)\n"
        "    there = torch.logspace(0, 1, n, device=device)\n"
        "    return steps, moved, there\n"
    )
    assert op_findings(text, "2.9") == [("CDL604", 8, 13)]


def test_a_name_bound_in_one_arm_of_an_if_is_not_known_in_the_other():
    # Whisper's pad_or_trim: the `else:` arm holds a NumPy array, whatever the `if` arm bound.
    text = (
        "import torch\n"
        "import torch.nn.functional as F\n"
        "def pad(array, n):\n"
        "    if torch.is_tensor(array):\n"
        "        array = F.pad(array, [0, n])\n"
        "        array.take(n)\n"
        "    else:\n"
        "        array = array.take(indices=range(n), axis=-1)\n"
        "    return array.take(n)\n"
    )
    assert op_findings(text, "2.9.1", select={"CDL604", "CDL605"}) == [("CDL604", 6, 9)]
