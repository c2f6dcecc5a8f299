"""A parameter is what the calls of its function pass (semantic/call_sites.py): a CUDA mode flag
that every call in the file sets only under a CUDA guard, or to a CUDA query, guards like one —
where every caller is in sight (a test, a nested function, any function of a test module). In test code a device picked by such a parameter is the variant the test exercises,
not the host's device (CDL104)."""

import textwrap

import pytest

from conftest import findings_of, triples
from cudalint.project.paths import test_module as is_test_module


def lint(source, select=None, path="example.py"):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select, path=path))


LIBRARY = """
import torch


def _fit(model, cuda):
    if cuda:
        model = model.cuda()
    return model


def _variant(model, cuda=False):
    if cuda:
        model = model.cuda()
    return model


def _forced(model, cuda=False):
    if cuda:
        model = model.cuda()
    return model


def _spread(model, cuda=False):
    if cuda:
        model = model.cuda()
    return model


def public(model, cuda=False):
    if cuda:
        model = model.cuda()
    return model


def run(model, options):
    _fit(model, torch.cuda.is_available())
    _variant(model)
    if torch.cuda.is_available():
        _variant(model, cuda=True)
        public(model, cuda=True)
    _forced(model, True)
    _spread(model, **options)
"""


def test_a_flag_set_only_where_cuda_is_guards_like_a_query():
    # In a test module every caller is in sight: _forced is passed True unguarded and _spread's
    # callers spread keywords, so those two stay reported.
    assert lint(LIBRARY, select={"CDL102"}, path="tests/test_fit.py") == [("CDL102", 18, 23), ("CDL102", 24, 23)]


def test_in_a_library_module_a_helpers_callers_may_be_elsewhere():
    assert lint(LIBRARY, select={"CDL102"}) == [
        ("CDL102", 6, 23), ("CDL102", 12, 23), ("CDL102", 18, 23), ("CDL102", 24, 23), ("CDL102", 30, 23),
    ]


TESTS = """
import torch


class TestKernel:
    def test_kernel(self, cuda=False):
        device = torch.device("cuda") if cuda else torch.device("cpu")
        x = torch.ones(3, device=device)
        if cuda:
            x = x.cuda()
        return x

    def test_kernel_cuda(self):
        if torch.cuda.is_available():
            self.test_kernel(cuda=True)


def make_data(cuda=False):
    x = torch.ones(3)
    return x.cuda() if cuda else x


def test_data():
    return make_data()


def test_choice():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return device
"""


def test_a_test_variant_flag_is_no_device_selection():
    # In a test module every function's callers are in sight, and CDL104 is silenced there (catalog); a test
    # function elsewhere picks its variant too, while a host query still selects.
    assert lint(TESTS, select={"CDL102", "CDL104"}, path="tests/test_kernel.py") == []
    assert lint(TESTS, select={"CDL104"}, path="kernel_checks.py") == [("CDL104", 27, 14)]


def test_outside_test_code_a_public_function_keeps_its_findings_unless_its_flag_is_an_opt_in():
    # make_data's callers may be elsewhere; its flag, off by default, only places on CUDA: an opt-in
    # (semantic/opt_in_switch.py). On by default, the branch runs for every caller that leaves it.
    assert lint(TESTS, select={"CDL102"}, path="kernel.py") == []
    on = TESTS.replace("def make_data(cuda=False):", "def make_data(cuda=True):")
    assert lint(on, select={"CDL102"}, path="kernel.py") == [("CDL102", 19, 14)]


def test_a_property_that_returns_a_constant_is_no_guard_alone():
    # A subclass in another file may return True: a constant alone says nothing.
    source = """
    import torch


    class Case:
        @property
        def cuda(self):
            return False

        def _run(self, x, cuda=False):
            if cuda:
                x = x.cuda()
            return x

        def test_run(self):
            return self._run(torch.ones(2), cuda=self.cuda)
    """
    assert lint(source, select={"CDL102"}) == [("CDL102", 11, 19)]


def test_a_call_after_an_early_return_for_hosts_without_cuda_is_guarded():
    source = """
    import torch


    def _data(cuda=False):
        x = torch.ones(3)
        return x.cuda() if cuda else x


    def _model(model, cuda=False):
        data = _data(cuda=cuda)
        if cuda:
            model = model.cuda()
        return model(data)


    def check(model):
        _model(model)
        if not torch.cuda.is_available():
            return
        with torch.no_grad():
            return _model(model, cuda=True)
    """
    assert lint(source, select={"CDL102"}, path="tests/test_check.py") == []


def test_a_test_nobody_else_calls_runs_with_its_defaults():
    source = """
    import torch


    class TestQuadrature:
        def test_batch(self, cuda=False):
            x = torch.ones(3)
            if cuda:
                x = x.cuda()
            return x

        def _helper(self, cuda=False):
            if cuda:
                return torch.ones(3).cuda()
    """
    assert lint(source, select={"CDL102"}, path="tests/test_quadrature.py") == [("CDL102", 13, 34)]


def test_an_attribute_set_by_a_test_class_skipped_off_cuda_is_seen_only_off_a_mac():
    source = """
    import unittest
    import torch


    class _Base:
        device = "cpu"
        cuda = False

        def test_add(self):
            x = torch.ones(2, device=self.device)
            if self.cuda:
                x = x.cuda()
            return x + 1


    class TestCPU(_Base, unittest.TestCase):
        pass


    @unittest.skipIf(not torch.cuda.is_available(), "no CUDA")
    class TestCUDA(_Base, unittest.TestCase):
        device = "cuda"
        cuda = True


    class TestOther(_Base, unittest.TestCase):
        def setUp(self):
            self.device = "cuda:1"
    """
    assert lint(source, select={"CDL101", "CDL102"}) == [("CDL101", 28, 23)]


@pytest.mark.parametrize("module_name, path, expected", [
    ("pkg.tests.helpers", "", True),
    ("pkg.test_ops", "", True),
    ("pkg.ops", "tests/ops.py", False),  # the module name, when there is one, decides
    ("", "tests/helpers.py", True),
    ("", "ops_test.py", True),
    ("", "conftest.py", True),
    ("", "pkg/ops.py", False),
    ("", "/home/me/tests/ops.py", False),  # folders above a file given by an absolute path say nothing
    ("", "C:\\work\\test\\ops.py", False),
    ("", "/home/me/test_ops.py", True),
    ("", "", False),
])
def test_which_modules_are_test_modules(module_name, path, expected):
    assert is_test_module(module_name, path) is expected
