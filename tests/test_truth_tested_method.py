"""A method entry marked `makes_tensor` (CDL602's `.double()`) is not reported where the call's result is
only tested for truth: the test of an if/while/assert/conditional expression or an operand of `not` (or
of `and`/`or` so used), as Qt's `ev.double()` double-click test. As a value (assigned, an operand of `or`
whose result is kept, returned) it is the cast and is reported."""

from conftest import findings_of, triples

SOURCE = '''import torch


def mouse(ev, x):
    if ev.double():
        pass
    if not ev.double() and x:
        pass
    while ev.double():
        break
    y = x.double()
    z = ev.double() or x
    return torch.zeros(2, device="mps").double()
'''


def test_a_truth_test_is_not_a_cast():
    assert triples(findings_of(SOURCE, select={"CDL602"})) == [("CDL602", 11, 11), ("CDL602", 12, 12), ("CDL602", 13, 41)]
