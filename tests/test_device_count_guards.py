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
