"""CDL301's message says what the call it is about does: a tensor factory asked to pin (`torch.empty(...,
pin_memory=True)`) gains nothing on a Mac's shared memory; a DataLoader on a Mac pins nothing and warns.
One finding per argument, whichever entry reports it."""

from conftest import findings_of

SOURCE = '''import torch
from torch.utils.data import DataLoader

a = torch.empty((4, 256), device="cpu", dtype=torch.float, pin_memory=True)
b = torch.zeros(3, pin_memory=True)
c = torch.tensor([1.0], pin_memory=True)
loader = DataLoader([1, 2, 3], pin_memory=True)
'''
FACTORY = ("pin_memory=True: pinned memory helps only copies to a CUDA GPU; Apple silicon shares one memory between CPU "
           "and GPU, so pinned host memory buys nothing on a Mac; pin only when the device is CUDA")
LOADER = ("pin_memory=True: pinned memory helps only copies to a CUDA GPU; on a Mac a DataLoader pins nothing and warns "
          "that MPS does not support it (torch >= 2.7); pin only when the device is CUDA")


def test_each_call_gets_the_message_about_what_it_does():
    found = sorted(findings_of(SOURCE, select={"CDL301"}), key=lambda f: f.sort_key)
    assert [(f.line, f.column, f.message) for f in found] == [
        (4, 60, FACTORY), (5, 20, FACTORY), (6, 25, FACTORY), (7, 32, LOADER)]
