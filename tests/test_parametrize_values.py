"""A test's parameter takes the values `@pytest.mark.parametrize` lists, and only those
(python/semantic/parametrize.py): a device list built from CPU plus the CUDA devices present is the
CPU on a Mac, a case whose marks skip it without CUDA is taken only off a Mac, and a listed "cuda"
reaches the device argument it is handed to, where it is written."""

import textwrap

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), path="tests/test_ops.py", **kwargs))


def test_parametrized_devices():
    assert lint(
        """
        import pytest
        import torch
        from tests.helpers import RunIf  # litgpt's marker: skips where fewer CUDA devices are present

        needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
        DEVICES = [torch.device("cpu")] + [torch.device(f"cuda:{d}") for d in range(torch.cuda.device_count())]


        @pytest.mark.parametrize("device", DEVICES)
        def test_present(device):
            x = torch.ones(3, dtype=torch.float64).to(device)


        @pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=needs_cuda)])
        def test_marked(device):
            x = torch.ones(3, dtype=torch.float64).to(device)


        @pytest.mark.parametrize("dtype, device", [(torch.float32, "cpu"), (torch.float64, "cuda")])
        def test_rows(dtype, device):
            x = torch.ones(3).to(device)


        @pytest.mark.parametrize("device", ["cpu", "mps"])
        def test_mps(device):
            x = torch.ones(3, dtype=torch.float64).to(device)


        @pytest.mark.parametrize("device", ["cpu", "cuda"], indirect=True)
        def test_indirect(device):
            x = torch.ones(3).to(device)


        @pytest.mark.parametrize(("device", "dtype"), [
            (torch.device("cpu"), torch.float32),
            pytest.param(torch.device("cuda"), torch.float16, marks=[pytest.mark.xfail(), RunIf(min_cuda_gpus=1)]),
        ])
        def test_marker(device, dtype):
            x = torch.ones(3, dtype=dtype).to(device)
        """,
        select={"CDL101", "CDL608"},
    ) == [("CDL101", 19, 84), ("CDL608", 26, 9)]


def test_a_case_the_test_first_skips_without_cuda_is_taken_only_off_a_mac():
    # torchcp's tests: `if device == "cuda" and not torch.cuda.is_available(): pytest.skip(...)` at once
    assert lint(
        """
        import pytest
        import torch


        @pytest.mark.parametrize("device", ["cpu", "cuda"])
        def test_skipped(device):
            if device == "cuda" and not torch.cuda.is_available():
                pytest.skip("CUDA not available")
            x = torch.ones(3).to(device)


        @pytest.mark.parametrize("device", ["cpu", "cuda"])
        def test_not_skipped(device):
            x = torch.ones(3).to(device)
        """,
        select={"CDL101"},
    ) == [("CDL101", 12, 44)]
