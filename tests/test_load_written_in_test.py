"""CDL109 in a test that saves, then loads: a call of the loader's saver or of a `save*` method (the catalog's
`writers`) in an earlier statement of the same test function is a round trip on the machine that runs
the test. A load before any save, a load in a test that only trains, a load in a helper (not a test
function) and a load in a module that is not a test are still reported."""

from conftest import findings_of, triples

SOURCE = '''import os

import torch


def test_save_and_load(trainer, path):
    trainer.fit()
    trainer.save(path)
    model = torch.load(os.path.join(path, "model.pt"), weights_only=False)


def test_pretrained(model, folder):
    model.save_pretrained(folder)
    if model:
        state = torch.load(folder + "/pytorch_model.bin")


def test_load_then_save(trainer, path):
    state = torch.load(path)
    trainer.save(path)


def test_only_trains(trainer, path):
    trainer.fit()
    state = torch.load(path)


def helper(trainer, path):
    trainer.save(path)
    return torch.load(path + "/model.pt")
'''


def test_a_test_that_saves_first_is_a_round_trip():
    assert triples(findings_of(SOURCE, path="tests/test_trainer.py", select={"CDL109"})) == [
        ("CDL109", 19, 13),
        ("CDL109", 25, 13),
        ("CDL109", 30, 12),
    ]


def test_outside_a_test_module_every_load_counts():
    assert triples(findings_of(SOURCE, path="trainer.py", select={"CDL109"})) == [
        ("CDL109", 9, 13),
        ("CDL109", 15, 17),
        ("CDL109", 19, 13),
        ("CDL109", 25, 13),
        ("CDL109", 30, 12),
    ]
