"""`with A() and B():` enters only what `and` gives: B, since a context manager is truthy. An autocast
in A's place casts nowhere, so it is no porting finding; in B's place it is entered as usual."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def step(model, x, grad):
    with torch.cuda.amp.autocast(dtype=torch.float16) and torch.set_grad_enabled(grad):
        y = model(x)
    with torch.autocast("cuda") and torch.no_grad():
        y = model(y)
    with torch.no_grad() and torch.cuda.amp.autocast():
        y = model(y)
    with torch.no_grad() and torch.autocast("cuda"):
        y = model(y)
    with torch.cuda.amp.autocast() and torch.no_grad() and torch.enable_grad():
        y = model(y)
    with torch.cuda.amp.autocast() or torch.no_grad():
        y = model(y)
    with torch.cuda.amp.autocast(), torch.no_grad():
        y = model(y)
    ok = torch.cuda.amp.autocast() and grad
    return y
'''


def test_an_autocast_the_with_drops_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL205", "CDL207"}, torch_version="2.9.1"))
    # kept: the last operand (lines 9 and 11), `or` (15: the autocast is the truthy operand, entered),
    # two items (17) and an `and` outside a with (19)
    assert found == [("CDL205", 9, 30), ("CDL207", 11, 45), ("CDL205", 15, 10), ("CDL205", 17, 10), ("CDL205", 19, 10)]
