"""CDL304 and a copy inside a method of a `torch.nn.Module` subclass (placement.in_module_method): a
module moves its own state or an input its caller has already placed, so the copy is not the host
staging PyTorch issue 189690 is about. A copy back to the host there is still reported (it is read
before it lands), as are a module's own move (which frees its parameters' sources), a copy stored in
place of the object's state, a copy of a temporary (released once the copy is queued), a `copy_` into
a buffer (which may be the host's), and a copy in a function or in a class that is not a module."""

from conftest import findings_of, triples

LAYERS = '''import torch
from torch import nn

from blocks import Block


class Encoder(nn.Module):
    def forward(self, x, mask):
        x = x.to(self.weight.device, non_blocking=True)
        mask = mask.cuda(non_blocking=True)
        host = x.to("cpu", non_blocking=True)
        return x * mask, host


class Head(nn.Linear):
    def forward(self, x):
        return super().forward(x.to(self.weight.device, non_blocking=True))


class Deep(Block):
    def forward(self, x):
        return x.to(self.device, non_blocking=True)

    def load(self, device):
        net = Head(2, 2)
        net.to(device, non_blocking=True)
        self.w["k"] = self.w["k"].to(device, non_blocking=True)
        self.register_buffer("cos", self.emb.cos().to(device, non_blocking=True))
        self.register_buffer("sin", (self.emb.sin() * 2).to(device, non_blocking=True))
        self.host_grad.copy_(self.grad, non_blocking=True)
        return net


class Loader:
    def next(self, batch, device):
        return batch.to(device, non_blocking=True)


def train_step(model, batch, device):
    return model(batch.to(device, non_blocking=True))
'''

BLOCKS = '''import torch


class Block(torch.nn.Module):
    pass
'''


def test_a_copy_in_a_module_method_is_not_reported():
    found = findings_of(LAYERS, path="layers.py", select={"CDL304"}, project_files={"blocks.py": BLOCKS})
    assert triples(found) == [("CDL304", 11, 28), ("CDL304", 26, 24), ("CDL304", 27, 46), ("CDL304", 28, 63),
                              ("CDL304", 29, 69), ("CDL304", 30, 41), ("CDL304", 36, 33), ("CDL304", 40, 35)]


def test_without_the_project_a_base_of_another_module_is_not_known_to_be_a_module():
    found = findings_of(LAYERS, path="layers.py", select={"CDL304"})
    assert triples(found) == [("CDL304", 11, 28), ("CDL304", 22, 34), ("CDL304", 26, 24), ("CDL304", 27, 46),
                              ("CDL304", 28, 63), ("CDL304", 29, 69), ("CDL304", 30, 41), ("CDL304", 36, 33),
                              ("CDL304", 40, 35)]
