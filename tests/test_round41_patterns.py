"""Patterns from blind round 41 (bench/EVAL.md, session 33): faiss's GPU indexes and resources, which
faiss-cpu (the only build for macOS) does not have (CDL408)."""

import textwrap

from conftest import findings_of, triples

FAISS = """
import faiss


def build_index(dim):
    if faiss.get_num_gpus() > 0:
        return faiss.GpuIndexFlatL2(faiss.StandardGpuResources(), dim)
    return faiss.IndexFlatL2(dim)


def run_kmeans(x, k):
    res = faiss.StandardGpuResources()
    cfg = faiss.GpuIndexFlatConfig()
    cfg.device = 0
    return faiss.GpuIndexFlatL2(res, x.shape[1], cfg)


def move(index):
    return faiss.index_cpu_to_all_gpus(index)
"""


def test_faiss_gpu_apis():
    # the count of GPUs guards the first function; the others run on a Mac and fail there
    found = triples(findings_of(textwrap.dedent(FAISS).lstrip("\n"), select={"CDL408"}))
    assert found == [("CDL408", 11, 11), ("CDL408", 12, 11), ("CDL408", 14, 12), ("CDL408", 18, 12)]


def test_a_module_that_imports_no_faiss():
    assert findings_of("def f(faiss):\n    return faiss.StandardGpuResources()\n", select={"CDL408"}) == []
