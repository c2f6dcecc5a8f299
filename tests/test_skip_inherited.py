"""A skip off CUDA on a test class is inherited by the test classes derived from it in the same file
(unittest keeps it as the class attribute `__unittest_skip__`, pytest's class marks follow the MRO), and
a query compared with a bool constant (`torch.cuda.is_available() is False`) is that query or its negation."""

from conftest import findings_of, triples

TESTS = '''import unittest

import torch


@unittest.skipIf(torch.cuda.is_available() is False, "requires CUDA")
class TestCUDA(unittest.TestCase):
    def test_a(self):
        torch.ones(2).cuda()


class TestTFP(unittest.TestCase, TestCUDA):
    def __init__(self, methodName):
        super().__init__(methodName)
        self.device = torch.device("cuda")

    def test_b(self):
        torch.ones(2).cuda()


class Other(unittest.TestCase):
    def test_c(self):
        torch.ones(2).cuda()
        if torch.cuda.is_available() == True:
            torch.ones(2).cuda()
        if torch.cuda.is_available() is not False:
            torch.ones(2).cuda()
        if torch.cuda.is_available() != True:
            torch.ones(2).cuda()
'''


def test_a_skip_off_cuda_is_inherited_and_a_query_compared_with_a_bool_is_judged():
    found = findings_of(TESTS, path="tests/test_cuda.py", select={"CDL101", "CDL102"})
    assert triples(found) == [("CDL102", 23, 23), ("CDL102", 29, 27)]
