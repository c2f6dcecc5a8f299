"""`self.cuda(...)` in a class that defines `cuda` (or whose base in the file does) calls the project's
method: what that method does is reported there, not at each call. A class that inherits torch's
`Module.cuda` keeps the finding, as does `.cuda()` on another value."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch
import torch.nn as nn


class Quantized(nn.Module):
    def cuda(self, device):
        self.weight = self.weight.to(device)
        return self

    def setup(self, device):
        self.cuda(device)
        self.weight.cuda()


class Derived(Quantized):
    def go(self):
        self.cuda(0)


class Plain(nn.Module):
    def go(self):
        self.cuda()
'''


def test_self_cuda_of_a_class_that_defines_it():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL102"}))
    assert found == [("CDL102", 12, 21), ("CDL102", 22, 14)]
