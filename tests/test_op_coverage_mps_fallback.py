"""Code that already sends MPS tensors to the CPU before an operator MPS lacks: an `if` that tests for
MPS and rebinds a name to its CPU copy (or a conditional expression that does), then operators on that
name or on names derived from it after. Not for a test of another device, a tensor not derived from the
moved one, or a name bound again from something else."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def fit(x, other):
    if x.device.type == "mps":  # linalg_svd has no MPS kernel
        x = x.cpu()
    filled = torch.where(torch.isnan(x), torch.zeros_like(x), x)
    if filled.dtype != torch.float32:
        filled = filled.to(torch.float32)
    u, s, vh = torch.linalg.svd(filled)
    w = torch.linalg.svd(other)
    return u, w


def chosen(x):
    x = x.cpu() if x.is_mps else x
    return torch.linalg.svd(x)


def another_device(x):
    if x.device.type == "cuda":
        x = x.cpu()
    return torch.linalg.svd(x)


def bound_again(x, y):
    if torch.backends.mps.is_available():
        x = x.to("cpu")
    x = y * 2
    return torch.linalg.svd(x)


def before_the_move(x):
    u = torch.linalg.svd(x)
    if x.device.type in ("mps", "xpu"):
        x = x.cpu()
    return u, torch.linalg.svd(x)
'''


def test_operators_on_tensors_the_code_moved_off_mps():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL604", "CDL605"}, torch_version="2.9.1"))
    # kept: `other` (11), a test for CUDA (23), x bound again (30), an operator before the move (34)
    assert found == [("CDL605", 11, 9), ("CDL605", 23, 12), ("CDL605", 30, 12), ("CDL605", 34, 9)]
