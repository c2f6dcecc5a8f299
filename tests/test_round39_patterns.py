"""Patterns from blind round 39 (bench/EVAL.md, session 33): a command-line switch the program checks
against CUDA in one module and relies on in others; a test parameter whose CUDA case pytest skips without
CUDA; an extension build whose other arm is the CppExtension fallback; seeding helpers of other libraries
that call torch.manual_seed."""

import textwrap

from conftest import findings_of, lint_tree, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


CLI = """
import argparse

import torch


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuda", dest="use_cuda", action="store_true")
    args = parser.parse_args()
    if args.use_cuda:
        assert torch.cuda.is_available(), "Trying to use CUDA, but CUDA is not available."
    else:
        print("running on the CPU")
    return args
"""

MODEL = """
import torch


class Model(torch.nn.Module):
    def __init__(self, use_cuda: bool):
        super().__init__()
        self.use_cuda = use_cuda
        if use_cuda:
            self.cuda()
            self.device = "cuda"
        else:
            self.device = "cpu"


def usage(use_cuda):
    if use_cuda:
        return torch.cuda.memory_allocated()
    return 0


def forced(use_cuda=True):
    if use_cuda:
        torch.cuda.synchronize()
"""

RUN = """
import torch

from pkg.cli import parse
from pkg.model import Model


def main():
    args = parse()
    model = Model(use_cuda=args.use_cuda)
    if args.use_cuda:
        torch.cuda.synchronize()
    return model
"""


def package(cli):
    return {"pkg/__init__.py": "", "pkg/cli.py": cli.lstrip("\n"), "pkg/model.py": MODEL.lstrip("\n"), "pkg/run.py": RUN.lstrip("\n")}


def test_a_switch_checked_in_another_module(tmp_path, monkeypatch):
    # the CLI asserts CUDA where --cuda is given: the switch and the parameters it is handed to by that
    # name are on only off a Mac; a default that turns the switch on by itself is still reported
    found = lint_tree(tmp_path, monkeypatch, package(CLI))
    assert found == [("pkg/model.py", "CDL201", 23, 9)]


def test_the_same_switch_unchecked(tmp_path, monkeypatch):
    unchecked = CLI.replace('    if args.use_cuda:\n        assert torch.cuda.is_available(), "Trying to use CUDA, but CUDA is not available."\n    else:\n        print("running on the CPU")\n', "")
    found = lint_tree(tmp_path, monkeypatch, package(unchecked))
    assert ("pkg/model.py", "CDL102", 9, 18) in found
    assert ("pkg/run.py", "CDL201", 11, 9) in found


def test_a_switch_checked_with_an_exit(tmp_path, monkeypatch):
    script = """
    import sys

    import torch


    def main(args):
        if args.gpu and not torch.cuda.is_available():
            sys.exit("--gpu needs CUDA")
        if args.gpu:
            torch.cuda.synchronize()
    """
    found = lint_tree(tmp_path, monkeypatch, {"train.py": textwrap.dedent(script).lstrip("\n")})
    assert found == []


def test_a_check_that_only_returns_is_no_check(tmp_path, monkeypatch):
    # returning leaves the function, not the program: the switch stays on elsewhere
    helper = """
    import torch


    def check(args):
        if args.gpu and not torch.cuda.is_available():
            return False
        return True
    """
    use = """
    import torch


    def run(args):
        if args.gpu:
            torch.cuda.synchronize()
    """
    found = lint_tree(tmp_path, monkeypatch, {"check.py": textwrap.dedent(helper).lstrip("\n"),
                                              "use.py": textwrap.dedent(use).lstrip("\n")})
    assert found == [("use.py", "CDL201", 6, 9)]


PARAMETRIZED = """
import pytest
import torch

USE_CUDA = torch.cuda.is_available()


@pytest.mark.parametrize("alpha", [0, 1])
@pytest.mark.parametrize(
    "cuda",
    [False, pytest.param(True, marks=pytest.mark.skipif(not USE_CUDA, reason="requires CUDA"))],
    ids=lambda b: "cuda" if b else "cpu",
)
def test_regularize(alpha, cuda):
    x = torch.zeros(3, device="cuda" if cuda else "cpu")
    if cuda:
        torch.cuda.synchronize()


@pytest.mark.parametrize("cuda", [False, True])
def test_both(cuda):
    x = torch.zeros(3, device="cuda" if cuda else "cpu")
"""


def test_a_parametrized_switch_whose_cuda_case_is_skipped():
    # the True case runs only where CUDA is; an unmarked True runs on a Mac too
    assert lint(PARAMETRIZED, path="tests/test_posterior.py") == [("CDL101", 21, 31)]


SETUP = """
import os

from torch.utils.cpp_extension import CppExtension, CUDAExtension

suffices = ["cpu", "cuda"] if os.getenv("FORCE_CUDA") == "1" else ["cpu"]
extensions = []
for suffix in suffices:
    Extension = CppExtension if suffix == "cpu" else CUDAExtension
    extensions.append(Extension(f"pkg._ops_{suffix}", ["ops.cpp"]))

if os.path.exists("/usr/local/cuda"):
    ext = CUDAExtension("b", ["b.cpp", "b.cu"])
elif os.path.exists("/opt/rocm"):
    ext = None
else:
    ext = CppExtension("b", ["b.cpp"])

if os.path.exists("/usr/local/cuda"):
    ext = CppExtension("c", ["c.cpp"])
else:
    ext = CUDAExtension("c", ["c.cpp", "c.cu"])

ext = CUDAExtension("d", ["d.cu"]) if os.path.exists("/usr/local/cuda") else None
"""


def test_an_extension_choice_with_the_cpp_fallback():
    # either arm of a choice whose other arm builds the CppExtension: the fallback exists
    assert lint(SETUP, path="setup.py", select={"CDL401"}) == [("CDL401", 23, 7)]


SEEDED = """
import pyro
import torch
from lightning.pytorch import seed_everything


def run(args):
    pyro.set_rng_seed(0)
    if args.use_gpu:
        torch.cuda.manual_seed_all(0)


def fit(args):
    seed_everything(1)
    torch.cuda.manual_seed(1)


def other(args):
    torch.cuda.manual_seed(2)
"""


def test_library_seeding_helpers_seed_every_device():
    # pyro.set_rng_seed and Lightning's seed_everything call torch.manual_seed
    assert lint(SEEDED, select={"CDL203"}) == [("CDL203", 18, 5)]


def test_requirements_of_the_documentation_build():
    # installed where the docs are built, imported to read docstrings: nothing runs on a device
    for path in ("requirements/readthedocs.txt", "docs/requirements.txt", "requirements-docs.txt", "requirements/rtd.txt"):
        assert findings_of("mmcv>=2.0\n", path=path, kind="requirements", select={"CDL504"}) == [], path
    found = findings_of("mmcv>=2.0\n", path="requirements/runtime.txt", kind="requirements", select={"CDL504"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL504", 1, 1)]


def test_a_docs_extra(tmp_path, monkeypatch):
    pyproject = '[project]\nname = "pkg"\ndependencies = ["mmcv>=2.0"]\n\n[project.optional-dependencies]\ndocs = ["mmcv>=2.0", "sphinx"]\n'
    assert lint_tree(tmp_path, monkeypatch, {"pyproject.toml": pyproject}) == [("pyproject.toml", "CDL504", 3, 17)]


def test_a_call_that_turns_the_switch_on_itself(tmp_path, monkeypatch):
    # `Model(use_cuda=True)` somewhere in the project: the switch is not only what the CLI checked
    files = {**package(CLI), "pkg/demo.py": "from pkg.model import Model\n\nModel(use_cuda=True)\n"}
    found = lint_tree(tmp_path, monkeypatch, files)
    assert ("pkg/model.py", "CDL102", 9, 18) in found
    assert ("pkg/run.py", "CDL201", 11, 9) in found


def test_a_test_that_turns_the_switch_on(tmp_path, monkeypatch):
    # a test's `argparse.Namespace(use_cuda=True)` tests the CUDA mode; the program's callers are the CLI's
    files = {**package(CLI), "tests/test_run.py": "import argparse\n\nARGS = argparse.Namespace(use_cuda=True)\n"}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/model.py", "CDL201", 23, 9)]
