"""What blind rounds 118 to 122 and the session's own reading showed: map_location beyond torch.load (weights
downloaded by URL, Lightning's load_from_checkpoint, a project's wrappers of torch.load)."""

import textwrap

from conftest import findings_of


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


def test_weights_downloaded_by_url_are_reported_for_a_cuda_map_location_only():
    assert lint(
        """
        import torch
        from torch.utils import model_zoo

        a = model_zoo.load_url(URL, map_location="cuda:0")
        b = torch.hub.load_state_dict_from_url(URL, None, lambda storage, loc: storage.cuda())
        c = torch.hub.load_state_dict_from_url(URL)
        d = torch.hub.load_state_dict_from_url(URL, "cuda")
        e = model_zoo.load_url(URL, map_location="cpu")
        """,
        select=["CDL101", "CDL102", "CDL104", "CDL109"],
    ) == [("CDL109", 4, 42), ("CDL109", 5, 51), ("CDL102", 5, 80)]


def test_a_cuda_map_location_handed_to_any_loader_is_a_cuda_device():
    assert lint(
        """
        import torch

        model = LitModel.load_from_checkpoint(path, map_location="cuda:0")
        state = torch.load(path, map_location="cuda")
        where = "cuda"
        state = load_checkpoint(path, map_location=where)
        model = LitModel.load_from_checkpoint(path, map_location="cpu")
        state = torch.load(path, map_location="cpu")
        """,
        select=["CDL101", "CDL102", "CDL104", "CDL109"],
    ) == [("CDL101", 3, 58), ("CDL109", 4, 39), ("CDL101", 5, 9)]


def test_a_chosen_device_replaced_by_the_cpu_through_a_bound_query_or_a_compound_test():
    assert lint(
        """
        import torch


        def through_a_name(model, device=None):
            uses_gpu = torch.cuda.is_available()
            device = "cpu" if not uses_gpu else device
            model.to(device)


        def compound(model, device=None):
            device = "cpu" if device is None or not torch.cuda.is_available() else device
            model.to(device)


        def on_mac_by_choice(model, device=None):
            import sys
            device = "cpu" if sys.platform == "darwin" else device
            model.to(device)
        """,
        select=["CDL104"],
    ) == [("CDL104", 6, 14), ("CDL104", 11, 14)]


def test_a_device_that_is_the_cpu_on_every_mac_guards_its_other_branch():
    assert lint(
        """
        import torch


        def build(model, device=None):
            uses_gpu = torch.cuda.is_available()
            device = "cpu" if device is None or not uses_gpu else device
            if device == "cpu":
                name = "cpu"
            else:
                name = torch.cuda.get_device_name(device)
            if device != "cpu":
                torch.cuda.synchronize()
            return name


        def unguarded(device="cpu"):
            if device != "cpu":
                torch.cuda.synchronize()
        """,
        select=["CDL104", "CDL201", "CDL204"],
    ) == [("CDL104", 6, 14), ("CDL201", 18, 9)]


SKIPPED_HELPER = """
import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")


def make_on_gpu():
    return torch.tensor([1.0], device="cuda")


@requires_cuda
def test_make_on_gpu():
    assert make_on_gpu().device.type == "cuda"
"""


def test_a_file_no_import_can_name_keeps_its_own_facts():
    # `01_intro.py`, `run-me.py`, a folder `07_gpu`: no module name, but the same file as `intro.py`
    for path in ("intro.py", "01_intro.py", "run-me.py", "exercises/07_gpu/1.py"):
        found = findings_of(SKIPPED_HELPER.lstrip("\n"), path=path, select=["CDL101"], project_files={"other.py": "x = 1\n"})
        assert found == [], path
    found = findings_of(SKIPPED_HELPER.lstrip("\n").replace("@requires_cuda\n", ""), path="run-me.py", select=["CDL101"],
                        project_files={"other.py": "x = 1\n"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL101", 8, 39)]


def test_a_tensors_own_cuda_test_collapses_its_device_type():
    assert lint(
        """
        import torch


        def device_name(x):
            return "cuda" if x.is_cuda else "cpu"


        def device_of(x):
            return torch.device("cuda" if x.is_cuda else "cpu")


        def kept(x):
            return x.device.type
        """,
        select=["CDL103", "CDL104", "CDL107"],
    ) == [("CDL107", 5, 12), ("CDL107", 9, 25)]


def test_a_device_kept_only_where_the_tensor_is_on_cuda():
    assert lint(
        """
        import torch


        def decode(output, grid):
            device = None
            cuda_check = output.is_cuda
            if cuda_check:
                device = output.get_device()
            return output + torch.tensor(grid, device=device)


        def decode_direct(output, grid):
            device = None
            if output.is_cuda:
                device = output.get_device()
            return output + torch.tensor(grid, device=device)


        def with_a_fallback(output, grid):
            if output.is_cuda:
                device = output.get_device()
            else:
                device = output.device
            return output + torch.tensor(grid, device=device)


        def another_tensor(output, other, grid):
            device = None
            if output.is_cuda:
                device = other.get_device()
            return output + torch.tensor(grid, device=device)
        """,
        select=["CDL103"],
    ) == [("CDL103", 6, 18), ("CDL103", 14, 8)]


def test_cuda_only_libraries_of_genomics_optimisation_and_nvidia_math():
    assert lint(
        """
        import koi.lstm
        from genomeworks.cudapoa import CudaPoaBatch
        import nvmath
        import pynvrtc.compiler
        from cuopt import routing
        """,
        select=["CDL404"],
    ) == [("CDL404", 1, 1), ("CDL404", 2, 1), ("CDL404", 3, 1), ("CDL404", 4, 1), ("CDL404", 5, 1)]
    found = findings_of("ont-koi==0.0.9\ncuopt-cu12\nnvmath-python[cu12]\nclaragenomics\nnumpy\n", path="requirements.txt",
                        kind="requirements", select=["CDL501"])
    assert [(f.code, f.line) for f in found] == [("CDL501", 1), ("CDL501", 2), ("CDL501", 3), ("CDL501", 4)]


def test_a_callers_guard_through_its_own_import_of_torch():
    helper = """
    def _smoke():
        import torch
        torch.cuda.synchronize()


    def check_env():
        import torch
        if not torch.cuda.is_available():
            return
        _smoke()
    """
    found = findings_of(textwrap.dedent(helper).lstrip("\n"), path="pkg/compat.py", select=["CDL201"],
                        project_files={"pkg/__init__.py": ""})
    assert found == []
    unguarded = textwrap.dedent(helper).lstrip("\n").replace("if not torch.cuda.is_available():\n        return\n    ", "")
    found = findings_of(unguarded, path="pkg/compat.py", select=["CDL201"], project_files={"pkg/__init__.py": ""})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL201", 3, 5)]


def test_a_try_import_flag_narrowed_by_a_later_and_stays_a_guard():
    assert lint(
        """
        import torch

        try:
            import triton
            HAS_TRITON = True
        except ImportError:
            HAS_TRITON = False
        HAS_TRITON = HAS_TRITON and torch.__version__ >= "2.6"

        if HAS_TRITON:
            import triton.language as tl

        HAS_TRITON = True
        import triton.language
        """,
        select=["CDL404"],
    ) == [("CDL404", 14, 1)]


def test_a_method_named_test_of_a_library_class_is_no_test():
    text = """
    import torch


    class Trainer:
        def test(self, saved_model=None):
            if saved_model is not None:
                state = torch.load(saved_model)
                self.model.load_state_dict(state)
    """
    found = findings_of(textwrap.dedent(text).lstrip("\n"), path="trainer/engine.py", select=["CDL109"])
    assert [(f.code, f.line, f.column) for f in found] == [("CDL109", 7, 21)]
    for path in ("tests/test_engine.py", "test.py", "app/tests.py"):
        found = findings_of(textwrap.dedent(text).lstrip("\n").replace("class Trainer:", "class TestTrainer:"), path=path,
                            select=["CDL109"])
        assert found == [], path


def test_a_variable_nvidia_containers_set_guards_like_a_query():
    assert lint(
        """
        import os
        import torch

        if os.environ.get("CUDA_VERSION"):
            torch.cuda.synchronize()
        if "CUDA_VERSION" in os.environ:
            torch.cuda.synchronize()
        if os.environ.get("CUDA_VERSION", "12.1"):
            torch.cuda.synchronize()
        """,
        select=["CDL201"],
    ) == [("CDL201", 9, 5)]


def test_a_float64_default_kept_on_self_or_handed_to_a_move():
    assert lint(
        """
        import torch


        class Optimizer:
            def __init__(self, device=None, dtype=torch.float64):
                self.device = device
                self.dtype = dtype

            def zeros(self, n):
                return torch.zeros(n, device=self.device, dtype=self.dtype)


        class OnTheHost:
            def __init__(self, dtype=torch.float64):
                self.dtype = dtype

            def zeros(self, n):
                return torch.zeros(n, device="cpu", dtype=self.dtype)


        def cast(t, dtype=torch.float64):
            return t.to(dtype=dtype, device=t.device)
        """,
        select=["CDL601"],
    ) == [("CDL601", 5, 43), ("CDL601", 21, 19)]


def test_a_pipelines_cuda_ordinal_or_minus_one_forgets_mps():
    assert lint(
        """
        import torch
        from transformers import pipeline


        def make(model):
            kwargs = {}
            kwargs["device"] = 0 if torch.cuda.is_available() else -1
            return pipeline("text-generation", model=model, **kwargs)


        def inline(model):
            return pipeline("text-generation", model=model, device=0 if torch.cuda.is_available() else -1)


        def named(model):
            device = 0 if torch.cuda.is_available() else -1
            return pipeline("text-generation", model=model, device=device)


        def not_a_device(n):
            retries = 0 if torch.cuda.is_available() else -1
            return retries
        """,
        select=["CDL104"],
    ) == [("CDL104", 7, 24), ("CDL104", 12, 60), ("CDL104", 16, 14)]


def test_a_library_function_only_its_guarded_tests_call_is_public():
    library = "import torch\n\n\ndef reset():\n    torch.cuda.ipc_collect()\n"
    tests = "import torch\nimport pkg.cuda\n\n\ndef test_reset():\n    if torch.cuda.is_available():\n        pkg.cuda.reset()\n"
    found = findings_of(library, path="pkg/cuda.py", select=["CDL202"],
                        project_files={"pkg/__init__.py": "", "tests/test_cuda.py": tests})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL202", 5, 5)]
    helper = findings_of(library, path="tests/helpers.py", select=["CDL202"],
                         project_files={"tests/__init__.py": "", "tests/test_cuda.py": tests.replace("pkg.cuda", "tests.helpers")})
    assert helper == []


def test_a_fallback_runs_where_a_caller_passes_an_option_with_no_default():
    text = """
    import argparse
    import torch


    def run(model, device=None):
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        return model.to(device)


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default=None)
        parser.add_argument("--seed", type=int, default=0)
        args = parser.parse_args()
        run(torch.nn.Linear(2, 2), device=args.device)
    """
    found = findings_of(textwrap.dedent(text).lstrip("\n"), path="train.py", select=["CDL104"], project_files={"other.py": ""})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL104", 6, 25)]
    chosen = textwrap.dedent(text).lstrip("\n").replace('default=None', 'default="cpu"')
    assert findings_of(chosen, path="train.py", select=["CDL104"], project_files={"other.py": ""}) == []


def test_a_linear_algebra_error_handler_is_no_fallback_for_a_missing_mps_kernel():
    assert lint(
        """
        import torch


        def solve(A, b):
            try:
                return torch.linalg.lstsq(A, b).solution
            except torch.linalg.LinAlgError:
                return torch.zeros(A.shape[-1], device=A.device)


        def solve_or_fall_back(A, b):
            try:
                return torch.linalg.lstsq(A, b).solution
            except NotImplementedError:
                return torch.linalg.lstsq(A.cpu(), b.cpu()).solution.to(A.device)
        """,
        select=["CDL604"], torch_version="2.9",
    ) == [("CDL604", 6, 16)]


def test_tensors_sorted_by_their_cuda_type_string_with_a_raise_for_the_rest():
    assert lint(
        """
        import torch


        def split(params):
            for p in params:
                if p.type() == "torch.cuda.HalfTensor":
                    yield p
                elif p.type() == "torch.cuda.FloatTensor":
                    continue
                else:
                    raise TypeError(p.type())


        def checked(x):
            assert x.type() == "torch.cuda.FloatTensor"


        def with_a_fallback(x):
            if x.type() == "torch.cuda.HalfTensor":
                return x.float()
            return x
        """,
        select=["CDL219"],
    ) == [("CDL219", 6, 12), ("CDL219", 15, 12)]


def test_a_loop_that_checks_each_tensor_and_raises_guards_the_rest():
    assert lint(
        """
        import torch


        def validate(device, *tensors):
            for t in tensors:
                if not t.is_cuda:
                    raise RuntimeError(f"requires CUDA, got {t.device}")
            return torch.cuda.get_device_capability(device)


        def logged(device, *tensors):
            for t in tensors:
                if not t.is_cuda:
                    print("not on CUDA")
            return torch.cuda.get_device_capability(device)
        """,
        select=["CDL204"],
    ) == [("CDL204", 15, 12)]


def test_a_module_skipped_by_a_helper_that_skips_without_cuda():
    helper = ("import pytest\nimport torch\n\n\ndef require_gpu():\n    if not torch.cuda.is_available():\n"
              "        pytest.skip(\"CUDA is not available.\", allow_module_level=True)\n    return pytest.importorskip(\"cupy\")\n")
    module = ("import torch\n\nfrom tests.utils import require_gpu\n\ncupy = require_gpu()\n\n\ndef test_x():\n"
              "    torch.zeros(1, device=\"cuda\")\n")
    found = findings_of(module, path="tests/test_gpu.py", select=["CDL101"],
                        project_files={"tests/__init__.py": "", "tests/utils.py": helper})
    assert found == []
    found = findings_of(module, path="tests/test_gpu.py", select=["CDL101"],
                        project_files={"tests/__init__.py": "", "tests/utils.py": helper.replace("pytest.skip", "print")})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL101", 9, 27)]


def test_a_lazy_import_whose_handler_raises_an_error_of_its_own_is_optional():
    assert lint(
        """
        import sys


        class Backend:
            def __init__(self):
                try:
                    import cupy
                except ImportError as exc:
                    raise RuntimeError("CuPy is not installed") from exc
                self.cupy = cupy


        def required():
            try:
                import cupy
            except ImportError:
                sys.exit("pip install cupy")
            return cupy


        def asked_for():
            try:
                import triton
            except ImportError:
                raise ImportError("Please install triton")
            return triton


        try:
            import cupy
        except ImportError as exc:
            raise RuntimeError("CuPy is not installed") from exc
        """,
        select=["CDL404"],
    ) == [("CDL404", 15, 9), ("CDL404", 23, 9), ("CDL404", 30, 5)]


def test_cupys_own_non_blocking_stream_is_no_torch_copy():
    assert lint(
        """
        import cupy
        import torch


        def run(x):
            stream = cupy.cuda.Stream(non_blocking=True)
            return x.to("mps", non_blocking=True), stream
        """,
        select=["CDL304"],
    ) == [("CDL304", 7, 24)]


def test_a_distribution_named_for_its_cuda_version_is_a_cuda_build():
    found = findings_of("gpu4pyscf-cuda12x>=1.8\ndgl-cu118\ncuml-cu12\ncupy-cuda12x\ncuda-version\nnumpy\n",
                        path="requirements.txt", kind="requirements", select=["CDL501", "CDL502", "CDL508"])
    assert [(f.code, f.line) for f in found] == [("CDL502", 1), ("CDL502", 2), ("CDL501", 3), ("CDL502", 4)]
    assert "is a CUDA build (its name gives the CUDA version)" in found[0].message
    assert "cupy-cuda12x" in found[3].message and "its name gives" not in found[3].message


PROFILER = """
import torch


class Profiler:
    def __init__(self):
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA required")
"""


def test_code_after_building_a_class_that_raises_without_cuda_runs_only_there():
    user = "\n\ndef profile(model, x):\n    prof = Profiler()\n    torch.cuda.synchronize()\n    return model(x), prof\n"
    assert lint(PROFILER + user, select=["CDL201"]) == []
    found = findings_of("import torch\nfrom pkg.prof import Profiler\n" + user, path="pkg/use.py", select=["CDL201"],
                        project_files={"pkg/__init__.py": "", "pkg/prof.py": PROFILER.lstrip("\n")})
    assert found == []
    assert lint(PROFILER.replace("raise RuntimeError", "print") + user, select=["CDL201"]) == [("CDL201", 12, 5)]


def test_an_option_whose_default_asks_for_cuda_guards_like_the_question():
    assert lint(
        """
        import argparse
        import torch
        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--cuda", type=int, default=int(torch.cuda.is_available()))
        parser.add_argument("--fast", type=int, default=1)
        parser.add_argument("--eval", action="store_true", default=False)
        args = parser.parse_args()
        if args.cuda:
            torch.cuda.set_device(0)
        dist.init_process_group(backend="nccl" if args.cuda else "gloo")
        if args.fast:
            torch.cuda.synchronize()
        if args.eval:
            torch.cuda.synchronize()
        """,
        select=["CDL105", "CDL201", "CDL701"],
    ) == [("CDL201", 14, 5), ("CDL201", 16, 5)]


def test_an_early_return_for_a_chosen_cpu_guards_the_rest():
    assert lint(
        """
        import torch


        def stress():
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            if device.type == "cpu":
                return None
            torch.cuda.synchronize()


        def any_device(device):
            if device.type == "cpu":
                return None
            torch.cuda.synchronize()
        """,
        select=["CDL201"],
    ) == [("CDL201", 14, 5)]


def test_a_same_named_function_with_a_required_device_is_another_function():
    library = ('import torch\n\n\ndef random_init(data, device: str = "cuda" if torch.cuda.is_available() else "cpu"):\n'
               '    return torch.randint(0, 5, (2,), device=device)\n')
    other = 'def random_init(data, device):\n    return data\n\n\ndef go(d):\n    return random_init(d, "cpu")\n'
    found = findings_of(library, path="x.py", select=["CDL104"], project_files={"z.py": other})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL104", 4, 37)]
    caller = 'from x import random_init\n\n\ndef go(d):\n    return random_init(d, "cpu")\n'
    assert findings_of(library, path="x.py", select=["CDL104"], project_files={"z.py": caller}) == []


def test_numbas_cuda_target_imports_anywhere_and_its_runtime_needs_the_driver():
    assert lint(
        """
        import numpy as np
        from numba import cuda


        def upload(values):
            return cuda.to_device(np.asarray(values))


        def upload_if_possible(values):
            if not cuda.is_available():
                return np.asarray(values)
            print(cuda.get_current_device().name)
            return cuda.to_device(np.asarray(values))


        @cuda.jit
        def lazy(a):
            a[0] = 1


        @cuda.jit("void(float32[:])")
        def eager(a):
            a[0] = 1
        """,
        select=["CDL404", "CDL222"],
    ) == [("CDL222", 6, 12), ("CDL222", 21, 11)]


def test_a_legacy_tensor_type_chosen_by_cuda_availability_forgets_mps():
    assert lint(
        """
        import torch

        Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
        Index = torch.cuda.LongTensor if torch.cuda.is_available() else torch.mps.LongTensor


        def other(use_gpu):
            return torch.cuda.FloatTensor if use_gpu else torch.Tensor


        def to_tensor(x):
            return x.type(Tensor)
        """,
        select=["CDL104", "CDL212"],
    ) == [("CDL104", 3, 10), ("CDL212", 8, 12)]


def test_requirements_in_a_dict_spread_into_setup():
    text = ('from setuptools import setup\n\nconfiguration = {\n    "name": "x",\n    "install_requires": ["numpy", "cupy >= 6.0.0"],\n}\n'
            'setup(**configuration)\nsetup(**dict(name="y", install_requires=["flash-attn"]))\n')
    found = findings_of(text, path="setup.py", kind="setup_py", select=["CDL501", "CDL502"])
    assert [(f.code, f.line, f.column) for f in found] == [("CDL502", 5, 35), ("CDL501", 8, 42)]


def test_a_read_placed_in_one_scope_is_placed_again_in_another():
    import libcst as cst

    from cudalint.python.semantic import SemanticModel

    text = "a = 1\nb = 2\nc = 3\ndevice = 'cpu'\ndevice = 'cuda'\n\n\ndef f():\n    device = 1\n    device = 2\n    return device\n"
    module = cst.parse_module(text)
    model = SemanticModel(module)
    function = module.body[5]
    read = function.body.body[2].body[0].value
    inner = model.scopes[id(function)]
    outer = model.module_scope.bindings["device"]
    assert [binding.node.value.value for binding in model.guards.straight_line(list(outer), read)] == ["'cuda'"]
    assert [binding.node.value.value for binding in model.guards.straight_line(list(inner.bindings["device"]), read)] == ["2"]


def test_an_if_whose_every_arm_raises_is_an_early_exit():
    assert lint(
        """
        import warnings

        import torch


        def profile(op, fallback_cpu=False):
            if not torch.cuda.is_available():
                if fallback_cpu:
                    warnings.warn("no CUDA")
                    raise RuntimeError("CUDA required")
                else:
                    raise RuntimeError("CUDA required")
            return op(), torch.cuda.max_memory_allocated()


        def half(op, fallback_cpu=False):
            if not torch.cuda.is_available():
                if fallback_cpu:
                    warnings.warn("no CUDA")
                else:
                    raise RuntimeError("CUDA required")
            return op(), torch.cuda.max_memory_allocated()
        """,
        select=["CDL202"],
    ) == [("CDL202", 22, 18)]
