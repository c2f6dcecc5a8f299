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


INFERENCE = """
import torch
from mmcv.parallel import collate, scatter


def inference_detector(model, data):
    device = next(model.parameters()).device
    data = collate([data], samples_per_gpu=1)
    if next(model.parameters()).is_cuda:
        data = scatter(data, [device])[0]
    else:
        data["img_metas"] = [meta.data[0] for meta in data["img_metas"]]
    with torch.no_grad():
        return model(return_loss=False, **data)


def on_the_model_device(model, data):
    if next(model.parameters()).is_cuda:
        data = collate([data], samples_per_gpu=1)
    return model(**data)
"""


def test_an_is_cuda_test_whose_branch_scatters_to_cuda():
    # OpenMMLab's inference APIs: the inputs reach the model's device only where it is CUDA, so beside a model
    # on MPS they stay on the CPU (mmcv's and torch's scatter copy to the CUDA devices listed)
    assert triples(findings_of(textwrap.dedent(INFERENCE).lstrip("\n"), select={"CDL103"})) == [("CDL103", 8, 8)]
