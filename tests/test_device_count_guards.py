"""A CUDA device count compared with a number: it is 0 on a Mac, so `device_count() < 2` (the skip of a
multi-GPU test) and `!= 2` hold there and fail only with CUDA devices, while `>= 2` and `== 2` hold only
with them. `device_count() < 0` says nothing."""

from conftest import findings_of, triples

SOURCE = '''import unittest

import torch


class MultiDevice(unittest.TestCase):
    @unittest.skipIf(torch.cuda.device_count() < 2, "Need at least 2 GPUs")
    def test_two(self):
        return torch.device("cuda:1")

    @unittest.skipIf(torch.cuda.device_count() <= 1, "Need at least 2 GPUs")
    def test_two_again(self):
        return torch.device("cuda:1")


def pick():
    if torch.cuda.device_count() == 2:
        return torch.device("cuda:1")
    if torch.cuda.device_count() != 4:
        return torch.device("cpu")
    return torch.device("cuda:3")


def unsure():
    if torch.cuda.device_count() < 0:
        return torch.device("cuda:0")
'''


def test_a_count_compared_with_a_number_guards_by_what_it_is_on_a_mac():
    assert triples(findings_of(SOURCE, select={"CDL101"})) == [("CDL101", 26, 29)]


def test_cuda_memory_statistics_are_zero_on_a_mac():
    # opacus' benchmarks: torch.cuda's memory statistics are 0 until CUDA is initialised, so a test that
    # one is positive holds only with CUDA; the statistics themselves stay CDL202's.
    source = """import torch


def reset(device):
    peak = torch.cuda.max_memory_allocated(device)
    if peak != torch.cuda.memory_allocated(device) and peak > 0:
        torch.cuda.reset_peak_memory_stats(device)
    if torch.cuda.memory_reserved() == 0:
        torch.cuda.reset_peak_memory_stats(device)
"""
    assert triples(findings_of(source, select={"CDL202"})) == [
        ("CDL202", 5, 12), ("CDL202", 6, 16), ("CDL202", 8, 8), ("CDL202", 9, 9)]
