"""CDL108 and the values of a parameter: a "cuda" default that every call in the project overrides is
never what runs (project/default_calls.py). Calls are matched by the name they call, a method's through
any receiver and a class's `__init__` through the class, and the parameter counts as passed by keyword
or by position. A default that some call leaves out, that a call spreading `*args`/`**kwargs` may leave
out, or of a function nothing in the project calls (an entry point for users) is still reported, and so
is a "cuda" default reaching a device argument (CDL101) under the same terms."""

from conftest import findings_of, triples

GENERATORS = '''import torch


class Generator:
    def grid(self, sizes, device="cuda"):
        return torch.zeros(sizes, device=device)

    def flags(self, sizes, device="cuda"):
        return torch.ones(sizes, device=device)


class Box:
    def __init__(self, n, device="cuda"):
        self.data = torch.zeros(n, device=device)


def helper(x, device="cuda"):
    return x.to(device)


def relayed(x, device="cuda"):
    return x.to(device)


def entry(model, device="cuda"):
    return model.to(device)
'''

USES = '''from generators import Box, Generator, helper, relayed

generator = Generator()
generator.grid((2,), device="cpu")
generator.grid((2,), "mps")
generator.flags((2,))
generator.flags((2,), device="cpu")
box = Box(3, device="cpu")
helper(1, "cpu")


def relay(*args, **kwargs):
    return relayed(*args, **kwargs)
'''


def test_a_default_every_call_overrides_is_not_reported():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL108"}, project_files={"uses.py": USES})
    assert triples(found) == [("CDL108", 8, 35), ("CDL108", 21, 23), ("CDL108", 25, 25)]


def test_nor_where_the_default_reaches_a_device_argument():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL101"}, project_files={"uses.py": USES})
    assert triples(found) == [("CDL101", 8, 35), ("CDL101", 21, 23), ("CDL101", 25, 25)]


def test_without_the_callers_every_default_is_reported():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL108"}, project_files={"other.py": "x = 1\n"})
    assert [line for _, line, _ in triples(found)] == [5, 8, 13, 17, 21, 25]


def test_the_table_is_kept_in_the_index_cache_and_follows_a_changed_caller(tmp_path):
    from pathlib import Path

    from cudalint.config import Settings
    from cudalint.runner import project_index

    (tmp_path / "generators.py").write_text(GENERATORS, encoding="utf-8")
    (tmp_path / "uses.py").write_text(USES, encoding="utf-8")
    settings = Settings(select=frozenset({"CDL108"}), root=Path(tmp_path))
    cold = project_index(settings, cache=True).default_calls
    assert cold["grid"] == {"device": [2, 0, [], 2, 0]} and cold["flags"] == {"device": [2, 1, [], 1, 0]} and cold["Box"] == {"device": [1, 0, [], 1, 0]}
    assert project_index(settings, cache=True).default_calls == cold  # read back from the stored index
    (tmp_path / "uses.py").write_text(USES + "generator.grid((3,))\n", encoding="utf-8")
    assert project_index(settings, cache=True).default_calls["grid"] == {"device": [3, 1, [], 2, 0]}


def test_a_damaged_stored_table_is_not_trusted(tmp_path):
    import json
    from pathlib import Path

    from cudalint.config import Settings
    from cudalint.project import default_calls
    from cudalint.runner import project_index

    (tmp_path / "generators.py").write_text(GENERATORS, encoding="utf-8")
    (tmp_path / "uses.py").write_text(USES, encoding="utf-8")
    settings = Settings(select=frozenset({"CDL108"}), root=Path(tmp_path))
    expected = project_index(settings, cache=True).default_calls
    [stored] = (tmp_path / ".cudalint_cache").glob("project-index-*.data")
    entries = json.loads(stored.read_text(encoding="utf-8"))
    digest, modules = entries[default_calls.CACHE_KEY]
    for relative in modules:
        modules[relative][1] = {"grid": {"device": ["many", None]}}
    stored.write_text(json.dumps(entries), encoding="utf-8")
    assert project_index(settings, cache=True).default_calls == expected


def test_a_device_object_default_every_call_overrides_is_not_reported():
    """`torch.device("cuda")` as the default (CDL101 at the literal, CDL113 at a call that omits it)."""
    generators = '''import torch


class Cache:
    def __init__(self, n, device=torch.device("cuda")):
        self.data = torch.zeros(n, device=device)


def frames(path, compute_device=torch.device("cuda")):
    return torch.zeros(2, device=compute_device)


def loader(path, compute_device=torch.device("cuda")):
    return torch.zeros(2, device=compute_device)
'''
    uses = '''from generators import Cache, frames, loader

cache = Cache(3, device="cpu")
first = frames("a", compute_device="cpu")
second = loader("b")
'''
    found = findings_of(generators, path="generators.py", select={"CDL101", "CDL108"}, project_files={"uses.py": uses})
    assert triples(found) == [("CDL101", 13, 46)]
    callers = findings_of(uses, path="uses.py", select={"CDL113"}, project_files={"generators.py": generators})
    assert triples(callers) == [("CDL113", 5, 10)]


CONFIGS = '''import torch


class Config:
    def measure(self, model, compute_device="cuda"):
        return [m.weight.to(device=compute_device) for m in model.modules()]

    def place(self, model, device="cuda"):
        return model.to(device)


class Mixed:
    def measure(self, model, compute_device="cuda"):
        return [config.measure(model, compute_device=compute_device) for config in self.configs]

    def place(self, model, device="cuda", spare="cpu"):
        return [config.place(model, spare) for config in self.configs]
'''


def test_a_wrapper_handing_on_its_own_cuda_default_does_not_override_it():
    # Mixed.measure passes Config.measure its own "cuda" default: the default still runs, in both.
    # Mixed.place passes another parameter, whose default is not CUDA: Config.place's default is
    # overridden by every call there is (Mixed.place's own "cuda" reaches nothing: no finding either).
    found = findings_of(CONFIGS, path="configs.py", select={"CDL108"}, project_files={"other.py": "x = 1\n"})
    assert triples(found) == [("CDL108", 5, 45), ("CDL108", 13, 45)]


LOADERS = '''import torch


def load_model(name, device="cuda" if torch.cuda.is_available() else "cpu"):
    return torch.jit.load(name, map_location=device)


def load_other(name, device="cuda" if torch.cuda.is_available() else "cpu"):
    return torch.jit.load(name, map_location=device)
'''

FACTORY = '''from loaders import load_model, load_other


def create(name, device):
    load_other(name)
    return load_model(name, device=device)
'''


def test_a_device_chosen_in_a_default_that_every_call_overrides_is_not_reported():
    found = findings_of(LOADERS, path="loaders.py", select={"CDL104"}, project_files={"factory.py": FACTORY})
    assert triples(found) == [("CDL104", 8, 29)]


PIPELINES = '''import torch


def load_pipeline(checkpoint, device="cuda"):
    return torch.load(checkpoint, map_location=device)


def run_txt2img(prompt, device="cuda"):
    return load_pipeline("ckpt", device=device)


def run_img2img(prompt, device="cuda"):
    return load_pipeline("ckpt", device=device)
'''

PAGES = '''from pipelines import run_img2img, run_txt2img


def page(device):
    run_txt2img("a cat", device=device)
    run_img2img("a dog", device=device)
'''


def test_a_default_handed_on_by_wrappers_whose_callers_all_pass_theirs_is_not_reported():
    found = findings_of(PIPELINES, path="pipelines.py", select={"CDL108"}, project_files={"pages.py": PAGES})
    assert triples(found) == []
    # one wrapper whose own default runs: the default it hands on runs too
    pages = PAGES.replace('run_img2img("a dog", device=device)', 'run_img2img("a dog")')
    found = findings_of(PIPELINES, path="pipelines.py", select={"CDL108"}, project_files={"pages.py": pages})
    assert triples(found) == [("CDL108", 4, 38), ("CDL108", 12, 32)]


STAGES = '''import torch


def run(ops, device=torch.device("cuda")):
    return torch.zeros(ops, device=device)


def step(x, device=torch.device("cuda")):
    return x.to(device)
'''

PIPELINE = '''import subprocess
from os import system as step

import stages
import torch


def run(ops, device=torch.device("cuda")):
    subprocess.run(["nvidia-smi"])
    step("true")
    stages.step(ops, device=device)
    return stages.run(ops, device=device)


def main(device):
    return run(4, device=device)
'''


def test_calls_of_another_library_s_function_of_the_same_name_are_not_the_project_s():
    # subprocess.run and os.system (imported as `step`) leave `device` out, but they are not the project's
    # `run` and `step`; the pipeline's `run` hands its default to `stages.run`, which is called `run` too: the
    # chain ends at `main`, which passes a device of its caller's choosing. No default here is ever used.
    found = findings_of(STAGES, path="stages.py", select={"CDL101"}, project_files={"pipeline.py": PIPELINE})
    assert triples(found) == []
    alone = findings_of(STAGES, path="stages.py", select={"CDL101"})
    assert triples(alone) == [("CDL101", 4, 34), ("CDL101", 8, 33)]


def test_a_function_that_only_hands_its_default_to_itself_keeps_its_finding():
    recursive = '''import torch


def walk(tree, device=torch.device("cuda")):
    for child in tree:
        walk(child, device=device)
    return torch.zeros(1, device=device)
'''
    assert triples(findings_of(recursive, path="walk.py", select={"CDL101"})) == [("CDL101", 4, 36)]


def test_a_function_of_a_public_module_of_the_package_is_public_api_whatever_the_project_passes():
    utils = '''import torch


def load(name, device="cuda" if torch.cuda.is_available() else "cpu"):
    return torch.zeros(1).to(device)


def helper(x, device=torch.device("cuda")):
    return x.to(device)
'''
    train = '''from pkg.utils import helper, load

model = load("base", device="cpu")
helper(model, device="cpu")
'''
    for init in ("from .utils import load\n", "from .utils import *\n", "from pkg.utils import load as load_model\n"):
        found = findings_of(utils, path="pkg/utils.py", select={"CDL101", "CDL104"},
                            project_files={"pkg/__init__.py": init, "pkg/train.py": train})
        # load and helper: the package's API (a public module of the package), which users call without a device
        assert triples(found) == [("CDL104", 4, 23), ("CDL101", 8, 35)], init
    # a private module's helper is the package's own: only the project calls it
    found = findings_of(utils, path="pkg/_utils.py", select={"CDL101", "CDL104"},
                        project_files={"pkg/__init__.py": "", "pkg/train.py": train.replace("pkg.utils", "pkg._utils")})
    assert triples(found) == []


def test_a_call_in_the_same_file_taking_a_device_object_default_is_reported():
    source = '''import torch


def background(n, device=torch.device("cuda")):
    return torch.zeros(n, device=device)


def simulate(n, device):
    first = background(n)
    return first, background(n, device=device)
'''
    found = findings_of(source, path="simulation.py", select={"CDL113"})
    assert triples(found) == [("CDL113", 9, 13)]
    assert found[0].message == 'background() takes its device=torch.device("cuda") default: pass the selected device'


def test_a_subpackage_gathering_names_for_its_package_is_no_public_api():
    helper = '''import torch


def load(name, device=torch.device("cuda")):
    return torch.zeros(1).to(device)
'''
    found = findings_of(helper, path="pkg/models/_utils.py", select={"CDL101"}, project_files={
        "pkg/__init__.py": "from pkg.app import run\n", "pkg/models/__init__.py": "from ._utils import load\n",
        "pkg/app.py": "from pkg.models import load\n\n\ndef run(device):\n    return load('x', device=device)\n"})
    assert triples(found) == []
    # the same function in a public module of the package is API its users import from there
    found = findings_of(helper, path="pkg/models/utils.py", select={"CDL101"}, project_files={
        "pkg/__init__.py": "from pkg.app import run\n", "pkg/models/__init__.py": "from .utils import load\n",
        "pkg/app.py": "from pkg.models import load\n\n\ndef run(device):\n    return load('x', device=device)\n"})
    assert triples(found) == [("CDL101", 4, 36)]


def test_a_default_checked_by_a_helper_that_picks_a_mac_s_device_is_not_reported():
    source = '''import warnings

import torch


def _validate_get_device(device):
    if device == "cuda" and torch.cuda.device_count() == 0:
        device = "mps" if torch.backends.mps.is_available() else "cpu"
        warnings.warn(f"using {device}")
    return device


def _only_cuda(device):
    return device if torch.cuda.is_available() else "cpu"


class Model:
    def fit(self, data, device="cuda"):
        device = _validate_get_device(device)
        return self._train(data, device=device)

    def _train(self, data, device="cuda"):
        return torch.zeros(1).to(device)

    def sample(self, n, device="cuda"):
        print(device)
        device = _validate_get_device(device)
        return n

    def predict(self, x, device="cuda"):
        device = _only_cuda(device)
        return x
'''
    found = findings_of(source, path="pkg/model.py", select={"CDL108"}, project_files={"pkg/__init__.py": ""})
    # fit checks its default first; _train is only called with fit's checked device; sample reads the default
    # before checking it; predict's helper never picks a Mac's device
    assert triples(found) == [("CDL108", 25, 32), ("CDL108", 30, 33)]


MIXUP = '''import torch


def one_hot(x, num_classes, device="cuda"):
    return torch.zeros(len(x), num_classes, device=device)


def mixup_target(target, num_classes):
    return one_hot(target, num_classes, device=target.device)
'''

NAMESAKES = '''import torch
import torch.nn.functional


def one_hot(tensor, num_classes):
    return torch.nn.functional.one_hot(tensor, num_classes)


def gate(indices, n):
    return one_hot(indices, num_classes=n) + torch.nn.functional.one_hot(indices, num_classes=n)
'''


def test_calls_of_a_namesake_are_not_calls_of_the_function():
    # vissl: fairscale's own `def one_hot(tensor, num_classes)` and torch's one_hot are called without a
    # device; neither is the one whose default is "cuda", which its only caller passes a device
    found = findings_of(MIXUP, path="mixup.py", select={"CDL108"}, project_files={"gate.py": NAMESAKES})
    assert triples(found) == []
    # a call of the function itself that leaves the device out keeps the finding
    uses = "from mixup import one_hot\n\none_hot([1], 2)\n"
    found = findings_of(MIXUP, path="mixup.py", select={"CDL108"}, project_files={"gate.py": NAMESAKES, "uses.py": uses})
    assert triples(found) == [("CDL108", 4, 36)]
