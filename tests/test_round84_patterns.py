"""Patterns from blind rounds 84 to 89 (bench/EVAL.md, session 42): an import in a `try:` whose handler only
raises or exits is required, as if it stood alone (a handler that returns, falls back or skips the test keeps
it optional); a JIT build that registers operators only, or one named as the project's own package, makes no
module to import; a device selection written with its test negated (`if <no CUDA>: cpu` / `else: cuda`);
Lightning's "gpu" accelerator chosen only where CUDA is there; a move made only where the chosen device is
"cuda"; MPS named inside a longer name (`is_mps_available`) is a Mac path; a build query beside an
availability query of MPS asks nothing new; compiled PyG extension operators (CDL610); conda-forge's PyG
names and its cuda-version metapackage; the operator tables' names; a custom op registered for CUDA devices
only (`custom_op(..., device_types="cuda")`) runs only there."""

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


def test_every_traced_api_is_named_as_torch_names_it():
    import json

    import torch

    from cudalint.catalog import rules_dir
    from cudalint.coverage.api_ops import API_OPS_FILE

    def resolves(api):
        value = torch
        for part in api.split(".")[1:]:
            value = getattr(value, part, None)
            if value is None:
                return False
        return True

    apis = json.loads((rules_dir() / API_OPS_FILE).read_text(encoding="utf-8"))["apis"]
    assert [api for api in apis if not api.startswith("torch.torch.") and not resolves(api)] == []
    assert [api for api in apis if api.startswith("torch.torch.")] == []
    assert "torch.special.gammainc" in apis


CONDA_ENVIRONMENT = """name: graphs
channels:
  - conda-forge
dependencies:
  - cuda-version # a noarch metapackage: it constrains CUDA packages where they install
  - cuda-nvcc
  - pytorch >=2.4
  - pytorch_scatter >=2.0
  - pytorch_cluster >=1.5
"""


def test_conda_names_of_the_pyg_extensions_and_the_cuda_version_metapackage(tmp_path, monkeypatch):
    from cudalint.manifests import check_manifest

    monkeypatch.chdir(tmp_path)
    found = [(f.code, f.line, f.column) for f in check_manifest("environment.yml", CONDA_ENVIRONMENT)]
    assert found == [("CDL508", 6, 5), ("CDL504", 8, 5), ("CDL504", 9, 5)]


PYG = '''import torch
import torch_cluster
import torch_scatter
import torch_geometric.nn
from torch_cluster import radius_graph
from torch_geometric.nn.pool import knn_graph
from torch_scatter import scatter, scatter_max, scatter_min


def forward(x, pos, batch, index, size):
    edges = radius_graph(pos, r=5.0, batch=batch)
    near = knn_graph(pos, k=8)
    also = torch_geometric.nn.radius_graph(pos, 5.0)
    pooled = scatter_max(x, batch, dim=0)[0]
    high = scatter(x, index, 0, None, size, reduce="max")
    mean = scatter(x, index, 0, None, size, reduce="mean")
    low = scatter(x, index, dim=0, reduce="min")
    total = scatter(x, index, dim=0)
    segments = torch_scatter.segment_csr(x, index)
    return edges, near, also, pooled, high, mean, low, total, segments


def on_the_host():
    x = torch.randn(4, 3)
    return scatter_min(x, torch.tensor([0, 0, 1, 1]), dim=0)


def under_cuda(x, batch):
    if torch.cuda.is_available():
        return scatter_max(x, batch, dim=0)
    return None


def beside_a_host_tensor(coords):
    return torch_cluster.grid_cluster(coords, torch.tensor([1, 1, 1]))


def interpolated(x, pos, pos_support):
    return torch_geometric.nn.knn_interpolate(x, pos, pos_support, k=3)
'''


def test_compiled_pyg_extension_operators_have_cpu_and_cuda_kernels_only():
    found = findings_of(PYG, select={"CDL610"})
    assert triples(found) == [("CDL610", 11, 13), ("CDL610", 12, 12), ("CDL610", 13, 12), ("CDL610", 14, 14),
                              ("CDL610", 15, 12), ("CDL610", 17, 11), ("CDL610", 19, 16), ("CDL610", 39, 12)]
    assert [f.message.split(",")[0] for f in found][:2] == [
        "torch_cluster.radius_graph runs torch_cluster's compiled radius",
        "torch_geometric.nn.knn_graph runs torch_cluster's compiled knn"]
    assert "compiled scatter_max" in found[4].message and "compiled scatter_min" in found[5].message


def test_every_extension_api_lies_under_the_check_roots():
    from cudalint.catalog import load_catalog
    from cudalint.python.extension_ops import CODE, ROOTS

    match = load_catalog()[CODE].match
    apis = match["apis"]
    assert {entry["api"].partition(".")[0] for entry in apis} == ROOTS
    assert sorted(match["words"]) == sorted({entry["api"].rpartition(".")[2] for entry in apis})
    assert {entry.get("library") or entry["api"].partition(".")[0] for entry in apis} == set(match["uses"])


CUSTOM_OPS = '''import torch


@torch.library.custom_op("mylib::fused", mutates_args=(), device_types="cuda")
def fused(x: torch.Tensor) -> torch.Tensor:
    torch.cuda.synchronize()
    return x.clone()


@torch.library.custom_op("mylib::anywhere", mutates_args=())
def anywhere(x: torch.Tensor) -> torch.Tensor:
    torch.cuda.synchronize()
    return x.clone()


@torch.library.custom_op("mylib::both", mutates_args=(), device_types=("cuda", "cpu"))
def both(x: torch.Tensor) -> torch.Tensor:
    torch.cuda.synchronize()
    return x.clone()
'''


def test_a_custom_op_for_cuda_devices_only_runs_only_there():
    assert triples(findings_of(CUSTOM_OPS, select={"CDL201"})) == [("CDL201", 12, 5), ("CDL201", 18, 5)]
