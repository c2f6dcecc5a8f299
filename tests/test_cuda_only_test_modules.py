"""A test module that imports, at its top, a CUDA-only library or a module of the project that imports
one (a built CUDA extension) cannot import on a Mac: its tests exercise CUDA kernels, and the import is
its finding. The CUDA work in the rest of the module is not reported; in a module that is no test it is."""

from conftest import lint_tree

KERNEL = "import torch\nimport kernel_cuda\n\n\ndef fused(x):\n    return kernel_cuda.fused(x)\n"
SETUP = (
    "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
    'setup(name="pkg", ext_modules=[CUDAExtension("kernel_cuda", ["kernel.cu"])])\n'
)
TEST = '''import torch
from pkg.ops import fused

DEVICE = "cuda"


def test_fused():
    x = torch.randn(4, device=DEVICE)
    assert torch.allclose(fused(x), x.relu())
    torch.cuda.synchronize()
'''


def test_a_test_module_that_cannot_import_on_a_mac_reports_only_its_import(tmp_path, monkeypatch):
    found = lint_tree(tmp_path, monkeypatch, {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/ops.py": KERNEL, "tests/test_ops.py": TEST})
    assert [f for f in found if f[0] == "tests/test_ops.py"] == [("tests/test_ops.py", "CDL407", 2, 1)]
    assert ("pkg/ops.py", "CDL406", 2, 1) in found


def test_a_test_module_that_imports_triton_reports_nothing_after_it(tmp_path, monkeypatch):
    source = 'import torch\nimport triton\n\n\ndef test_kernel():\n    x = torch.ones(2, device="cuda")\n    torch.cuda.synchronize()\n'
    found = lint_tree(tmp_path, monkeypatch, {"tests/test_kernel.py": source})
    assert found == [("tests/test_kernel.py", "CDL404", 2, 1)]


def test_the_same_code_outside_a_test_suite_is_reported(tmp_path, monkeypatch):
    source = 'import torch\nimport triton\n\n\ndef bench():\n    x = torch.ones(2, device="cuda")\n    torch.cuda.synchronize()\n'
    found = lint_tree(tmp_path, monkeypatch, {"bench.py": source})
    assert found == [("bench.py", "CDL404", 2, 1), ("bench.py", "CDL101", 6, 30), ("bench.py", "CDL201", 7, 5)]


def test_a_test_module_whose_import_is_guarded_is_still_checked(tmp_path, monkeypatch):
    source = (
        'import pytest\nimport torch\n\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n\n'
        'def test_kernel():\n    x = torch.ones(2, device="cuda")\n'
    )
    found = lint_tree(tmp_path, monkeypatch, {"tests/test_kernel.py": source})
    assert found == [("tests/test_kernel.py", "CDL101", 11, 30)]
