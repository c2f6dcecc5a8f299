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


CPU_COPIES = '''
import torch


def vote(c, device):
    votes = torch.where(c > 0, c, -c)
    votes = votes.data.cpu()
    ids, _ = torch.mode(votes, dim=1)
    back = votes.to(device)
    again, _ = torch.mode(back, dim=1)
    cast = votes.to(torch.float32)
    kept, _ = torch.mode(cast, dim=1)
    return ids, again, kept


def moved_again(c):
    votes = c.cpu()
    votes = votes.cuda()
    ids, _ = torch.mode(votes, dim=1)
    return ids


def copied_in_a_branch(c, flag):
    if flag:
        c = c.cpu()
    ids, _ = torch.mode(c, dim=1)
    return ids
'''


def test_a_name_bound_to_a_cpu_copy_where_it_always_runs():
    """hummingbird's SVC: `votes = votes.data.cpu()` (no test: on every host), then `torch.mode(votes)`,
    which runs on the CPU. A tensor derived from the copy by a cast stays there; one moved to a device
    (9), moved again (18), or copied only in a branch (25) is reported."""
    found = triples(findings_of(textwrap.dedent(CPU_COPIES).lstrip("\n"), select={"CDL604"}, torch_version="2.9.1"))
    assert found == [("CDL604", 9, 16), ("CDL604", 18, 14), ("CDL604", 25, 14)]


FLOAT64_HELPERS = '''
import torch


def _float64(x):
    # MPS does not support float64
    if x.device.type == "mps":
        x = x.cpu()
    return x.double()


def _widened(x):
    if x.device.type == "cuda":
        x = x.cpu()
    return x.double()
'''


def test_double_of_a_tensor_the_code_moved_off_mps():
    """pytorch-ood's `_float64`: `.double()` (CDL602) after the code itself sent an MPS tensor to the CPU
    is a float64 tensor on the CPU; after a move made only for CUDA tensors it is still reported (14)."""
    found = triples(findings_of(textwrap.dedent(FLOAT64_HELPERS).lstrip("\n"), select={"CDL602"}))
    assert found == [("CDL602", 14, 14)]
