"""What blind rounds 105 to 109 (pytorch-bsf, yqn-pytorch-framework, pytorch-caney, echotorch, pytorch-fcd,
torchrdit, pytorchimagepipeline, audio-metrics-cli, lightorch, ...) showed: float64 tensors built from host tensors
stay on the host, NVML started without a driver, guards through conditional expressions, comprehensions, option
defaults and helpers, tests that make CUDA unavailable, and setup.cfg's interpolation."""

import textwrap

from conftest import findings_of


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


def test_float64_of_tensors_joined_or_combined_on_the_host_is_no_finding():
    assert lint(
        """
        import torch


        def tangent(width):
            return torch.cat((torch.eye(width - 1), -torch.ones(1, width - 1))).to(torch.float64)


        def summed(width):
            return (torch.ones(1, width) * 2 + torch.zeros(1, width)).double()


        def stacked():
            return torch.stack([torch.zeros(3), torch.arange(3)]).double()


        def sobol(n):
            engine = torch.quasirandom.SobolEngine(3, scramble=True)
            return engine.draw(n, dtype=torch.float64), torch.quasirandom.SobolEngine(2).draw_base2(4, dtype=torch.float64)
        """,
        {"CDL601", "CDL602"},
    ) == []


def test_float64_of_a_join_with_a_tensor_that_may_be_on_the_device_is_reported():
    assert lint(
        """
        import torch


        def tangent(x, width):
            return torch.cat((torch.eye(width), x)).to(torch.float64)


        def scaled(x):
            return (torch.ones(3) * x).double()


        def draw(engine, n):
            return engine.draw(n, dtype=torch.float64)
        """,
        {"CDL601", "CDL602"},
    ) == [("CDL601", 5, 48), ("CDL602", 9, 32), ("CDL601", 13, 33)]


def test_nvml_started_outside_a_cuda_test_or_a_handler_is_reported():
    assert lint(
        """
        import gpustat
        import nvidia_smi
        import pynvml
        import torch
        from pynvml import nvmlInit


        def free_memory(index):
            pynvml.nvmlInit()
            return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(index)).free


        def others():
            nvidia_smi.nvmlInit()
            nvmlInit()
            return gpustat.new_query()


        def handled():
            try:
                pynvml.nvmlInit()
            except pynvml.NVMLError:
                return None


        def guarded():
            if torch.cuda.is_available():
                pynvml.nvmlInit()
        """,
        {"CDL221"},
    ) == [("CDL221", 9, 5), ("CDL221", 14, 5), ("CDL221", 15, 5), ("CDL221", 16, 12)]


SETUP_CFG = """\
[DEFAULT]
fa = 2.6.3

[options]
install_requires =
    torch
    flash-attn==%(fa)s

[options.extras_require]
docs =
    sphinx
test =
    pytest
all =
    %(docs)s
    %(test)s
bad =
    %(nothing)s
"""


def test_setup_cfg_interpolation_is_read_as_setuptools_reads_it():
    found = findings_of(SETUP_CFG, path="setup.cfg", kind="setup_cfg")
    assert [(f.code, f.line, f.column, f.end_column) for f in found] == [("CDL501", 7, 5, 23), ("CDL000", 18, 1, 16)]
    assert found[1].message == "line 18: '%(nothing)s' names no key of [options.extras_require]; setuptools cannot read this value"


def test_a_tensor_of_what_another_module_annotates_as_host_data_is_made_on_the_host():
    tables = """
import numpy as np
import numpy.typing as npt
import torch


def factor_tables(a: int, d: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    return tuple(range(a)), tuple(float(i) for i in range(d))


def weights(n: int) -> "npt.NDArray[np.float64] | None":
    return np.ones(n)


def grid(n: int) -> np.ndarray:
    return np.ones(n)


def on_device(n: int) -> torch.Tensor:
    return torch.ones(n, device="cuda")
"""
    assert lint(
        """
        import torch

        from pkg.tables import factor_tables, grid, on_device, weights


        def gram(a, d):
            idx, coeffs = factor_tables(a, d)
            powers = torch.tensor(idx, dtype=torch.float64) * torch.tensor(weights(a), dtype=torch.float64)
            return torch.tensor(coeffs, dtype=torch.float64), torch.tensor(grid(a), dtype=torch.float64), powers


        def moved(n):
            return torch.tensor(on_device(n), dtype=torch.float64)
        """,
        {"CDL601"},
        path="pkg/use.py",
        project_files={"pkg/__init__.py": "", "pkg/tables.py": tables},
    ) == [("CDL601", 13, 45)]


def test_is_cuda_testing_a_conditional_expression_that_moves_to_cuda_is_reported():
    assert lint(
        """
        import torch


        def outputs(hidden, n):
            out = torch.zeros(n)
            out = out.cuda() if hidden.is_cuda else out
            same = hidden.cuda(1) if hidden.is_cuda else hidden
            return out, same, out.cpu().numpy() if out.is_cuda else out.detach().cpu().numpy()
        """,
        {"CDL103"},
    ) == [("CDL103", 6, 25)]


def test_an_option_that_takes_a_value_is_never_none():
    assert lint(
        """
        import argparse

        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", type=str, default="cpu")
        parser.add_argument("--gpu", default=None)
        parser.add_argument("--dev2", nargs="?", default="cpu")
        args = parser.parse_args()

        if args.device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            device = torch.device(args.device)

        if args.gpu is None:
            device2 = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        if args.dev2 is None:
            device3 = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """,
        {"CDL104"},
    ) == [("CDL104", 17, 28), ("CDL104", 20, 28)]


def test_a_tensor_grown_from_host_rows_in_a_loop_stays_on_the_host():
    assert lint(
        """
        import torch


        def dlt(rows):
            A = torch.tensor(())
            for x, y in rows:
                m_1 = torch.tensor([x, y, 1])
                m_2 = torch.tensor([y, x, 1])
                A = torch.cat((A, m_1.unsqueeze(0)))
                A = torch.cat((A, m_2.unsqueeze(0)))
            return torch.linalg.svd(A)


        def grown(x, rows):
            A = torch.tensor(())
            for row in rows:
                A = torch.cat((A, x))
            return torch.linalg.svd(A)
        """,
        {"CDL605"},
        torch_version="2.10",
    ) == [("CDL605", 18, 12)]


def test_a_comprehension_over_what_is_empty_on_a_mac_is_empty_there():
    assert lint(
        """
        import torch


        def listed():
            devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
            usage = [torch.cuda.get_device_properties(d).total_memory for d in devices]
            for device in devices:
                torch.cuda.get_device_properties(device)
            return usage, any(torch.cuda.get_device_properties(d).major > 7 for d in devices)


        def filtered(names):
            devices = [name for name in names if name.endswith("0")]
            for device in devices:
                torch.cuda.get_device_properties(device)


        def cuda_only(names):
            devices = [name for name in names if name.startswith("cuda")]  # kept only where CUDA devices are
            for device in devices:
                torch.cuda.get_device_properties(device)
        """,
        {"CDL204"},
    ) == [("CDL204", 15, 9)]


def test_a_test_that_makes_cuda_unavailable_runs_so_on_every_host():
    device = """
import torch


def resolve(device):
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device(device)
"""
    assert lint(
        """
        import unittest
        from unittest import mock
        from unittest.mock import patch

        import torch

        from mypkg.device import resolve


        class TestFallback(unittest.TestCase):
            @patch("mypkg.device.torch.cuda.is_available", return_value=False)
            def test_decorated(self, _):
                self.assertEqual(resolve("cuda").type, "cpu")
                torch.zeros(2, device="cuda")

            def test_with_block(self):
                config = {"device": "cuda"}
                with mock.patch.object(torch.cuda, "is_available", return_value=False):
                    self.assertEqual(resolve(config["device"]), torch.device("cpu"))

            def test_available(self):
                with patch("torch.cuda.is_available", return_value=True):
                    self.assertEqual(resolve("cuda"), torch.device("cuda"))


        def test_monkeypatched(monkeypatch):
            monkeypatch.setattr("torch.cuda.is_available", lambda: False)
            assert torch.ones(1, device="cuda:0").sum() == 1
        """,
        {"CDL101"},
        path="tests/test_fallback.py",
        project_files={"mypkg/__init__.py": "", "mypkg/device.py": device},
    ) == [("CDL101", 23, 60)]


def test_a_helper_that_answers_false_where_torch_does_not_import_is_a_cuda_guard():
    assert lint(
        """
        def is_cuda_available() -> bool:
            try:
                import torch
                return torch.cuda.is_available()
            except ImportError:
                return False


        def always() -> bool:
            return False


        def move(x):
            if is_cuda_available():
                x = x.to("cuda")
            if always():
                x = x.to("cuda")
            return x
        """,
        {"CDL101"},
    ) == [("CDL101", 17, 18)]


def test_a_cuda_return_nested_in_the_cuda_branch_falls_through_to_the_cpu_return():
    assert lint(
        """
        import torch


        def optimal_device(info) -> str:
            if torch.cuda.is_available():
                if info["available"]:
                    return "cuda"
            return "cpu"


        def with_mps(info) -> str:
            if torch.cuda.is_available():
                if info["available"]:
                    return "cuda"
            if torch.backends.mps.is_available():
                return "mps"
            return "cpu"
        """,
        {"CDL104"},
    ) == [("CDL104", 5, 5)]


def test_a_keyword_written_in_a_dict_call_and_spread_later_is_reported_once():
    assert lint(
        """
        from torch.utils.data import DataLoader


        def tune(dataset, loader_kwargs=dict(pin_memory=True, num_workers=8), other={"pin_memory": True}):
            first = DataLoader(dataset, **loader_kwargs)
            return first, DataLoader(dataset, **other)
        """,
        {"CDL301"},
    ) == [("CDL301", 4, 38), ("CDL301", 4, 92)]
