"""CDL117: `assert torch.cuda.is_available()` at the top level of a module that is not a test suite's
turns every importer away on a Mac, and guards nothing below it, in the file's walk and in the project
index alike: the code after it is reported as anywhere else. In a test suite's module the same assert
says its tests are CUDA tests (nothing reported, nothing after it); inside a function it is that
function's requirement (CDL112, off by default) and the rest of the function runs only with CUDA."""

import textwrap

from conftest import findings_of, triples
from cudalint.catalog import load_catalog

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

MODULE = '''
import torch

assert torch.cuda.is_available(), "You need an NVIDIA GPU with CUDA installed."


def noise(n, device):
    return torch.randn(n).cuda(device)


def checked(x):
    assert torch.cuda.is_available()
    return x.cuda()


def image_noise(n, device):
    return torch.rand(n).cuda(device)


def sample(n):
    return image_noise(n, 0)
'''

TRAINER = '''
from pkg.model import noise, sample


def train(n):
    return noise(n, 0), sample(n)
'''


def lint(path, selected=frozenset({"CDL102", "CDL112", "CDL117"})):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/model.py": MODULE, "pkg/train.py": TRAINER,
             "tests/test_model.py": MODULE}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    text = files.pop(path)
    return triples(findings_of(text, path=path, project_files=files, select=selected))


def test_a_module_level_assert_is_reported_and_guards_nothing_below():
    # 3: the assert; 7: `.cuda()` in a function the project calls; 11: a function's own requirement
    # (CDL112); 12: after it, that function runs only with CUDA; 16: a helper the module itself calls
    # below the assert, which the project index does not take for a guarded call either
    assert lint("pkg/model.py") == [("CDL117", 3, 1), ("CDL102", 7, 27), ("CDL112", 11, 5), ("CDL102", 16, 26)]


def test_in_a_test_suite_the_assert_marks_cuda_tests():
    # the assert itself is CDL112's there, off by default
    assert lint("tests/test_model.py") == [("CDL112", 3, 1)]


def test_cdl117_is_on_by_default_and_cdl112_is_not():
    default = {rule.code for rule in load_catalog() if rule.default}
    assert "CDL117" in default and "CDL112" not in default


def test_either_code_selected_alone():
    assert lint("pkg/model.py", frozenset({"CDL117"})) == [("CDL117", 3, 1)]
    assert lint("pkg/model.py", frozenset({"CDL112"})) == [("CDL112", 11, 5)]
