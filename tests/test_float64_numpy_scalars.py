"""CDL607 and NumPy's float64 scalars: `np.log(2 * np.pi)`, `np.double(c)` are NumPy float64 values, and a tensor
made of a list holding one is float64 (real torch says so below); `2 * np.pi` and `math.log(2)` are Python
floats, and a tensor of those is float32. What cannot be told from the source (`np.log(x)` of an unknown `x`) is
not reported."""

import textwrap

import numpy as np
import torch

from conftest import findings_of, triples

CODE = '''
import math

import numpy as np
import torch


def get_nll(data, input_dim, c, xs):
    a = torch.tensor([np.prod(input_dim) / 2 * np.log(np.pi * 2)]).to(data.device)
    b = torch.tensor([[1.0, np.sqrt(2)]]).to(data.device)
    c = np.double(c)
    d = torch.tensor([c]).to(data.device)
    e = torch.as_tensor(np.float64(1.0)).to(data.device)
    f = torch.tensor([2 * np.pi]).to(data.device)
    g = torch.tensor([math.log(2.0)]).to(data.device)
    h = torch.tensor([np.log(2.0)], dtype=torch.float32).to(data.device)
    i = torch.tensor([np.log(xs)]).to(data.device)
    j = torch.tensor([np.log(2.0)]).float().to(data.device)
    k = torch.tensor([np.log(2.0), torch.ones(())]).to(data.device)
    return a, b, d, e, f, g, h, i, j, k
'''


def test_float64_numpy_scalars_moved_to_the_device_are_reported_and_python_floats_are_not():
    found = triples(findings_of(textwrap.dedent(CODE).lstrip("\n"), select={"CDL607", "CDL608"}))
    assert found == [("CDL607", 8, 9), ("CDL607", 9, 9), ("CDL607", 11, 9), ("CDL607", 12, 9)]


def test_torch_makes_float64_of_numpy_scalars_and_float32_of_python_floats():
    assert torch.tensor([np.prod((3, 4)) / 2 * np.log(np.pi * 2)]).dtype == torch.float64
    assert torch.tensor([[1.0, np.sqrt(2)]]).dtype == torch.float64
    assert torch.tensor([np.double(3)]).dtype == torch.float64
    assert torch.as_tensor(np.float64(1.0)).dtype == torch.float64
    assert torch.tensor([2 * np.pi]).dtype == torch.float32


def test_index_and_window_factories_without_a_device_build_on_the_cpu():
    # torch docs: tril_indices/triu_indices default to device="cpu", the window functions to the default device
    code = '''
import torch


def lower(device, n):
    a = torch.tril_indices(n, n, offset=-1)
    b = torch.tril_indices(n, n, offset=-1, device=device)
    c = torch.triu_indices(row=n, col=n)
    return a, b, c
'''
    assert triples(findings_of(code.lstrip("\n"), select={"CDL604"}, torch_version="2.5")) == [("CDL604", 6, 9)]


def test_numpy_math_of_a_parameter_annotated_as_a_python_number_is_a_float64_scalar():
    # rllte's SAC: `th.tensor(np.log(temperature), device=self.device)` with `temperature: float`
    code = '''
import numpy as np
import torch as th


class Agent:
    def __init__(self, device, temperature: float = 0.1, other=0.1):
        self.device = th.device(device)
        self.log_alpha = th.tensor(np.log(temperature), device=self.device, requires_grad=True)
        self.other = th.tensor(np.log(other), device=self.device)
        self.x = th.as_tensor(np.zeros(3)).to(self.device)
'''
    assert triples(findings_of(code.lstrip("\n"), select={"CDL607"})) == [("CDL607", 8, 26), ("CDL607", 10, 18)]
    assert torch.tensor(np.log(0.1)).dtype == torch.float64
