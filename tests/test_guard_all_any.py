"""`all(...)`/`any(...)` of a comprehension whose element is a CUDA test is true only where that test
is (`all` of an empty list aside, which no list of the devices in use is): `if not all(d.type == "cuda"
for d in devices): return` guards the rest of the function. Their being false says nothing, and an
element that is no CUDA test makes them no guard."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def balance(devices):
    if not all(device.type == "cuda" for device in devices):
        return None
    return [torch.cuda.get_device_properties(d).total_memory for d in devices]


def stats(tensors):
    if any(t.device.type == "cuda" for t in tensors):
        torch.cuda.synchronize()
    if all([t.is_cuda for t in tensors]):
        torch.cuda.synchronize()
    if all(t.shape for t in tensors):
        torch.cuda.synchronize()
    if not any(t.device.type == "cuda" for t in tensors):
        torch.cuda.synchronize()
'''


def test_all_and_any_of_cuda_tests_guard_where_true():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL201", "CDL204"}))
    # lines 7, 12 and 14 run only with CUDA devices; 16: no CUDA test; 18: false says nothing
    assert found == [("CDL201", 16, 9), ("CDL201", 18, 9)]
