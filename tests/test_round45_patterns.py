"""Patterns from blind round 45 (bench/EVAL.md, session 34): a tensor's device index handed on as a device
(the new CDL118), which simclr's LARS optimizer does at every step."""

import textwrap

from conftest import findings_of, triples

INDICES = """
import torch


def lars_step(param, g_norm, w_norm, trust):
    device = g_norm.get_device()
    ratio = torch.where(w_norm > 0, trust, torch.tensor(1.0).to(device))
    return ratio * torch.ones(1, device=param.get_device())


def placed(x, y):
    here = torch.device(x.get_device())
    return y.to(here), y.to(x.device), y.cuda(x.get_device())


def mixed(x, y, cond):
    where = x.get_device() if cond else x.device
    index = x.get_device()
    return y.to(where), print(index)
"""


def test_a_device_index_handed_on_as_a_device():
    # `where` may hold a device as well; `index` is printed, not handed on; `.cuda(...)` is CDL102's
    assert triples(findings_of(textwrap.dedent(INDICES).lstrip("\n"), select={"CDL118"})) == [
        ("CDL118", 6, 65), ("CDL118", 7, 41), ("CDL118", 11, 25),
    ]


NOT_INDICES = """
import torch
import warp as wp
from deepinv import utils


class Network(torch.nn.Module):
    def get_device(self):
        return "cpu" if next(self.parameters()).device.type == "cpu" else next(self.parameters()).device.index

    def predict(self, x):
        return x.to(self.get_device())


def run(model, x):
    dev = utils.get_device()
    return model.to(dev), x.to(wp.get_device()), x.to(model.get_device())
"""


def test_no_tensor_index_a_module_or_the_code_own_method_answers():
    # `model.get_device()` in a file that defines a `get_device` of its own is that method's answer
    assert findings_of(textwrap.dedent(NOT_INDICES).lstrip("\n"), select={"CDL118"}) == []
