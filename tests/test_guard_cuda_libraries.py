"""A test that is true only where a CUDA-only library (CDL404's list) imports is a CUDA guard
everywhere the guard evaluator is asked, not only as an if-test: early exits, short-circuits,
conditional expressions, `find_spec(...) is None`. A class whose constructor raises unless one
imports runs its (instance) methods only off a Mac. A portable library's test is no guard; static
and class methods run without an instance."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import importlib.util

import torch
from lightning_utilities.core.imports import RequirementCache

HAS_TRITON = importlib.util.find_spec("triton") is not None
HAS_NUMPY = importlib.util.find_spec("numpy") is not None
_TE_AVAILABLE = RequirementCache("transformer-engine>=0.11.0")


def fused(x):
    if not HAS_TRITON:
        raise RuntimeError("fused needs triton")
    torch.cuda.synchronize()
    return x


def short_circuit():
    return HAS_TRITON and torch.cuda.synchronize()


def ternary():
    return torch.cuda.Stream() if HAS_TRITON else None


def portable(x):
    if not HAS_NUMPY:
        raise RuntimeError("needs numpy")
    torch.cuda.synchronize()
    return x


def none_test():
    if importlib.util.find_spec("tensorrt") is None:
        return None
    torch.cuda.synchronize()


class TransformerEnginePrecision:
    def __init__(self, dtype):
        if not _TE_AVAILABLE:
            raise ModuleNotFoundError(str(_TE_AVAILABLE))
        self.dtype = dtype

    def forward_context(self):
        return torch.autocast(device_type="cuda", dtype=self.dtype)

    @staticmethod
    def probe():
        return torch.autocast(device_type="cuda")

    @classmethod
    def make(cls):
        return torch.autocast(device_type="cuda")


class Portable:
    def __init__(self, name):
        if not name:
            raise ValueError(name)

    def forward_context(self):
        return torch.autocast(device_type="cuda")
'''


def lint(source):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL201", "CDL207", "CDL305"}))


def test_a_cuda_only_library_test_guards_like_a_cuda_query():
    assert lint(SOURCE) == [
        ("CDL201", 29, 5),  # numpy imports on a Mac
        ("CDL207", 50, 31),  # a static method runs without the constructor
        ("CDL207", 54, 31),  # so does a class method
        ("CDL207", 63, 31),  # that constructor raises for another reason
    ]


def test_with_a_portable_library_every_finding_stays():
    source = SOURCE.replace('"triton"', '"scipy"').replace('"tensorrt"', '"scipy"').replace("transformer-engine", "rich")
    assert lint(source) == [
        ("CDL201", 14, 5), ("CDL201", 19, 27), ("CDL305", 23, 12), ("CDL201", 29, 5), ("CDL201", 36, 5),
        ("CDL207", 46, 31), ("CDL207", 50, 31), ("CDL207", 54, 31), ("CDL207", 63, 31),
    ]


def test_a_class_with_a_second_constructor_path_keeps_its_findings():
    source = SOURCE.replace(
        "    @staticmethod\n    def probe",
        "    def __new__(cls, *args):\n        return super().__new__(cls)\n\n    @staticmethod\n    def probe",
    )
    assert ("CDL207", 46, 31) in lint(source)


NAMED = '''
import sys

import torch


def predict(model, x):
    kind = str(type(model)).lower()
    if "cuml" in kind and "hdbscan" in kind:
        from cuml.cluster import hdbscan
        return hdbscan.approximate_predict(model, x)
    if "sklearn" in kind:
        torch.cuda.synchronize()
    return model.predict(x)


def release():
    if "cupy" not in sys.modules:
        return
    torch.cuda.synchronize()
'''


def test_a_test_for_a_cuda_only_library_s_name_is_a_cuda_guard():
    # an object whose type names cuml, or a process that imported cupy, exists only where they run; a
    # portable library's name says nothing of the device
    assert triples(findings_of(NAMED, select={"CDL404", "CDL201"})) == [("CDL201", 13, 9)]
