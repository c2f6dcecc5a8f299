"""Patterns from blind round 61 (bench/EVAL.md, session 37): a skip marker made at the top of another test
module (`cuda = pytest.mark.skipif(not torch.cuda.is_available(), ...)` in tests/markers.py), and the NCCL
backend named in capitals."""

from conftest import findings_of, triples

MARKERS = ('import pytest\nimport torch\n\n'
           'cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA GPU required.")\n'
           'slow = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU only")\n')

TESTS = '''import torch
from markers import cuda, slow


@cuda
def test_on_cuda():
    x = torch.zeros(3, device="cuda")
    assert x.sum() == 0


@slow
def test_elsewhere():
    x = torch.zeros(3, device="cuda")
    assert x.sum() == 0
'''


def test_a_skip_marker_of_another_test_module_guards_its_tests():
    found = findings_of(TESTS, path="tests/test_sample.py", select={"CDL101"}, project_files={"tests/markers.py": MARKERS})
    assert triples(found) == [("CDL101", 13, 31)]


def test_the_nccl_backend_in_capitals():
    source = ('import torch.distributed as dist\n\n'
              'def init(backend="NCCL"):\n'
              '    dist.init_process_group(backend="NCCL")\n'
              '    return backend\n')
    found = findings_of(source, select={"CDL701", "CDL706"})
    assert triples(found) == [("CDL706", 3, 18), ("CDL701", 4, 29)]
