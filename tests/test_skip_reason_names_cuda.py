"""A test skipped on a condition nothing in the tree can judge (a helper from a module the source
distribution leaves out) is skipped off CUDA when its reason says it needs CUDA or a GPU; a condition
that is judged decides alone, and a reason that names no GPU leaves the test as it was."""

from conftest import findings_of, triples

TESTS = '''import pytest
import torch

import task as mod_task


@pytest.mark.skipif(not mod_task.use_cuda(), reason="`torch.amp` module and gpu is required to run this test.")
def test_amp():
    with torch.cuda.amp.autocast():
        pass


@pytest.mark.skipif(not mod_task.use_cuda(), reason="slow")
def test_slow():
    with torch.cuda.amp.autocast():
        pass


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a GPU")
def test_cpu_path():
    with torch.cuda.amp.autocast():
        pass


@pytest.mark.skipif(not mod_task.use_cuda(), reason=f"needs {2} GPUs")
def test_formatted():
    with torch.cuda.amp.autocast():
        pass
'''


def test_a_skip_reason_that_needs_cuda_settles_a_condition_nothing_judges():
    found = findings_of(TESTS, path="tests/test_amp.py", select={"CDL205"})
    # the reason is read only when it is a plain string: an f-string's text is not known
    assert triples(found) == [("CDL205", 15, 10), ("CDL205", 21, 10), ("CDL205", 27, 10)]
