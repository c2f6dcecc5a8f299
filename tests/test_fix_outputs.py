"""Exact text of every fix, at a target release before torch.accelerator (2.3) and after (2.13)."""

import pytest
from conftest import FIXTURES

from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.fixes import fix_text

# A root without manifests or formatter settings: the target release alone bounds the APIs, lines are 88.
DEFAULT = Settings(select=frozenset(rule.code for rule in load_catalog() if rule.default), root=FIXTURES / "python")

CASES = [
    ('CDL101', '2.3', False, 'import torch\nx = torch.ones(2, device="cuda")\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\nx = torch.ones(2, device=DEVICE)\n'),
    ('CDL101', '2.13', True, 'import torch\nx = torch.ones(2, device="cuda")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nx = torch.ones(2, device=DEVICE)\n'),
    ('CDL101-type-keyword', '2.13', True, 'import torch\nd = torch.device(type="cuda", index=0)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nd = torch.device(type=DEVICE.type, index=0)\n'),
    ('CDL101-index', '2.3', False, 'import torch\nx = torch.ones(2).to("cuda:1")\n', 'import torch\nx = torch.ones(2).to("cuda:1")\n'),
    ('CDL101-index', '2.13', True, 'import torch\nx = torch.ones(2).to("cuda:1")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nx = torch.ones(2).to(DEVICE)\n'),
    ('CDL101-binding', '2.3', False, 'import torch\nGPU = "cuda"\nx = torch.ones(2).to(GPU)\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\nGPU = DEVICE.type\nx = torch.ones(2).to(GPU)\n'),
    ('CDL101-binding', '2.13', True, 'import torch\nGPU = "cuda"\nx = torch.ones(2).to(GPU)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nGPU = DEVICE.type\nx = torch.ones(2).to(GPU)\n'),
    ('CDL101-dict', '2.3', False, 'config = {"device": "cuda"}\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\nconfig = {"device": DEVICE.type}\n'),
    ('CDL101-dict', '2.13', True, 'config = {"device": "cuda"}\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nconfig = {"device": DEVICE.type}\n'),
    ('CDL102', '2.3', False, 'def move(x):\n    return x.cuda(non_blocking=True)\n', 'def move(x):\n    return x.cuda(non_blocking=True)\n'),
    ('CDL102', '2.13', True, 'def move(x):\n    return x.cuda(non_blocking=True)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\ndef move(x):\n    return x.to(DEVICE, non_blocking=True)\n'),
    ('CDL104', '2.3', False, 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\ndevice = DEVICE.type\n'),
    ('CDL104', '2.13', True, 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\ndevice = DEVICE.type\n'),
    ('CDL104-device', '2.3', False, 'import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\ndevice = DEVICE\n'),
    ('CDL104-device', '2.13', True, 'import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\ndevice = DEVICE\n'),
    ('CDL105', '2.3', False, 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n', 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n'),
    ('CDL105', '2.13', True, 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n', 'import torch\ntorch.accelerator.set_device_index(1)\nn = torch.cuda.device_count()\n'),
    ('CDL109', '2.3', False, 'import torch\nstate = torch.load("m.pt", weights_only=True)\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\nstate = torch.load(\n    "m.pt",\n    weights_only=True,\n    map_location=None if torch.cuda.is_available() else DEVICE,\n)\n'),
    ('CDL109', '2.13', True, 'import torch\nstate = torch.load("m.pt", weights_only=True)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nstate = torch.load(\n    "m.pt",\n    weights_only=True,\n    map_location=None if torch.cuda.is_available() else DEVICE,\n)\n'),
    ('CDL109-none', '2.3', False, 'import torch\nstate = torch.load("m.pt", map_location=None)\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\nstate = torch.load("m.pt", map_location=None if torch.cuda.is_available() else DEVICE)\n'),
    ('CDL109-none', '2.13', True, 'import torch\nstate = torch.load("m.pt", map_location=None)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nstate = torch.load("m.pt", map_location=None if torch.cuda.is_available() else DEVICE)\n'),
    ('CDL109-download', '2.13', True, 'from torch.utils import model_zoo\nsd = model_zoo.load_url(URL, map_location="cuda:0")\n', 'from torch.utils import model_zoo\nimport torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nsd = model_zoo.load_url(URL, map_location=DEVICE)\n'),
    ('CDL101-map-location', '2.13', True, 'import torch\nm = Lit.load_from_checkpoint(path, map_location="cuda:0")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nm = Lit.load_from_checkpoint(path, map_location=DEVICE.type)\n'),
    ('CDL201', '2.3', False, 'import torch\ntorch.cuda.synchronize()\n', 'import torch\ntorch.cuda.synchronize()\n'),
    ('CDL201', '2.13', True, 'import torch\ntorch.cuda.synchronize()\n', 'import torch\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n'),
    ('CDL202', '2.3', False, 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n', 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n'),
    ('CDL202', '2.13', True, 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n', 'import torch\nif torch.accelerator.is_available():\n    torch.accelerator.empty_cache()\npeak = (\n    torch.accelerator.max_memory_allocated()\n    if torch.accelerator.is_available()\n    else 0\n)\n'),
    ('CDL203', '2.3', False, 'import torch\ntorch.cuda.manual_seed_all(0)\n', 'import torch\ntorch.cuda.manual_seed_all(0)\n'),
    ('CDL203', '2.13', True, 'import torch\ntorch.cuda.manual_seed_all(0)\n', 'import torch\ntorch.manual_seed(0)\n'),
    ('CDL205', '2.3', False, 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = GradScaler(enabled=True)\n\n\n@torch.cuda.amp.autocast(dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n', 'import torch\n\nDEVICE = torch.device(\n    "cuda" if torch.cuda.is_available()\n    else "mps" if torch.backends.mps.is_available()\n    else "cpu"\n)\n\nscaler = torch.amp.GradScaler(DEVICE.type, enabled=True)\n\n\n@torch.autocast("cuda", dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n'),
    ('CDL205', '2.13', True, 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = GradScaler(enabled=True)\n\n\n@torch.cuda.amp.autocast(dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nscaler = torch.amp.GradScaler(DEVICE.type, enabled=True)\n\n\n@torch.autocast(DEVICE.type, dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n'),
    ('CDL206', '2.3', False, 'import torch\nctx = torch.cpu.amp.autocast()\n', 'import torch\nctx = torch.autocast("cpu")\n'),
    ('CDL206', '2.13', True, 'import torch\nctx = torch.cpu.amp.autocast()\n', 'import torch\nctx = torch.autocast("cpu")\n'),
    ('CDL207', '2.3', False, 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n', 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n'),
    ('CDL207', '2.13', True, 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nwith torch.autocast(device_type=DEVICE.type):\n    pass\n'),
    ('CDL301', '2.3', False, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available())\n'),
    ('CDL301', '2.13', True, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available())\n'),
    ('CDL301-factory', '2.13', True, 'import torch\nx = torch.zeros(3, pin_memory=True)\n', 'import torch\nx = torch.zeros(3, pin_memory=torch.cuda.is_available())\n'),
    ('CDL303', '2.3', False, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True, pin_memory_device="cuda", num_workers=2)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader(\n    [1],\n    pin_memory=torch.cuda.is_available(),\n    pin_memory_device="cuda",\n    num_workers=2,\n)\n'),
    ('CDL303', '2.13', True, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True, pin_memory_device="cuda", num_workers=2)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader(\n    [1],\n    pin_memory=torch.cuda.is_available(),\n    num_workers=2,\n)\n'),
    ('CDL305', '2.3', False, 'import torch\ns = torch.cuda.Stream()\n', 'import torch\ns = torch.cuda.Stream()\n'),
    ('CDL305', '2.13', True, 'import torch\ns = torch.cuda.Stream()\n', 'import torch\ns = torch.Stream()\n'),
    ('CDL306', '2.3', False, 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n', 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n'),
    ('CDL306', '2.13', True, 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n', 'import torch\nstart = torch.Event(enable_timing=True)\n'),
    ('CDL701', '2.3', False, 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n', 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n'),
    ('CDL701', '2.13', True, 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n', 'import torch\nimport torch.distributed as dist\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\ndist.init_process_group(backend=dist.get_default_backend_for_device(DEVICE))\n'),
    ('CDL202-reset-cached', '2.3', False, 'import torch\ntorch.cuda.reset_max_memory_cached()\n', 'import torch\ntorch.cuda.reset_max_memory_cached()\n'),
    ('CDL202-reset-cached', '2.13', True, 'import torch\ntorch.cuda.reset_max_memory_cached()\n', 'import torch\nif torch.accelerator.is_available():\n    torch.accelerator.reset_peak_memory_stats()\n'),
    ('CDL701-capitals', '2.13', True, 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="NCCL")\n', 'import torch\nimport torch.distributed as dist\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\ndist.init_process_group(backend=dist.get_default_backend_for_device(DEVICE))\n'),
    ('CDL111', '2.3', False, 'import torch\nuse_mps = "mps" if torch.backends.mps.is_built() else "cpu"\n', 'import torch\nuse_mps = "mps" if torch.backends.mps.is_available() else "cpu"\n'),
    ('CDL111', '2.13', True, 'import torch\nuse_mps = "mps" if torch.backends.mps.is_built() else "cpu"\n', 'import torch\nuse_mps = "mps" if torch.backends.mps.is_available() else "cpu"\n'),
    ('CDL215', '2.3', False, 'import torch\nuse_gpu = torch.backends.cuda.is_built()\n', 'import torch\nuse_gpu = torch.backends.cuda.is_built()\n'),
    ('CDL215', '2.13', True, 'import torch\nuse_gpu = torch.backends.cuda.is_built()\n', 'import torch\nuse_gpu = torch.accelerator.is_available()\n'),
]


@pytest.mark.parametrize("name, version, unsafe, before, after", CASES, ids=[f"{c[0]}-{c[1]}-{'unsafe' if c[2] else 'safe'}" for c in CASES])
def test_fix_output(name, version, unsafe, before, after):
    outcome = fix_text("example.py", before, DEFAULT, version, unsafe)
    assert outcome.error is None
    assert outcome.fixed == after
    again = fix_text("example.py", outcome.fixed, DEFAULT, version, unsafe)
    assert again.fixed == outcome.fixed and again.applied == 0


def test_every_fixable_rule_has_a_pinned_fix():
    pinned = {case[0].split("-")[0] for case in CASES if case[3] != case[4]}
    fixable = {rule.code for rule in load_catalog() if rule.fix != "none" and rule.code.startswith(("CDL1", "CDL2", "CDL3", "CDL7"))}
    assert fixable - pinned == set()

