"""A test function that replaces a move with a mock (`torchmodel.to = Mock()`, rules/guards.toml
mock_factories and mocked_moves) checks what is passed to it: nothing in it moves to a device, so its
"cuda:1" arguments and `.cuda()` calls are no findings (torchbearer's tests of `Trial.to` and
`Trial.cuda`). A test that mocks something else, or that is not in a test module, is reported."""

from conftest import findings_of, triples

TESTS = '''from unittest import TestCase
from unittest.mock import MagicMock, Mock

import torch


class TestTrial(TestCase):
    def test_to_both_args(self):
        dev = "cuda:1"
        model = torch.nn.Linear(1, 1)
        model.to = Mock()
        model.to(dev, torch.float16)
        self.assertEqual(model.to.call_args[0][0], dev)

    def test_cuda_with_device(self):
        trial = make_trial()
        trial.cuda = MagicMock()
        trial.cuda(device="2")

    def test_mocks_something_else(self):
        model = torch.nn.Linear(1, 1)
        model.load_state_dict = Mock()
        model.to("cuda:1")


def make_trial():
    return torch.nn.Linear(1, 1)
'''


def test_a_test_that_mocks_a_move_moves_nothing():
    found = findings_of(TESTS, path="tests/test_trial.py", select={"CDL101", "CDL102"})
    assert triples(found) == [("CDL101", 23, 18)]


def test_outside_a_test_module_the_moves_are_reported():
    found = findings_of(TESTS, path="trial_utils.py", select={"CDL101", "CDL102"})
    assert triples(found) == [("CDL101", 9, 15), ("CDL102", 18, 15), ("CDL101", 23, 18)]
