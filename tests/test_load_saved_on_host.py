"""CDL109 and the project's own file formats: a load of a file name that the project's saves write
(the last string literal of the path, through local names assigned once and `with open(path) as f`)
holds what those saves put there. Where every such save writes host values only (`.cpu()` results, a
counter kept on `self`, `torch.from_numpy(...)`, `.to("cpu")`, containers and comprehensions of them),
the load has no storage to map: not reported. A save of a model's state, a file name only some saves
fill with host values, a bare extension, and a test module's saves for a library's loads still are."""

from conftest import findings_of, triples

AGENT = '''import os

import numpy as np
import torch


class Agent:
    def __init__(self, model):
        self.model = model
        self.steps = 0

    def act(self):
        self.steps += 1

    def save(self, folder):
        torch.save(self.steps, os.path.join(folder, "steps.pt"))
        ema = {k: v.to(device="cpu", copy=True) for k, v in self.model.state_dict().items()}
        torch.save(ema, os.path.join(folder, "ema.pt"))
        stats = dict()
        stats["mean"] = self.model.mean.cpu()
        stats["count"] = 3
        path = os.path.join(folder, "stats.pt")
        torch.save(stats, path)
        torch.save(self.model.state_dict(), os.path.join(folder, "model.pt"))
        with open(os.path.join(folder, "table.pt"), "wb") as f:
            torch.save((torch.from_numpy(np.zeros(3)).float(), [1, 2]), f)
        torch.save(self.model.state_dict(), os.path.join(folder, "mixed.pt"))
        torch.save(self.model.weights, folder + ".pth")

    def save_mixed(self, folder):
        torch.save([1, 2], os.path.join(folder, "mixed.pt"))
'''

RESUME = '''import os

import torch


def resume(agent, folder):
    agent.steps = torch.load(os.path.join(folder, "steps.pt"))
    ema = torch.load(os.path.join(folder, "ema.pt"))
    stats = torch.load(os.path.join(folder, "stats.pt"))
    model = torch.load(os.path.join(folder, "model.pt"))
    with open(os.path.join(folder, "table.pt"), "rb") as f:
        table = torch.load(f)
    mixed = torch.load(os.path.join(folder, "mixed.pt"))
    weights = torch.load(folder + ".pth")
    return ema, stats, model, table, mixed, weights
'''


def test_loads_of_files_the_project_fills_with_host_values_are_not_reported():
    found = findings_of(RESUME, path="pkg/resume.py", select={"CDL109"}, project_files={"pkg/agent.py": AGENT})
    assert triples(found) == [("CDL109", 10, 13), ("CDL109", 13, 13), ("CDL109", 14, 15)]
    alone = findings_of(RESUME, path="pkg/resume.py", select={"CDL109"})
    assert [line for _, line, _ in triples(alone)] == [7, 8, 9, 10, 12, 13, 14]


MAKE_DATA = '''import os

import torch


def make_outputs(model, folder, model_id):
    out = model(torch.ones(2))
    torch.save(out, os.path.join(folder, f"{model_id}_outputs.pt"))
'''

USE_DATA = '''import os

import torch


def test_outputs(model, folder, model_id):
    expected = torch.load(os.path.join(folder, f"{model_id}_outputs.pt"))
    assert (model(torch.ones(2)) == expected).all()
'''


def test_a_test_suite_s_own_data_is_host_data_for_its_tests_only():
    tests = findings_of(USE_DATA, path="tests/test_outputs.py", select={"CDL109"},
                        project_files={"tests/util_test.py": MAKE_DATA})
    assert triples(tests) == []
    library = findings_of(USE_DATA.replace("def test_outputs", "def check_outputs"), path="pkg/check.py",
                          select={"CDL109"}, project_files={"tests/util_test.py": MAKE_DATA})
    assert triples(library) == [("CDL109", 7, 16)]
