"""CDL109 where the code wrote what it loads just before: a function that calls the loader's saver
(torch.save) in an earlier statement reads back its own files (ranks exchanging data through the disk);
in a test function of a test module, an earlier call of a `save*` method (the catalog's `writers`) counts
too. A load before any save (a conversion loads, then saves), a test that only trains, a helper's
`trainer.save(...)` (not a test) and a load in a module that is not a test are still reported."""

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


FUNCTIONS = '''import torch


def gather(data, folder, rank, world):
    torch.save(data, f"{folder}/part_{rank}.pt")
    return [torch.load(f"{folder}/part_{other}.pt") for other in range(world)]


def convert(source, target):
    state = torch.load(source)
    torch.save(state, target)


def writes_elsewhere(trainer, path):
    trainer.save(path)
    return torch.load(path + "/model.pt")
'''


def test_a_function_that_saves_before_it_loads_reads_its_own_files():
    """Outside tests only the loader's own saver counts (a conversion loads first and is reported)."""
    assert triples(findings_of(FUNCTIONS, path="utils.py", select={"CDL109"})) == [("CDL109", 10, 13), ("CDL109", 16, 12)]


def test_a_temporary_file_opened_by_with_is_this_run_s_own():
    source = '''import tempfile

import torch


def broadcast(data):
    with tempfile.TemporaryFile("r+b") as f:
        f.write(data.numpy())
        f.seek(0)
        return torch.load(f)


def other(path):
    with open(path, "rb") as f:
        return torch.load(f)
'''
    assert triples(findings_of(source, path="utils.py", select={"CDL109"})) == [("CDL109", 15, 16)]


SAVE_OR_RESUME = '''import os

import torch


def save_or_load_history(buffers, cwd, if_save):
    for name, item in buffers:
        file_path = f"{cwd}/replay_buffer_{name}.pth"
        if if_save:
            torch.save(item, file_path)
        elif os.path.isfile(file_path):
            item[:] = torch.load(file_path)


def round_trip(item, path):
    if item is not None:
        torch.save(item, path)
        return torch.load(path)
    return None
'''


def test_a_save_in_another_arm_is_no_round_trip():
    """elegantrl's replay buffer: `if if_save: torch.save(...)` / `elif exists: torch.load(...)` reads
    what an earlier run wrote, on whatever machine (12); a save before the load in the same arm is a
    round trip (18)."""
    assert triples(findings_of(SAVE_OR_RESUME, select={"CDL109"})) == [("CDL109", 12, 23)]
