"""CDL601: a dtype handed to a call that is also handed `torch.device("cpu")` by position (or a name bound
only to one) makes its tensor on the host. A bare "cpu" string by position may be anything else, and a
CUDA device is no host: both stay reported."""

from conftest import findings_of, triples

SOURCE = '''import torch


def test_occ(occnumber):
    cpu = torch.device("cpu")
    a = occnumber(torch.tensor(2.6), 3, torch.double, torch.device('cpu'))
    b = occnumber(torch.tensor(2.6), 3, torch.double, cpu)
    c = occnumber(torch.tensor(2.6), 3, torch.double, "cpu")
    d = occnumber(torch.tensor(2.6), 3, torch.double, torch.device("cuda"))
    return a, b, c, d
'''


def test_a_host_device_by_position_keeps_float64_on_the_cpu():
    assert triples(findings_of(SOURCE, select={"CDL601"})) == [("CDL601", 8, 41), ("CDL601", 9, 41)]


def test_a_dtype_a_test_compares_makes_no_tensor():
    source = (
        "import unittest\n\nimport torch\n\n\nclass T(unittest.TestCase):\n    def test_dtype(self):\n"
        "        q = torch.ones(2, dtype=torch.complex64)\n        self.assertEqual(q.dtype, torch.complex128)\n"
        "        self.assertNotEqual(torch.float64, q.dtype)\n        return make(dtype=torch.float64)\n"
    )
    assert triples(findings_of(source, select={"CDL601"})) == [("CDL601", 11, 27)]


def test_a_move_to_the_host_with_a_dtype_keeps_float64_on_the_cpu():
    """`.to(device, dtype)`: the device comes first, so `.to("cpu", torch.float64)` converts on the host
    (torchbearer's `Trial(...).to('cpu', torch.float64)` in its tests); to another device it is reported."""
    source = (
        "import torch\n\n\ndef widen(trial, x, device):\n    a = trial.to(\"cpu\", torch.float64)\n"
        "    b = x.to(device, torch.float64)\n    c = x.to(torch.device(\"cpu\"), torch.float64)\n    return a, b, c\n"
    )
    assert triples(findings_of(source, select={"CDL601"})) == [("CDL601", 6, 22)]
