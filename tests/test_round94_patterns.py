"""Patterns from blind rounds 94 and 95 (bench/EVAL.md, session 44): a program no Mac has, named through a
string split into words (`"nvidia-smi -L".split()`, `shlex.split(...)`) or a name bound to such a string, is
the program the subprocess call starts (CDL220); and `except subprocess.CalledProcessError:` catches what a
missing program raises only through a shell: without one, the call raises FileNotFoundError, which that handler
lets through; nor is `except pickle.UnpicklingError:` around `torch.load` another way for a CUDA
checkpoint, which fails with RuntimeError (CDL109); a device chosen in an `if` statement by the communication
backend's name follows the backend, as in a conditional expression (CDL104); float64 in the CPU arm of a
CUDA-or-CPU selection statement is made for the CPU; `.to(torch.float64)` converts on the device even when
`.cpu()` follows; a test's parameter takes the params of the module's fixture of its name; `x.get_device()`
may be the project's own method where a class of the project defines one (CDL118); `torch.binomial` reaches
aten::binomial (CDL604)."""

from conftest import findings_of, lint_tree, triples

PROGRAM_NAMED_THROUGH_A_SPLIT = '''import shlex
import subprocess


def count():
    gpu_cmd = "nvidia-smi -L"
    try:
        result = subprocess.run(gpu_cmd.split(), capture_output=True, text=True, check=True)
        return len(result.stdout.splitlines())
    except subprocess.CalledProcessError:
        return 0


def listed():
    return subprocess.check_output(shlex.split("nvidia-smi --list-gpus"))


def split_literal():
    return subprocess.check_output("nvidia-smi -L".split())


def other_program():
    cmd = "ls -l"
    return subprocess.check_output(cmd.split())


def either_program(gpu):
    cmd = "nvidia-smi -L" if gpu else "ls -l"
    return subprocess.check_output(cmd.split())
'''


def test_a_program_named_through_a_split_string_is_the_program_started():
    assert triples(findings_of(PROGRAM_NAMED_THROUGH_A_SPLIT, select={"CDL220"})) == [
        ("CDL220", 8, 18),  # CalledProcessError does not catch the FileNotFoundError of a missing program
        ("CDL220", 15, 12),
        ("CDL220", 19, 12),
    ]


HANDLERS = '''import subprocess


def through_a_shell():
    try:
        return subprocess.check_output("nvidia-smi -L", shell=True)
    except subprocess.CalledProcessError:
        return b""


def no_shell_file_not_found():
    try:
        return subprocess.check_output(["nvidia-smi", "-L"])
    except FileNotFoundError:
        return b""


def no_shell_both():
    try:
        return subprocess.check_output(["nvidia-smi", "-L"])
    except (FileNotFoundError, subprocess.CalledProcessError):
        return b""


def no_shell_called_process_error_only():
    try:
        return subprocess.check_output(["nvidia-smi", "-L"])
    except subprocess.CalledProcessError:
        return b""


def no_shell_subprocess_error_only():
    try:
        return subprocess.check_output(["nvidia-smi", "-L"], shell=False)
    except subprocess.SubprocessError:
        return b""
'''


def test_called_process_error_catches_a_missing_program_only_through_a_shell():
    assert triples(findings_of(HANDLERS, select={"CDL220"})) == [
        ("CDL220", 27, 16),
        ("CDL220", 34, 16),
    ]


DEVICE_FOLLOWS_THE_BACKEND = '''import torch
import torch.distributed as dist


def init_pg(backend="auto"):
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    dist.init_process_group(backend=backend, rank=0, world_size=1)
    if backend == "nccl":
        return torch.device("cuda", 0)
    else:
        return torch.device("cpu")


def pick():
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    else:
        return torch.device("cpu")
'''


def test_a_device_chosen_by_the_backend_in_an_if_statement_follows_it():
    # gloo, the only backend a Mac has, takes CPU tensors: the CPU is the device that goes with it
    assert triples(findings_of(DEVICE_FOLLOWS_THE_BACKEND, select={"CDL104", "CDL101"})) == [
        ("CDL104", 16, 5),
    ]


FLOAT64_IN_THE_CPU_ARM = '''import torch

if torch.cuda.is_available():
    device = "cuda"

    def to_device(tensor):
        return tensor.to(device)

else:
    device = "cpu"

    def to_device(tensor):
        return tensor.double()


def build(model):
    if torch.cuda.is_available():
        dev = torch.device("cuda", 0)
    else:
        dev = torch.device("cpu")
        torch.set_default_dtype(torch.float64)
    return model.double().to(dev)


def no_selection(x):
    if not torch.cuda.is_available():
        torch.set_default_dtype(torch.float64)
    return x.double()


def mps_in_the_arm(x):
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
        if torch.backends.mps.is_available():
            device = "mps"
        x = x.double()
    return x.to(device)


def device_type_test(x, device):
    if device.type == "cuda":
        kind = "cuda"
    else:
        kind = "cpu"
        x = x.double()
    return x
'''


def test_float64_in_the_cpu_arm_of_a_cuda_or_cpu_selection_is_made_for_the_cpu():
    assert triples(findings_of(FLOAT64_IN_THE_CPU_ARM, select={"CDL601", "CDL602", "CDL608"})) == [
        ("CDL601", 27, 33),  # float64 where CUDA is missing, but no device chosen there
        ("CDL602", 28, 14),
        ("CDL602", 38, 15),  # the arm may choose MPS
        ("CDL602", 47, 15),  # a device that is not CUDA may be MPS: a test of the device, not of the host
    ]


OWN_GET_DEVICE = {
    "pkg/__init__.py": "",
    "pkg/backend.py": '''class Backend:
    def __init__(self, weight):
        self.weight = weight

    def get_device(self):
        return self.weight.device
''',
    "pkg/space.py": '''import torch


class Space:
    def __init__(self, generator):
        self.generator = generator

    def dense(self, n):
        return torch.zeros((n, n), device=self.generator.get_device())
''',
}


def test_get_device_is_the_projects_own_method_where_a_class_of_the_project_defines_it(tmp_path, monkeypatch):
    assert [hit for hit in lint_tree(tmp_path / "own", monkeypatch, OWN_GET_DEVICE) if hit[1] == "CDL118"] == []
    without = {**OWN_GET_DEVICE, "pkg/backend.py": OWN_GET_DEVICE["pkg/backend.py"].replace("get_device", "device_of")}
    assert [hit for hit in lint_tree(tmp_path / "other", monkeypatch, without) if hit[1] == "CDL118"] == [
        ("pkg/space.py", "CDL118", 9, 43),
    ]


DEVICE_FIXTURE_WITH_PARAMS = '''import pytest
import torch


@pytest.fixture(
    params=[
        "cpu",
        pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA unavailable")),
    ]
)
def device(request):
    """The devices the tests run on."""
    return request.param


@pytest.fixture(params=["cpu", "mps"])
def any_device(request):
    return request.param


def test_reference(device):
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, device=device)
    return a


def test_on_mps_too(any_device):
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, device=any_device)
    return a


def helper(device):
    return torch.tensor([1.0], dtype=torch.float64, device=device)
'''


def test_a_test_parameter_takes_the_params_of_the_modules_fixture_of_its_name(tmp_path, monkeypatch):
    # on a Mac the fixture hands only "cpu" (its "cuda" case is skipped there): float64 stays on the CPU
    hits = lint_tree(tmp_path, monkeypatch, {"tests/test_devices.py": DEVICE_FIXTURE_WITH_PARAMS})
    assert [hit for hit in hits if hit[1].startswith("CDL6")] == [
        ("tests/test_devices.py", "CDL608", 27, 9),
        ("tests/test_devices.py", "CDL608", 32, 12),  # a helper's parameter is its callers', not a fixture's
    ]


LOAD_UNDER_AN_UNPICKLING_HANDLER = '''import pickle
import warnings

import torch


def load(path):
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        warnings.warn(str(error))
        return torch.load(path, weights_only=False)
'''


def test_an_unpickling_handler_is_no_other_way_for_a_cuda_checkpoint():
    # a CUDA storage fails with RuntimeError (torch/serialization.py _validate_device), which the handler lets through
    assert triples(findings_of(LOAD_UNDER_AN_UNPICKLING_HANDLER, select={"CDL109"})) == [
        ("CDL109", 9, 16),
        ("CDL109", 12, 16),
    ]


CONVERSIONS_BEFORE_THE_HOST = '''import torch


def forces(results):
    return results["forces"].detach().flatten().to(torch.double).cpu().numpy()


def schedule(n):
    return torch.linspace(0, 1, n, dtype=torch.float64).cpu()


def on_host(x):
    return x.cpu().to(torch.float64).numpy()
'''


def test_a_conversion_to_float64_runs_on_the_device_even_when_cpu_follows():
    assert triples(findings_of(CONVERSIONS_BEFORE_THE_HOST, select={"CDL601", "CDL602"})) == [("CDL601", 5, 52)]


BINOMIAL = '''import torch


def sample(count, probs):
    return torch.binomial(count, probs)
'''


def test_binomial_reaches_an_operator_mps_lacks_before_2_14():
    assert triples(findings_of(BINOMIAL, select={"CDL604"}, torch_version="2.9.1")) == [("CDL604", 5, 12)]
    assert triples(findings_of(BINOMIAL, select={"CDL604"}, torch_version="2.14")) == []


DEVICE_STORED_FOR_A_LIBRARY = '''from transformers import AutoConfig


def load(name, gpu_id):
    config = AutoConfig.from_pretrained(name)
    config.init_device = "cuda:" + gpu_id
    return config


def mmdet_config(cfg):
    cfg["device"] = "cuda"
    cfg.work_dir = "./work_dirs"
    return cfg
'''

DEVICE_STORED_AND_READ_BACK = '''import torch


class Runner:
    def __init__(self):
        self.device = "cuda"

    def run(self, x):
        return x.to(self.device)
'''


def test_a_device_stored_under_a_devices_name_is_a_device_sink():
    assert triples(findings_of(DEVICE_STORED_FOR_A_LIBRARY, select={"CDL101"})) == [
        ("CDL101", 6, 26),
        ("CDL101", 11, 21),
    ]
    # read back in the module: reported where it reaches the device argument, which is named as related
    found = findings_of(DEVICE_STORED_AND_READ_BACK, select={"CDL101"})
    assert triples(found) == [("CDL101", 6, 23)]
    assert "reaches a device argument (self.device)" in found[0].message


CUDA_ONLY_BY_DESIGN = '''import torch


def autotune(size=10, device="cuda"):
    if not torch.cuda.is_available():
        raise RuntimeError("CUDA required for autotuning")
    return torch.zeros(size, device=device)


def measure(size=10, device="cuda"):
    return torch.zeros(size, device=device)


if __name__ == "__main__":
    autotune(size=4)
    measure(size=4)
'''


def test_a_cuda_default_of_a_function_that_raises_without_cuda_first_is_never_used_on_a_mac():
    # before: CDL108 at 4:30 and CDL113 at 15:5 as well
    assert triples(findings_of(CUDA_ONLY_BY_DESIGN, select={"CDL108", "CDL113"})) == [("CDL108", 10, 29)]


SIMULATOR_DEVICE = '''import torch


def render(backend, images):
    if backend.render_device.is_cuda():
        torch.cuda.synchronize()
    return images
'''


def test_a_devices_own_is_cuda_method_is_true_only_off_a_mac():
    assert triples(findings_of(SIMULATOR_DEVICE, select={"CDL201"})) == []


def test_isaac_lab_is_a_cuda_only_integration():
    found = findings_of("from omni.isaac.lab.app import AppLauncher\n\nlauncher = AppLauncher()\n", select={"CDL404"})
    assert triples(found) == [("CDL404", 1, 1)]
    assert "isaacsim runs only on NVIDIA GPUs" in found[0].message
