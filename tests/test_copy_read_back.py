"""CDL304: a non-blocking copy of a named tensor whose result the same expression reads back on the host
(`.to("cpu")`, `.cpu()`, `.item()` of what it computes) has landed before the statement ends: the read waits
for the device's queue, and the name holds the source until then. A copy of a temporary, a result that
stays on the device, or one moved on to another device is still reported."""

from conftest import findings_of, triples

SOURCE = '''import torch


def dequant(packed, scale, device, fn):
    return fn(packed=packed.to(device, non_blocking=True), scale=scale.to(device, non_blocking=True)).to("cpu")


def summed(packed, device, fn):
    return fn(packed.to(device, non_blocking=True)).sum().item()


def kept(packed, device, fn):
    return fn(packed.to(device, non_blocking=True))


def temporary(packed, device, fn, make):
    return fn(make(packed).to(device, non_blocking=True)).cpu()


def moved_on(packed, device, fn):
    return fn(packed.to(device, non_blocking=True)).to(device)
'''


def test_a_copy_read_back_in_the_same_expression_has_landed():
    assert triples(findings_of(SOURCE, select={"CDL304"})) == [("CDL304", 13, 33), ("CDL304", 17, 39), ("CDL304", 21, 33)]
