"""Patterns from blind round 47 (bench/EVAL.md, session 35): kernel modules a package loads by name only
when the device is CUDA (spikingjelly's `ops/<neuron>/triton.py`, picked by `importlib.import_module(
f".{name}", package)` inside `try: ... except ImportError`)."""

import textwrap

from conftest import lint_tree

SELECTION = """
import importlib

import torch


def select(name, device):
    if device.type != "cuda":
        return None
    try:
        return importlib.import_module(f".{name}", __package__)
    except ImportError:
        return None
"""

KERNELS = """
import torch
import triton
import triton.language as tl

DEVICE = torch.device("cuda")


@triton.jit
def _kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


def on_gpu(x):
    return x.is_cuda


def launch(x):
    with torch.cuda.device(x.device.index):
        _kernel[(1,)](x, x.numel(), BLOCK=128)
    return x


class Launcher:
    def __call__(self, x):
        torch.cuda.synchronize()
        return launch(x)
"""


def _tree(**extra):
    files = {"pkg/__init__.py": "", "pkg/select.py": SELECTION.lstrip("\n"), "pkg/triton_ops.py": KERNELS.lstrip("\n")}
    files.update(extra)
    return files


def test_kernels_loaded_by_name_report_their_import_and_top_level_only(tmp_path, monkeypatch):
    # the functions and classes after `import triton` can run only once it imported: never on a Mac
    found = lint_tree(tmp_path, monkeypatch, _tree())
    assert [entry for entry in found if entry[0] == "pkg/triton_ops.py"] == [
        ("pkg/triton_ops.py", "CDL404", 2, 1), ("pkg/triton_ops.py", "CDL404", 3, 1), ("pkg/triton_ops.py", "CDL101", 5, 23),
    ]


def test_kernels_another_module_imports_are_reported_line_by_line(tmp_path, monkeypatch):
    # imported by name (here inside a function, unguarded): the package's own code path reaches them
    user = "def run(x):\n    from pkg.triton_ops import launch\n    return launch(x)\n"
    found = lint_tree(tmp_path, monkeypatch, _tree(**{"pkg/user.py": user}))
    assert [(code, line) for path, code, line, _ in found if path == "pkg/triton_ops.py"] == [
        ("CDL404", 2), ("CDL404", 3), ("CDL101", 5), ("CDL103", 14), ("CDL105", 18), ("CDL201", 25),
    ]


def test_a_program_or_a_loose_script_is_no_module_loaded_on_demand(tmp_path, monkeypatch):
    script = KERNELS + textwrap.dedent("""
        if __name__ == "__main__":
            launch(None)
    """)
    found = lint_tree(tmp_path, monkeypatch, {"pkg/__init__.py": "", "pkg/bench.py": script.lstrip("\n"),
                                             "tools/run.py": KERNELS.lstrip("\n")})
    codes = [(path, code) for path, code, _, _ in found]
    assert ("pkg/bench.py", "CDL105") in codes and ("tools/run.py", "CDL105") in codes


CUPY_PATHS = """
import numpy as np


def to_host(x):
    if hasattr(x, "__cuda_array_interface__"):
        import cupy as cp
        return cp.asarray(x).get()
    return x


def solver(xp):
    if xp.__name__ == "cupy":
        from cupyx.scipy.sparse.linalg import svds
        return svds
    if xp.__name__ != "cupy":
        return np.linalg.svd
    import cupyx
    return cupyx
"""


def test_tests_that_hold_only_for_cuda_arrays(tmp_path, monkeypatch):
    # the CUDA Array Interface and a module named cupy; `xp.__name__ != "cupy"` returns first: what follows
    # runs only with cupy
    assert lint_tree(tmp_path, monkeypatch, {"ops.py": CUPY_PATHS.lstrip("\n")}) == []


def test_a_helper_that_asks_for_the_cuda_array_interface(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/compat.py": "def is_cuda_array(x):\n    return hasattr(x, \"__cuda_array_interface__\")\n",
             "pkg/use.py": "from pkg.compat import is_cuda_array\n\n\ndef get(x):\n    if is_cuda_array(x):\n"
                           "        import cupy as cp\n        return cp.asarray(x).get()\n    import cupy\n    return cupy.asarray(x)\n"}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/use.py", "CDL404", 8, 5)]


def test_a_module_named_as_an_entry_point_is_a_program(tmp_path, monkeypatch):
    # `pkg-bench = "pkg.triton_ops:launch"`: users run it; what it does is what a port edits
    pyproject = '[project]\nname = "pkg"\n\n[project.scripts]\npkg-bench = "pkg.triton_ops:launch"\n'
    found = lint_tree(tmp_path, monkeypatch, _tree(**{"pyproject.toml": pyproject}))
    assert [(code, line) for path, code, line, _ in found if path == "pkg/triton_ops.py"] == [
        ("CDL404", 2), ("CDL404", 3), ("CDL101", 5), ("CDL103", 14), ("CDL105", 18), ("CDL201", 25),
    ]


IMAGE = "FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04\nRUN pip install torch==2.1.0+cu121 xformers\n"


def test_a_dockerfile_named_for_cuda_is_the_cuda_variant(tmp_path, monkeypatch):
    # norse's publish/Dockerfile.cuda beside a plain publish/Dockerfile, like a requirements-cuda.txt
    found = lint_tree(tmp_path, monkeypatch, {"publish/Dockerfile": IMAGE, "publish/Dockerfile.cuda": IMAGE,
                                              "docker/gpu.Dockerfile": IMAGE})
    assert found == [("publish/Dockerfile", "CDL454", 1, 6), ("publish/Dockerfile", "CDL506", 2, 17),
                     ("publish/Dockerfile", "CDL501", 2, 36)]


STEPS = """
import torch


def pick(device="auto"):
    if device == "auto":
        device = "cpu"
        if torch.cuda.is_available():
            device = "cuda"
        if torch.backends.mps.is_available():
            device = "mps"
    return device


def cuda_or_cpu():
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda"
    print(device)
    if torch.backends.mps.is_available():
        print("mps is there")
    return device
"""


def test_a_selection_in_steps_whose_next_step_picks_mps(tmp_path, monkeypatch):
    # MeloTTS's TTS(device="auto"); the MPS test must come right after, not after other work
    found = lint_tree(tmp_path, monkeypatch, {"select.py": STEPS.lstrip("\n")})
    assert found == [("select.py", "CDL104", 16, 5)]


CACHES = """
import os

import torch


class Vectors:
    def cache(self, path_pt, lines):
        if not os.path.isfile(path_pt) or self.refresh:
            vectors = torch.empty(len(lines), 3)
            self.itos = [line for line in lines]
            self.vectors = vectors[:2]
            torch.save((self.itos, self.vectors), path_pt)
        else:
            self.itos, self.vectors = torch.load(path_pt)


def resume(model, optimizer, path):
    if not os.path.exists(path):
        model_state, optimizer_state = model.state_dict(), optimizer.state_dict()
        torch.save((model_state, optimizer_state), path)
    else:
        model_state, optimizer_state = torch.load(path)
    return model_state, optimizer_state
"""


def test_a_cache_of_fields_filled_where_its_file_is_missing(tmp_path, monkeypatch):
    # pytorch-nlp's word vectors: what the else reads back is what the function's other arm wrote on
    # this host; a module's and an optimizer's state saved that way is a checkpoint, still reported
    found = lint_tree(tmp_path, monkeypatch, {"cache.py": CACHES.lstrip("\n")})
    assert found == [("cache.py", "CDL109", 22, 40)]


SKIP_HELPERS = """
import unittest

import torch


def skip_if_cuda_not_available():
    if not torch.cuda.is_available():
        return unittest.skip("skip when cuda is not available")
    return lambda func: func
"""

SKIPPED_TESTS = """
import multiprocessing as mp
import unittest

import torch

from tests import skip_if_cuda_not_available


def run_model(rank):
    torch.cuda.set_device(rank)
    return torch.nn.Linear(2, 2).cuda()


def run_plain(rank):
    return torch.nn.Linear(2, 2).cuda()


class TestAlgorithm(unittest.TestCase):
    def run_test_locally(self, n, target):
        procs = [mp.Process(target=target, args=(i,)) for i in range(n)]
        for p in procs:
            p.start()

    def spawn(self, n):
        return [mp.Process(target=run_model, args=(i,)) for i in range(n)]

    @skip_if_cuda_not_available()
    def test_algorithm(self):
        self.spawn(2)

    def test_plain(self):
        self.run_test_locally(2, run_plain)
"""


def test_a_test_class_helper_its_skipped_tests_call(tmp_path, monkeypatch):
    # bagua's tests: workers a helper method hands to processes, which only tests skipped without CUDA
    # call; a helper an unskipped test calls keeps what it reaches reported
    files = {"tests/__init__.py": SKIP_HELPERS.lstrip("\n"), "tests/test_algorithm.py": SKIPPED_TESTS.lstrip("\n")}
    assert lint_tree(tmp_path, monkeypatch, files) == [("tests/test_algorithm.py", "CDL102", 15, 34)]


DISTRIBUTED_HELPERS = """
import sys
from functools import wraps

import torch


def skip_if_lt_x_gpu(x):
    def decorator(func):
        @wraps(func)
        def wrapper(*args, **kwargs):
            if torch.cuda.is_available() and torch.cuda.device_count() >= x:
                return func(*args, **kwargs)
            sys.exit(75)

        return wrapper

    return decorator


def logged(func):
    @wraps(func)
    def wrapper(*args, **kwargs):
        print("running", func.__name__)
        return func(*args, **kwargs)

    return wrapper
"""

DISTRIBUTED_TESTS = """
import multiprocessing as mp
import unittest

import torch

from tests.common_distributed import logged, skip_if_lt_x_gpu


def train_epochs(model):
    return model(torch.randn(4, 2).cuda())


def run_worker(rank, fn):
    torch.cuda.set_device(rank)
    return fn(torch.nn.Linear(2, 2).cuda())


class TestDDP(unittest.TestCase):
    @skip_if_lt_x_gpu(2)
    def test_two_gpus(self):
        procs = [mp.Process(target=run_worker, args=(rank, train_epochs)) for rank in range(2)]
        torch.cuda.synchronize()
        return procs

    @logged
    def test_logged(self):
        torch.cuda.synchronize()
"""


def test_a_decorator_whose_wrapper_runs_the_test_only_with_cuda(tmp_path, monkeypatch):
    # PyTorch's common_distributed `skip_if_lt_x_gpu`, vendored by bagua; a worker and the function a test
    # hands it inside `args=(...)` run only where the test does; a plain wrapping decorator guards nothing
    files = {"tests/__init__.py": "", "tests/common_distributed.py": DISTRIBUTED_HELPERS.lstrip("\n"),
             "tests/test_ddp.py": DISTRIBUTED_TESTS.lstrip("\n")}
    assert lint_tree(tmp_path, monkeypatch, files) == [("tests/test_ddp.py", "CDL201", 27, 9)]


SET_UP_SKIPS = """
import unittest

import torch


def reference(x):
    return torch.einsum("ni->n", x.cpu()).cuda()


def setUpModule():
    pass


class TestKernelGPU(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not torch.cuda.is_available():
            raise unittest.SkipTest("No CUDA capable device detected")

    def test_kernel(self):
        x = torch.rand(4, 4).cuda()
        self.assertTrue(torch.equal(reference(x), x.sum(1)))


class TestSetUp(unittest.TestCase):
    def setUp(self):
        if not torch.cuda.is_available():
            self.skipTest("needs CUDA")

    def test_sync(self):
        torch.cuda.synchronize()


class TestOther(unittest.TestCase):
    def setUp(self):
        if torch.cuda.is_available():
            self.skipTest("CPU only")

    def test_sync(self):
        torch.cuda.synchronize()
"""

MODULE_SKIP = """
import unittest

import torch


def setUpModule():
    if not torch.cuda.is_available():
        raise unittest.SkipTest("needs CUDA")


def test_sync():
    torch.cuda.synchronize()
"""


def test_tests_a_set_up_skips_without_cuda(tmp_path, monkeypatch):
    # fast-transformers' GPU tests: setUpClass (or setUp, or setUpModule) raises SkipTest without CUDA, so
    # neither the tests nor a module helper only they call run on a Mac; a set-up that skips with CUDA skips
    # nothing there
    files = {"tests/test_kernel_gpu.py": SET_UP_SKIPS.lstrip("\n"), "tests/test_module_gpu.py": MODULE_SKIP.lstrip("\n")}
    assert lint_tree(tmp_path, monkeypatch, files) == [("tests/test_kernel_gpu.py", "CDL201", 40, 9)]


NVCC_SETUP = """
from subprocess import DEVNULL, call

from setuptools import setup
from torch.utils.cpp_extension import CppExtension, CUDAExtension


def cuda_toolkit_available():
    try:
        call(["nvcc"], stdout=DEVNULL, stderr=DEVNULL)
        return True
    except FileNotFoundError:
        return False


extensions = [CppExtension("pkg.ops_cpu", ["ops.cpp"])]
if cuda_toolkit_available():
    extensions.append(CUDAExtension("pkg.ops_cuda", ["ops.cu"]))
setup(name="pkg", ext_modules=extensions)
"""


def test_a_build_that_adds_cuda_extensions_where_nvcc_starts(tmp_path, monkeypatch):
    # fast-transformers' setup.py: `call(["nvcc"])` raises FileNotFoundError on every Mac
    assert lint_tree(tmp_path, monkeypatch, {"setup.py": NVCC_SETUP.lstrip("\n")}) == []


STAGING = """
import torch
from torch.hub import load_state_dict_from_url


class Net(torch.nn.Module):
    url = "https://example.invalid/net.pt"

    def load_pretrained(self, map_location=None):
        if torch.cuda.is_available():
            map_location = torch.device("cuda")
        else:
            map_location = torch.device("cpu")
        self.load_state_dict(load_state_dict_from_url(self.url, map_location=map_location))

    def to_device(self, x):
        if torch.cuda.is_available():
            device = torch.device("cuda")
        else:
            device = torch.device("cpu")
        self.load_state_dict(torch.load("w.pt", map_location=device))
        return x.to(device)
"""


def test_a_choice_only_a_load_map_location_reads(tmp_path, monkeypatch):
    # torchsr's load_pretrained: where the downloaded state dict sits before load_state_dict copies it;
    # a choice the function also moves data to is reported
    assert lint_tree(tmp_path, monkeypatch, {"net.py": STAGING.lstrip("\n")}) == [("net.py", "CDL104", 16, 9)]


def test_nvcc_started_unguarded_is_a_program_no_mac_has(tmp_path, monkeypatch):
    text = 'import subprocess\n\n\ndef cuda_version():\n    return subprocess.check_output(["nvcc", "--version"]).decode()\n'
    assert lint_tree(tmp_path, monkeypatch, {"tools/version.py": text}) == [("tools/version.py", "CDL220", 5, 12)]


def test_the_gate_reads_every_program_the_guards_know():
    from cudalint.catalog import load_catalog
    from cudalint.python.guard_facts import guard_facts

    assert set(load_catalog()["CDL220"].match["texts"]) == guard_facts().off_mac_programs
