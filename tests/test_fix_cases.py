"""The numbered cases of "--fix that a reviewer would merge", each with its exact fixed output."""


import pytest
from conftest import FIXTURES
from test_fix_outputs import DEFAULT

from cudalint.fixes import fix_text
from cudalint.runner import lint_text

CASES = [
    # 1: torch imported only inside a function: the device is defined there, after the import
    ('local_import', '2.13', False, 'def main():\n    import torch\n    x = torch.ones(3, device="cuda")\n    return x\n', 'def main():\n    import torch\n    device = (\n        torch.accelerator.current_accelerator(check_available=True)\n        or torch.device("cpu")\n    )\n    x = torch.ones(3, device=device)\n    return x\n'),
    # 1: torch imported under `if __name__ == "__main__":`: defined in that block
    ('main_block', '2.13', False, 'if __name__ == "__main__":\n    import torch\n\n    x = torch.ones(3, device="cuda")\n    y = torch.zeros(3, device="cuda")\n', 'if __name__ == "__main__":\n    import torch\n    DEVICE = (\n        torch.accelerator.current_accelerator(check_available=True)\n        or torch.device("cpu")\n    )\n\n    x = torch.ones(3, device=DEVICE)\n    y = torch.zeros(3, device=DEVICE)\n'),
    # 1: torch imported in try/except ImportError: defined inside the try, after the import
    ('try_import', '2.13', False, 'try:\n    import torch\nexcept ImportError:\n    torch = None\n\n\ndef f():\n    return torch.ones(3, device="cuda"), torch.zeros(3, device="cuda")\n', 'try:\n    import torch\n    DEVICE = (\n        torch.accelerator.current_accelerator(check_available=True)\n        or torch.device("cpu")\n    )\nexcept ImportError:\n    torch = None\n\n\ndef f():\n    return torch.ones(3, device=DEVICE), torch.zeros(3, device=DEVICE)\n'),
    # 1: module code already reads a DEVICE (from a star import): another name
    ('used_above', '2.13', False, 'import torch\nfrom settings import *\n\nprint(DEVICE)\na = torch.ones(1, device="cuda")\nb = torch.zeros(1, device="cuda")\n', 'import torch\nfrom settings import *\n\nDEFAULT_DEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nprint(DEVICE)\na = torch.ones(1, device=DEFAULT_DEVICE)\nb = torch.zeros(1, device=DEFAULT_DEVICE)\n'),
    # 1: a parameter named DEVICE: another name, the parameter keeps its meaning
    ('param_named_DEVICE', '2.13', False, 'import torch\n\n\ndef g(DEVICE="cpu"):\n    return torch.ones(1, device=DEVICE)\n\n\na = torch.ones(1, device="cuda")\nb = torch.zeros(1, device="cuda")\n', 'import torch\n\nDEFAULT_DEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\ndef g(DEVICE="cpu"):\n    return torch.ones(1, device=DEVICE)\n\n\na = torch.ones(1, device=DEFAULT_DEVICE)\nb = torch.zeros(1, device=DEFAULT_DEVICE)\n'),
    # 1: a local named DEVICE: another name (no UnboundLocalError)
    ('local_named_DEVICE', '2.13', False, 'import torch\n\n\ndef h():\n    x = torch.ones(1, device="cuda")\n    DEVICE = "cpu"\n    return x.to(DEVICE), torch.zeros(1, device="cuda")\n', 'import torch\n\nDEFAULT_DEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\ndef h():\n    x = torch.ones(1, device=DEFAULT_DEVICE)\n    DEVICE = "cpu"\n    return x.to(DEVICE), torch.zeros(1, device=DEFAULT_DEVICE)\n'),
    # 1: defined before the first module line that needs it, not after later imports
    ('module_use_before_imports_end', '2.13', False, 'import torch\n\nx = torch.ones(1, device="cuda")\nimport numpy\ny = torch.zeros(1, device="cuda")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nx = torch.ones(1, device=DEVICE)\nimport numpy\ny = torch.zeros(1, device=DEVICE)\n'),
    # 2: a device parameter in reach makes the fix unsafe (a caller may pass another device)
    ('reuse_param_safe', '2.13', False, 'import torch\n\n\ndef run(model, x, device):\n    y = torch.zeros(3, device="cuda")\n    return model(x.to(device)) + y\n', 'import torch\n\n\ndef run(model, x, device):\n    y = torch.zeros(3, device="cuda")\n    return model(x.to(device)) + y\n'),
    # 2: ... and --unsafe-fixes uses it
    ('reuse_param_unsafe', '2.13', True, 'import torch\n\n\ndef run(model, x, device):\n    y = torch.zeros(3, device="cuda")\n    return model(x.to(device)) + y\n', 'import torch\n\n\ndef run(model, x, device):\n    y = torch.zeros(3, device=device)\n    return model(x.to(device)) + y\n'),
    # 2: self.device set in __init__ is used in forward; torch.device(<selection>) becomes the device
    ('reuse_self', '2.13', True, 'import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n    def forward(self, x):\n        return x + torch.ones(1, device="cuda")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.device = DEVICE\n\n    def forward(self, x):\n        return x + torch.ones(1, device=self.device)\n'),
    # 2: a local device bound before the use (x.device)
    ('reuse_local', '2.13', True, 'import torch\n\n\ndef run(x):\n    device = x.device\n    return torch.ones(1, device="cuda") + x\n', 'import torch\n\n\ndef run(x):\n    device = x.device\n    return torch.ones(1, device=device) + x\n'),
    # 3: torch.load: map_location=None on CUDA is torch.load's default
    ('load', '2.13', False, 'import torch\nstate = torch.load("m.pt")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nstate = torch.load("m.pt", map_location=None if torch.cuda.is_available() else DEVICE)\n'),
    # 3: GradScaler takes a string
    ('gradscaler_str', '2.13', False, 'import torch\nscaler = torch.amp.GradScaler("cuda")\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nscaler = torch.amp.GradScaler(DEVICE.type)\n'),
    # 3: a config dict keeps a string
    ('config_dict', '2.13', False, 'config = dict(device="cuda", lr=0.1)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nconfig = dict(device=DEVICE.type, lr=0.1)\n'),
    # 3: positional enabled lands on enabled=
    ('autocast_pos', '2.13', False, 'import torch\nwith torch.cuda.amp.autocast(True):\n    pass\n', 'import torch\nwith torch.autocast("cuda", enabled=True):\n    pass\n'),
    # 3: positional enable_timing lands on enable_timing=
    ('event_pos', '2.13', False, 'import torch\nstart = torch.cuda.Event(True)\n', 'import torch\nstart = torch.Event(enable_timing=True)\n'),
    # 3: positional init_scale stays after the device
    ('scaler_pos', '2.13', False, 'import torch\nscaler = torch.cuda.amp.GradScaler(1024.0)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nscaler = torch.amp.GradScaler(DEVICE.type, 1024.0)\n'),
    # 3: keyword device= becomes the positional-only argument
    ('sync_kw', '2.13', False, 'import torch\ntorch.cuda.synchronize(device=0)\n', 'import torch\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize(0)\n'),
    # 3: a parameter the replacement lacks: no fix
    ('event_external', '2.13', False, 'import torch\nstart = torch.cuda.Event(external=True)\n', 'import torch\nstart = torch.cuda.Event(external=True)\n'),
    # 4: a branch for older torch is left alone
    ('old_branch', '2.13', False, 'import torch\n\nif TORCH_VERSION < (2, 6):\n    torch.cuda.synchronize()\nelse:\n    torch.cuda.synchronize()\n', 'import torch\n\nif TORCH_VERSION < (2, 6):\n    torch.cuda.synchronize()\nelse:\n    if torch.accelerator.is_available():\n        torch.accelerator.synchronize()\n'),
    # 4: MPS autocast does not exist at 2.5: no DEVICE.type rewrite
    ('autocast_mps_25', '2.5', True, 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n', 'import torch\n\nwith torch.autocast(device_type="cuda"):\n    pass\n'),
    # 4: a stream whose .cuda_stream is read keeps its CUDA type (torch.Stream has no cuda_stream)
    ('stream_cuda_stream', '2.13', True, 'import torch\ns = torch.cuda.Stream()\nhandle = s.cuda_stream\n', 'import torch\ns = torch.cuda.Stream()\nhandle = s.cuda_stream\n'),
    # 5: two lines at the statement's indentation, comment kept
    ('one_liner_if', '2.13', False, 'import torch\n\n\ndef step():\n    if True:\n        torch.cuda.synchronize()  # wait\n', 'import torch\n\n\ndef step():\n    if True:\n        if torch.accelerator.is_available():\n            torch.accelerator.synchronize()  # wait\n'),
    # 5: torch.device("cuda") becomes the device, not torch.device(<device>)
    ('nested_device', '2.13', False, 'import torch\nd = torch.device("cuda")\n', 'import torch\nd = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")\n'),
    # found by the ecosystem check: torch.device(type, index) takes the device type as a string
    ('device_type_with_index', '2.13', False, 'import torch\nd = torch.device("cuda", index=0)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nd = torch.device(DEVICE.type, index=0)\n'),
    # found by the ecosystem check: a device parameter being defaulted is not the device (it is None there)
    ('defaulted_param', '2.13', True, 'import torch\n\n\ndef f(x, device=None):\n    if device is None: device = "cuda"\n    return x.to(device)\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\ndef f(x, device=None):\n    if device is None: device = DEVICE.type\n    return x.to(device)\n'),
    ('param_or_default', '2.13', True, 'import torch\n\n\ndef g(device=None):\n    device = device or "cuda"\n    return torch.ones(1, device="cuda"), device\n', 'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\n\ndef g(device=None):\n    device = device or DEVICE.type\n    return torch.ones(1, device=device), device\n'),
    # found by the ecosystem check: imports that follow code (E402 already) get no new import among them
    ('import_at_top', '2.13', False, 'import sys\nsys.exit(0)\n\nimport numpy as np\n\nconfig = dict(device="cuda")\n', 'import sys\nimport torch\nsys.exit(0)\n\nimport numpy as np\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nconfig = dict(device=DEVICE.type)\n'),
    # a shebang and an encoding line stay first
    ('shebang_first', '2.13', False, '#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nconfig = dict(device="cuda")\n', '#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\nconfig = dict(device=DEVICE.type)\n'),
    # round 81: the Hugging Face loaders' device_map takes the selected device's type ("mps", "cuda", "cpu")
    ('device_map', '2.13', False, 'from transformers import AutoModel\n\nm = AutoModel.from_pretrained("x", device_map="cuda")\n', 'from transformers import AutoModel\nimport torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n\nm = AutoModel.from_pretrained("x", device_map=DEVICE.type)\n'),
    # 5: tab indentation preserved
    ('tabs', '2.13', False, 'import torch\n\n\ndef f():\n\ttorch.cuda.synchronize()\n', 'import torch\n\n\ndef f():\n\tif torch.accelerator.is_available():\n\t\ttorch.accelerator.synchronize()\n'),
]


@pytest.mark.parametrize("name, version, unsafe, before, after", CASES, ids=[case[0] for case in CASES])
def test_fixed_output(name, version, unsafe, before, after):
    outcome = fix_text("example.py", before, DEFAULT, version, unsafe)
    assert outcome.error is None
    assert outcome.fixed == after
    compile(outcome.fixed, name, "exec")
    again = fix_text("example.py", outcome.fixed, DEFAULT, version, unsafe)
    assert again.fixed == outcome.fixed and again.applied == 0


def _project(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return DEFAULT.replace(root=tmp_path)


def test_oldest_release_the_manifests_allow_bounds_the_fix(tmp_path):
    """--torch-version 2.13, but requirements.txt allows torch 2.4: no API newer than 2.4 is written."""
    settings = _project(tmp_path, {"requirements.txt": "torch>=2.4,<3\n"})
    before = 'import torch\nx = torch.ones(1, device="cuda")\ntorch.cuda.synchronize()\n'
    outcome = fix_text("m.py", before, settings, "2.13", unsafe=False)
    assert outcome.fixed == (
        "import torch\n\n"
        "DEVICE = torch.device(\n"
        '    "cuda" if torch.cuda.is_available()\n'
        '    else "mps" if torch.backends.mps.is_available()\n'
        '    else "cpu"\n'
        ")\n"
        "x = torch.ones(1, device=DEVICE)\n"
        "torch.cuda.synchronize()\n"
    )


def test_configured_line_length_keeps_the_device_inline(tmp_path):
    (tmp_path / "ruff").mkdir()
    (tmp_path / "black").mkdir()
    settings = _project(tmp_path / "ruff", {"pyproject.toml": "[tool.ruff]\nline-length = 120\n"})
    before = 'import torch\nx = torch.ones(1, device="cuda")\n'
    outcome = fix_text("m.py", before, settings, "2.13", unsafe=False)
    assert outcome.fixed == 'import torch\nx = torch.ones(1, device=torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu"))\n'
    black = _project(tmp_path / "black", {"pyproject.toml": "[tool.black]\nline-length = 100\n"})
    assert fix_text("m.py", before, black, "2.13", unsafe=False).fixed == (  # inline it would be 103 characters
        'import torch\n\nDEVICE = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")\n'
        "x = torch.ones(1, device=DEVICE)\n"
    )


def test_the_configuration_nearest_the_file_sets_the_line_length(tmp_path):
    """A monorepo: the subproject's own [tool.ruff] line-length wins over the root's (as ruff reads it)."""
    settings = _project(tmp_path, {"pyproject.toml": "[tool.ruff]\nline-length = 88\n",
                                   "sub/pyproject.toml": "[tool.ruff]\nline-length = 120\n"})
    before = 'import torch\nx = torch.ones(1, device="cuda")\n'
    inline = 'import torch\nx = torch.ones(1, device=torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu"))\n'
    assert fix_text("sub/m.py", before, settings, "2.13", unsafe=False).fixed == inline
    assert fix_text("m.py", before, settings, "2.13", unsafe=False).fixed != inline  # 103 characters > 88 at the root


def test_share_of_fixes_that_reuse_the_codes_own_device():
    """On the fixture set with --unsafe-fixes, which fixes use a device the code already had."""
    reused = total = 0
    for path in sorted(p for folder in ("python", "demo", "e2e") for p in (FIXTURES / folder).glob("*.py")):
        for finding in lint_text(path.name, "python", path.read_text(), DEFAULT.replace(unsafe_fixes=True), "2.13"):
            if finding.fix is not None and any("DEVICE" in e.content or "device" in e.content for e in finding.fix.edits):
                total += 1
                reused += "the code's own" in finding.fix.description
    assert (reused, total) == (2, 16)  # float64_device.py: two .cuda() in functions that take a device
