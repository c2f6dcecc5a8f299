"""Code a test expects to fail (`with pytest.raises(...)`, `self.assertRaises(...)`) fails on a Mac as
the test wants: no finding there. A selection whose CUDA arm hangs on a name only ever bound to False
(`ON_GPU = False`, then `"cuda" if ON_GPU else "cpu"`) picks the CPU everywhere: no CDL104. A function
called only under a test that a CUDA-only library is installed (`find_spec("cupy") is not None`) runs
only where it is (the project index's reach). A module-level `try:` whose handler raises again guards
nothing: the module stops on a Mac either way, and its importers with it."""

import textwrap


from conftest import findings_of, triples


def lint(text, select=("CDL101", "CDL102", "CDL104"), **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select=set(select), **kwargs))


def test_a_block_the_test_expects_to_raise_is_no_finding():
    assert lint(
        """
        import pytest
        import torch
        import unittest


        def test_placement(model):
            with pytest.raises((AssertionError, RuntimeError)):
                model.to(device="cuda")
            model.cuda()


        class Placement(unittest.TestCase):
            def test_it(self):
                with self.assertRaises(RuntimeError):
                    torch.zeros(1).cuda()
                with open("log.txt") as log:
                    torch.zeros(1).cuda()
        """,
        path="tests/test_placement.py",
    ) == [("CDL102", 9, 11), ("CDL102", 17, 28)]


def test_a_cuda_arm_under_a_flag_only_ever_false_is_no_selection():
    assert lint(
        """
        import torch

        ON_GPU = False
        USE_GPU = torch.cuda.is_available()
        device = "cuda" if ON_GPU else "cpu"
        other = "cuda" if USE_GPU else "cpu"
        """
    ) == [("CDL104", 6, 9)]


def test_a_helper_called_only_where_a_cuda_only_library_is_installed_runs_only_there(tmp_path):
    source = '''import importlib.util

cupy_available = importlib.util.find_spec("cupy") is not None


def fast(img):
    import cupy as cp
    return cp.asarray(img)


def slow(img):
    import cupy as cp
    return cp.asarray(img)


def resample(img, use_gpu):
    if cupy_available and use_gpu:
        return fast(img)
    if importlib.util.find_spec("cupy") is None:
        return img
    return slow(img)


def other(img):
    return slow(img)
'''
    assert lint(source, select=("CDL404",), path="pkg/resampling.py", project_files={"pkg/__init__.py": ""}) == [
        ("CDL404", 12, 5)]


def test_a_module_level_try_that_raises_again_guards_nothing():
    kernel = '''try:
    import triton
except ImportError as error:
    raise ImportError("the fused kernels need triton") from error
'''
    tests = '''import pytest
import torch


def test_fused():
    try:
        from pkg import kernel
    except ImportError:
        pytest.skip("no kernel")
    torch.zeros(1).cuda()
'''
    found = findings_of(tests, path="tests/test_fused.py", select={"CDL102"},
                        project_files={"pkg/__init__.py": "", "pkg/kernel.py": kernel})
    assert triples(found) == []
    caught = kernel.replace('    raise ImportError("the fused kernels need triton") from error', "    triton = None")
    found = findings_of(tests, path="tests/test_fused.py", select={"CDL102"},
                        project_files={"pkg/__init__.py": "", "pkg/kernel.py": caught})
    assert triples(found) == [("CDL102", 10, 20)]
