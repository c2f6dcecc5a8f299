"""A device chosen as the CPU whenever the tested device is MPS (`torch.device("cpu") if x.device.type
== "mps" else x.device`): on a Mac the other arm runs only off MPS, so float64 made after a move there
stays on the host (CDL601 is not reported). An `and` in the test may fail on MPS and keeps the finding."""

from conftest import findings_of, triples

SOURCE = '''import torch


def solve(atoms, target, exact):
    work_device = torch.device("cpu") if target.device.type == "mps" else target.device
    work = atoms.to(device=work_device).to(dtype=torch.float64)
    inline = atoms.to("cpu" if atoms.is_mps or exact else atoms.device).to(torch.float64)
    partial = "cpu" if exact and target.device.type == "mps" else target.device
    kept = atoms.to(partial).to(torch.float64)
    other = torch.device("cpu") if target.device.type == "cuda" else target.device
    moved = atoms.to(other).to(torch.float64)
    return work, inline, kept, moved
'''


def test_a_device_that_is_the_cpu_on_mps_keeps_float64_on_the_host():
    assert triples(findings_of(SOURCE, select={"CDL601"})) == [("CDL601", 9, 33), ("CDL601", 11, 32)]
