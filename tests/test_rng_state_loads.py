"""CDL109 and generator states: a torch.load whose result only goes back into random number generators
(`torch.set_rng_state`, `torch.cuda.set_rng_state_all`, `random.setstate`, `numpy.random.set_state`)
loads CPU byte tensors, whichever device's generator they came from, so it needs no map_location.
A state that also goes anywhere else (a model, a return, a bare truth test) is still reported."""

from conftest import findings_of, triples

SOURCE = '''import random

import numpy as np
import torch


def restore(path):
    states = torch.load(path)
    torch.set_rng_state(states["cpu"])
    if "cuda" in states:
        torch.cuda.set_rng_state_all(states["cuda"])
    np.random.set_state(states.get("numpy"))
    random.setstate(states["python"])


def restore_cpu(path):
    torch.random.set_rng_state(torch.load(path))


def resume(path, model):
    states = torch.load(path)
    torch.set_rng_state(states["cpu"])
    model.load_state_dict(states["model"])


def hand_back(path):
    states = torch.load(path)
    random.setstate(states["python"])
    return states


def tested_only(path):
    states = torch.load(path)
    if states:
        random.setstate(states["python"])


def later(path):
    states = torch.load(path)

    def put_back():
        torch.set_rng_state(states["cpu"])

    return put_back
'''


def test_a_state_that_only_reaches_generators_needs_no_map_location():
    assert triples(findings_of(SOURCE, select={"CDL109"})) == [
        ("CDL109", 21, 14),
        ("CDL109", 27, 14),
        ("CDL109", 33, 14),
        ("CDL109", 39, 14),
    ]


def test_a_state_loaded_at_module_level_is_still_reported():
    source = 'import torch\n\nstates = torch.load("rng.pt")\ntorch.set_rng_state(states)\n'
    assert triples(findings_of(source, select={"CDL109"})) == [("CDL109", 3, 10)]
