"""Patterns from blind round 38 (bench/EVAL.md, session 32): `.is_cuda` in a module that imports no torch
is another library's (NVIDIA Warp's devices, which are only the CPU and CUDA devices)."""

import textwrap

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
