"""A device that is the CPU wherever the host is a Mac: CUDA devices built only over a count of CUDA
devices (`range(min(torch.cuda.device_count(), 2))`), and float64 tensors sent to a CUDA-or-CPU
selection, which stay on a Mac's CPU (CDL104 reports the selection itself)."""

import textwrap

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


def test_cuda_devices_over_a_capped_count_of_cuda_devices_are_built_nowhere_else():
    # torchsort's tests: cpu plus up to two CUDA devices
    assert lint(
        """
        import torch

        DEVICES = [torch.device("cpu")] + [torch.device(f"cuda:{d}") for d in range(min(torch.cuda.device_count(), 2))]
        CAPPED_BY_ZERO = [torch.device(f"cuda:{d}") for d in range(min(torch.cuda.device_count(), 0, 2))]
        EVERY = [torch.device(f"cuda:{d}") for d in range(min(8, 2))]
        """,
        select={"CDL101"},
    ) == [("CDL101", 4, 32), ("CDL101", 5, 23)]


def test_float64_sent_to_a_device_that_is_the_cpu_on_a_mac_stays_there():
    assert lint(
        """
        import torch


        def test_cuda():
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            a = torch.ones(3, dtype=torch.float64).to(device)
            b = torch.zeros(3, dtype=torch.float64, device=device)


        def everywhere(device="cuda"):
            return torch.ones(3, dtype=torch.float64).to(device)


        def chosen(device):
            return torch.zeros(3, dtype=torch.float64, device=device)
        """,
        select={"CDL104", "CDL601", "CDL608"},
    ) == [("CDL104", 5, 27), ("CDL608", 11, 12), ("CDL608", 15, 12)]
