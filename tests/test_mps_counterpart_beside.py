"""A CUDA call that does nothing off CUDA, whose block also makes the MPS counterpart (`torch.mps.
empty_cache()`, `torch.mps.manual_seed(s)`, itself or in the arms of an `if` there), already serves MPS.
Not for torch.cuda.synchronize, which raises without CUDA, nor for a counterpart in another block."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def on_oom():
    torch.cuda.empty_cache()
    if torch.backends.mps.is_available():
        torch.mps.empty_cache()


def seed(s):
    torch.cuda.manual_seed_all(s)
    torch.mps.manual_seed(s)


def sync():
    torch.cuda.synchronize()
    torch.mps.synchronize()


def elsewhere(flag):
    if flag:
        torch.cuda.empty_cache()
    torch.mps.empty_cache()


def only_cuda():
    torch.cuda.empty_cache()
    print("freed")
'''


def test_the_mps_counterpart_in_the_same_block():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL201", "CDL202", "CDL203"}))
    assert found == [("CDL201", 16, 5), ("CDL202", 22, 9), ("CDL202", 27, 5)]
