"""Patterns from blind rounds 68 and 69 (bench/EVAL.md, session 39): a CUDA device query in an `if` test, a
GPU count as the number of processes to start, a non-blocking copy to a device that is the CPU wherever the
host is a Mac (also through `self.device = torch.device(self.device)`), and float64 NumPy grids built with
meshgrid and elementwise math."""

from conftest import findings_of, triples

FIRST_DEVICE = '''import torch


def main():
    if torch.cuda.current_device() == 0:
        print("first")
'''


def test_current_device_in_an_if_test_raises_there_too():
    assert triples(findings_of(FIRST_DEVICE, select={"CDL105"})) == [("CDL105", 5, 8)]


SPAWN = '''import torch
import torch.multiprocessing as mp


def run(rank, world_size):
    print(rank, world_size)


def main():
    world_size = torch.cuda.device_count()
    mp.spawn(run, args=(world_size,), nprocs=world_size, join=True)


def by_position():
    mp.spawn(run, (1,), torch.cuda.device_count())


def at_least_one():
    n = torch.cuda.device_count() or 1
    mp.spawn(run, args=(n,), nprocs=n)


def guarded():
    n = torch.cuda.device_count()
    if n == 0:
        n = 1
    mp.spawn(run, args=(n,), nprocs=n)
'''


def test_a_gpu_count_as_the_number_of_processes_to_start():
    found = findings_of(SPAWN, select={"CDL115"})
    assert triples(found) == [("CDL115", 10, 18), ("CDL115", 15, 25)]
    first = sorted(found, key=lambda f: f.sort_key)[0]
    assert "this many processes are started" in first.message
    assert [(r.line, r.column, r.message) for r in first.related] == [(11, 5, "torch.cuda.device_count() processes start here")]


TRAINER = '''import torch


class Trainer:
    def __init__(self, args):
        if args.gpus is not None:
            self.device = "cuda:" + str(args.gpus[0])
        else:
            self.device = "cpu"
        self.device = torch.device(self.device)

    def train(self, loader):
        for data in loader:
            x = data.to(self.device, non_blocking=True)
            y = torch.zeros(3, dtype=torch.float64, device=self.device)
            print(x, y)


def chosen(loader, args):
    device = "mps" if args.mps else "cpu"
    for data in loader:
        print(data.to(device, non_blocking=True))
'''


def test_a_copy_to_a_device_that_is_the_cpu_on_a_mac_is_no_mps_copy():
    # the CUDA choice is reported where it is made; the copies and the float64 tensor made there are not
    found = findings_of(TRAINER, select={"CDL101", "CDL304", "CDL608"})
    assert triples(found) == [("CDL101", 7, 27), ("CDL304", 22, 31)]


GRIDS = '''import math

import numpy as np
import torch


def gaussian_derivative(sigma, device=None):
    half = math.ceil(3 * sigma)
    x, y = np.meshgrid(
        np.linspace(-half, half, 2 * half + 1),
        np.linspace(-half, half, 2 * half + 1),
    )
    der_x = x * np.exp(-(x**2 + y**2) / 2 / sigma / sigma)
    dx = torch.from_numpy(der_x).to(device)
    dy = torch.from_numpy(np.exp(y)).float().to(device)
    return dx, dy


def integers(device):
    grid = np.arange(10) * 2
    return torch.from_numpy(grid).to(device)


def scaled(device, scale):
    mixed = np.linspace(0, 1, 5) * scale  # a float64 array times anything stays float64
    return torch.as_tensor(mixed).to(device)


def with_a_tensor(device, t: torch.Tensor):
    mixed = np.linspace(0, 1, 5) * t  # torch does the arithmetic: not a NumPy array
    return mixed.to(device)
'''


def test_float64_grids_from_meshgrid_and_elementwise_math_reach_the_device():
    assert triples(findings_of(GRIDS, select={"CDL607"})) == [("CDL607", 14, 10), ("CDL607", 26, 12)]


BATCHES = '''from accelerate.utils import send_to_device
from accelerate.utils.operations import send_to_device as move


def step(block, args, kwargs, device):
    args = send_to_device(args, "cuda")
    kwargs = move(kwargs, "cuda:1")
    return block(*send_to_device(args, device), **kwargs)
'''


def test_a_device_passed_by_position_to_accelerates_batch_mover():
    assert triples(findings_of(BATCHES, select={"CDL101"})) == [("CDL101", 6, 33), ("CDL101", 7, 27)]


OWN_TESTS = '''import unittest

from auto_gptq import AutoGPTQForCausalLM


class TestLoading(unittest.TestCase):
    def test_loading(self):
        model = AutoGPTQForCausalLM.from_quantized("m", device="cuda:0")
        self.assertIsNotNone(model)
'''


def test_a_cuda_only_library_linted_as_its_own_project_does_not_silence_its_tests():
    # elsewhere the import is the file's one problem (CDL404), and the test's device is moot behind it
    assert triples(findings_of(OWN_TESTS, path="tests/test_loading.py", select={"CDL101", "CDL404"})) == [("CDL404", 3, 1)]
    # in auto-gptq's own tree the package is the code being ported: its tests' devices are reported
    own = {"auto_gptq/__init__.py": "class AutoGPTQForCausalLM:\n    pass\n"}
    found = findings_of(OWN_TESTS, path="tests/test_loading.py", select={"CDL101", "CDL404"}, project_files=own)
    assert triples(found) == [("CDL101", 8, 64)]


CLASS_FIELDS = '''from dataclasses import dataclass


@dataclass
class TrainConfig:
    device: str = "cuda:0"
    gpu_ids = "cuda"


class QuantLinear:
    QUANT_TYPE = "cuda"
'''


def test_a_class_attribute_is_a_default_device_only_when_named_for_one():
    assert triples(findings_of(CLASS_FIELDS, select={"CDL108"})) == [("CDL108", 6, 19), ("CDL108", 7, 15)]


EDGE = '''import torch
from torch import nn

from pkg.global_dtype import GLOBAL_DTYPE


class Edge(nn.Module):
    def __init__(self, r_max):
        super().__init__()
        rmax = torch.as_tensor(1.0 / r_max, dtype=GLOBAL_DTYPE)
        self.register_buffer("rmax", rmax)
        self._dtype = torch.float64

    def forward(self, x, device):
        return torch.zeros(3, dtype=self._dtype, device=device) + x
'''


def test_a_dtype_given_through_another_modules_constant_or_an_attribute():
    project = {"pkg/__init__.py": "", "pkg/global_dtype.py": "import torch\n\nGLOBAL_DTYPE = torch.float64\n"}
    found = findings_of(EDGE, path="pkg/edge.py", select={"CDL601", "CDL608"}, project_files=project)
    assert triples(found) == [("CDL608", 11, 9), ("CDL608", 15, 16)]


DECORATED = '''import torch
from torch.amp import custom_bwd, custom_fwd


class Scale(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda")
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @custom_bwd(device_type="cuda")
    def backward(ctx, grad):
        return grad * 2


class Half(torch.autograd.Function):
    @staticmethod
    @custom_fwd(device_type="cuda", cast_inputs=torch.float16)
    def forward(ctx, x):
        return x * 2
'''


def test_custom_fwd_says_what_it_does_with_and_without_cast_inputs():
    found = sorted(findings_of(DECORATED, select={"CDL207"}), key=lambda f: f.sort_key)
    assert triples(found) == [("CDL207", 7, 17), ("CDL207", 12, 17), ("CDL207", 19, 17)]
    assert "records only CUDA autocast's state for the custom_bwd" in found[0].message
    assert "runs the backward under CUDA autocast only" in found[1].message
    assert "casts only under CUDA autocast" in found[2].message


TRAINING_MAIN = '''import torch
import torch.distributed as dist


def main(model, loader, local_rank):
    device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    total = torch.zeros(1, device=device)
    for batch in loader:
        total += model(batch.to(device)).sum()
    dist.all_reduce(total)
    return total


def hostnames(hostname, world_size):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.tensor(bytearray(hostname, "utf-8")).to(device)
    padded = torch.zeros(256, device=device, dtype=torch.long)
    padded[: len(name)] = name  # copied into the tensor the collective is handed
    out = [torch.zeros_like(padded) for _ in range(world_size)]
    dist.all_gather(out, padded)
    return out
'''


def test_a_selection_for_more_than_a_collectives_tensors_is_reported():
    # main's device places the model too; hostnames' serves only the collective, through a buffer copied into
    # the tensor it gathers (gloo takes CPU tensors; test_rule_precision holds the plainer cases)
    assert triples(findings_of(TRAINING_MAIN, select={"CDL104"})) == [("CDL104", 6, 27)]
