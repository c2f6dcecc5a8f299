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


def test_one_chain_per_imported_module():
    found = findings_of("from .model import A\nfrom .model import B\nfrom .other import C\n", path="pkg/__init__.py",
                        select=["CDL407"], project_files={"pkg/model.py": "import cupy\nA = 1\nB = 2\n",
                                                          "pkg/other.py": "import cupy\nC = 3\n"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL407", 1, 1), ("CDL407", 3, 1)]


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
