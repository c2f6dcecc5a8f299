"""Patterns from blind round 74 (bench/EVAL.md, session 40): a platform test through a name or in another
case (`SYSTEM = platform.system()`, `platform.system().lower() == "linux"`), a class built through its own
classmethod factory, the Hugging Face libraries' wrappers of `torch.cuda.is_available()` (re-exported by a
module of the project too), an attribute bound only in an arm no Mac takes, `pin_memory=x.is_cuda`, and an
enum member named for CUDA in lower case (`Device.cuda`)."""

from conftest import findings_of, lint_tree, triples

KERNELS = "import torch\nimport triton\n\n\ndef fast(x):\n    torch.cuda.synchronize()\n    return x\n"


def _api(test: str, binding: str = "") -> str:
    return f"import platform\n{binding}\nif {test}:\n    from pkg.kernels import fast\nelse:\n    fast = None\n"


def test_a_module_imported_only_where_the_platform_is_not_macos_is_not_reported(tmp_path, monkeypatch):
    for binding, test in (
        ("SYSTEM = platform.system()", 'SYSTEM != "Darwin"'),
        ("", 'platform.system().lower() == "linux"'),
        ("LOWER = platform.system().lower()", 'LOWER != "darwin"'),
    ):
        files = {"pkg/__init__.py": "", "pkg/api.py": _api(test, binding), "pkg/kernels.py": KERNELS}
        assert lint_tree(tmp_path, monkeypatch, files) == [], test


def test_the_same_module_imported_on_every_platform_is_reported(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/api.py": _api('SYSTEM == "Darwin"', "SYSTEM = platform.system()"),
             "pkg/kernels.py": KERNELS}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/kernels.py", "CDL404", 2, 1), ("pkg/kernels.py", "CDL201", 6, 5)]


PLATFORM_NAMES = '''import os
import platform
import sys

import torch

SYSTEM = platform.system()
LOWER = platform.system().lower()
OTHER = os.environ.get("SYSTEM", "Linux")


def bound():
    if SYSTEM != "Darwin":
        torch.cuda.synchronize()


def lowered():
    if LOWER == "linux":
        torch.cuda.synchronize()


def called():
    if platform.system().casefold() != "darwin":
        torch.cuda.synchronize()


def local():
    system = sys.platform
    if system.startswith("linux"):
        torch.cuda.synchronize()


def not_a_platform():
    if OTHER != "Darwin":
        torch.cuda.synchronize()


def on_a_mac():
    if SYSTEM == "Darwin":
        torch.cuda.synchronize()
'''


def test_platform_tests_through_names_and_case_methods():
    assert triples(findings_of(PLATFORM_NAMES, select={"CDL201"})) == [("CDL201", 35, 9), ("CDL201", 40, 9)]


ENGINE = '''import torch


class Engine:
    def __init__(self, size):
        self.buffer = torch.empty(size, device="cuda")
        torch.cuda.synchronize()

    @classmethod
    def from_args(cls, args):
        return cls(args.size)
'''


def _caller(test: str) -> str:
    return f"import torch\n\nfrom pkg.engine import Engine\n\n\ndef run(args):\n    if {test}:\n        return Engine.from_args(args)\n    return None\n"


def test_a_class_built_only_by_its_factory_under_a_guard_runs_only_off_a_mac(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/engine.py": ENGINE, "pkg/run.py": _caller("torch.cuda.is_available()")}
    assert lint_tree(tmp_path, monkeypatch, files) == []


def test_a_class_built_by_its_factory_anywhere_is_reported(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/engine.py": ENGINE, "pkg/run.py": _caller("args.fast")}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/engine.py", "CDL101", 6, 48), ("pkg/engine.py", "CDL201", 7, 9)]


HF_QUERIES = '''import torch
from accelerate.utils import is_cuda_available
from transformers.utils import is_torch_cuda_available, is_torch_mps_available


def free():
    if is_torch_mps_available():
        torch.mps.empty_cache()
    elif is_torch_cuda_available():
        torch.cuda.empty_cache()


def peak():
    return torch.cuda.max_memory_allocated() if is_cuda_available() else 0


def unguarded():
    torch.cuda.empty_cache()
'''


def test_the_hugging_face_wrappers_of_the_cuda_query_guard():
    assert triples(findings_of(HF_QUERIES, select={"CDL202"})) == [("CDL202", 18, 5)]


def test_a_query_a_module_of_the_project_re_exports_guards(tmp_path, monkeypatch):
    misc = "from transformers.utils import is_torch_cuda_available  # noqa: F401\n"
    user = "import torch\n\nfrom .misc import is_torch_cuda_available\n\n\ndef sync():\n    if is_torch_cuda_available():\n        torch.cuda.synchronize()\n"
    files = {"pkg/__init__.py": "", "pkg/misc.py": misc, "pkg/user.py": user}
    assert lint_tree(tmp_path, monkeypatch, files) == []
    unguarded = user.replace("    if is_torch_cuda_available():\n        torch", "    if is_torch_cuda_available:\n        pass\n    torch")
    files["pkg/user.py"] = unguarded
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/user.py", "CDL201", 9, 5)]


CAPTURE = '''import torch


class Capture:
    def __init__(self, model, use_graphs=True):
        self.model = model
        if "cuda" in str(model.device):
            self.graphs = use_graphs
        else:
            self.graphs = False

    def __call__(self, x):
        if self.graphs:
            return self._replay(x)
        return self.model(x)

    def _replay(self, x):
        torch.cuda.synchronize()
        return x
'''


def test_a_private_method_called_under_an_attribute_bound_only_off_a_mac(tmp_path, monkeypatch):
    assert lint_tree(tmp_path, monkeypatch, {"capture.py": CAPTURE}) == []
    everywhere = CAPTURE.replace('        if "cuda" in str(model.device):\n', "        if use_graphs:\n")
    assert lint_tree(tmp_path, monkeypatch, {"capture.py": everywhere}) == [("capture.py", "CDL201", 18, 9)]


PINNED = '''import torch


def stage(t):
    return torch.empty(t.shape, pin_memory=t.is_cuda)


def flag(t):
    return {"pinned": t.is_cuda}
'''


def test_pinning_only_for_a_tensor_on_cuda_is_not_reported():
    assert triples(findings_of(PINNED, select={"CDL103"})) == [("CDL103", 9, 23)]


DEVICES = '''import enum

import torch


class Device(enum.Enum):
    cpu = "cpu"
    cuda = "cuda"
    mps = "mps"
'''

QUANTIZE = '''import torch


def quantize(model, device="cuda"):
    return model.to(device)
'''


def _interface(test: str) -> str:
    return f"from pkg.devices import Device\nfrom pkg.quant import quantize\n\n\ndef load(model, device):\n    if {test}:\n        return quantize(model)\n    return model\n"


def test_a_lower_case_enum_member_named_for_cuda_guards_across_modules(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/devices.py": DEVICES, "pkg/quant.py": QUANTIZE,
             "pkg/interface.py": _interface("device == Device.cuda")}
    assert lint_tree(tmp_path, monkeypatch, files) == []
    files["pkg/interface.py"] = _interface("device == Device.mps")
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/interface.py", "CDL113", 7, 16), ("pkg/quant.py", "CDL108", 4, 28)]


COPIES = '''import torch


def tested(model, batch, device):
    input_ids = batch["input_ids"].to(device, non_blocking=True)
    mask = batch.get("mask")
    mask = mask.to(device, non_blocking=True)
    out = model(input_ids, mask)
    if not torch.any(out > 0):
        raise ValueError("no positive score")
    return out


def tested_in_a_branch(model, batch, device, check):
    input_ids = batch["input_ids"].to(device, non_blocking=True)
    out = model(input_ids)
    if check:
        if not torch.any(out > 0):
            raise ValueError("no positive score")
    return out


def defaulted(model, batch, device):
    mask = batch.get("mask", torch.ones(4))
    mask = mask.to(device, non_blocking=True)
    out = model(mask)
    if out.any():
        print("some")
    return out
'''


def test_a_copy_whose_function_then_tests_a_reduction_has_landed():
    assert triples(findings_of(COPIES, select={"CDL304"})) == [("CDL304", 15, 47), ("CDL304", 25, 28)]


FLEX = '''import torch


def attend(x, flex, attention, fallback):
    device, input_is_cuda = x.device, x.is_cuda
    use_flex = flex and input_is_cuda
    if use_flex:
        return attention(x)
    return fallback(x)


def stored(x, config):
    use_flex = config.flex and x.is_cuda
    config.use_flex = use_flex
    return config


def either(x, flex, attention, fallback):
    on_gpu = x.is_cuda
    use_flex = flex or on_gpu
    if use_flex:
        return attention(x)
    return fallback(x)
'''


def test_is_cuda_kept_in_a_name_that_another_name_tests_through_an_and():
    assert triples(findings_of(FLEX, select={"CDL103"})) == [("CDL103", 13, 32), ("CDL103", 19, 14)]


PATCHED = '''import unittest
from unittest.mock import patch

import torch


class TestFit(unittest.TestCase):
    @patch("pkg.model.Metric.available", return_value=False)
    def test_fit(self, _, cuda: bool = False) -> None:
        device = torch.device("cuda" if cuda else "cpu")
        torch.ones(2, device=device)

    def test_fit_cuda(self) -> None:
        if torch.cuda.is_available():
            self.test_fit(cuda=True)

    @patch("pkg.model.Metric.available", return_value=False)
    def test_fit_anywhere(self, _, cuda: bool = False) -> None:
        torch.ones(2, device=torch.device("cuda" if cuda else "cpu"))

    def test_fit_anywhere_cuda(self) -> None:
        self.test_fit_anywhere(cuda=True)
'''


def test_a_patched_test_called_with_cuda_only_under_a_guard():
    assert triples(findings_of(PATCHED, path="tests/test_fit.py", select={"CDL101"})) == [("CDL101", 19, 43)]


HOST_DATA = '''from typing import Optional

import numpy as np
import numpy.typing as npt
import torch


def stats(df) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]:
    return df.a.values, df.b.values


def value(x) -> float:
    return float(x)


def constraints(pair: tuple[npt.NDArray, npt.NDArray] | None, bounds: list[tuple[float, float]]):
    a = torch.as_tensor(pair[0], dtype=torch.double)
    b = torch.tensor(bounds, dtype=torch.double)
    return a, b


def columns(df, flag):
    if flag:
        mean, sigma = stats(df)
    else:
        mean = df["a"].fillna(0).values
        sigma = np.zeros(3)
    return torch.tensor(mean, dtype=torch.double), torch.tensor(sigma, dtype=torch.double)


def scalar(x):
    return torch.tensor(value(x), dtype=torch.double)


def tensors(items: list[torch.Tensor], maybe: Optional[torch.Tensor]):
    return torch.tensor(items, dtype=torch.double), torch.as_tensor(maybe, dtype=torch.double)
'''


def test_float64_of_data_annotated_as_host_data_is_not_reported():
    assert triples(findings_of(HOST_DATA, select={"CDL601"})) == [("CDL601", 36, 38), ("CDL601", 36, 82)]


SAVE_ON_CPU = '''import torch
from torch.utils.data import DataLoader

offload = torch.autograd.graph.save_on_cpu(pin_memory=True)
loader = DataLoader([1, 2], pin_memory=True)
'''


def test_save_on_cpu_pins_only_where_cuda_is_available():
    assert triples(findings_of(SAVE_ON_CPU, select={"CDL301"})) == [("CDL301", 5, 29)]


BLOCK_MASK = '''from torch.nn.attention.flex_attention import create_block_mask


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def masks(n, device):
    default = create_block_mask(causal, None, None, n, n)
    by_keyword = create_block_mask(causal, None, None, n, n, device=device)
    by_position = create_block_mask(causal, None, None, n, n, device)
    return default, by_keyword, by_position
'''


def test_create_block_mask_without_a_device_builds_on_cuda():
    found = findings_of(BLOCK_MASK, select={"CDL113"})
    assert triples(found) == [("CDL113", 9, 15)]
    assert found[0].message == ('create_block_mask() takes its device="cuda" default (torch/nn/attention/flex_attention.py): '
                                "pass the selected device")


STREAMS = '''from contextlib import contextmanager
from typing import Optional

import torch


@contextmanager
def on_stream(comm: torch.cuda.Stream | None):
    if comm is None:
        yield
        return
    comm.wait_stream(torch.cuda.current_stream(comm.device))
    with torch.cuda.stream(comm):
        yield


def wait_for(event: Optional[torch.cuda.Event]) -> None:
    if event is not None:
        torch.cuda.current_stream().wait_event(event)


def any_object(thing: object | None) -> None:
    if thing is not None:
        torch.cuda.synchronize()
'''


def test_a_parameter_annotated_as_a_cuda_object_or_none_is_none_on_a_mac():
    assert triples(findings_of(STREAMS, select={"CDL201", "CDL305"})) == [("CDL201", 24, 9)]


ACCUMULATED = '''import torch


def offload(tensors):
    copied = False
    for t in tensors:
        copied = copied or t.is_cuda
        t.to("cpu")
    if copied:
        torch.cuda.current_stream().synchronize()


def anything(tensors, flag):
    copied = False
    for t in tensors:
        copied = copied or flag
    if copied:
        torch.cuda.current_stream().synchronize()
'''


def test_a_flag_accumulated_from_is_cuda_guards():
    assert triples(findings_of(ACCUMULATED, select={"CDL103", "CDL305"})) == [("CDL305", 18, 9)]


ELIF_SELECTION = '''import torch


class Trainer:
    def pick(self, rank):
        if rank != -1:
            torch.cuda.set_device(rank)
            self.device = torch.device("cuda", rank)
        elif torch.cuda.is_available():
            self.device = torch.device("cuda")
            self.distributed = False
        else:
            self.device = torch.device("cpu")
            self.distributed = False

    def pick_mps(self, rank):
        if rank != -1:
            self.device = torch.device("cuda", rank)
        elif torch.backends.mps.is_available():
            self.device = torch.device("mps")
        elif torch.cuda.is_available():
            self.device = torch.device("cuda")
        else:
            self.device = torch.device("cpu")

    def pick_twice(self):
        if torch.cuda.is_available():
            self.device = torch.device("cuda")
        elif torch.cuda.device_count() > 0:
            self.device = torch.device("cuda", 0)
        else:
            self.device = torch.device("cpu")
'''


def test_the_first_cuda_test_of_a_chain_is_judged_as_a_selection():
    assert triples(findings_of(ELIF_SELECTION, select={"CDL104"})) == [("CDL104", 9, 9), ("CDL104", 27, 9)]


FLOAT64_FALLBACK = '''import warnings

import torch


def precise(data):
    try:
        wide = data.to(torch.float64)
    except TypeError:
        warnings.warn("no float64 here")
        wide = data.to(torch.float32)
    return wide


def other_error(data):
    try:
        wide = data.to(torch.float64)
    except ValueError as error:
        raise RuntimeError("cannot widen") from error
    return wide


def after_the_try(data):
    try:
        data = data.contiguous()
    except TypeError:
        pass
    return data.to(torch.float64)
'''


def test_float64_in_a_try_that_catches_what_mps_raises_has_its_fallback():
    assert triples(findings_of(FLOAT64_FALLBACK, select={"CDL601"})) == [("CDL601", 17, 24), ("CDL601", 28, 20)]


FINDER = '''import torch


def find_lr(model, device="cuda"):
    """Run the finder."""
    if device is None:
        device = "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        device = "mps"
    if device == "mps" and not torch.backends.mps.is_available():
        device = "cpu"
    return model.to(torch.device(device))


def fit(model, device="cuda"):
    return model.to(device)
'''


def test_a_cuda_default_the_function_resolves_for_a_mac_is_a_preference(tmp_path, monkeypatch):
    caller = "from pkg.finder import find_lr, fit\n\n\ndef run(model):\n    find_lr(model)\n    fit(model)\n"
    found = lint_tree(tmp_path, monkeypatch, {"pkg/__init__.py": "", "pkg/finder.py": FINDER, "pkg/run.py": caller})
    assert [f for f in found if f[1] in ("CDL101", "CDL108", "CDL113")] == [
        ("pkg/finder.py", "CDL101", 7, 18), ("pkg/finder.py", "CDL108", 15, 23), ("pkg/run.py", "CDL113", 6, 5)]


FLASH = '''from transformers import AutoModelForCausalLM
from transformers.utils import is_flash_attn_2_available


def load(name, **kwargs):
    implementation = kwargs.get("attention_implementation", "flash_attention_2")
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=implementation)


def portable(name):
    implementation = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=implementation)


model = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation="flash_attention_2")
eager = AutoModelForCausalLM.from_pretrained("gpt2", attn_implementation="sdpa")
'''


def test_flash_attention_asked_of_a_hugging_face_model():
    found = findings_of(FLASH, select={"CDL409"})
    assert triples(found) == [("CDL409", 6, 61), ("CDL409", 15, 54)]
    assert found[0].related[0].line == 7


IN_A_TRY = '''import torch


def resolve(device):
    try:
        import torch.cuda

        if device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return device
    except ImportError:
        return "cpu"


def synchronize():
    try:
        torch.cuda.synchronize()
    except Exception:
        pass
'''


def test_a_selection_in_a_try_that_falls_back_is_still_a_selection():
    assert triples(findings_of(IN_A_TRY, select={"CDL104", "CDL201"})) == [("CDL104", 9, 20)]


SAFE_IMPORT = '''from pkg.dependencies import _safe_import

torch = _safe_import("torch")
empty_cache = _safe_import("torch.cuda.empty_cache")
numpy = _safe_import("numpy")


def resolve(device):
    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    return device


def release(model):
    model.to("cpu")
    empty_cache()
'''


def test_a_module_bound_by_an_optional_import_helper_is_that_module():
    assert triples(findings_of(SAFE_IMPORT, select={"CDL101", "CDL202"})) == [("CDL202", 20, 5)]


IN_STEPS = '''def detect():
    name = None
    try:
        import torch.mps

        torch.mps.current_allocated_memory()
        name = "mps"
    except (RuntimeError, ImportError):
        pass
    if name is None:
        try:
            import torch

            if torch.cuda.is_available():
                name = "cuda"
            else:
                name = "cpu"
        except ImportError:
            name = "cpu"
    return name


def detect_without_mps():
    name = None
    try:
        import torch

        if torch.cuda.is_available():
            name = "cuda"
        else:
            name = "cpu"
    except ImportError:
        name = "cpu"
    return name
'''


def test_a_selection_after_an_earlier_step_that_picks_mps_is_part_of_the_detection():
    assert triples(findings_of(IN_STEPS, select={"CDL104"})) == [("CDL104", 28, 9)]


LABELS = '''import torch


class Tracker:
    def __init__(self):
        self.tracked = {}

    def hook(self, tensor):
        key = "cpu" if not tensor.is_cuda else "cuda:{}".format(tensor.get_device())
        self.tracked[key] = tensor

    def place(self, tensor):
        key = "cuda" if torch.cuda.is_available() else "cpu"
        self.tracked[key] = tensor.to(key)
'''


def test_a_device_label_used_only_as_a_key_chooses_nothing():
    assert triples(findings_of(LABELS, select={"CDL104"})) == [("CDL104", 13, 15)]
