"""A helper that returns early on every Mac: `if device.type in ("cpu", "mps"): return False` is taken
there (a Mac has no other device type), so the helper's later returns never run on one and its value
there is what the early return gives; in this file and through the project index."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

CHECKS = """
import torch


def check_amp(model):
    device = next(model.parameters()).device
    if device.type in ("cpu", "mps"):
        return False  # AMP only on CUDA
    try:
        return bool(torch.allclose(model(1), model(2)))
    except Exception:
        return True


def maybe_amp(device):
    if device.type == "cpu":
        return False
    return True


def amp_unless_mps(device):
    if device.type in ("cpu", "mps"):
        log("no amp")
    return True
"""


def lint(source: str, project_files=None, path="train.py"):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL205"}, project_files=files, path=path))


USES = """
amp = check_amp(model)
scaler = torch.cuda.amp.GradScaler(enabled=amp)
with torch.cuda.amp.autocast(amp):
    pass
other = maybe_amp(device)
scaler = torch.cuda.amp.GradScaler(enabled=other)
third = amp_unless_mps(device)
scaler = torch.cuda.amp.GradScaler(enabled=third)
"""


def test_a_helper_of_the_same_file():
    # maybe_amp's early return is taken only on a CPU (MPS goes on to `return True`); amp_unless_mps does not return
    assert lint(CHECKS + USES) == [("CDL205", 30, 10), ("CDL205", 32, 10)]


def test_a_helper_of_another_module():
    source = "import torch\nfrom pkg.checks import check_amp, maybe_amp, amp_unless_mps\n" + USES
    assert lint(source, {"pkg/checks.py": CHECKS}) == [("CDL205", 9, 10), ("CDL205", 11, 10)]


def test_the_early_return_must_come_first_on_a_mac_and_a_branch_no_mac_takes():
    # a return before the early exit may run on a Mac: that helper is no guard; no_amp_here's True is
    # returned only where the device is neither the CPU nor MPS
    source = """
    import torch


    def use_amp(device, forced):
        if forced:
            return True
        if device.type in ("mps", "cpu"):
            return False
        return True


    def no_amp_here(device):
        if device.type not in ("cpu", "mps"):
            return True
        return False


    scaler = torch.cuda.amp.GradScaler(enabled=use_amp(device, forced))
    scaler = torch.cuda.amp.GradScaler(enabled=no_amp_here(device))
    """
    assert lint(source) == [("CDL205", 18, 10)]
