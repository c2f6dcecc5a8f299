"""Reachability of what no import statement shows: a string that names a module (for importlib)
loads it from where the string is written, so a module named only inside a class the project
uses only off a Mac is itself used only off a Mac."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

CHOOSER = """
import os


def get_accelerator():
    name = os.environ.get("ACCELERATOR", "cpu")
    if name == "hpu":
        from pkg.hpu_accelerator import HpuAccelerator

        return HpuAccelerator()
    return None
"""

ACCELERATOR = """
import importlib


class HpuAccelerator:
    def op_builder_dir(self):
        return "pkg.ops.hpu"

    def builder(self, name):
        return getattr(importlib.import_module(self.op_builder_dir()), name)
"""

FUSED = """
import torch


def step(x, device):
    return x.to(device, non_blocking=True)
"""


def lint(files, path="pkg/ops/hpu/fused.py"):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/ops/__init__.py": "", **files}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    text = files.pop(path)
    return triples(findings_of(text, path=path, project_files=files, select={"CDL304"}))


HPU_PACKAGE = {"pkg/ops/hpu/__init__.py": "from .fused import step\n", "pkg/ops/hpu/fused.py": FUSED}


def test_a_module_named_only_inside_an_off_mac_class_is_used_only_off_a_mac():
    assert lint({"pkg/chooser.py": CHOOSER, "pkg/hpu_accelerator.py": ACCELERATOR, **HPU_PACKAGE}) == []


def test_the_same_string_where_a_mac_may_run_it_keeps_the_finding():
    chooser = CHOOSER + "\n\nMODULES = ['pkg.ops.hpu']\n"
    registry = "def builder_dir():\n    return 'pkg.ops.hpu'\n"
    for files in (
        {"pkg/chooser.py": chooser, "pkg/hpu_accelerator.py": ACCELERATOR},  # also named at module level
        {"pkg/chooser.py": CHOOSER, "pkg/hpu_accelerator.py": ACCELERATOR, "pkg/registry.py": registry},  # by anyone
    ):
        assert lint({**files, **HPU_PACKAGE}) == [("CDL304", 5, 25)]


def test_a_pattern_of_module_names_is_located_too():
    pattern = ACCELERATOR.replace('return "pkg.ops.hpu"', 'return f"pkg.ops.{self.kind}"')
    pattern = pattern.replace("import importlib\n", "import importlib\n\nKIND = 'hpu'\n")
    assert lint({"pkg/chooser.py": CHOOSER, "pkg/hpu_accelerator.py": pattern, **HPU_PACKAGE}) == []


TRIED = """
try:
    import triton
    from pkg.ops.kernels import fused_gemm
except ImportError:
    fused_gemm = None
"""

REQUIRED = """
try:
    import triton
except ImportError:
    raise ImportError("install triton")

from pkg.ops.kernels import fused_gemm
"""

KERNELS = """
import triton
"""


def lint_kernels(loader):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/ops/__init__.py": "", "pkg/loader.py": loader}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    return triples(findings_of(KERNELS.lstrip("\n"), path="pkg/ops/kernels.py", project_files=files, select={"CDL404"}))


def test_a_module_imported_only_after_a_cuda_only_library_imported_is_used_only_off_a_mac():
    # In a try body after `import triton`, or after a try whose handlers all leave: only where triton imports.
    assert lint_kernels(TRIED) == []
    assert lint_kernels(REQUIRED) == []


def test_an_import_after_a_library_whose_failure_is_not_caught_keeps_its_finding():
    # Nothing catches the first import: it is the finding there, and each module that needs triton keeps its own.
    bare = "import triton\n\nfrom pkg.ops.kernels import fused_gemm\n"
    fallback = TRIED.replace("    fused_gemm = None", "    fused_gemm = None\n\nfrom pkg.ops.kernels import fused_gemm as again")
    swallowed = REQUIRED.replace('raise ImportError("install triton")', "pass")
    for loader in (bare, fallback, swallowed):
        assert lint_kernels(loader) == [("CDL404", 1, 1)]
