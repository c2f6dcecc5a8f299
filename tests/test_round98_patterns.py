"""What blind round 98 (pythae, rllte-core) showed, beyond the device flow across modules
(test_device_flow.py) and NumPy's float64 scalars (test_float64_numpy_scalars.py)."""

from conftest import findings_of


def test_nvml_bindings_are_described_by_what_they_read_not_by_kernels():
    # pynvml has no kernels: it reads NVIDIA's management library, which a Mac has no driver for
    found = findings_of("pynvml==11.5.0\ngpustat\n", path="requirements.txt", kind="requirements", select={"CDL504"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL504", 1, 1), ("CDL504", 2, 1)]
    assert found[0].message == (
        "`pynvml` installs without CUDA, but it reads NVIDIA's management library (NVML), which needs an NVIDIA "
        "driver: its calls fail on a Mac; consider torch.accelerator memory statistics and psutil for host memory")


def test_a_librarys_is_package_available_helper_guards_that_packages_import_under_any_path():
    # simcse: transformers' is_apex_available(), read from transformers.file_utils (an older home of it)
    code = '''from transformers.file_utils import is_apex_available
from diffusers.utils.import_utils import is_xformers_available
from transformers.utils import is_torch_available
from mylib import is_apex_available as mine

if is_apex_available():
    from apex import amp

if is_xformers_available():
    import xformers.ops

if mine():
    import apex.normalization

if is_torch_available():  # torch is no CUDA-only package: this runs on a Mac
    import apex.optimizers

import apex
'''
    found = findings_of(code, select={"CDL404"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL404", 13, 5), ("CDL404", 16, 5), ("CDL404", 18, 1)]


def test_a_save_then_a_load_in_the_block_that_holds_it_is_a_copy_not_a_checkpoint():
    # torchlayers' build(): a module copied through an in-memory buffer lands where the module already is
    code = '''import io

import torch


def copied(module):
    with io.BytesIO() as buffer:
        torch.save(module, buffer)
        return torch.load(io.BytesIO(buffer.getvalue()))


def read_first(module, path):
    with open(path, "rb") as handle:
        state = torch.load(handle)
        torch.save(module, path + ".bak")
    return state


def other_arm(module, path, fresh):
    if fresh:
        torch.save(module, path)
    else:
        with open(path, "rb") as handle:
            return torch.load(handle)
'''
    found = findings_of(code, select={"CDL109"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL109", 14, 17), ("CDL109", 24, 20)]


def test_a_parameter_bound_to_a_name_nothing_registers_is_no_modules_state():
    # torch-topological's example scripts: a free leaf tensor an optimizer updates where it was made
    code = '''import numpy as np
import torch
from torch import nn

if __name__ == "__main__":
    X = torch.nn.Parameter(torch.as_tensor(np.random.rand(100, 2)), requires_grad=True)
    opt = torch.optim.Adam([X], lr=1e-2)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        w = nn.Parameter(torch.as_tensor(np.random.rand(3)))
        self.w = w
        self.v = nn.Parameter(torch.as_tensor(np.random.rand(3)))
        u = nn.Parameter(torch.as_tensor(np.random.rand(3)))
        self.register_parameter("u", u)


def make():
    p = nn.Parameter(torch.as_tensor(np.random.rand(3)))
    return p
'''
    found = findings_of(code, select={"CDL607"})
    assert [(f.code, f.line, f.column) for f in found] == [
        ("CDL607", 13, 13), ("CDL607", 15, 18), ("CDL607", 16, 13), ("CDL607", 21, 9)]


def test_a_load_after_a_call_of_a_function_of_the_file_that_saves_is_a_round_trip():
    # fschat's apply_delta: `split_files(...)` writes the shards its caller then loads
    code = '''import torch


def split_files(model_path, tmp_path):
    torch.save(torch.load(model_path, map_location="cpu"), tmp_path)


def apply(model_path, tmp_path):
    split_files(model_path, tmp_path)
    return torch.load(tmp_path)


def unrelated(path):
    print(path)
    return torch.load(path)


split_files("a.bin", "b.bin")
data = torch.load("b.bin")


class Codes:
    def export(self, folder):
        torch.save(self.codes.cpu(), folder + "/train.pt")

    def fit(self, folder):
        self.export(folder)  # carefree-learn's VQ-VAE: its own method wrote what it reads next
        return torch.load(folder + "/train.pt")

    def resume(self, folder):
        return torch.load(folder + "/train.pt")

    def copied(self):
        buffer = io.BytesIO()
        torch.save(self.network.state_dict(), buffer)
        buffer.seek(0)
        return torch.load(buffer)

    def restore(self, state_bytes):
        self.copied()  # sktime's mantis: a copy through memory writes nothing the next load reads
        return torch.load(io.BytesIO(state_bytes))
'''
    found = findings_of("import io\n" + code, select={"CDL109"})
    assert [(f.code, f.line, f.column) for f in found] == [
        ("CDL109", 16, 12), ("CDL109", 20, 8), ("CDL109", 32, 16), ("CDL109", 42, 16)]


def test_a_setup_py_entry_read_into_two_extras_is_one_finding():
    # carefree-learn: `full = cv_requires + [...]`; the entry of the CUDA-only extra alone is not reported
    setup = '''from setuptools import setup

gpu = [
    "xformers>=0.0.19",
]
cv = ["timm"] + gpu
setup(name="x", install_requires=["torch"], extras_require={"cuda": gpu, "cv": cv, "full": cv + ["onnx"]})
'''
    found = findings_of(setup, path="setup.py", select={"CDL501"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL501", 4, 5)]


def test_a_cuda_device_bound_to_a_name_only_compared_with_places_nothing():
    code = '''import torch


def test_get_torch_device():
    cuda1 = torch.device("cuda:1")
    assert get_torch_device("cuda:1") == cuda1
    assert cuda1.type != get_torch_device(None).type


def place(x):
    cuda1 = torch.device("cuda:1")
    if x.device == cuda1:
        return x
    return x.to(cuda1)
'''
    found = findings_of(code, select={"CDL101"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL101", 11, 26)]


def test_a_cuda_or_cpu_selection_stored_under_a_string_key_is_a_selection():
    # lightautoml's presets: `self.nn_params["device"] = ...` in the CUDA arm, "cpu" in the other
    code = '''import torch


class Preset:
    def infer(self, params):
        if torch.cuda.device_count() > 0:
            self.nn_params["device"] = "cuda:0"
        else:
            self.nn_params["device"] = "cpu"
        if torch.cuda.is_available():
            params["device"] = "cuda"
        else:
            params["device"] = "cpu"
        if torch.cuda.is_available():
            params[0] = "cuda"
        else:
            params[0] = "cpu"
'''
    found = findings_of(code, select={"CDL104"})
    assert [(f.code, f.line, f.column) for f in found] == [("CDL104", 6, 9), ("CDL104", 10, 9)]
