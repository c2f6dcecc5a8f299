"""The semantic model under the rules: values reach arguments through names, guards are
judged by what names are bound to. Each case is a pattern seen many times in real code."""

import textwrap

import libcst as cst
import pytest

from conftest import findings_of, triples
from cudalint.python.semantic import SemanticModel


def lint(source: str, torch_version: str = "2.13"):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), torch_version=torch_version))


# -- values reach arguments ---------------------------------------------------------------
def test_constant_reaches_backend():
    assert lint(
        """
        import torch.distributed as dist
        backend = "nccl"
        dist.init_process_group(backend=backend)
        """
    ) == [("CDL701", 2, 11)]


def test_argparse_default_reaches_backend_with_the_call_as_related():
    source = """
        import argparse
        import torch.distributed as dist
        parser = argparse.ArgumentParser()
        parser.add_argument("--dist-backend", default="nccl")
        args = parser.parse_args()
        dist.init_process_group(backend=args.dist_backend)
        """
    [finding] = findings_of(textwrap.dedent(source).lstrip("\n"), torch_version="2.13")
    assert (finding.code, finding.line, finding.column) == ("CDL701", 4, 47)
    [related] = finding.related
    assert (related.line, related.column) == (6, 25)
    assert "reaches" in related.message


def test_bound_fstring_reaches_map_location():
    assert lint(
        """
        import torch
        def restore(p, rank):
            loc = f"cuda:{rank}"
            return torch.load(p, map_location=loc)
        """
    ) == [("CDL109", 3, 11)]


def test_alias_of_autocast_called_with_cuda():
    assert lint(
        """
        from contextlib import nullcontext
        from torch import autocast
        def step(amp, model, x):
            scope = autocast if amp else nullcontext
            with scope("cuda"):
                return model(x)
        """
    ) == [("CDL207", 5, 16)]


@pytest.mark.parametrize("version, expected", [("2.4", [("CDL101", 4, 22)]), ("2.13", [])])
def test_int_ordinal_means_cuda_only_before_torch_2_5(version, expected):
    source = """
        import os
        import torch
        local_rank = int(os.environ["LOCAL_RANK"])
        x = torch.ones(2).to(local_rank)
        """
    assert lint(source, version) == expected


def test_constant_reaches_pin_memory():
    assert lint(
        """
        from torch.utils.data import DataLoader
        PIN = True
        loader = DataLoader([1, 2], pin_memory=PIN)
        """
    ) == [("CDL301", 2, 7)]


def test_environment_default_reaches_pin_memory_where_it_is_written():
    # The variable's default is what every user who does not set it gets: True reaches the loader.
    assert lint(
        """
        import os
        from torch.utils.data import DataLoader
        PIN_MEMORY = str(os.getenv("PIN_MEMORY", True)).lower() == "true"
        OFF = os.environ.get("PIN", "0") == "1"
        ON = os.environ.get("PIN", "Yes").lower() in ("1", "yes")
        NOT_OFF = os.environ.get("PIN", "1") != "0"
        a = DataLoader([1], pin_memory=PIN_MEMORY)
        b = DataLoader([1], pin_memory=OFF)
        c = DataLoader([1], pin_memory=ON)
        d = DataLoader([1], pin_memory=NOT_OFF)
        """
    ) == [("CDL301", 3, 42), ("CDL301", 5, 28), ("CDL301", 6, 33)]


def test_environment_default_of_another_module_reaches_pin_memory(tmp_path, monkeypatch):
    from conftest import lint_tree

    found = lint_tree(tmp_path, monkeypatch, {
        "pkg/__init__.py": "",
        "pkg/utils.py": 'import os\nPIN = str(os.getenv("PIN", True)).lower() == "true"\nOFF = str(os.getenv("PIN", False)).lower() == "true"\n',
        "pkg/build.py": "from torch.utils.data import DataLoader\nfrom pkg.utils import OFF, PIN\n"
                        "a = DataLoader([1], pin_memory=PIN)\nb = DataLoader([1], pin_memory=OFF)\n",
    })
    assert found == [("pkg/build.py", "CDL301", 3, 21)]


def test_self_attribute_set_in_init_reaches_to():
    assert lint(
        """
        import torch
        class Runner:
            def __init__(self, gpu_id):
                self.device = f"cuda:{gpu_id}"
            def run(self, x):
                return x.to(self.device)
        """
    ) == [("CDL101", 4, 23)]


def test_config_dict_value_reaches_device():
    assert lint(
        """
        import torch
        CONFIG = {"lr": 0.1, "accel": "cuda"}
        x = torch.zeros(3, device=CONFIG["accel"])
        """
    ) == [("CDL101", 2, 31)]


def test_parameter_named_cuda_is_not_the_module():
    assert lint(
        """
        from torch import cuda
        def run(x, cuda):
            if cuda.synchronize:
                return x
        cuda.synchronize()
        """
    ) == [("CDL201", 5, 1)]


def test_reexports_and_aliases_resolve_to_the_public_api():
    assert lint(
        """
        from torch.cuda.memory import empty_cache
        from torch.cuda.streams import Stream
        import torch.cuda.nvtx as nv
        empty_cache()
        s = Stream()
        nv.range_push("forward")
        """
    ) == [("CDL202", 4, 1), ("CDL305", 5, 5), ("CDL213", 6, 1)]


# -- guards -------------------------------------------------------------------------------
def test_compound_early_return_guards_the_rest():
    assert lint(
        """
        import torch
        def report(flash):
            if not torch.cuda.is_available() or not flash:
                return None
            return torch.cuda.get_device_properties(0)
        """
    ) == []


def test_guard_through_a_helper():
    assert lint(
        """
        import torch
        def is_cuda_available():
            return torch.cuda.is_available()
        if is_cuda_available():
            torch.cuda.empty_cache()
        """
    ) == []


def test_short_circuit_guard():
    assert lint(
        """
        import torch
        ok = torch.version.cuda and torch.cuda.is_bf16_supported()
        """
    ) == []


def test_enum_member_guard():
    assert lint(
        """
        import torch
        def seed(rng_type, s, RNGType):
            if rng_type == RNGType.XLA:
                pass
            elif rng_type == RNGType.CUDA:
                torch.cuda.manual_seed_all(s)
        """
    ) == []


def test_branch_that_never_runs_on_a_mac():
    assert lint(
        """
        import torch
        from torch.utils.cpp_extension import CUDAExtension
        IS_ROCM = torch.version.hip is not None
        if IS_ROCM:
            ext = CUDAExtension("ops", ["ops.hip"])
        """
    ) == []


def test_capability_query_with_a_fallback():
    assert lint(
        """
        import torch.distributed as dist
        backend = "nccl" if dist.is_nccl_available() else "gloo"
        dist.init_process_group(backend=backend)
        """
    ) == []


def test_a_guard_that_is_true_on_mps_guards_nothing():
    assert lint(
        """
        def move(x, device):
            cuda = device.type != "cpu"
            if cuda:
                x = x.to(device, non_blocking=True)
            return x
        """
    ) == [("CDL304", 4, 26)]


def test_names_are_guards_because_of_what_they_are_bound_to():
    # Spelled like a guard, bound to a command-line flag: not a guard.
    assert lint(
        """
        import torch
        def main(args):
            use_gpu = args.gpu
            if use_gpu:
                torch.cuda.synchronize()
        """
    ) == [("CDL201", 5, 9)]
    # Spelled like nothing, bound to the availability query: a guard.
    assert lint(
        """
        import torch
        ready = torch.cuda.is_available() and torch.cuda.device_count() > 1
        if ready:
            torch.cuda.synchronize()
        """
    ) == []


def test_platform_tests_exclude_macos():
    assert lint(
        """
        import sys
        import platform
        import torch
        if sys.platform.startswith("linux"):
            torch.cuda.synchronize()
        if platform.system() != "Darwin":
            torch.cuda.empty_cache()
        if sys.platform == "darwin":
            pass
        else:
            torch.cuda.synchronize()
        """
    ) == []


def test_try_with_fallback_and_skip_decorators():
    assert lint(
        """
        import unittest
        import pytest
        import torch
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
        @requires_cuda
        def test_a():
            torch.cuda.synchronize()
        class T(unittest.TestCase):
            @unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
            def test_b(self):
                torch.cuda.synchronize()
        """
    ) == []


def test_early_exits_by_call():
    assert lint(
        """
        import sys
        import pytest
        import torch
        def a():
            if not torch.cuda.is_available():
                pytest.skip("CUDA")
            torch.cuda.synchronize()
        def b():
            if torch.cuda.device_count() == 0:
                sys.exit(0)
            torch.cuda.synchronize()
        """
    ) == [("CDL112", 9, 5)]  # a skipped test is no requirement; a program that exits is


def test_guard_evaluator_truth_table():
    module = cst.parse_module("import torch\nimport sys\nhip = torch.version.hip\n")
    model = SemanticModel(module)

    alive = []  # the model memoises by node identity: keep every node alive, as a module does

    def guard(text):
        alive.append(cst.parse_expression(text))
        found = model.guard(alive[-1])
        return found.when_true, found.when_false

    assert guard("torch.cuda.is_available()") == (True, False)
    assert guard("not torch.cuda.is_available()") == (False, True)
    assert guard("torch.cuda.device_count() > 0") == (True, False)
    assert guard("torch.cuda.device_count() == 0") == (False, True)
    assert guard("0 < torch.cuda.device_count()") == (True, False)
    assert guard("x.device.type == 'cuda'") == (True, False)
    assert guard("'cuda' == d.type") == (True, False)
    assert guard("d.type != 'cuda'") == (False, True)
    assert guard("d.type != 'cpu'") == (False, False)
    assert guard("not (a and torch.cuda.is_available())") == (False, True)
    assert guard("a or torch.cuda.is_available()") == (False, False)
    assert guard("hip") == (True, False)
    assert guard("sys.platform == 'darwin'") == (False, True)
    assert guard("x.is_cuda") == (True, False)


# -- precision policies -------------------------------------------------------------------
def test_float64_is_a_finding_only_where_it_reaches_a_device():
    assert lint(
        """
        import torch
        betas = torch.linspace(0, 1, 10, dtype=torch.float64).float()
        a = torch.zeros(3, dtype=torch.float64, device="cpu")
        b = torch.zeros(3, dtype=torch.float64, device=dev)
        c = x.to(torch.float64)
        d = x.cpu().to(torch.float64)
        torch.set_default_dtype(torch.float64)
        class M(torch.nn.Module):
            def __init__(self):
                self.register_buffer("t", torch.ones(2, dtype=torch.float64))
        e = torch.tensor(values, dtype=torch.float64).numpy()
        same = x.dtype == torch.float64
        f = torch.randn(4, dtype=torch.float64)
        """
    ) == [("CDL608", 4, 5), ("CDL601", 5, 10), ("CDL601", 7, 25), ("CDL608", 10, 9)]


def test_cuda_seed_right_after_the_global_seed_is_no_finding():
    assert lint(
        """
        import torch
        def seed_everything(s):
            torch.manual_seed(s)
            torch.cuda.manual_seed_all(s)
        def seed_cuda(s):
            torch.cuda.manual_seed_all(s)
        """
    ) == [("CDL203", 6, 5)]


def test_housekeeping_backend_chain_is_not_cuda_required():
    assert lint(
        """
        import torch
        def free():
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            elif torch.xpu.is_available():
                torch.xpu.empty_cache()
        def pick():
            if torch.cuda.is_available():
                return "cuda"
            elif torch.xpu.is_available():
                return "xpu"
        """
    ) == [("CDL112", 8, 5)]


def test_capability_queries_are_never_findings():
    assert lint(
        """
        import torch
        import torch.distributed as dist
        n = torch.cuda.device_count()
        ok = torch.cuda.is_available()
        nccl = dist.is_nccl_available()
        """
    ) == []


def test_bf16_query_message_states_what_it_does_off_cuda():
    [finding] = findings_of("import torch\nuse_bf16 = torch.cuda.is_bf16_supported()\n", torch_version="2.13")
    assert finding.code == "CDL204"
    assert "returns False wherever CUDA is missing" in finding.message


def test_loading_a_file_the_same_code_saved_needs_no_map_location():
    assert lint(
        """
        import torch
        def test_round_trip(tmp_path, model):
            torch.save(model.state_dict(), tmp_path / "m.pt")
            model.load_state_dict(torch.load(tmp_path / "m.pt"))
        def restore(path, model):
            model.load_state_dict(torch.load(path))
        """
    ) == [("CDL109", 6, 27)]


def test_loading_from_pytest_temporary_folder_needs_no_map_location():
    assert lint(
        """
        import torch
        def test_export(tmp_path, run):
            out = tmp_path / "final"
            run(out)
            state = torch.load(out / "model.pth")
        """
    ) == []


def test_test_helpers_that_skip_without_cuda_guard_the_test():
    assert lint(
        """
        import unittest
        import torch
        def require_cuda(test_case):
            return unittest.skipUnless(torch.cuda.is_available(), "needs CUDA")(test_case)
        class T(unittest.TestCase):
            @require_cuda
            def test_memory(self):
                torch.cuda.empty_cache()
        def not_a_guard(test_case):
            return test_case
        @not_a_guard
        def test_other():
            torch.cuda.empty_cache()
        """
    ) == [("CDL202", 13, 5)]


def test_early_return_for_every_mac_device_guards_the_rest():
    assert lint(
        """
        import torch
        def autobatch(device):
            if device.type in {"cpu", "mps"}:
                return 16
            return torch.cuda.get_device_properties(device).total_memory
        """
    ) == []
