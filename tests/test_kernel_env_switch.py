"""A build of CUDA kernels under an environment switch that is off where the variable is unset
(`os.getenv("BUILD_CUDA_EXTENSIONS", "0") == "1"`, `os.environ.get("X_CUDA_ON") == "1"`, one operand of
an `and`) runs only where someone asked for it, which nobody installing or running the project on a Mac
does: no finding inside. A switch that is on by default, a test that reads no environment, and a
branch that builds nothing (or only under an `if` of its own) are no such switch."""

import textwrap

from conftest import findings_of, triples

SETUP = '''
import os

from setuptools import setup

extensions = []
if os.getenv("BUILD_CUDA_EXTENSIONS", "0") == "1":
    from torch.utils.cpp_extension import CUDAExtension

    extensions.append(CUDAExtension(name="fused_cuda", sources=["fused.cpp", "fused_kernel.cu"]))
if os.getenv("BUILD_CUDA_EXTENSIONS", "1") == "1":
    from torch.utils.cpp_extension import CUDAExtension

    extensions.append(CUDAExtension(name="fused_cuda", sources=["fused.cpp", "fused_kernel.cu"]))
setup(name="x", ext_modules=extensions)
'''

MODULE = '''
import os

import torch
from torch.utils.cpp_extension import load

if os.environ.get("MODEL_CUDA_ON") == "1":
    try:
        load(name="wkv", sources=["cuda/wrapper.cpp", "cuda/operators.cu"])
    except Exception:
        load(name="wkv", sources=["cuda/wrapper.cpp", "cuda/operators_slow.cu"])


if os.environ.get("MODEL_V7_ON") == "1":
    if os.environ.get("MODEL_CUDA_ON") == "1":
        load(name="wkv7", sources=["cuda/wkv7.cu"])
    torch.cuda.empty_cache()


def build(version):
    if version == 5 and int(os.environ.get("MODEL_CUDA_ON", 0)):
        return load(name="wkv5", sources=["cuda/wkv5.cu"])
    if version == 6:
        return load(name="wkv6", sources=["cuda/wkv6.cu"])
'''


def test_a_cuda_extension_behind_an_unset_switch_in_setup_py_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SETUP).lstrip("\n"), path="setup.py", select={"CDL401"}))
    assert found == [("CDL401", 13, 23)]


def test_a_jit_build_behind_an_unset_switch_is_not_reported():
    found = triples(findings_of(textwrap.dedent(MODULE).lstrip("\n"), select={"CDL202", "CDL402"}))
    # 16: an outer switch selects a model whose kernels the inner one builds: the rest of it is reported
    assert found == [("CDL202", 16, 5), ("CDL402", 23, 16)]
