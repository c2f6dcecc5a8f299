"""Patterns from blind round 79 (bench/EVAL.md, session 41): a device selection whose arms are named
constants (here or imported), a test helper that skips one parametrized device where CUDA is missing, a
keyword reaching a call from a row of a table of configurations or from a dict spread into it, host data
reaching an operator through a checkpoint's entries and through the parameter of a helper every call of
which passes host data, and fake quantization's operators (CPU and CUDA kernels only)."""

from conftest import findings_of, lint_tree, triples

from cudalint.coverage.api_ops import assess_api
from cudalint.coverage.release_facts import KIND_MISSING, KIND_MISSING_BACKEND
from cudalint.coverage.shared_facts import missing_kind

SELECTION = '''import torch
from pkg.constants import CUDA, CPU

DEVICE = torch.device(CUDA if torch.cuda.is_available() else CPU)
MPS_FIRST = torch.device("mps" if torch.backends.mps.is_available() else CUDA if torch.cuda.is_available() else CPU)
'''

LOCAL_SELECTION = '''import torch

GPU = "cuda"
HOST = "cpu"
OTHER = "cuda" if torch.cuda.is_available() else "xla"


def pick():
    return GPU if torch.cuda.is_available() else HOST


def not_a_device_pair():
    return OTHER if torch.cuda.is_available() else HOST
'''


def test_a_selection_between_named_constants_is_a_selection(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/constants.py": 'CUDA = "cuda"\nCPU = "cpu"\n', "pkg/device.py": SELECTION}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/device.py", "CDL104", 4, 23)]
    assert triples(findings_of(LOCAL_SELECTION, select={"CDL104"})) == [("CDL104", 9, 12)]


HELPER = '''import pytest
import torch


def check_device(device: str) -> int:
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA is not available")
    if device == "mps" and not torch.backends.mps.is_available():
        pytest.skip("MPS is not available")
    return 2 if device == "cpu" else 20
'''

TESTS = '''

@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_checked(device):
    steps = check_device(device)
    torch.zeros(steps, device=device)


@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_checked_by_keyword(device):
    check_device(device=device)
    torch.zeros(3, device=device)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_unchecked(device):
    torch.zeros(3, device=device)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_checked_after_use(device):
    torch.zeros(3, device=device)
    check_device("cpu")
'''


def test_a_helper_that_skips_the_cuda_case_guards_it_in_the_same_file():
    assert triples(findings_of(HELPER + TESTS, path="tests/test_devices.py", select={"CDL101"})) == [
        ("CDL101", 25, 37), ("CDL101", 30, 37)]


def test_a_helper_that_skips_the_cuda_case_guards_it_from_another_module(tmp_path, monkeypatch):
    imports = "import pytest\nimport torch\n\nfrom tests.utils import check_device\n"
    files = {"tests/__init__.py": "", "tests/utils.py": HELPER, "tests/test_devices.py": imports + TESTS}
    assert lint_tree(tmp_path, monkeypatch, files) == [("tests/test_devices.py", "CDL101", 19, 37),
                                                       ("tests/test_devices.py", "CDL101", 24, 37)]


DECORATOR = """from functools import wraps

import pytest
import torch


def skip_if_no_cuda(f):
    @wraps(f)
    def wrapped(device, *args, **kwargs):
        if device == "cuda" and not torch.cuda.is_available():
            pytest.skip("CUDA is not available")
        f(device, *args, **kwargs)

    return wrapped
"""

DECORATED = """

@skip_if_no_cuda
@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_decorated(device):
    torch.zeros(3, device=device)


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_bare(device):
    torch.zeros(3, device=device)
"""


def test_a_decorator_whose_wrapper_skips_the_cuda_case(tmp_path, monkeypatch):
    assert triples(findings_of(DECORATOR + DECORATED, path="tests/test_devices.py", select={"CDL101"})) == [("CDL101", 23, 37)]
    imports = "import pytest\nimport torch\n\nfrom tests.helpers import skip_if_no_cuda\n"
    files = {"tests/__init__.py": "", "tests/helpers.py": DECORATOR, "tests/test_devices.py": imports + DECORATED}
    assert lint_tree(tmp_path, monkeypatch, files) == [("tests/test_devices.py", "CDL101", 13, 37)]


def test_a_helper_that_does_not_skip_off_cuda_guards_nothing():
    helper = HELPER.replace("not torch.cuda.is_available()", "verbose")
    assert triples(findings_of(helper + TESTS, path="tests/test_devices.py", select={"CDL101"})) == [
        ("CDL101", 13, 37), ("CDL101", 19, 37), ("CDL101", 25, 37), ("CDL101", 30, 37)]


CONFIGS = '''from torch.utils.data import DataLoader
from transformers import AutoModel

MODELS = {
    "small": {"model": {"path": "a", "attn_implementation": "flash_attention_2"}},
    "large": {"model": {"path": "b", "attn_implementation": "sdpa"}},
}
LOADER = {"batch_size": 4, "pin_memory": True}
DEVICES = {"gpu": "cuda", "host": "cpu"}


class Scorer:
    def __init__(self, name):
        self.info = MODELS[name]

    def load(self):
        return AutoModel.from_pretrained("p", attn_implementation=self.info["model"]["attn_implementation"])

    def load_spread(self):
        return AutoModel.from_pretrained(**self.info["model"])


def loader(dataset):
    return DataLoader(dataset, **LOADER)


def chosen(kind):
    return AutoModel.from_pretrained("p", device_map=DEVICES[kind])
'''


def test_a_keyword_from_a_row_of_a_table_of_configurations_or_a_spread_dict():
    found = findings_of(CONFIGS, select={"CDL409", "CDL301", "CDL101"})
    assert triples(found) == [("CDL409", 5, 61), ("CDL301", 8, 42)]
    spread = [f for f in found if f.code == "CDL301"][0]
    assert "DataLoader(**LOADER)" in spread.message
    assert [(place.line, place.column) for place in spread.related] == [(24, 32)]


CHECKPOINT = '''import torch
import torch.nn.functional as F


def _interpolate_pos_embed(model, checkpoint):
    pos_embed = checkpoint["pos_embed"].float()
    tokens = pos_embed[:, 1:]
    tokens = tokens.reshape(-1, 4, 4, 8).permute(0, 3, 1, 2)
    tokens = F.interpolate(tokens, size=(8, 8), mode="bicubic")
    return tokens


def load(model, path):
    state_dict = torch.load(path, map_location="cpu")
    _interpolate_pos_embed(model, state_dict)


def _resize(features):
    return F.interpolate(features, size=(8, 8), mode="bicubic")


def run(model, path, x):
    _resize(torch.load(path, map_location="cpu")["pos"])
    _resize(model(x))


def direct(path):
    table = torch.load(path, map_location="cpu")
    return F.interpolate(table["pos"], size=(8, 8), mode="bicubic")
'''


PINNED = '[project]\nname = "pkg"\nversion = "1"\ndependencies = ["torch==2.5.1"]\n'


def test_host_data_through_checkpoint_entries_and_helper_parameters(tmp_path, monkeypatch):
    files = {"pyproject.toml": PINNED, "pkg/__init__.py": "", "pkg/checkpoints.py": CHECKPOINT}
    # _resize is also called with a model's output
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/checkpoints.py", "CDL604", 19, 12)]


def test_a_helper_another_module_calls_has_callers_out_of_sight(tmp_path, monkeypatch):
    other = "from pkg.checkpoints import _interpolate_pos_embed\n\n\ndef use(model, t):\n    return _interpolate_pos_embed(model, t)\n"
    files = {"pyproject.toml": PINNED, "pkg/__init__.py": "", "pkg/checkpoints.py": CHECKPOINT, "pkg/other.py": other}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/checkpoints.py", "CDL604", 9, 14),
                                                       ("pkg/checkpoints.py", "CDL604", 19, 12)]
    # a public function of a library module: the project's users may call it
    public = {"pyproject.toml": PINNED, "pkg/__init__.py": "",
              "pkg/checkpoints.py": CHECKPOINT.replace("_interpolate_pos_embed", "interpolate_pos_embed")}
    assert lint_tree(tmp_path / "public", monkeypatch, public) == [("pkg/checkpoints.py", "CDL604", 9, 14),
                                                                  ("pkg/checkpoints.py", "CDL604", 19, 12)]
    # without the project index no caller is known to be the only one
    assert triples(findings_of(CHECKPOINT, select={"CDL604"}, torch_version="2.5.1")) == [("CDL604", 9, 14), ("CDL604", 19, 12)]


SCRIPT = """import torch


def _prepare_loaders(dataset, use_cuda=False):
    kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
    return torch.utils.data.DataLoader(dataset, **kwargs)


def main(dataset, no_cuda):
    use_cuda = not no_cuda and torch.cuda.is_available()
    return _prepare_loaders(dataset, use_cuda)
"""


def test_a_flag_every_caller_in_sight_passes_guards_the_helper(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/train.py": SCRIPT}
    assert lint_tree(tmp_path, monkeypatch, files) == []
    files["pkg/other.py"] = "from pkg.train import _prepare_loaders\n\nloader = _prepare_loaders([], True)\n"
    assert lint_tree(tmp_path / "b", monkeypatch, files) == [("pkg/train.py", "CDL301", 5, 47)]


FAKE_QUANT = '''import torch


def fake_quant(x, scale, zero_point):
    return torch.fake_quantize_per_tensor_affine(x, scale, zero_point, 0, 255)


def per_channel(x, scales, zero_points):
    return torch.fake_quantize_per_channel_affine(x, scales, zero_points, 0, 0, 255)
'''


def test_fake_quantization_has_no_mps_kernel():
    assert triples(findings_of(FAKE_QUANT, select={"CDL604"})) == [("CDL604", 5, 12), ("CDL604", 9, 12)]
    for api in ("torch.fake_quantize_per_tensor_affine", "torch.fake_quantize_per_channel_affine"):
        verdicts = assess_api(api, "2.9.1")
        assert verdicts and not any(verdict.runs_on_mps for verdict in verdicts), api


def test_fake_quantize_names_no_quantized_layout():
    assert missing_kind("fake_quantize_per_tensor_affine_cachemask", ["CPU", "CUDA"]) == KIND_MISSING
    assert missing_kind("_fake_quantize_learnable_per_channel_affine", ["CPU", "CUDA"]) == KIND_MISSING
    assert missing_kind("quantize_per_tensor", ["CPU", "CUDA"]) == KIND_MISSING_BACKEND  # makes a quantized tensor


HOST_ON_A_MAC = '''import torch

device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")


def f(x):
    m = torch.nn.Linear(2, 2).to(dtype=torch.float64).to(device)
    m1 = torch.nn.Linear(2, 2, device=device)
    return m, m1.weight.to(torch.float64), x.weight.to(torch.float64)
'''


def test_float64_on_a_device_that_is_the_cpu_wherever_the_host_is_a_mac():
    # a module cast, then moved to that device; a parameter of a module made there; not another object's
    assert triples(findings_of(HOST_ON_A_MAC, select={"CDL601"})) == [("CDL601", 9, 56)]


REGISTERED = '''import torch


class Encoder(torch.nn.Module):
    def __init__(self, name, device="cuda"):
        super(Encoder, self).__init__()
        self.model = torch.nn.Linear(2, 2).to(device)


def build(name, device):
    return Encoder(name, device=device)
'''


def test_a_class_handed_on_as_a_value_may_be_called_without_its_device(tmp_path, monkeypatch):
    # every call in sight passes the device: the default never runs (a private module: no API of the package)
    assert lint_tree(tmp_path, monkeypatch, {"pkg/__init__.py": "", "pkg/_models.py": REGISTERED}) == []
    # handed to a registry as a value: what receives it may call it with anything (round 81, mteb)
    files = {"pkg/__init__.py": "", "pkg/_models.py": REGISTERED,
             "pkg/registry.py": "from pkg._models import Encoder\n\nMODELS = dict(encoder=Encoder)\n"}
    assert lint_tree(tmp_path / "b", monkeypatch, files) == [("pkg/_models.py", "CDL108", 5, 37)]
    # `super(Encoder, self)` and `isinstance(x, Encoder)` read the class and never call it
    files["pkg/registry.py"] = "from pkg._models import Encoder\n\n\ndef check(x):\n    return isinstance(x, Encoder)\n"
    assert lint_tree(tmp_path / "c", monkeypatch, files) == []


DEVICE_KEYWORDS = '''import torch
from transformers import AutoModel

m = AutoModel.from_pretrained("x", device_map="cuda")
n = AutoModel.from_pretrained("x", device_map="auto")
g = torch.Generator("cuda")


def run(pipe):
    return pipe.to(torch_device="cuda")
'''


def test_device_map_torch_device_and_a_generator_s_first_argument_take_a_device():
    assert triples(findings_of(DEVICE_KEYWORDS, select={"CDL101"})) == [("CDL101", 4, 47), ("CDL101", 6, 21), ("CDL101", 10, 33)]


WRAPPED_COLLECTIVE = '''import torch


def all_reduce(tensor, op=torch.distributed.ReduceOp.SUM):
    if torch.distributed.is_initialized():
        return torch.distributed.all_reduce(tensor, op)


def average_metrics(values):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    tensor = torch.tensor(values, device=device)
    all_reduce(tensor)
    return tensor.cpu().tolist()


def train(model):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return model.to(device)
'''


def test_a_selection_that_places_a_collective_s_tensor_through_a_thin_wrapper():
    assert triples(findings_of(WRAPPED_COLLECTIVE, select={"CDL104"})) == [("CDL104", 17, 14)]


def test_a_requirements_list_of_the_docs_sets_no_target(tmp_path):
    from conftest import run_cli

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "requirements.txt").write_text("torch==2.3.1\nsphinx\n")
    (tmp_path / "model.py").write_text("import torch\n\nx = torch.ones(3)\n")
    result = run_cli("check", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("target torch 2.15 (newest release cudalint knows).")
    (tmp_path / "requirements.txt").write_text("torch>=2.4\n")
    result = run_cli("check", "--no-cache", str(tmp_path), cwd=tmp_path)
    assert "(the newest release torch>=2.4 in requirements.txt allows)" in result.stdout

