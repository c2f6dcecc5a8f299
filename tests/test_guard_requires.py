"""A call of a function of the same file that raises unless the host has CUDA guards the rest of
its block: `installed_cuda_version()` raising when CUDA_HOME is None, `require_cuda()` asserting
torch.cuda.is_available(). A function that can return first proves nothing."""

import textwrap

from conftest import findings_of, triples

SOURCE = """
import torch
import torch.utils.cpp_extension


def installed_cuda_version():
    import torch.utils.cpp_extension

    cuda_home = torch.utils.cpp_extension.CUDA_HOME
    if cuda_home is None:
        raise RuntimeError("no CUDA_HOME")
    return 12, 1


def require_cuda():
    assert torch.cuda.is_available(), "CUDA"


def require_both():
    installed_cuda_version()


def maybe(flag):
    if flag:
        return None
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA")


def warns():
    if not torch.cuda.is_available():
        print("no CUDA")


def versions():
    major, minor = installed_cuda_version()
    return torch.version.cuda.split(".")


def synchronize():
    require_cuda()
    torch.cuda.synchronize()


def chained():
    require_both()
    torch.cuda.synchronize()


def after_a_return_path():
    maybe(True)
    torch.cuda.synchronize()


def after_a_warning():
    warns()
    torch.cuda.synchronize()


def before_the_call():
    torch.cuda.synchronize()
    require_cuda()
"""


def lint(source):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL201", "CDL216"}))


def test_code_after_a_call_that_raises_off_cuda_runs_only_off_a_mac():
    # versions, synchronize and chained are silent; a helper that may return first, one that only
    # warns, and code before the call keep their findings.
    assert lint(SOURCE) == [("CDL201", 51, 5), ("CDL201", 56, 5), ("CDL201", 60, 5)]


def test_without_the_raise_the_version_read_and_the_chained_call_are_reported():
    source = SOURCE.replace('        raise RuntimeError("no CUDA_HOME")', '        print("no CUDA_HOME")')
    assert lint(source) == [
        ("CDL216", 36, 12), ("CDL201", 46, 5), ("CDL201", 51, 5), ("CDL201", 56, 5), ("CDL201", 60, 5),
    ]


def test_a_name_bound_to_something_else_is_not_the_function():
    source = SOURCE + "\n\nrequire_cuda = print\n"
    assert lint(source) == [("CDL201", 41, 5), ("CDL201", 51, 5), ("CDL201", 56, 5), ("CDL201", 60, 5)]


CHECKS = """
import torch


def require_cuda(name):
    if not torch.cuda.is_available():
        raise RuntimeError(f"{name} needs CUDA")


def require_through(name):
    require_cuda(name)


def report(name):
    if not torch.cuda.is_available():
        return f"{name} runs on CPU"
    raise RuntimeError("unreachable")
"""

CALLER = """
import torch

import pkg.checks
from pkg.checks import report, require_cuda, require_through


def fused():
    require_cuda("fused")
    torch.cuda.synchronize()


def through():
    require_through("through")
    torch.cuda.synchronize()


def qualified():
    pkg.checks.require_cuda("qualified")
    torch.cuda.synchronize()


def reported():
    report("reported")
    torch.cuda.synchronize()
"""


def test_a_helper_of_another_module_that_raises_off_cuda_guards_the_rest_of_the_block():
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/checks.py": CHECKS}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    found = findings_of(textwrap.dedent(CALLER).lstrip("\n"), select={"CDL201"}, project_files=files, path="pkg/ops.py")
    # report() returns on a Mac before its raise: the call proves nothing.
    assert triples(found) == [("CDL201", 24, 5)]


def test_a_check_on_the_arguments_is_not_a_check_on_the_host():
    # double_quant(x) asserts its argument is on CUDA: what the caller passed, not what the host is, so the
    # caller's later CUDA calls keep their findings (its own "cuda" tensor is reported where it is made).
    source = """
    import torch


    def double_quant(x):
        device = x.device
        assert device.type == "cuda"
        return x


    def require_cuda_tensor(x):
        if not x.is_cuda:
            raise ValueError("CUDA tensor expected")


    def test_quant(x):
        double_quant(x)
        torch.cuda.synchronize()
        require_cuda_tensor(x)
        torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL201", 17, 5), ("CDL201", 19, 5)]
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "",
             "pkg/functional.py": textwrap.dedent(source).split("\n\ndef test_quant")[0]}
    caller = "import torch\n\nfrom pkg import functional as F\n\n\ndef test_quant(x):\n    F.double_quant(x)\n    torch.cuda.synchronize()\n"
    found = findings_of(caller, select={"CDL201"}, project_files=files, path="tests/test_f.py")
    assert triples(found) == [("CDL201", 8, 5)]
