"""Patterns from blind round 84 (bench/EVAL.md, session 42): an import in a `try:` whose handler only
raises or exits is required, as if it stood alone (a handler that returns, falls back or skips the test
keeps it optional); a JIT build that registers operators only, or one named as the project's own package,
makes no module to import; a device selection written with its test negated (`if <no CUDA>: cpu` / `else:
cuda`); Lightning's "gpu" accelerator chosen only where CUDA is there; MPS named inside a longer name
(`is_mps_available`) is a Mac path; a build query beside an availability query of MPS asks nothing new."""

from conftest import findings_of, lint_tree, triples

REQUIRED_IMPORTS = '''import sys


def load_engine(path):
    try:
        from exllamav2 import ExLlamaV2
    except ImportError as error:
        print(f"cannot load: {error}")
        sys.exit(-1)
    return ExLlamaV2(path)


def load_mixed_precision():
    try:
        import apex
    except ImportError:
        raise ImportError("install apex for mixed precision")
    return apex


def optional_engine():
    try:
        import apex
    except ImportError:
        return None
    return apex


try:
    import flash_attn
except ImportError:
    flash_attn = None
'''


def test_an_import_whose_handler_only_raises_or_exits_is_required():
    assert triples(findings_of(REQUIRED_IMPORTS, select={"CDL404"})) == [("CDL404", 6, 9), ("CDL404", 15, 9)]


KERNELS = '''import torch.utils.cpp_extension


def build():
    torch.utils.cpp_extension.load_inline(name="fastpkg", cpp_sources=[], cuda_sources=[SOURCE], is_python_module=False)
    torch.utils.cpp_extension.load_inline(name="fused_ops", cpp_sources=[], cuda_sources=[SOURCE])
'''


def test_an_extension_that_registers_operators_or_shares_the_package_name_is_no_import(tmp_path, monkeypatch):
    files = {
        "fastpkg/__init__.py": "from . import matcher\nfrom .matcher import apply\n",
        "fastpkg/matcher.py": "import fastpkg.kernels\n\n\ndef apply(x):\n    return x\n",
        "fastpkg/kernels.py": KERNELS,
        "fastpkg/use_fused.py": "import fused_ops\n",
        "fastpkg/jit_named.py": "import torch.utils.cpp_extension\n\next = torch.utils.cpp_extension.load(name=\"fastpkg\", sources=[\"k.cu\"])\n",
    }
    found = [f for f in lint_tree(tmp_path, monkeypatch, files) if f[1] == "CDL406"]
    assert found == [("fastpkg/use_fused.py", "CDL406", 1, 1)]


NEGATED = '''import torch


class Estimator:
    def __init__(self, device_type="gpu"):
        if device_type == "cpu" or not torch.cuda.is_available():
            self._device = torch.device("cpu")
        else:
            index = torch.cuda.current_device()
            self._device = torch.device(f"cuda:{index}")

    def reset(self):
        if not torch.cuda.is_available():
            self.device = "cpu"
        else:
            self.device = "cuda"

    def probe(self, device):
        if device.type != "cuda":
            self.host = "cpu"
        else:
            self.host = "cuda"
'''


def test_a_selection_with_its_test_negated_is_a_selection():
    assert triples(findings_of(NEGATED, select={"CDL104"})) == [("CDL104", 6, 9), ("CDL104", 13, 9), ("CDL104", 19, 9)]


ACCELERATOR = '''import lightning as L
import torch
import faiss

trainer = L.Trainer(accelerator="gpu" if torch.cuda.is_available() else "cpu")
accelerator = "gpu" if torch.cuda.is_available() else "cpu"
index_kind = "gpu" if torch.cuda.is_available() else "cpu"
'''


def test_lightning_gpu_chosen_only_with_cuda_forgets_mps():
    assert triples(findings_of(ACCELERATOR, select={"CDL104"})) == [("CDL104", 5, 33), ("CDL104", 6, 15)]


MPS_NAMED = '''from torch.backends.mps import is_available as is_mps_available
from torch.backends.mps import is_built as is_mps_built
from torch.cuda import is_available as is_cuda_available


def default_device():
    if is_cuda_available():
        return "cuda"
    elif is_mps_available() and is_mps_built():
        return "cpu"  # some operators this package needs are missing on MPS: the CPU, on purpose
    else:
        return "cpu"


def built_only():
    if is_mps_built():
        return "mps"
    return "cpu"
'''


def test_mps_named_inside_a_name_is_a_mac_path_and_asks_for_availability():
    assert triples(findings_of(MPS_NAMED, select={"CDL104", "CDL111"})) == [("CDL111", 16, 8)]


MOVED_FOR_CUDA = '''import torch


class Translator:
    def __init__(self, model, device="cpu"):
        self.device = device
        self.model = model
        if self.device == "cuda":
            self.model.cuda()

    def portable(self, x):
        if self.device == "cuda":
            x = x.cuda()
        else:
            x = x.to(self.device)
        return x

    def host(self, x):
        if torch.cuda.is_available():
            x = x.cuda()
        return x
'''


def test_a_move_made_only_where_the_chosen_device_is_cuda_collapses_it():
    assert triples(findings_of(MOVED_FOR_CUDA, select={"CDL104", "CDL107"})) == [("CDL107", 8, 9), ("CDL104", 19, 9)]


def test_the_reviewed_api_cases_name_each_api_once(tmp_path):
    import shutil

    import pytest

    from cudalint.catalog import rules_dir
    from cudalint.coverage.api_ops import API_CASES_FILE, API_OPS_FILE, load_api_ops

    shutil.copy(rules_dir() / API_OPS_FILE, tmp_path / API_OPS_FILE)
    entry = '[[api]]\nname = "torch.cdist"\nsource = "a review"\nops = ["aten::_cdist_forward"]\n\n'
    (tmp_path / API_CASES_FILE).write_text(entry + entry, encoding="utf-8")
    with pytest.raises(ValueError, match="more than one entry for torch.cdist"):
        load_api_ops(str(tmp_path / API_OPS_FILE))
    (tmp_path / API_CASES_FILE).write_text(entry, encoding="utf-8")
    assert load_api_ops(str(tmp_path / API_OPS_FILE))["apis"]["torch.cdist"]["ops"] == ["aten::_cdist_forward"]
