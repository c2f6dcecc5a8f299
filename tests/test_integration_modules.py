"""A module that imports an inference runtime it is built around at its top (packages.toml `integration`:
TensorRT, TensorRT-LLM), itself or through a project module that does, is reported once, at that import;
the rest of it runs only where the runtime loads. A kernel library (Triton) keeps the module's other
findings: a port replaces the kernels and keeps the module."""

import textwrap

from conftest import findings_of, triples

ENGINE = '''
import torch
import tensorrt as trt
from tensorrt_llm.runtime import Session

DEVICE = "cuda"


class Engine:
    def __init__(self):
        self.stream = torch.cuda.Stream()
        torch.cuda.set_device(0)
        self.x = torch.zeros(3).to(DEVICE)
'''

KERNELS = '''
import torch
import triton


def launch(x):
    torch.cuda.set_device(0)
    return x.to("cuda")
'''

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"


def lint(source: str, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), torch_version="2.9.1", **kwargs))


def test_an_integration_module_is_reported_at_its_import():
    assert lint(ENGINE) == [("CDL404", 2, 1)]


def test_a_kernel_module_keeps_its_findings():
    assert lint(KERNELS) == [("CDL404", 2, 1), ("CDL105", 6, 5), ("CDL101", 7, 17)]


def test_an_import_further_down_guards_only_what_follows():
    source = 'import torch\n\nx = torch.zeros(3).to("cuda")\nimport tensorrt\ny = torch.zeros(3).to("cuda")\n'
    assert lint(source) == [("CDL101", 3, 23), ("CDL404", 4, 1)]


def test_through_a_project_module_that_imports_the_runtime():
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/engine.py": ENGINE.lstrip("\n"),
             "pkg/kernels.py": KERNELS.lstrip("\n")}
    user = 'import torch\nfrom pkg.engine import Engine\n\nx = torch.zeros(3).to("cuda")\n'
    assert lint(user, project_files=files, path="pkg/serve.py") == []
    user = 'import torch\nfrom pkg.kernels import launch\n\nx = torch.zeros(3).to("cuda")\n'
    assert lint(user, project_files=files, path="pkg/serve.py") == [("CDL101", 4, 23)]


def test_a_megatron_core_trainer_is_reported_once_at_its_import():
    # ms-swift's Megatron backend: megatron-core needs NVIDIA GPUs (CUDA toolkit, NCCL, Transformer Engine);
    # a port drops or replaces the backend, it does not edit its lines
    source = '''
import torch
from megatron.core import mpu


class Trainer:
    def step(self, batch):
        torch.cuda.synchronize()
        return batch.cuda()
'''
    assert lint(source) == [("CDL404", 2, 1)]


SIMULATION = '''
import isaacgym
import torch


class IsaacVecEnv:
    def __init__(self, sim_device_id=0):
        self.device = torch.device(f"cuda:{sim_device_id}")
        self.obs = torch.zeros(3, device="cuda")
'''


def test_an_isaac_gym_environment_is_reported_once_at_its_import():
    """elegantrl's Isaac Gym wrappers: the simulator needs an NVIDIA GPU on Linux, so nothing below its
    import runs on a Mac; the import is the module's finding."""
    assert lint(SIMULATION) == [("CDL404", 1, 1)]
