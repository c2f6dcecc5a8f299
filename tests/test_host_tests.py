"""A test module that places no tensor on a device runs on the CPU: the dtype and op-coverage rules
(`silenced_in_host_tests` in the catalog) report nothing there (python/host_tests.py)."""

import pytest

from conftest import findings_of, triples

HOST_TEST = """\
import unittest

import torch


class TestSettings(unittest.TestCase):
    def test_dtype_lookup(self):
        x = sample()
        self.assertEqual(lookup(x.double()), 0.2)

    def test_spectrum(self):
        m = sample()  # a tensor the module does not show on the host (one of torch.randn's would be)
        self.assertTrue((torch.linalg.eigvalsh(m @ m.T) > 0).all())

    def test_restore(self):
        state = torch.load("weights.pt")
"""
EXPECTED = [("CDL602", 9, 35), ("CDL604", 13, 26), ("CDL109", 16, 17)]


def test_the_same_code_outside_a_test_suite_is_reported():
    assert triples(findings_of(HOST_TEST, path="pkg/settings.py", torch_version="2.9")) == EXPECTED


@pytest.mark.parametrize("path", ["tests/test_settings.py", "test_settings.py", "pkg/tests/helpers.py", "settings_test.py"])
def test_a_test_module_that_places_nothing_keeps_only_the_other_rules(path):
    assert triples(findings_of(HOST_TEST, path=path, torch_version="2.9")) == [("CDL109", 16, 17)]


@pytest.mark.parametrize("placing", [
    "        y = x.to(device)\n",
    "        y = x.cuda()\n",
    "        y = x.to('mps')\n",
    "        y = torch.ones(2, device='cuda:0')\n",
    "        y = torch.ones(2, device=self.device)\n",
    "        y = x.to(other)\n",  # another tensor's device, perhaps an accelerator's
    "        y = x.pin_memory()\n",
    "        torch.set_default_device(place)\n",
    "        torch.cuda.synchronize()\n",
    "        y = to_gpu(x)\n",  # a helper of the project's own, named for what it does
    "        y = x.to_mps()\n",
])
def test_any_placement_in_the_module_brings_the_findings_back(placing):
    text = HOST_TEST + "\n    def test_place(self):\n        x = torch.zeros(2)\n" + placing
    found = triples(findings_of(text, path="tests/test_settings.py", torch_version="2.9"))
    assert [triple for triple in found if triple[1] < 17] == EXPECTED  # the placing line may have its own


@pytest.mark.parametrize("staying", [
    "        y = x.to(torch.double)\n",
    "        y = x.to(dtype=torch.float64, copy=True)\n",
    "        y = x.to('cpu')\n",
    "        y = torch.ones(2, device='cpu')\n",
    "        payload = json.dumps(timestamps)\n",  # names with "mps" inside a word speak of no device
])
def test_a_conversion_or_the_cpu_places_nothing(staying):
    text = HOST_TEST + "\n    def test_stay(self):\n        x = torch.zeros(2)\n" + staying
    found = [code for code, _, _ in triples(findings_of(text, path="tests/test_settings.py", torch_version="2.9"))]
    assert "CDL602" not in found and "CDL604" not in found and "CDL109" in found


MIXED = """\
import pytest
import torch


def make(shape):
    return torch.randn(shape)


def placed(shape):
    return torch.randn(shape).to("cuda")


@pytest.fixture
def on_device():
    return torch.ones(2, device="cuda")


def test_accuracy():
    torch.set_default_dtype(torch.double)
    x = make(3)


def test_through_a_helper():
    torch.set_default_dtype(torch.double)
    x = placed(3)


def test_through_a_fixture(on_device):
    torch.set_default_dtype(torch.double)


class TestHost:
    def test_widen(self):
        return make(2).double()


def test_cuda():
    if not torch.cuda.is_available():
        pytest.skip()
    y = make(2).to("cuda")
"""


def test_a_test_that_places_nothing_is_judged_on_its_own():
    # torchkbnufft: accuracy tests under a float64 default beside CUDA tests; what a test calls or takes
    # as a fixture from the module counts as its own
    found = triples(findings_of(MIXED, path="tests/test_mixed.py", select={"CDL601", "CDL602"}))
    assert found == [("CDL601", 24, 29), ("CDL601", 29, 29)]


def test_top_level_code_that_places_keeps_every_finding():
    text = MIXED + "\nDEVICE = torch.device('cuda')\n"
    found = triples(findings_of(text, path="tests/test_mixed.py", select={"CDL601", "CDL602"}))
    # `make(2).double()` widens what `make` builds on the host (every return of it is): no finding either way
    assert found == [("CDL601", 19, 29), ("CDL601", 24, 29), ("CDL601", 29, 29)]
