"""A flag a base class of another module binds on `self` to a CUDA guard guards its subclasses' methods:
torchreid's `Engine.__init__` sets `self.use_gpu = torch.cuda.is_available() and use_gpu`, and every
engine of other modules moves its batches under `if self.use_gpu:`, which never runs on a Mac (the
project index's class facts, FileFacts.classes "guards"). A class between them, or a subclass, that
binds the flag itself, or a base binding it to a parameter, keeps the move reported."""

from conftest import lint_tree

BASE = '''import torch


class Engine:
    def __init__(self, use_gpu=True):
        self.use_gpu = torch.cuda.is_available() and use_gpu
        self.verbose = use_gpu


class Plain:
    def __init__(self, use_gpu=True):
        self.use_gpu = use_gpu
'''

ENGINES = '''from pkg.base import Engine, Plain


class Softmax(Engine):
    def run(self, x):
        if self.use_gpu:
            x = x.cuda()
        return x

    def talk(self, x):
        if self.verbose:
            x = x.cuda()
        return x


class Rebinds(Engine):
    use_gpu = True

    def run(self, x):
        if self.use_gpu:
            x = x.cuda()
        return x


class Unguarded(Plain):
    def run(self, x):
        if self.use_gpu:
            x = x.cuda()
        return x
'''

DEEPER = '''from pkg.engines import Softmax


class Triplet(Softmax):
    def run(self, x):
        if self.use_gpu:
            return x.cuda()
        return x
'''


def test_a_guard_flag_of_a_base_in_another_module_guards_the_subclass(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/engines.py": ENGINES, "pkg/deeper.py": DEEPER}
    assert lint_tree(tmp_path, monkeypatch, files) == [
        ("pkg/engines.py", "CDL102", 12, 19),  # self.verbose: bound to a parameter
        ("pkg/engines.py", "CDL102", 21, 19),  # Rebinds binds use_gpu in its body
        ("pkg/engines.py", "CDL102", 28, 19),  # Plain binds it to a parameter
    ]


def test_a_setup_py_inside_a_package_does_not_rename_its_modules(tmp_path, monkeypatch):
    """torchreid ships `torchreid/setup.py` (an extension build) beside `torchreid/__init__.py`: its
    modules are still `torchreid.*`, so `from torchreid.base import Engine` finds the base's facts."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='torchreid')\n",
        "torchreid/__init__.py": "",
        "torchreid/setup.py": "from setuptools import setup\nsetup(name='ext')\n",
        "torchreid/base.py": BASE,
        "torchreid/engines.py": ENGINES.replace("from pkg.base", "from torchreid.base"),
    }
    assert lint_tree(tmp_path, monkeypatch, files) == [
        ("torchreid/engines.py", "CDL102", 12, 19),
        ("torchreid/engines.py", "CDL102", 21, 19),
        ("torchreid/engines.py", "CDL102", 28, 19),
    ]
