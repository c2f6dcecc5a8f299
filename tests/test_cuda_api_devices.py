"""CDL101 and torch.cuda's own calls: a device given to a torch.cuda API (`torch.cuda.max_memory_allocated(
device="cuda:1")`, `torch.cuda.set_device(torch.device("cuda:1"))`) changes nothing on a Mac, where the call
itself is the problem and its own rule (CDL202, CDL105) reports it; a device given anywhere else still is one."""

from conftest import findings_of, triples

SOURCE = '''import torch


def report(r, x):
    peak = torch.cuda.max_memory_allocated(device=f"cuda:{r}")
    torch.cuda.set_device(torch.device("cuda:1"))
    y = x.to(f"cuda:{r}")
    return peak, y
'''


def test_a_device_given_to_a_cuda_api_is_the_calls_finding():
    assert triples(findings_of(SOURCE, select={"CDL101", "CDL105", "CDL202"})) == [
        ("CDL202", 5, 12), ("CDL105", 6, 5), ("CDL101", 7, 14)]
