"""What blind rounds 128 to 132 showed: a wrapper that hands on its own None default leaves the callee's
device choice to run."""

import textwrap

from conftest import findings_of, lint_tree


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


PREDICT = '''import torch


def predict_dl(model, device=None):
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return model.to(device)
'''


def test_a_wrapper_handing_on_its_own_none_default_leaves_the_choice_to_run(tmp_path, monkeypatch):
    wrapper = "from predict import predict_dl\n\n\ndef predict(model, device=None):\n    return predict_dl(model, device=device)\n"
    assert lint_tree(tmp_path / "a", monkeypatch, {"predict.py": PREDICT, "wrap.py": wrapper}) == [
        ("predict.py", "CDL104", 6, 18),
    ]


def test_a_wrapper_that_fills_its_none_default_first_passes_a_device(tmp_path, monkeypatch):
    filled = ("from predict import predict_dl\n\n\ndef evaluate(model, device=None):\n    if device is None:\n"
              "        device = 'cpu'\n    return predict_dl(model, device=device)\n")
    assert lint_tree(tmp_path / "b", monkeypatch, {"predict.py": PREDICT, "wrap.py": filled}) == []


def test_float64_computed_from_host_tensors_stays_on_the_host():
    assert lint(
        """
        import numpy as np
        import torch


        def save_affine(affine, path):
            np.save(path, np.asarray(torch.as_tensor(affine, dtype=torch.float64)))


        class Sampler:
            def __init__(self, n):
                dist = torch.arange(1.0, n + 2.0).log_()
                self.log_q = (-(-dist.double().log1p_() * 2).expm1_()).log_().float()
                self.phase = torch.fft.fft(torch.sin(dist)).to(torch.complex128)
                self.moved = torch.sin(dist.cuda()).to(torch.complex128)
                self.made = torch.as_tensor(affine, dtype=torch.float64)
        """,
        select=["CDL601", "CDL602"],
    ) == [("CDL601", 14, 48), ("CDL601", 15, 51)]  # a CUDA input; data of any device


def test_a_set_up_that_calls_a_helper_skipping_without_another_accelerator_skips_the_class(tmp_path, monkeypatch):
    text = '''import pytest
import torch


def _require_npu():
    if not (hasattr(torch, "npu") and torch.npu.is_available()):
        pytest.skip("no NPU")


class TestShim:
    def setup_method(self):
        _require_npu()

    def test_redirect(self):
        assert torch.randn(2).cuda().device.type == "npu"


def test_xpu():
    if not torch.xpu.is_available():
        return
    assert torch.randn(2).cuda().device.type == "xpu"


class TestPlain:
    def setup_method(self):
        print("no skip")

    def test_moved(self):
        assert torch.randn(2).cuda().is_cuda
'''
    assert lint_tree(tmp_path, monkeypatch, {"tests/test_shim.py": text}) == [
        ("tests/test_shim.py", "CDL103", 29, 16), ("tests/test_shim.py", "CDL102", 29, 31),
    ]


def test_extras_named_for_a_cuda_release_ask_for_the_cuda_build():
    from cudalint.manifests import check_manifest

    text = "inference-models[onnx-cu12,torch-cu124]==0.39.5\nfoo[cu12]\nfoo[docu12]\nbar[torch-cpu]\n"
    assert [(f.code, f.line, f.column) for f in check_manifest("requirements.txt", text)] == [("CDL502", 1, 1), ("CDL502", 2, 1)]


def test_a_backend_label_is_no_device(tmp_path, monkeypatch):
    text = '''import torch


class CudaTypeNN(torch.nn.Module):
    name = "cuda"
    default = "cuda"

    def __init__(self, device=None, backend: str = "cuda"):
        super().__init__()
        if backend not in ("cuda", "gpu"):
            raise ValueError(f"CudaTypeNN is the cuda backend, not {backend!r}")
        self.device = torch.device(device or "cpu")


class DeviceConfig:
    default = "cuda"


def run(model, device: str = "cuda"):
    if device not in ("cuda", "gpu"):
        raise ValueError(f"unknown device {device!r}")
    return model.to(device)
'''
    assert lint_tree(tmp_path, monkeypatch, {"model.py": text}) == [
        ("model.py", "CDL108", 16, 15), ("model.py", "CDL108", 19, 30), ("model.py", "CDL116", 20, 23),
    ]


def test_a_helpers_tuple_answer_unpacked_keeps_its_query():
    assert lint(
        """
        import torch


        def _support():
            if not torch.cuda.is_available():
                return False, "no CUDA"
            return (torch.cuda.get_device_capability()[0] >= 8, "")


        def cuda_usable():
            ok, _ = _support()
            return ok


        def get_device():
            if cuda_usable():
                return "cuda"
            return "mps" if torch.backends.mps.is_available() else "cpu"


        def labels():
            _, reason = _support()
            if reason:
                torch.cuda.synchronize()
        """,
        select=["CDL101", "CDL104", "CDL201"],
    ) == [("CDL201", 24, 9)]  # the reason says nothing of the host


def test_a_float64_module_constant_that_defaults_a_dtype_made_on_the_device():
    found = findings_of(textwrap.dedent(
        """
        import torch
        DEFAULT_DTYPE = torch.float64
        HOST_DTYPE = torch.float64


        class ConstantQ:
            def __init__(self, n=128, device=None, dtype=DEFAULT_DTYPE):
                self.q = torch.linspace(0.0, 0.2, n, device=device, dtype=dtype)


        def host(n, dtype=HOST_DTYPE):
            return torch.linspace(0.0, 0.2, n, device="cpu", dtype=dtype)
        """).lstrip("\n"), select={"CDL601"})
    assert [(f.code, f.line, f.column, [r.line for r in f.related]) for f in found] == [("CDL601", 2, 17, [8])]


def test_a_load_mapped_to_the_cpu_only_in_the_cpu_arm_of_a_device_test():
    assert lint(
        """
        import os

        import torch

        DEVICE = os.getenv("DEVICE") or "cpu"


        def load(path):
            if DEVICE == "cpu":
                return torch.load(path, map_location="cpu")
            return torch.load(path)


        def load_state(path, device):
            if device.type != "cpu":
                state = torch.load(path)
            else:
                state = torch.load(path, map_location="cpu")
            return state
        """,
        select=["CDL109"],
    ) == [("CDL109", 11, 12), ("CDL109", 16, 17)]


CUDA_HELPERS = '''from contextlib import contextmanager

import torch

__all__ = ["ordered"]


@contextmanager
def ordered(device: torch.device):
    yield torch.cuda.current_stream(device.index)
'''

DISPATCH = '''import contextlib

import torch

from pkg import _cuda


@contextlib.contextmanager
def on_device(device: torch.device):
    if device.type != "cuda":
        yield
        return
    with _cuda.ordered(device):
        yield
'''


def test_a_private_modules_all_exports_only_what_a_star_import_takes(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/_cuda.py": CUDA_HELPERS, "pkg/dispatch.py": DISPATCH}
    assert lint_tree(tmp_path / "a", monkeypatch, files) == []
    files["pkg/__init__.py"] = "from ._cuda import *\n"
    assert lint_tree(tmp_path / "b", monkeypatch, files) == [("pkg/_cuda.py", "CDL305", 10, 11)]


def test_float64_chosen_by_a_precision_flag_reaches_the_device():
    assert lint(
        """
        import torch


        def solve(n, device, mixed_precision=False):
            sink_dtype = torch.float32 if mixed_precision else torch.float64
            return torch.zeros(n, n, device=device, dtype=sink_dtype)


        def host(n, device):
            dtype = torch.float64 if device.type == "cpu" else torch.float32
            return torch.zeros(n, n, device=device, dtype=dtype)


        def delta(rr, rl, exact, device):
            x = torch.ones(3, device=device)
            rc = (rr - rl).to(torch.int64 if exact else torch.float64)
            z = x.to(torch.float64 if x.device.type == "cpu" else torch.float32)
            return rc, z
        """,
        select=["CDL601", "CDL608"],
    ) == [("CDL608", 6, 12), ("CDL601", 16, 49)]


SOLVER = '''import torch


class Solver:
    def __init__(self, K, device="cuda"):
        self.K = K.to(device)

    def refit(self, K, device="cuda"):
        return K.to(device)


def _inner(x, device="cuda"):
    return x.to(device)
'''

API = '''from .solver import Solver, _inner


def fit(K, dev):
    s = Solver(K, device=dev)
    s.refit(K, device=dev)
    return _inner(K, device=dev)
'''


def test_the_public_classes_of_a_package_module_keep_their_cuda_defaults(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/solver.py": SOLVER, "pkg/api.py": API}
    assert lint_tree(tmp_path / "a", monkeypatch, files) == [
        ("pkg/solver.py", "CDL108", 5, 34), ("pkg/solver.py", "CDL108", 8, 31),
    ]  # `_inner` is the package's own: every call passes a device
    files = {"solver.py": SOLVER, "api.py": API.replace("from .solver", "from solver")}
    assert lint_tree(tmp_path / "b", monkeypatch, files) == []  # a script project's modules: its own callers decide


def test_a_selection_in_the_else_of_a_test_for_mps_comes_after_a_macs_choice():
    assert lint(
        """
        import os

        import torch


        def determine_device(use_device=None):
            use_device = use_device or os.getenv("DEVICE")
            if use_device in {"mps", None} and torch.backends.mps.is_available():
                device = "mps"
            else:
                device = use_device or ("cuda" if torch.cuda.is_available() else "cpu")
            return device


        def plain(use_device=None):
            if use_device == "xla":
                device = "xla"
            else:
                device = use_device or ("cuda" if torch.cuda.is_available() else "cpu")
            return device
        """,
        select=["CDL104"],
    ) == [("CDL104", 19, 33)]


def test_an_argument_parsers_error_ends_the_program():
    assert lint(
        """
        import argparse

        import torch


        def other(log):
            if not torch.cuda.is_available():
                log.error("no CUDA")
            torch.cuda.synchronize()


        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        if not torch.cuda.is_available():
            parser.error("this benchmark needs CUDA")
        x = torch.rand(3, device="cuda")
        torch.cuda.synchronize()
        """,
        select=["CDL101", "CDL201"],
    ) == [("CDL201", 9, 5)]  # a logger's error goes on


def test_a_selection_used_only_as_a_map_location_wrapped_in_torch_device():
    assert lint(
        """
        import torch


        def load(path):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return torch.load(path, map_location=torch.device(device))


        def load_and_move(path, model):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model.load_state_dict(torch.load(path, map_location=torch.device(device)))
            return model.to(device)
        """,
        select=["CDL104"],
    ) == [("CDL104", 10, 27)]


def test_a_none_test_through_an_exists_helper():
    assert lint(
        """
        import torch


        def exists(val):
            return val is not None


        class EMA:
            def __init__(self, model):
                self.stream = torch.cuda.Stream() if torch.cuda.is_available() else None

            def update(self, other):
                if exists(self.stream):
                    self.stream.wait_stream(torch.cuda.current_stream())
                if exists(other):
                    torch.cuda.synchronize()
                if present(self.stream):
                    torch.cuda.current_stream().wait_stream(self.stream)


        def present(val): return val is not None
        """,
        select=["CDL201", "CDL305"],
    ) == [("CDL201", 16, 13)]  # a one-line helper too


def test_a_test_modules_cuda_flag_for_skip_markers_places_nothing():
    text = '''import pytest
import torch

CUDA = torch.cuda.is_available()
requires_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA")


def test_reference(lp=torch.zeros(3)):
    assert lp.double().exp().shape == (3,)


@requires_cuda
def test_on_device():
    x = torch.zeros(3, device="cuda")
    assert x.double().sum() == 0
'''
    found = findings_of(text, path="tests/test_ref.py", select={"CDL602"})
    assert [(f.code, f.line, f.column) for f in found] == []
    placing = text.replace("CUDA = torch.cuda.is_available()", "DEVICE = torch.device('cuda')")
    found = findings_of(placing, path="tests/test_ref.py", select={"CDL602"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL602", 9, 15), ("CDL602", 15, 14)]


def test_torch_device_with_its_type_by_keyword():
    assert lint(
        """
        import torch


        def wrap(model, rank):
            return model.to(torch.device(type="cuda", index=rank)), torch.device(type="cpu")
        """,
        select=["CDL101"],
    ) == [("CDL101", 5, 39)]


def test_a_numpy_range_scaled_by_a_float_is_float64_data():
    assert lint(
        """
        import numpy as np
        import torch


        def axes(obs, dt: float):
            a = torch.tensor(np.arange(obs.shape[1]) * 0.5).to(obs.device)
            b = torch.from_numpy(np.arange(obs.shape[1]) * dt).to(obs.device)
            c = torch.tensor(np.arange(obs.shape[1]) * 2).to(obs.device)
            return a, b, c
        """,
        select=["CDL607"],
    ) == [("CDL607", 6, 9), ("CDL607", 7, 9)]


def test_contextlib_suppress_falls_back_as_a_try_does():
    assert lint(
        """
        import contextlib

        import pynvml
        import torch


        def start(collect):
            if collect:
                with contextlib.suppress(pynvml.NVMLError):
                    pynvml.nvmlInit()
                with contextlib.suppress(KeyError):
                    torch.cuda.synchronize()
                with contextlib.suppress(Exception):
                    torch.cuda.synchronize()
                with contextlib.suppress(Exception):
                    torch.cuda.empty_cache()
        """,
        select=["CDL201", "CDL202", "CDL221"],
    ) == [("CDL201", 12, 13), ("CDL202", 16, 13)]  # KeyError is no CUDA error; empty_cache never raises


def test_a_dtype_kept_from_the_data_and_a_benchmark_package_are_left_alone(tmp_path, monkeypatch):
    assert lint(
        """
        import torch


        def merge(q, output_dtype):
            dtype = torch.float64 if output_dtype == torch.float64 else torch.float32
            return torch.zeros(3, dtype=dtype, device=q.device)
        """,
        select=["CDL601", "CDL608"],
    ) == []
    files = {"pkg/__init__.py": "", "pkg/benchmarks/__init__.py": "", "pkg/benchmarks/run.py": SOLVER,
             "pkg/api.py": API.replace("from .solver", "from .benchmarks.run")}
    assert lint_tree(tmp_path, monkeypatch, files) == []


def test_a_module_named_benchmarks_inside_a_package_is_api(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/utils/__init__.py": "", "pkg/utils/benchmarks.py": SOLVER,
             "pkg/api.py": API.replace("from .solver", "from .utils.benchmarks")}
    assert lint_tree(tmp_path, monkeypatch, files) == [
        ("pkg/utils/benchmarks.py", "CDL108", 5, 34), ("pkg/utils/benchmarks.py", "CDL108", 8, 31),
    ]


def test_a_float64_arm_a_caller_opts_into_is_left_alone():
    assert lint(
        """
        import torch


        def lse(q, output_f64_lse=False, mixed=False):
            lse_dtype = torch.float64 if output_f64_lse else torch.float32
            a = torch.empty(3, device=q.device, dtype=lse_dtype)
            b = torch.full((3,), 0.0, device=q.device, dtype=torch.float64 if output_f64_lse else torch.float32)
            c_dtype = torch.float32 if mixed else torch.float64
            c = torch.empty(3, device=q.device, dtype=c_dtype)
            return a, b, c
        """,
        select=["CDL601", "CDL608"],
    ) == [("CDL608", 9, 9)]  # only the float64 the defaults take
