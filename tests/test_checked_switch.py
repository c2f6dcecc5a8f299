"""A switch the code checks against CUDA before it relies on it is a CUDA guard past the check: `if
use_cuda: assert torch.cuda.is_available()` (in the function binding the name, or in `__init__` for
`self.use_cuda`, also through `self.use_cuda = use_cuda`) and `if args.cuda and not
torch.cuda.is_available(): raise ...` in the function that reads it. On a Mac the program stops at the
check (and wherever the project reads a switch of that name, when no call of it passes True itself:
tests/test_round39_patterns.py). An unchecked switch guards nothing; a method's parameter whose callers the file does not show
(call_sites reads tests' and nested functions' callers only) stays unknown."""

from conftest import findings_of, triples

SOURCE = '''import torch


class Synthesizer:
    def __init__(self, path, use_cuda=False):
        self.use_cuda = use_cuda
        if self.use_cuda:
            assert torch.cuda.is_available(), "CUDA is not available on this machine."
        self._load(path, use_cuda=use_cuda)

    def _load(self, path, *, use_cuda):
        model = torch.load(path, map_location="cpu")
        if use_cuda:
            model.cuda()
        return model

    def tts(self, x):
        if self.use_cuda:
            x = x.cuda()
        return x


def main(args, model):
    if args.cuda and not torch.cuda.is_available():
        raise ValueError("--cuda given but CUDA is not available")
    if args.cuda:
        model.cuda()


def unchecked(args, model):
    if args.gpu:
        model.cuda()
'''


def test_a_switch_checked_against_cuda_guards_what_it_switches():
    assert triples(findings_of(SOURCE, select={"CDL102"})) == [("CDL102", 14, 19), ("CDL102", 32, 15)]


def test_a_private_methods_parameter_takes_what_its_class_passes():
    # In a project whose index finds `_load` read nowhere but as `self._load(...)` in its class, the
    # method's callers are all in sight: `use_cuda` there is __init__'s checked switch.
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": ""}
    found = findings_of(SOURCE, path="pkg/synth.py", select={"CDL102"}, project_files=files)
    assert triples(found) == [("CDL102", 32, 15)]
    elsewhere = {**files, "pkg/other.py": "from pkg.synth import Synthesizer\n\nSynthesizer(None)._load('x', use_cuda=True)\n"}
    found = findings_of(SOURCE, path="pkg/synth.py", select={"CDL102"}, project_files=elsewhere)
    assert triples(found) == [("CDL102", 14, 19), ("CDL102", 32, 15)]


def test_a_module_the_index_could_not_read_may_call_the_private_method():
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "",
             "pkg/broken.py": "def f(:\n    Synthesizer(None)._load('x', use_cuda=True)\n"}
    found = findings_of(SOURCE, path="pkg/synth.py", select={"CDL102"}, project_files=files)
    assert triples(found) == [("CDL102", 14, 19), ("CDL102", 32, 15)]
