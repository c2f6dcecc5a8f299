"""Patterns from blind round 40 (bench/EVAL.md, session 33): OpenMMLab's tools set `distributed = True` in
the arm that calls `init_dist`, which sets a CUDA device (a Mac never takes that arm)."""

import textwrap

from conftest import findings_of, lint_tree, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


# OpenMMLab's tools start so: the flag set in the arm that calls init_dist
LAUNCH = """
def main(args, model):
    if args.launcher == "none":
        distributed = False
    else:
        distributed = True
        init_dist(args.launcher)
"""

TEST_TOOL = """
import torch
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel
from mmcv.runner import init_dist

""" + LAUNCH + """    if not distributed:
        model = MMDataParallel(model, device_ids=[0])
    else:
        model = MMDistributedDataParallel(model.cuda(), device_ids=[torch.cuda.current_device()])
    return model
"""


def test_a_flag_set_beside_init_dist():
    assert lint(TEST_TOOL) == []


def test_the_same_flag_without_init_dist():
    # a launcher alone says nothing of the host: gloo runs on a Mac
    assert lint(TEST_TOOL.replace("        init_dist(args.launcher)\n", "")) == [("CDL102", 14, 49), ("CDL105", 14, 69)]


def test_init_dist_first_then_the_flag():
    text = TEST_TOOL.replace("        distributed = True\n        init_dist(args.launcher)\n",
                             "        init_dist(args.launcher)\n        distributed = True\n")
    assert lint(text) == []


def test_a_caught_failure_keeps_the_flag():
    # in a `try:` the program goes on past a failing init_dist, with the flag already set
    text = TEST_TOOL.replace("        distributed = True\n        init_dist(args.launcher)\n",
                             "        try:\n            distributed = True\n            init_dist(args.launcher)\n"
                             "        except RuntimeError:\n            pass\n")
    assert [code for code, _, _ in lint(text)] == ["CDL102", "CDL105"]


def test_only_a_flag_of_an_arm():
    # a value bound after a failing call in a function's own body is not a flag of an arm: the code that
    # reads it keeps its findings (each is a port's work), as does everything after the failing call
    text = """
    import torch


    def bench(fn):
        graph = torch.cuda.CUDAGraph()
        retries = 10
        enabled = True
        for _ in range(retries):
            torch.cuda.synchronize()
        if enabled:
            torch.cuda.synchronize()
    """
    assert [code for code, _, _ in lint(text)] == ["CDL214", "CDL201", "CDL201"]


TRAIN_TOOL = """
from mmengine.dist import init_dist

from pkg.apis import train_model

""" + LAUNCH + """    if distributed:
        collect(model)
    train_model(model, distributed=distributed)


def collect(model):
    return model.cuda()
"""


APIS = """
import torch


def train_model(model, distributed=False):
    if distributed:
        model = model.cuda()
        torch.cuda.synchronize()
    return model
"""


def test_the_project_index_reads_the_flag_too(tmp_path, monkeypatch):
    # `collect` is called only under the flag: CUDA-only, as the index reads the tool; and the flag handed on
    # by its name (`distributed=distributed`) is true only off a Mac in `train_model` too
    files = {"tools/train.py": textwrap.dedent(TRAIN_TOOL).lstrip("\n"), "pkg/__init__.py": "", "pkg/apis.py": APIS.lstrip("\n")}
    assert lint_tree(tmp_path, monkeypatch, files) == []


def test_a_call_that_turns_the_flag_on(tmp_path, monkeypatch):
    files = {"tools/train.py": textwrap.dedent(TRAIN_TOOL).lstrip("\n"), "pkg/__init__.py": "", "pkg/apis.py": APIS.lstrip("\n"),
             "pkg/demo.py": "from pkg.apis import train_model\n\ntrain_model(None, distributed=True)\n"}
    assert [(path, code) for path, code, _, _ in lint_tree(tmp_path, monkeypatch, files)] == [
        ("pkg/apis.py", "CDL102"), ("pkg/apis.py", "CDL201")]


OPS = """
import torch

from . import _C


def all_reduce(src, dst):
    assert src.is_cuda and dst.is_cuda
    _C.all_reduce(src.data_ptr(), dst.data_ptr(), src.numel())


def scale(x):
    if not x.is_cuda:
        raise ValueError("x must be on the GPU")
    return _C.scale(x)


def double(x):
    assert x.is_cuda
    return x * 2
"""


def test_an_is_cuda_precondition_of_compiled_kernels(tmp_path, monkeypatch):
    # `_C` is no Python module of the project: the compiled extension, whose kernels the assert is about;
    # a raise of "not implemented" tells users of a gap a port fills; a function that hands the tensor to
    # torch alone is where `assert x.is_cuda` refuses MPS for nothing
    found = lint_tree(tmp_path, monkeypatch, {"pkg/__init__.py": "", "pkg/ops.py": OPS.lstrip("\n")})
    assert [(path, code, line) for path, code, line, _ in found] == [("pkg/ops.py", "CDL103", 12), ("pkg/ops.py", "CDL103", 18)]


def test_a_python_module_of_that_name_is_no_extension(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/ops.py": OPS.lstrip("\n"),
             "pkg/_C.py": "def all_reduce(*args):\n    pass\n\n\ndef scale(x):\n    return x\n"}
    found = lint_tree(tmp_path, monkeypatch, files)
    assert [(path, code, line) for path, code, line, _ in found] == [
        ("pkg/ops.py", "CDL103", 7), ("pkg/ops.py", "CDL103", 12), ("pkg/ops.py", "CDL103", 18)]


def test_a_precondition_before_another_packages_cuda_module():
    text = """
    import torch
    import fused_layer_norm_cuda


    def layer_norm(x, shape, eps):
        assert x.is_cuda
        return fused_layer_norm_cuda.forward(x, shape, eps)
    """
    assert lint(text, select={"CDL103"}) == []
