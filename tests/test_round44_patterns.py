"""Patterns from blind round 44 (bench/EVAL.md, session 34): `is_cuda` compared with another tensor's
(CDL103), a test that only picks the error's message, a CUDA build switch forced on by an environment
variable, CUDAExtension beside its CppExtension in a table or a rebinding (CDL401), and nvidia-smi started
where no Mac has it (the new CDL220)."""

import textwrap

from conftest import findings_of, triples


def found(text, select, path="example.py"):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select=select, path=path))


IS_CUDA = """
import torch


def check(features, coordinates):
    assert features.is_cuda == coordinates.is_cuda, "features and coordinates on different devices"
    if features.is_cuda != coordinates.is_cuda:
        raise ValueError("mixed devices")
    assert features.is_cuda == True


def backend_function(backend, name, variable):
    if hasattr(backend, name):
        return getattr(backend, name)
    else:
        if variable.is_cuda:
            raise ValueError(f"{name} not available: compile with CUDA")
        else:
            raise ValueError(f"{name} not available")


def demand(variable):
    if variable.is_cuda:
        return variable
    else:
        raise NotImplementedError
"""


def test_is_cuda_beside_another_tensors_and_a_test_that_only_picks_a_message():
    # the comparison with a constant and the demand whose other way works stay reported
    assert found(IS_CUDA, {"CDL103"}) == [("CDL103", 8, 12), ("CDL103", 22, 8)]


FORCED = """
import os
import sys

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension

WITH_CUDA = torch.cuda.is_available() and CUDA_HOME is not None
if os.getenv("FORCE_CUDA", "0") == "1":
    WITH_CUDA = True
if os.getenv("FORCE_ONLY_CPU", "0") == "1":
    WITH_CUDA = False
ALWAYS = torch.cuda.is_available()
if len(sys.argv) > 2:
    ALWAYS = True


def extensions():
    modules = [CppExtension("p.cpu", ["p.cpp"])]
    if WITH_CUDA:
        modules.append(CUDAExtension("p.cuda", ["p.cu"]))
    if ALWAYS:
        modules.append(CUDAExtension("p.other", ["p.cu"]))
    return modules


setup(name="p", ext_modules=extensions())
"""


def test_a_build_switch_an_environment_variable_forces_on_is_still_a_cuda_test():
    # a switch turned on by anything else than a variable the user sets says nothing of CUDA
    assert found(FORCED, {"CDL401"}, path="setup.py") == [("CDL401", 23, 24)]


TABLE = """
from setuptools import setup
from torch.utils.cpp_extension import CppExtension, CUDAExtension

CPU_ONLY = True
Extension = CUDAExtension
if CPU_ONLY:
    Extension = CppExtension

SOURCE_SETS = {
    "cpu": [CppExtension, ["a.cpp"]],
    "gpu": [CUDAExtension, ["a.cu"]],
}
ONLY_CUDA = {"gpu": [CUDAExtension, ["a.cu"]], "docs": ["index.md"]}
Other = CUDAExtension

setup(name="p", ext_modules=[Extension("p._C", ["a.cpp"]), Other("p._D", ["b.cu"])])
"""


def test_a_cuda_extension_beside_its_cpp_alternative_in_a_table_or_a_rebinding():
    assert found(TABLE, {"CDL401"}, path="setup.py") == [("CDL401", 13, 22), ("CDL401", 14, 9)]


PROGRAMS = """
import shutil
import subprocess


def gpu_names():
    out = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    return out.decode().splitlines()


def diagnostics():
    sp = subprocess.Popen(["nvidia-smi", "-q"], stdout=subprocess.PIPE)
    return sp.communicate()[0]


def checked():
    if shutil.which("nvidia-smi") is None:
        return []
    return subprocess.check_output(["nvidia-smi", "-L"]).splitlines()


def counted():
    try:
        return len(subprocess.check_output(["nvidia-smi", "-L"]).splitlines())
    except (FileNotFoundError, subprocess.CalledProcessError):
        return 0


def through_a_shell():
    subprocess.run("nvidia-smi -L", shell=True)
    return subprocess.check_output("nvidia-smi -L", shell=True)


def logged():
    return subprocess.run(["ls", "-l"])


def imported_by_name():
    from subprocess import check_output

    try:
        return len(check_output(["nvidia-smi", "-L"]).splitlines())
    except FileNotFoundError:
        return 0
    finally:
        check_output(["nvidia-smi", "-q"])
"""


def test_nvidia_smi_started_where_a_mac_has_none():
    # a shell that cannot find the program only exits 127: run() does not raise, check_output() does
    assert found(PROGRAMS, {"CDL220"}) == [("CDL220", 6, 11), ("CDL220", 11, 10), ("CDL220", 30, 12), ("CDL220", 45, 9)]


def test_a_helper_that_looks_for_nvidia_smi_guards_its_caller():
    helper = "import shutil\n\n\ndef has_nvidia():\n    return shutil.which('nvidia-smi') is not None\n"
    caller = "import torch\nfrom pkg.probe import has_nvidia\n\n\ndef place(x):\n    if has_nvidia():\n        return x.cuda()\n    return x\n"
    project = {"pkg/__init__.py": "", "pkg/probe.py": helper}
    assert findings_of(caller, path="pkg/use.py", select={"CDL102"}, project_files=project) == []


ANCHORS = """
import argparse

import torch


class Optimizer:
    def __init__(self, anchors, device="cuda:0"):
        self.anchors = torch.tensor(anchors, device=device)


def helper(x, device="cuda"):
    return x.to(device)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    Optimizer([1, 2], device=args.device)
    Optimizer([3, 4], args.device)
    return helper(torch.ones(2))


if __name__ == "__main__":
    main()
"""


def test_a_cuda_default_every_call_of_the_project_overrides():
    # the class is always built with the command line's device; the helper is called without one
    found_here = triples(findings_of(textwrap.dedent(ANCHORS).lstrip("\n"), path="tools/optimize.py", select={"CDL108"},
                                     project_files={"tools/__init__.py": ""}))
    assert found_here == [("CDL108", 11, 22)]



PROBE = """
import os

import torch


def use_gpu():
    wanted = os.environ.get("USE_GPU", "1") == "1"
    wanted = wanted and torch.cuda.is_available()
    return wanted


def branched(flag):
    wanted = torch.cuda.is_available()
    if flag:
        wanted = os.environ.get("USE_GPU") == "1"
    return wanted
"""

PLACES = """
from pkg.probe import branched, use_gpu


def place(model):
    if use_gpu():
        model = model.cuda()
    if branched(True):
        model = model.cuda()
    return model
"""


def test_a_helper_of_another_module_that_binds_its_answer_in_two_steps():
    # straight-line code: the last binding before the return is the answer; a binding in a branch is not that
    project = {"pkg/__init__.py": "", "pkg/probe.py": textwrap.dedent(PROBE).lstrip("\n")}
    found_here = triples(findings_of(textwrap.dedent(PLACES).lstrip("\n"), path="pkg/use.py", select={"CDL102"},
                                     project_files=project))
    assert found_here == [("CDL102", 8, 23)]
