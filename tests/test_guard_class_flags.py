"""A flag attribute of a class is the guard it is bound to: `self.build_for_cpu = not
torch.cuda.is_available()` makes `if self.build_for_cpu: return` a CUDA guard for the rest of the
method, in the class, its bases and its subclasses of the same file. A False/None binding beside a
query keeps "true only off a Mac"; a binding from a parameter, or an assignment of the attribute on
another object anywhere in the file, makes the flag unknown. The project index reads a class's flags
the same way, within the class, where it judges the calls a class makes of other modules' functions."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import os

import torch
from torch.utils.cpp_extension import CUDA_HOME


class Builder:
    def __init__(self):
        self.build_for_cpu = not torch.cuda.is_available()

    def extra_ldflags(self):
        if self.build_for_cpu:
            return []
        return ["-L" + os.path.join(CUDA_HOME, "lib64")]


class Subclass(Builder):
    def include_paths(self):
        if not self.build_for_cpu:
            return [os.path.join(CUDA_HOME, "include")]
        return []


class Base:
    def sources(self):
        if self.cpu_only:
            return []
        return [os.path.join(CUDA_HOME, "src")]


class Derived(Base):
    def __init__(self):
        self.cpu_only = torch.version.cuda is None


class Lazy:
    def __init__(self):
        self.use_cuda = False

    def setup(self):
        self.use_cuda = torch.cuda.is_available()

    def run(self):
        if self.use_cuda:
            torch.cuda.synchronize()
        if not self.use_cuda:
            return
        torch.cuda.synchronize()


class Constant:
    def __init__(self):
        self.use_cuda = True

    def run(self):
        if self.use_cuda:
            torch.cuda.synchronize()


class FromParameter:
    def __init__(self, on_cpu):
        self.on_cpu = on_cpu

    def later(self):
        self.on_cpu = not torch.cuda.is_available()

    def flags(self):
        if self.on_cpu:
            return []
        return os.path.join(CUDA_HOME, "lib")


class SetOutside:
    def __init__(self):
        self.cpu_build = not torch.cuda.is_available()

    def flags(self):
        if self.cpu_build:
            return []
        return os.path.join(CUDA_HOME, "lib")


def configure(builder):
    builder.cpu_build = True
'''


def lint(source):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL201", "CDL403"}))


def test_a_class_flag_bound_to_a_guard_is_that_guard_in_its_class_bases_and_subclasses():
    # Builder, Subclass, Base/Derived and Lazy (False until setup() asks) are silent.
    assert lint(SOURCE) == [
        ("CDL201", 57, 13),  # True alone is no guard
        ("CDL403", 70, 29),  # also bound from a parameter
        ("CDL403", 80, 29),  # also bound on another object by configure()
    ]


def test_without_the_outside_assignment_the_flag_is_a_guard_again():
    source = SOURCE.replace("    builder.cpu_build = True", "    builder.other = True")
    assert lint(source) == [("CDL201", 57, 13), ("CDL403", 70, 29)]


def test_setattr_on_another_object_makes_it_unknown_too():
    source = SOURCE.replace("    builder.cpu_build = True", '    setattr(builder, "cpu_build", True)')
    assert lint(source) == [("CDL201", 57, 13), ("CDL403", 70, 29), ("CDL403", 80, 29)]


def test_a_subclass_that_rebinds_the_flag_from_a_parameter_makes_its_bases_unknown():
    # Builder's own method may run on an Override; Subclass's never does (a sibling, not a base).
    source = SOURCE + """

class Override(Builder):
    def __init__(self, cpu):
        self.build_for_cpu = cpu
"""
    assert lint(source) == [("CDL403", 14, 37), ("CDL201", 57, 13), ("CDL403", 70, 29), ("CDL403", 80, 29)]


def test_a_false_default_beside_a_query_of_the_other_polarity_is_no_guard():
    # `if self.build_for_cpu: return` needs the flag false only off a Mac; False is false on a Mac too.
    source = SOURCE.replace(
        "    def __init__(self):\n        self.build_for_cpu = not torch.cuda.is_available()",
        "    def __init__(self):\n        self.build_for_cpu = False\n\n    def jit(self):\n"
        "        self.build_for_cpu = not torch.cuda.is_available()",
    )
    assert lint(source) == [("CDL403", 17, 37), ("CDL403", 23, 34), ("CDL201", 60, 13), ("CDL403", 73, 29), ("CDL403", 83, 29)]


def test_a_base_in_another_file_binds_the_flag_through_the_project_index():
    # the subclass's file binds nothing of the name; the other file's base binds it to a CUDA query (the
    # project index's class facts: tests/test_guard_inherited_flags.py); bound to a parameter, it says nothing
    base = "import torch\n\n\nclass Builder:\n    def __init__(self):\n        self.build_for_cpu = not torch.cuda.is_available()\n"
    subclass = '''
    import os

    from torch.utils.cpp_extension import CUDA_HOME

    from pkg.builder import Builder


    class AsyncIO(Builder):
        def extra_ldflags(self):
            if self.build_for_cpu:
                return []
            return [os.path.join(CUDA_HOME, "lib64")]
    '''
    found = findings_of(
        textwrap.dedent(subclass).lstrip("\n"), path="pkg/async_io.py", select={"CDL403"},
        project_files={"pkg/__init__.py": "", "pkg/builder.py": base},
    )
    assert triples(found) == []
    unknown = base.replace("def __init__(self):", "def __init__(self, cpu):").replace("not torch.cuda.is_available()", "cpu")
    found = findings_of(
        textwrap.dedent(subclass).lstrip("\n"), path="pkg/async_io.py", select={"CDL403"},
        project_files={"pkg/__init__.py": "", "pkg/builder.py": unknown},
    )
    assert triples(found) == [("CDL403", 12, 30)]


CASE = '''
import torch


class VariantCase:
    @property
    def cuda(self):
        return False

    def _fit(self, model, cuda=False):
        if cuda:
            model = model.cuda()
        return model

    def test_fit(self):
        self._fit(torch.nn.Linear(2, 2), cuda=self.cuda)
'''


def _case_findings(subclass: str):
    subclass_file = "import unittest\n\nfrom pkg.test.case import VariantCase\n\n\n" + subclass
    return triples(findings_of(CASE.lstrip("\n"), path="pkg/test/case.py", project_files={
        "pkg/__init__.py": "", "pkg/test/__init__.py": "", "tests/__init__.py": "", "tests/test_fit.py": subclass_file,
    }))


def test_a_constant_flag_no_subclass_elsewhere_binds_is_a_constant():
    """The project index sees every class derived from VariantCase: none binds `cuda`, so the
    property's False is what every instance reads, and `if cuda:` never runs. Without the index a
    subclass elsewhere may say otherwise: a constant flag alone says nothing."""
    assert _case_findings("class TestFit(VariantCase, unittest.TestCase):\n    pass\n") == []
    assert triples(findings_of(CASE.lstrip("\n"), path="pkg/test/case.py")) == [("CDL102", 11, 27)]


def test_a_subclass_in_another_module_that_overrides_the_flag_keeps_it_unknown():
    overriding = [
        "class TestFitCUDA(VariantCase, unittest.TestCase):\n    cuda = True\n",
        "class TestFitCUDA(VariantCase):\n    def setUp(self):\n        self.cuda = True\n",
        "class Middle(VariantCase):\n    pass\n\n\nclass TestFitCUDA(Middle):\n    @property\n    def cuda(self):\n        return True\n",
    ]
    for subclass in overriding:
        assert _case_findings(subclass) == [("CDL102", 11, 27)], subclass


BASE = CASE.replace("        if cuda:\n            model = model.cuda()\n", "")  # the helper moves nothing itself

OVERRIDE = '''
import unittest

from pkg.test.case import VariantCase


class TestFit(VariantCase, unittest.TestCase):
    def _fit(self, model, cuda=False):
        if cuda:
            model = model.cuda()
        return model
'''


def _override_findings(base=BASE, extra=""):
    return triples(findings_of((OVERRIDE + extra).lstrip("\n"), path="tests/test_fit.py", project_files={
        "pkg/__init__.py": "", "pkg/test/__init__.py": "", "pkg/test/case.py": base,
    }))


def test_an_override_called_only_by_a_base_of_another_module_takes_what_the_base_passes():
    """The base's `self._fit(..., cuda=self.cuda)` passes a property that returns False and nothing
    derived from it binds again: the override's `if cuda:` never runs."""
    assert _override_findings() == []


def test_what_the_base_passes_must_be_known_everywhere():
    assert _override_findings(base=BASE.replace("cuda=self.cuda", "cuda=True")) == [("CDL102", 9, 27)]
    assert _override_findings(base=BASE.replace("cuda=self.cuda", "cuda=torch.cuda.is_available()")) == [("CDL102", 9, 27)]
    assert _override_findings(base=BASE.replace("cuda=self.cuda", "**{'cuda': True}")) == [("CDL102", 9, 27)]
    subclass = "\n\nclass TestFitCUDA(TestFit):\n    cuda = True\n"
    assert _override_findings(extra=subclass) == [("CDL102", 9, 27)]


def test_a_flag_a_base_of_another_module_binds_to_a_constant_is_that_constant():
    reading = OVERRIDE.replace("    def _fit(self, model, cuda=False):\n        if cuda:", "    def _fit(self, model):\n        if self.cuda:")
    found = triples(findings_of(reading.lstrip("\n"), path="tests/test_fit.py", project_files={
        "pkg/__init__.py": "", "pkg/test/__init__.py": "", "pkg/test/case.py": BASE,
    }))
    assert found == []
    assert triples(findings_of(reading.lstrip("\n"), path="tests/test_fit.py")) == [("CDL102", 9, 27)]


TRAINER = """
import torch

from pkg.utils import gpu_usage


class Trainer:
    def __init__(self, config):
        self.gpu_available = torch.cuda.is_available() and config["use_gpu"]
        self.maybe = config["gpu"]
        self.steps: int
        self.steps += 1

    def fit(self, show_progress=False):
        if self.gpu_available and show_progress:
            print(gpu_usage())

    def other(self):
        if self.maybe:
            print(gpu_usage())


class Contrastive(Trainer):
    def fit(self, show_progress=False):
        if self.gpu_available and show_progress:
            print(gpu_usage())
"""


def test_a_helper_called_only_under_a_flag_of_the_callers_class():
    # the project index reads `self.gpu_available` as the class (or, for a subclass that binds nothing,
    # its base of the module) binds it; `self.maybe` says nothing
    utils = "import torch\n\n\ndef gpu_usage():\n    return torch.cuda.max_memory_reserved()\n"
    files = {"pkg/utils.py": utils, "pkg/trainer.py": TRAINER}
    found = triples(findings_of(utils, select={"CDL202"}, project_files=files, path="pkg/utils.py"))
    assert found == [("CDL202", 5, 12)]
    files["pkg/trainer.py"] = TRAINER.replace("    def other(self):\n        if self.maybe:\n            print(gpu_usage())\n", "")
    assert triples(findings_of(utils, select={"CDL202"}, project_files=files, path="pkg/utils.py")) == []
