"""Tests that never run: an unconditional skip decorator (`@pytest.mark.skip`, `@unittest.skip`,
a `pytestmark` of one) or a `pytest.skip()` / `raise unittest.SkipTest` at the top of the test.
Nothing inside them is a finding; a conditional skip is judged by its condition."""

import textwrap

from conftest import findings_of, triples


def lint(text):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), path="tests/test_x.py", select={"CDL101", "CDL201"}))


def test_skip_decorators_with_and_without_arguments():
    assert lint(
        """
        import unittest

        import pytest
        import torch


        @pytest.mark.skip(reason="benchmark")
        def test_bench():
            torch.cuda.synchronize()


        @pytest.mark.skip
        def test_bare():
            torch.zeros(1, device="cuda")


        class TestOld(unittest.TestCase):
            @unittest.skip("flaky")
            def test_old(self):
                torch.cuda.synchronize()

            def test_new(self):
                torch.cuda.synchronize()


        @pytest.mark.skipif(False, reason="never skipped")
        def test_runs():
            torch.cuda.synchronize()
        """
    ) == [("CDL201", 23, 9), ("CDL201", 28, 5)]


def test_a_skipped_class_and_module_marker():
    assert lint(
        """
        import pytest
        import torch


        @pytest.mark.skip(reason="old API")
        class TestOld:
            def test_one(self):
                torch.cuda.synchronize()
        """
    ) == []
    assert lint(
        """
        import pytest
        import torch

        pytestmark = pytest.mark.skip(reason="needs a cluster")


        def test_one():
            torch.cuda.synchronize()
        """
    ) == []


def test_skip_call_at_the_top_skips_the_rest_of_the_block_only():
    assert lint(
        """
        import unittest

        import pytest
        import torch


        def test_skipped():
            pytest.skip("not supported")
            torch.cuda.synchronize()


        def test_raised():
            raise unittest.SkipTest("broken")
            torch.cuda.synchronize()


        def test_sometimes(flag):
            if flag:
                pytest.skip("flag set")
            torch.cuda.synchronize()


        def skip(reason):
            pass


        def test_own_skip():
            skip("not the pytest one")
            torch.cuda.synchronize()
        """
    ) == [("CDL201", 20, 5), ("CDL201", 29, 5)]
