"""CDL104 and a conditional move to CUDA as the last `elif` of a chain: `if device: model.to(device)` /
`elif torch.cuda.is_available(): model.to("cuda")` leaves a Mac that passes no device on the CPU, like
the same move at the head of an `if`. A chain that tests for MPS first picks the Mac's GPU itself."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def place(model, device=None):
    if device:
        model.to(device)
    elif torch.cuda.is_available():
        model.to("cuda")
    return model


def place_mps(model, device=None):
    if torch.backends.mps.is_available():
        model.to("mps")
    elif torch.cuda.is_available():
        model.to("cuda")
    return model


def head(model):
    if torch.cuda.is_available():
        model.cuda()
    return model
'''


def test_a_conditional_move_in_an_elif_is_a_selection_that_forgets_mps():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL101", "CDL102", "CDL104"}))
    assert found == [("CDL104", 7, 5), ("CDL104", 21, 5)]
