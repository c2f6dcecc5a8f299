"""CDL108 and CDL113 report a "cuda" default only where the parameter holds a device
(project/device_params.py): its name says so, or a read of it may carry the value to where a device
is taken. `impl="cuda"` that the body compares, hands on under its own name, or never reads picks an
implementation; what that implementation does is reported where it does it."""

import ast

from conftest import findings_of, lint_tree, triples

from cudalint.project.device_params import holds_device

OPS = '''import torch


def upfirdn2d(x, f, up=1, impl="cuda"):
    if impl == "cuda" and x.device.type == "cuda":
        return x
    return x


def downsample2d(x, f, down=2, impl="cuda"):
    return upfirdn2d(x, f, up=down, impl=impl)


def unused(x, impl="cuda"):
    return x


def build(x, target="cuda"):
    return x.to(target)


def load(path, device="cuda"):
    return torch.load(path, map_location=device)


class Block:
    def __init__(self, impl="cuda"):
        self.impl = impl

    def forward(self, x, kernel="cuda"):
        return upfirdn2d(x, None, impl=kernel)


y = downsample2d(torch.ones(1), None)
z = upfirdn2d(torch.ones(1), None)
w = build(torch.ones(1))
'''


def test_only_defaults_that_hold_a_device_are_reported():
    found = findings_of(OPS, path="pkg/ops.py", select={"CDL108"}, project_files={"pkg/__init__.py": ""})
    assert triples(found) == [("CDL108", 18, 21), ("CDL108", 22, 23), ("CDL108", 27, 29)]


def test_calls_that_take_a_choice_default_are_not_reported():
    found = findings_of(OPS, path="pkg/ops.py", select={"CDL113"}, project_files={"pkg/__init__.py": ""})
    assert triples(found) == [("CDL113", 36, 5)]


USES = '''from pkg.ops import build, downsample2d

downsample2d(1, None)
build(1)
'''


def test_nor_calls_in_other_modules():
    found = findings_of(USES, path="main.py", select={"CDL113"}, project_files={"pkg/__init__.py": "", "pkg/ops.py": OPS})
    assert triples(found) == [("CDL113", 4, 1)]


def _holds(source: str, name: str) -> bool:
    return holds_device(ast.parse(source).body[0], name)


def test_what_carries_a_value_on():
    assert _holds("def f(x, impl='cuda'):\n    return x.to(impl)\n", "impl")
    assert _holds("def f(x, impl='cuda'):\n    return g(x, device=impl)\n", "impl")
    assert _holds("def f(x, impl='cuda'):\n    return impl\n", "impl")
    assert _holds("def f(x, impl='cuda'):\n    return f'{impl}:0'\n", "impl")
    assert _holds("def f(x, impl='cuda'):\n    return g(**locals())\n", "impl")
    assert _holds("def f(x, impl='cuda'):\n    def inner():\n        return x.to(impl)\n    return inner\n", "impl")
    assert _holds("def f(x, gpu_id='cuda:0'):\n    if gpu_id:\n        return x\n", "gpu_id")  # named for one, and read


def test_what_does_not():
    assert not _holds("def f(x, gpu_id='cuda:0'):\n    pass\n", "gpu_id")  # named for one, never read
    assert not _holds("def f(x, impl='cuda'):\n    return g(x, impl=impl)\n", "impl")
    assert not _holds("def f(x, impl='cuda'):\n    if impl in ('cuda', 'ref'):\n        return x\n", "impl")
    assert not _holds("def f(x, impl='cuda'):\n    return KERNELS[impl](x) if impl.startswith('c') else x\n", "impl")
    assert not _holds("def f(x, impl='cuda'):\n    def inner(impl):\n        return x.to(impl)\n    return inner\n", "impl")
    assert not _holds("def f(x, impl='cuda'):\n    return x\n", "impl")


def test_a_parameter_compared_with_a_word_no_device_is_spelled_as_picks_an_implementation():
    # fla's Mamba layers: `backend="cuda"` is carried on (an environment override, an attribute), but the
    # body compares it with "triton": its values are kernel implementations, never devices.
    assert not _holds(
        "def __init__(self, x, backend='cuda'):\n"
        "    backend = os.environ.get('FLA_CONV_BACKEND', backend)\n"
        "    assert backend in ['cuda', 'triton'], backend\n"
        "    self.backend = backend\n", "backend")
    assert not _holds("def f(x, mode='cuda'):\n    if mode != 'fused':\n        return x.to(mode)\n", "mode")
    # Compared only with device words (a device choice's own spellings): still carried on to a device.
    assert _holds("def f(x, target='cuda'):\n    if target == 'auto':\n        target = pick()\n    return x.to(target)\n", "target")
    assert _holds("def f(x, target='cuda'):\n    if target in ('cpu', 'mps', 'cuda:1'):\n        return x.to(target)\n", "target")


LAYERS = '''import os


class Mamba:
    def __init__(self, hidden_size, backend: str = "cuda"):
        backend = os.environ.get("FLA_CONV_BACKEND", backend)
        assert backend in ["cuda", "triton"], f"Unsupported backend: {backend}"
        self.backend = backend


class Model:
    def __init__(self, config):
        self.mixer = Mamba(config.hidden_size)
'''


def test_kernel_backend_defaults_are_neither_device_defaults_nor_defaults_taken():
    found = findings_of(LAYERS, path="fla/layers.py", select={"CDL108", "CDL113"}, project_files={"fla/__init__.py": ""})
    assert triples(found) == []
    device = LAYERS.replace("backend", "target").replace('["cuda", "triton"]', '["cuda", "cpu"]')
    found = findings_of(device, path="fla/layers.py", select={"CDL108", "CDL113"}, project_files={"fla/__init__.py": ""})
    assert triples(found) == [("CDL108", 5, 51), ("CDL113", 13, 22)]


def test_a_device_parameter_the_body_never_reads_holds_nothing(tmp_path, monkeypatch):
    source = (
        'class Client:\n    def __init__(self, url, device_map="cuda"):\n        self.url = url\n\n\n'
        'class Model:\n    def __init__(self, device="cuda"):\n        self.device = device\n\n\n'
        'def stub(x, device="cuda"):\n    raise NotImplementedError\n\n\n'
        'def forwards(device="cuda", **kwargs):\n    return make(**locals())\n'
    )
    found = lint_tree(tmp_path, monkeypatch, {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
                                              "pkg/__init__.py": "", "pkg/m.py": source})
    assert [(path, code, line, column) for path, code, line, column in found if code == "CDL108"] == [
        ("pkg/m.py", "CDL108", 7, 31), ("pkg/m.py", "CDL108", 15, 21)]
