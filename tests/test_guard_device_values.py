"""Device comparisons through what the code holds: `device == torch.device("cuda")` tests for CUDA as
`device == "cuda"` does, and a name every value of which is a CUDA device or "cpu" (a selection that
forgets MPS, reported where it is made) differs from "cpu" only off a Mac."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def normalize(device):
    if device == torch.device("cuda"):
        device = torch.device("cuda:0")
    return device


class Wrapper:
    def __init__(self, kokkos, given):
        self.device = "cuda" if kokkos else "cpu"
        self.other = "cuda" if kokkos else given

    def run(self):
        if self.device != "cpu":
            torch.cuda.synchronize()
        if "cpu" == self.device:
            return
        torch.cuda.synchronize()

    def run_other(self):
        if self.other != "cpu":
            torch.cuda.synchronize()
'''


def test_device_comparisons_through_values():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL101", "CDL201"}))
    # kept: `self.other` may hold what the caller gave (an "mps" device)
    assert found == [("CDL201", 24, 13)]


MOVES = '''
import torch


def setup(model, criterion, args, flag):
    if torch.cuda.is_available():
        model = model.cuda()
        criterion.cuda()
    use_gpu = args.gpu and torch.cuda.is_available()
    if use_gpu:
        model.to("cuda:0")
    if torch.cuda.is_available():
        model.cuda()
    elif torch.backends.mps.is_available():
        model.to("mps")
    if flag:
        model.cuda()
    if torch.cuda.is_available():
        model.cuda()
        print("on the GPU")
    if model.is_cuda:
        model = model.cuda(1)
    return model
'''


def test_a_move_made_only_where_cuda_is_available():
    # kept out: a move followed by a choice that tests for MPS (9: the next `if` picks the Mac's GPU), an
    # MPS branch (11), a parameter (15: CDL102 instead), a body that does more than move (17), a test of
    # where the value already is (20)
    found = triples(findings_of(textwrap.dedent(MOVES).lstrip("\n"), select={"CDL102", "CDL104"}))
    assert found == [("CDL104", 5, 5), ("CDL102", 16, 15)]
