"""A name that holds an imported CUDA-only module or None (`try: import tensorrt as trt` / `except
ImportError: trt = None`) is true only where the module imported: `if not trt: raise ...` and `if trt
is None: return` guard the rest of the block, `if trt:` its body. A name also bound to something else
says nothing."""

from conftest import findings_of, triples

SOURCE = '''import torch

try:
    import tensorrt as trt
except ImportError:
    trt = None

try:
    import numpy as maybe
except ImportError:
    maybe = object()


def run(device):
    if not trt:
        raise ImportError("TensorRT is not installed")
    torch.cuda.set_device(device)


def other(device):
    if trt is None:
        return None
    torch.cuda.set_device(device)


def inside(device):
    if trt:
        torch.cuda.set_device(device)
    if maybe:
        torch.cuda.set_device(device)
'''


def test_a_module_or_none_is_true_only_where_the_module_imported():
    assert triples(findings_of(SOURCE, select={"CDL105"})) == [("CDL105", 30, 9)]
