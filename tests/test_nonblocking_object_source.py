"""CDL304 and a source its object keeps: a non-blocking `.to(...)`/`.cuda()`, not to the host, of an
object's own tensor (an attribute or entry of `self`, or a name bound only from those) into a local name
the function neither returns nor stores is not reported. The object holds the source after the copy is
queued, so the copy never reads released memory, and the kernels that read the result are queued after
it. A copy that replaces its source, goes to the host, comes from a parameter, or is handed on as it is
(returned, stored, appended) is still reported. (The object here is a plain class: in a method of a
`torch.nn.Module`, test_nonblocking_in_module.py's terms apply first.)"""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


class Streamed:
    def forward(self, x, dev):
        w = self.w
        for i in range(3):
            kw = w[f"blocks.{i}.key.weight"]
            if self.stream:
                kw = kw.to(device=dev, non_blocking=True)
            bias = self.bias.to(dev, non_blocking=True)
            x = self.att(x @ kw + bias)
        return x

    def replaces(self, dev):
        self.w["k"] = self.w["k"].to(dev, non_blocking=True)

    def returned(self, device):
        copy = self.master.to(device=device, non_blocking=True)
        self.cache[device] = copy
        return copy

    def appended(self, devices, out):
        for device in devices:
            moved = self.master.to(device, non_blocking=True)
            out.append(moved)

    def to_the_host(self):
        back = self.w["k"].to("cpu", non_blocking=True)
        print(back.sum())

    def from_a_parameter(self, batch, dev):
        data = batch.to(dev, non_blocking=True)
        return self.net(data).sum()
'''


def test_a_copy_of_an_objects_own_tensor_into_a_local_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL304"}, torch_version="2.9.1"))
    # forward (lines 10 and 11): kept by self, read by the layer's kernels; the rest as the docstring says
    assert found == [
        ("CDL304", 16, 43),
        ("CDL304", 19, 46),
        ("CDL304", 25, 44),
        ("CDL304", 29, 38),
        ("CDL304", 33, 30),
    ]
