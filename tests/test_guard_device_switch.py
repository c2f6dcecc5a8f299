"""A test the file itself uses to pick a CUDA device or the CPU is a device switch
(semantic/device_switch.py): as written, code behind the same test runs only where the device is
CUDA, so only the selection is reported. A selection that offers the Mac's device, a test used both
ways, or a test with no selection in the file keeps the calls behind it reported."""

import textwrap

from conftest import findings_of, triples


def lint(source, torch_version="2.15"):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), torch_version=torch_version))


CPU_OPTION = """
import argparse
import torch


def validate(args, rank):
    if not args.cpu:
        torch.cuda.synchronize(rank)


def train(rank: int, args):
    if not args.cpu:
        torch.cuda.set_device(rank)
    device = torch.device("cpu") if args.cpu else torch.device(rank)
    return torch.ones(2).to(device)


parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
"""


def test_a_cpu_option_that_picks_a_cuda_ordinal_guards_the_cuda_mode_before_torch_2_5():
    assert lint(CPU_OPTION, torch_version="2.4") == [("CDL101", 13, 64), ("CDL101", 14, 29)]


def test_from_torch_2_5_an_ordinal_is_the_current_accelerator_so_the_option_is_no_switch():
    assert lint(CPU_OPTION) == [("CDL201", 7, 9), ("CDL105", 12, 9)]


def test_a_gpu_flag_as_an_if_statement_with_a_host_default():
    source = """
    import torch


    def main(opt):
        device = "cpu"
        if opt.gpu:
            device = "cuda"
        if opt.gpu:
            torch.cuda.empty_cache()
        if not opt.gpu:
            torch.cuda.empty_cache()
        return torch.zeros(1, device=device)
    """
    assert lint(source) == [("CDL101", 7, 18), ("CDL202", 11, 9)]


def test_a_parameter_switch_is_matched_by_its_binding_not_its_spelling():
    source = """
    import torch


    def place(model, cuda):
        device = torch.device("cuda" if cuda else "cpu")
        if cuda:
            torch.cuda.synchronize()
        return model.to(device)


    def other(cuda):
        if cuda:
            torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL104", 5, 27), ("CDL201", 13, 9)]  # the selection speaks for its "cuda" arm


def test_a_selection_that_offers_mps_is_no_switch():
    source = """
    import torch


    def main(args):
        device = "cpu" if args.cpu else ("mps" if torch.backends.mps.is_available() else "cuda")
        if not args.cpu:
            torch.cuda.synchronize()
        return device
    """
    assert lint(source) == [("CDL201", 7, 9)]


def test_a_test_used_both_ways_is_no_switch():
    source = """
    import torch


    def main(args):
        device = "cuda" if args.flag else "cpu"
        host = "cpu" if args.flag else "cuda"
        if args.flag:
            torch.cuda.synchronize()
        return device, host
    """
    assert lint(source) == [("CDL104", 5, 14), ("CDL104", 6, 12), ("CDL201", 8, 9)]


def test_an_option_with_no_selection_in_the_file_is_no_guard():
    source = """
    import torch


    def main(args):
        if not args.cpu:
            torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL201", 6, 9)]


def test_torch_flags_are_never_switches():
    source = """
    import torch


    def main():
        device = "cuda" if torch.backends.mkldnn.enabled else "cpu"
        if torch.backends.mkldnn.enabled:
            torch.cuda.synchronize()
        return device
    """
    assert lint(source) == [("CDL104", 5, 14), ("CDL201", 7, 9)]


def test_a_flag_imported_from_a_module_is_one_switch_under_any_import_form():
    source = """
    import torch

    import settings
    from settings import USE_GPU

    DEVICE = torch.device("cuda" if settings.USE_GPU else "cpu")


    def step():
        if settings.USE_GPU:
            torch.cuda.synchronize()
        if USE_GPU:
            torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL104", 6, 23)]  # the selection speaks for its "cuda" arm


INDEX_SWITCHES = """
import argparse
import torch
import torch.distributed as dist


def move(model, cuda_device: int = -1):
    if cuda_device >= 0:
        model = model.cuda(cuda_device)
    return model


def launch(ids, rank):
    gpu_id = ids[rank]
    if gpu_id >= 0:
        torch.cuda.set_device(int(gpu_id))
        dist.init_process_group(backend="nccl")
    else:
        dist.init_process_group(backend="gloo")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()
    if -1 != args.local_rank:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
    if args.local_rank == -1:
        torch.cuda.synchronize()


def counted(n=-1, gpu=0):
    if n >= 0:
        torch.cuda.synchronize()
    if gpu >= 0:
        torch.cuda.set_device(gpu)


def place(device=-1):
    if device < 0:
        chosen = torch.device("cpu")
    elif torch.backends.mps.is_available():
        chosen = torch.device(f"mps:{device}")
    else:
        chosen = torch.device(f"cuda:{device}")
    return chosen


def set_state(state, device=-1):
    if device == -1:
        device = torch.device("cuda")
    elif isinstance(device, int):
        device = torch.device("cuda", device)
    return state, device
"""


def test_an_int_device_option_tested_for_an_index_is_a_switch():
    # `cuda_device >= 0`, `-1 != local_rank`: the file hands the option to CUDA as an index, so the test
    # holds only where someone picked a GPU; the arm for "none picked" runs on a Mac. An option never
    # used as an index (n), one whose default picks GPU 0 (gpu), or one whose "no index" arm is CUDA's
    # current device (fairscale's `if device == -1: device = torch.device("cuda")`) or whose index arm
    # may pick MPS (transformers' pipelines) is no switch. (Its CUDA arm, after `elif
    # torch.backends.mps.is_available():`, runs only where MPS is not: never on a Mac.)
    assert lint(INDEX_SWITCHES) == [
        ("CDL201", 29, 9), ("CDL201", 34, 9), ("CDL105", 36, 9), ("CDL101", 51, 31), ("CDL101", 53, 31),
    ]


def test_a_comparison_the_function_first_stops_without_cuda_is_a_switch():
    # deepinv's noise test: the "inconsistent" case is skipped where CUDA is missing, then taken
    source = """
    import pytest
    import torch


    def test_noise(kind):
        if not torch.cuda.is_available() and kind == "inconsistent":
            pytest.skip("needs CUDA")
        if kind == "inconsistent":
            torch.cuda.synchronize()
        if kind == "consistent":
            torch.cuda.synchronize()


    def other(kind):
        if kind == "inconsistent":
            torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL201", 11, 9), ("CDL201", 16, 9)]
