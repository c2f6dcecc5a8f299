"""Patterns from blind round 90 (bench/EVAL.md, session 43): a flag whose fallback is set in place when CUDA is
missing (`use_cpu = args.use_cpu`, then `if not use_cpu and not torch.cuda.is_available(): use_cpu = True`; and
`use_cuda = args.cuda`, then `if use_cuda and not torch.cuda.is_available(): use_cuda = False`) keeps the truth
that asks for CUDA only off a Mac; and a device chosen by returning the CPU early where CUDA is missing, then
returning CUDA, is the same CUDA-or-CPU selection as an if/else; a flag checked right after it is set (`assert
not flag or torch.cuda.is_available()`); a flag a class binds under a CUDA test that a base in another module
binds from its configuration; a CUDA return whose fall-through (past log lines, out of the branches around it)
returns the CPU; DistributedDataParallel's device_ids (CDL707) and SyncBatchNorm (CDL708); a device default the body never reads;
`torch.cuda.init()`; a torch requirement with only a cap (`torch<2.0`) or one covered release in its range sets
the target release."""

import pytest

from conftest import findings_of, lint_tree, run_cli, triples

FLAGS_SETTLED_IN_PLACE = '''import torch


def init_device(args):
    use_cpu = args.use_cpu
    if not use_cpu and not torch.cuda.is_available():
        use_cpu = True
    if use_cpu:
        return torch.device("cpu")
    torch.cuda.set_device(args.device_id)
    return torch.device("cuda", args.device_id)


def pick(args):
    use_cuda = args.cuda
    if use_cuda and not torch.cuda.is_available():
        use_cuda = False
    if use_cuda:
        torch.cuda.synchronize()


def not_settled(args):
    use_cpu = args.use_cpu
    if not use_cpu and args.force:
        use_cpu = True
    if use_cpu:
        return
    torch.cuda.synchronize()


def settled_the_wrong_way(args):
    use_cuda = args.cuda
    if use_cuda and torch.cuda.is_available():
        use_cuda = False
    if use_cuda:
        torch.cuda.synchronize()
'''


def test_a_flag_set_in_place_where_cuda_is_missing_guards_what_follows():
    assert triples(findings_of(FLAGS_SETTLED_IN_PLACE, select={"CDL104", "CDL105", "CDL101", "CDL201"})) == [
        ("CDL104", 8, 5),  # the early CPU return, then CUDA: a selection that forgets MPS
        ("CDL201", 28, 5),  # the flag is set by a switch, not by CUDA's absence
        ("CDL201", 36, 9),  # cleared only where CUDA is there: true on a Mac too
    ]


EARLY_RETURN_SELECTIONS = '''import torch


def get_device():
    if not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda")


def get_device_for(rank):
    if not torch.cuda.is_available():
        print("no CUDA")
        return torch.device("cpu")
    torch.cuda.set_device(rank)
    return torch.device("cuda", rank)


def with_mps():
    if not torch.cuda.is_available():
        return torch.device("cpu")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cuda")


def returns_a_model(model):
    if not torch.cuda.is_available():
        return model
    return model.cuda()
'''


def test_an_early_cpu_return_then_cuda_is_a_selection():
    assert triples(findings_of(EARLY_RETURN_SELECTIONS, select={"CDL104", "CDL101", "CDL102", "CDL105"})) == [
        ("CDL104", 5, 5),
        ("CDL104", 11, 5),
        ("CDL104", 27, 5),  # a model moved to CUDA where it is available, else handed back on the CPU
    ]


VALIDATED_FLAGS = '''import torch


class Task:
    def __init__(self):
        self.use_gpu = torch.cuda.is_available()

    def set_use_gpu(self, use_gpu):
        self.use_gpu = use_gpu
        assert not self.use_gpu or torch.cuda.is_available(), "CUDA required to train on GPUs"
        return self

    def step(self):
        if self.use_gpu:
            torch.cuda.synchronize()


class Checked:
    def __init__(self, use_cuda):
        self.use_cuda = use_cuda
        if use_cuda and not torch.cuda.is_available():
            raise ValueError("CUDA is not available")

    def step(self):
        if self.use_cuda:
            torch.cuda.synchronize()


class Unchecked:
    def __init__(self, use_cuda):
        self.use_cuda = use_cuda
        assert self.use_cuda or torch.cuda.is_available()

    def step(self):
        if self.use_cuda:
            torch.cuda.synchronize()
'''


def test_a_flag_checked_right_after_it_is_set_is_true_only_off_a_mac():
    # `assert not flag or <CUDA>` and `if flag and <no CUDA>: raise` stop a Mac wherever the flag is true;
    # `assert flag or <CUDA>` says nothing of the kind
    assert triples(findings_of(VALIDATED_FLAGS, select={"CDL201"})) == [("CDL201", 36, 13)]


DISTRIBUTED = '''import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model, local_rank, args):
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    a = DDP(model, device_ids=[local_rank])
    b = torch.nn.parallel.DistributedDataParallel(model, [args.gpu], find_unused_parameters=True)
    ids = [local_rank] if torch.cuda.is_available() else None
    c = DDP(model, device_ids=ids)
    d = DDP(model, device_ids=None)
    e = DDP(model, device_ids=[])
    if torch.cuda.is_available():
        f = DDP(model, device_ids=[local_rank])
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    norm = nn.SyncBatchNorm(64)
    g = DDP(model, device_ids=None if args.cpu else [local_rank])
    return a, b, c, d, e, f, g, DDP(model, device_ids=_ids(model)), norm, isinstance(model, nn.SyncBatchNorm)


def wrap_by_index(model, index):
    if index == -1:
        return DDP(model)
    else:
        return DDP(model, device_ids=[index], output_device=index)


def _ids(model):
    device = next(model.parameters()).device
    if device.type == "cpu":
        return None
    return [device.index]
'''


def test_ddp_device_ids_and_sync_batchnorm_outside_cuda():
    assert triples(findings_of(DISTRIBUTED, select={"CDL707", "CDL708"})) == [
        ("CDL708", 7, 13),
        ("CDL707", 8, 20),
        ("CDL707", 9, 58),
        ("CDL708", 17, 12),
    ]


def test_a_flag_a_base_of_another_module_binds_is_not_settled_by_the_subclass(tmp_path, monkeypatch):
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "import torch.nn as nn\n\n\nclass Base(nn.Module):\n    def __init__(self, config):\n"
                       "        super().__init__()\n        self.use_gpu = config.use_gpu\n",
        "pkg/gen.py": "import torch\n\nfrom .base import Base\n\n\nclass Gen(Base):\n    def __init__(self, config):\n"
                      "        super().__init__(config)\n        if torch.cuda.is_available():\n            self.use_gpu = True\n"
                      "        if self.use_gpu:\n            torch.cuda.synchronize()\n",
        "pkg/own.py": "import torch\n\n\nclass Own:\n    def __init__(self):\n        if torch.cuda.is_available():\n"
                      "            self.use_gpu = True\n        else:\n            self.use_gpu = False\n        if self.use_gpu:\n"
                      "            torch.cuda.synchronize()\n",
    }
    found = [f for f in lint_tree(tmp_path, monkeypatch, files) if f[1] == "CDL201"]
    assert found == [("pkg/gen.py", "CDL201", 12, 13)]


FALL_THROUGH = '''import logging

import torch

logger = logging.getLogger(__name__)


def create_device(device_type, device_id):
    if device_type == "gpu":
        if torch.cuda.is_available():
            return torch.device(f"cuda:{device_id}")
        logger.info("cuda is not available, using cpu instead.")
    elif device_type == "xpu":
        if hasattr(torch, "xpu") and torch.xpu.is_available():
            return torch.device(f"xpu:{device_id}")
    return torch.device("cpu")


def logged():
    if torch.cuda.is_available():
        return "cuda"
    logger.warning("no cuda")
    return "cpu"


def in_a_loop(names):
    for name in names:
        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


def mps_after(x):
    if x:
        if torch.cuda.is_available():
            return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def in_an_else(kind):
    if kind == "cpu":
        pass
    else:
        if torch.cuda.is_available():
            return "cuda"
        logger.info("no cuda")
    return "cpu"


def work_first():
    if torch.cuda.is_available():
        return "cuda"
    count = 0
    return "cpu"
'''


def test_a_cuda_return_that_falls_through_to_a_cpu_return_is_a_selection():
    assert triples(findings_of(FALL_THROUGH, select={"CDL104"})) == [("CDL104", 10, 9), ("CDL104", 20, 5), ("CDL104", 46, 9)]


UNREAD_DEFAULTS = '''import torch


class Informer(torch.nn.Module):
    def __init__(self, d_model=512, device=torch.device("cuda:0")):
        super().__init__()
        self.d_model = d_model


def used(x, device=torch.device("cuda:0")):
    return x.to(device)


def rebound_first(x, device="cuda"):
    device = "cpu"
    return x.to(device)
'''


def test_a_default_the_body_never_reads_is_no_finding():
    assert triples(findings_of(UNREAD_DEFAULTS, select={"CDL101", "CDL108"})) == [("CDL101", 10, 33)]


def test_cuda_init_raises_without_cuda():
    source = "import torch\n\ntorch.cuda.init()\nif torch.cuda.is_available():\n    torch.cuda.init()\n"
    found = findings_of(source, select={"CDL105"})
    assert triples(found) == [("CDL105", 3, 1)]
    assert found[0].message.startswith("torch.cuda.init initializes CUDA and raises without it")


RETURNED_FLOAT64 = '''import torch


def cosine_beta_schedule(n):
    return torch.linspace(0, 1, n, dtype=torch.float64)


def narrowed_schedule(n):
    return torch.linspace(0, 1, n, dtype=torch.float64).float()


class Schedule(torch.nn.Module):
    def __init__(self, n, device):
        super().__init__()
        betas = cosine_beta_schedule(n)
        self.betas = betas.to(device)
        self.alphas = narrowed_schedule(n).to(device)
        self.later = later_schedule(n).to(device)


def later_schedule(n):
    return torch.linspace(0, 1, n, dtype=torch.float64)
'''


def test_float64_a_function_of_the_file_returns_is_seen_moving():
    found = findings_of(RETURNED_FLOAT64, select={"CDL601", "CDL608"})
    # only a function the walk has read before the call answers for it (`later_schedule` comes after)
    assert triples(found) == [("CDL608", 16, 22)]
    assert [(related.line, related.column) for related in found[0].related] == [(5, 42)]


@pytest.mark.parametrize("requirement, target", [
    ("torch<2.0.0", "target torch 1.13 (the newest release torch<2.0.0 in requirements.txt allows)."),
    ("torch>=1.12,<2.0", "target torch 1.13 (the newest release torch>=1.12,<2.0 in requirements.txt allows)."),
    ("torch<2.5", "target torch 2.4 (the newest release torch<2.5 in requirements.txt allows)."),
    ("torch==2.2.0", "target torch 2.2.0 (from requirements.txt)."),
    ("torch<1.10", "target torch 1.13 (the oldest release cudalint knows: torch<1.10 in requirements.txt allows none it covers)."),
])
def test_a_cap_on_torch_sets_the_target_release(tmp_path, requirement, target):
    (tmp_path / "requirements.txt").write_text(requirement + "\n", encoding="utf-8")
    (tmp_path / "run.py").write_text("import torch\nx = torch.ones(3)\n", encoding="utf-8")
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.stdout.splitlines()[-1].endswith(target), result.stdout


UNREAD_SELECTION = """import torch


class Pipe:
    def __init__(self):
        if torch.cuda.is_available():
            self._device = torch.device("cuda")
        else:
            self._device = torch.device("cpu")


class Public:
    def __init__(self):
        if torch.cuda.is_available():
            self.device = torch.device("cuda")
        else:
            self.device = torch.device("cpu")
"""


@pytest.mark.parametrize("subclass_reads, found", [
    (False, [("pkg/pipe.py", "CDL104", 14, 9)]),
    (True, [("pkg/pipe.py", "CDL104", 6, 9), ("pkg/pipe.py", "CDL104", 14, 9)]),
])
def test_a_private_device_attribute_nothing_reads_chooses_nothing(tmp_path, monkeypatch, subclass_reads, found):
    read = "\n    def run(self, x):\n        return x.to(self._device)\n" if subclass_reads else "\n    pass\n"
    files = {"pkg/__init__.py": "", "pkg/pipe.py": UNREAD_SELECTION,
             "pkg/other.py": "from .pipe import Pipe\n\n\nclass Sub(Pipe):" + read}
    assert [f for f in lint_tree(tmp_path, monkeypatch, files) if f[1] == "CDL104"] == found
