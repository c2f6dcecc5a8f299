"""Patterns from blind round 38 (bench/EVAL.md, session 32): `.is_cuda` in a module that imports no torch
is another library's (NVIDIA Warp's devices, which are only the CPU and CUDA devices)."""

import textwrap

import pytest

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


WARP_STYLE = """
import warp as wp


def allocate(shape, device=None):
    device = wp.get_device(device)
    pinned = device.is_cuda
    return wp.zeros(shape, device=device, pinned=pinned)
"""


def test_is_cuda_of_another_librarys_device():
    assert lint(WARP_STYLE, select={"CDL103"}) == []


def test_is_cuda_where_the_module_imports_torch():
    # the same code beside an import of torch (here of a name under it) reads a tensor's or device's attribute
    assert lint("from torch import Tensor\n" + WARP_STYLE, select={"CDL103"}) == [("CDL103", 8, 14)]


def test_a_package_row_says_what_is_true_of_it():
    # PyG's extension libraries have CPU and CUDA kernels (torch-sparse's CI installs their CPU wheels):
    # the row's own message, not CDL504's "its kernels need an NVIDIA GPU"
    found = findings_of("torch-scatter==2.1.2\n", path="requirements.txt", kind="requirements", select={"CDL504"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL504", 1, 1)]
    assert found[0].message.startswith("`torch-scatter` has CPU and CUDA kernels and none for MPS, and no macOS wheel")


def test_a_package_row_message_names_only_its_fields(tmp_path):
    from cudalint.catalog import rules_dir
    from cudalint.manifests.packages import PackageTableError, load_packages

    text = (rules_dir() / "packages.toml").read_text(encoding="utf-8")
    (tmp_path / "packages.toml").write_text(text.replace("(a source build); consider {alternative}", "{version}"), encoding="utf-8")
    with pytest.raises(PackageTableError, match="PyG extension libraries"):
        load_packages(str(tmp_path))


TYPE_STRINGS = """
import torch


def place(x, pos, grid, name):
    a = pos.type(x.type())
    dtype = x.type()
    b = grid.type(dtype)
    c = grid.type(torch.float16)
    d = grid.type("torch.FloatTensor")
    e = grid.type(name)
    return a, b, c, d, e
"""


def test_a_tensors_type_string_handed_back_to_type():
    # linear-attention-transformer's `self.pos_emb(x).type(x.type())`, timm's `.type(weight.type())`: on MPS
    # the string is "torch.mps.FloatTensor", which .type() rejects (PyTorch issue 118517); a dtype, a literal
    # type name and a parameter are no such string
    found = findings_of(textwrap.dedent(TYPE_STRINGS).lstrip("\n"), select={"CDL219"})
    assert triples(found) == [("CDL219", 5, 18), ("CDL219", 7, 19)]
    assert found[0].message.startswith("x.type() hands a tensor's type string to .type(); on MPS that string is")


def test_type_strings_only_where_torch_is_imported():
    # the gate reads `.type(...)` calls in any file; the check, tensors' `.type()`, only where torch is imported
    source = textwrap.dedent(TYPE_STRINGS).lstrip("\n").replace("import torch\n", "import numpy as torch\n")
    assert findings_of(source, select={"CDL219"}) == []


def test_a_type_string_passed_for_a_parameter():
    # YOLOX's head: `self.get_output_and_grid(output, k, xin[0].type())`, whose `dtype` parameter reaches
    # `grid.type(dtype)`: reported where the string is written, the `.type(...)` it reaches as related
    source = textwrap.dedent(
        """
        import torch


        class Head:
            def forward(self, xin):
                return self.grid(xin[0], xin[0].type())

            def grid(self, output, dtype):
                return torch.zeros(3).type(dtype)

            def other(self, output, dtype):
                return output.type(dtype)
        """
    ).lstrip("\n")
    found = findings_of(source, select={"CDL219"})
    assert triples(found) == [("CDL219", 6, 34)]
    assert [(place.line, place.column) for place in found[0].related] == [(9, 16)]


def test_a_function_the_module_attaches_to_a_class_as_its_cuda_method():
    # torch-sparse: `def cuda(self, device=None, ...)` at module level, then `SparseTensor.cuda = cuda`: an
    # override of `.cuda()` (rules/overrides.toml), whose CUDA device is the caller's request; a function
    # the module does not attach is ordinary code
    assert lint(
        """
        import torch


        class SparseTensor:
            def device_as(self, tensor):
                return tensor


        def cuda(self, device=None, non_blocking=False):
            return self.device_as(torch.tensor(0.0, device=device or "cuda"))


        def to_cuda(x):
            return x.to("cuda")


        SparseTensor.cuda = cuda
        """,
        select={"CDL101"},
    ) == [("CDL101", 14, 17)]
