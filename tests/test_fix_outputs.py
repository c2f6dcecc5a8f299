"""Exact text of every fix, at a target release before torch.accelerator (2.3) and after (2.13)."""

import pytest

from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.fixes import fix_text

DEFAULT = Settings(select=frozenset(rule.code for rule in load_catalog() if rule.default))

CASES = [
    ('CDL101', '2.3', False, 'import torch\nx = torch.ones(2, device="cuda")\n', 'import torch\nx = torch.ones(2, device=torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"))\n'),
    ('CDL101', '2.13', True, 'import torch\nx = torch.ones(2, device="cuda")\n', 'import torch\nx = torch.ones(2, device=torch.accelerator.current_accelerator() or torch.device("cpu"))\n'),
    ('CDL101-index', '2.3', False, 'import torch\nx = torch.ones(2).to("cuda:1")\n', 'import torch\nx = torch.ones(2).to("cuda:1")\n'),
    ('CDL101-index', '2.13', True, 'import torch\nx = torch.ones(2).to("cuda:1")\n', 'import torch\nx = torch.ones(2).to(torch.accelerator.current_accelerator() or torch.device("cpu"))\n'),
    ('CDL101-binding', '2.3', False, 'import torch\nGPU = "cuda"\nx = torch.ones(2).to(GPU)\n', 'import torch\nGPU = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"\nx = torch.ones(2).to(GPU)\n'),
    ('CDL101-binding', '2.13', True, 'import torch\nGPU = "cuda"\nx = torch.ones(2).to(GPU)\n', 'import torch\nGPU = (torch.accelerator.current_accelerator() or torch.device("cpu")).type\nx = torch.ones(2).to(GPU)\n'),
    ('CDL101-dict', '2.3', False, 'config = {"device": "cuda"}\n', 'import torch\nconfig = {"device": "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"}\n'),
    ('CDL101-dict', '2.13', True, 'config = {"device": "cuda"}\n', 'import torch\nconfig = {"device": (torch.accelerator.current_accelerator() or torch.device("cpu")).type}\n'),
    ('CDL102', '2.3', False, 'def move(x):\n    return x.cuda(non_blocking=True)\n', 'def move(x):\n    return x.cuda(non_blocking=True)\n'),
    ('CDL102', '2.13', True, 'def move(x):\n    return x.cuda(non_blocking=True)\n', 'import torch\ndef move(x):\n    return x.to(torch.accelerator.current_accelerator() or torch.device("cpu"), non_blocking=True)\n'),
    ('CDL104', '2.3', False, 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n', 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"\n'),
    ('CDL104', '2.13', True, 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n', 'import torch\ndevice = (torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type\n'),
    ('CDL104-device', '2.3', False, 'import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n', 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")\n'),
    ('CDL104-device', '2.13', True, 'import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n', 'import torch\ndevice = torch.device((torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type)\n'),
    ('CDL105', '2.3', False, 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n', 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n'),
    ('CDL105', '2.13', True, 'import torch\ntorch.cuda.set_device(1)\nn = torch.cuda.device_count()\n', 'import torch\ntorch.accelerator.set_device_index(1)\nn = torch.cuda.device_count()\n'),
    ('CDL109', '2.3', False, 'import torch\nstate = torch.load("m.pt", weights_only=True)\n', 'import torch\nstate = torch.load("m.pt", weights_only=True, map_location=torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"))\n'),
    ('CDL109', '2.13', True, 'import torch\nstate = torch.load("m.pt", weights_only=True)\n', 'import torch\nstate = torch.load("m.pt", weights_only=True, map_location=torch.accelerator.current_accelerator() or torch.device("cpu"))\n'),
    ('CDL201', '2.3', False, 'import torch\ntorch.cuda.synchronize()\n', 'import torch\ntorch.cuda.synchronize()\n'),
    ('CDL201', '2.13', True, 'import torch\ntorch.cuda.synchronize()\n', 'import torch\nif torch.accelerator.is_available(): torch.accelerator.synchronize()\n'),
    ('CDL202', '2.3', False, 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n', 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n'),
    ('CDL202', '2.13', True, 'import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n', 'import torch\nif torch.accelerator.is_available(): torch.accelerator.empty_cache()\npeak = (torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0)\n'),
    ('CDL203', '2.3', False, 'import torch\ntorch.cuda.manual_seed_all(0)\n', 'import torch\ntorch.cuda.manual_seed_all(0)\n'),
    ('CDL203', '2.13', True, 'import torch\ntorch.cuda.manual_seed_all(0)\n', 'import torch\ntorch.manual_seed(0)\n'),
    ('CDL205', '2.3', False, 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = GradScaler(enabled=True)\n\n\n@torch.cuda.amp.autocast(dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n', 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = torch.amp.GradScaler(enabled=True)\n\n\n@torch.autocast("cuda", dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n'),
    ('CDL205', '2.13', True, 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = GradScaler(enabled=True)\n\n\n@torch.cuda.amp.autocast(dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n', 'import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = torch.amp.GradScaler(enabled=True)\n\n\n@torch.autocast((torch.accelerator.current_accelerator() or torch.device("cpu")).type, dtype=torch.float16)\ndef forward(model, x):\n    return model(x)\n'),
    ('CDL206', '2.3', False, 'import torch\nctx = torch.cpu.amp.autocast()\n', 'import torch\nctx = torch.autocast("cpu")\n'),
    ('CDL206', '2.13', True, 'import torch\nctx = torch.cpu.amp.autocast()\n', 'import torch\nctx = torch.autocast("cpu")\n'),
    ('CDL207', '2.3', False, 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n', 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n'),
    ('CDL207', '2.13', True, 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n', 'import torch\n\nwith torch.autocast(device_type=(torch.accelerator.current_accelerator() or torch.device("cpu")).type):\n    pass\n'),
    ('CDL301', '2.3', False, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available())\n'),
    ('CDL301', '2.13', True, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available())\n'),
    ('CDL303', '2.3', False, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True, pin_memory_device="cuda", num_workers=2)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available(), pin_memory_device="cuda", num_workers=2)\n'),
    ('CDL303', '2.13', True, 'from torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True, pin_memory_device="cuda", num_workers=2)\n', 'from torch.utils.data import DataLoader\nimport torch\nloader = DataLoader([1], pin_memory=torch.cuda.is_available(), num_workers=2)\n'),
    ('CDL305', '2.3', False, 'import torch\ns = torch.cuda.Stream()\n', 'import torch\ns = torch.cuda.Stream()\n'),
    ('CDL305', '2.13', True, 'import torch\ns = torch.cuda.Stream()\n', 'import torch\ns = torch.Stream()\n'),
    ('CDL306', '2.3', False, 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n', 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n'),
    ('CDL306', '2.13', True, 'import torch\nstart = torch.cuda.Event(enable_timing=True)\n', 'import torch\nstart = torch.Event(enable_timing=True)\n'),
    ('CDL701', '2.3', False, 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n', 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n'),
    ('CDL701', '2.13', True, 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\n', 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend=torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator() or torch.device("cpu")))\n'),
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

