"""CDL207 and a gradient scaler left on its default device: `torch.amp.GradScaler()` (also imported, or as
`torch.GradScaler`) is CUDA's scaler, `device: str = "cuda"` in torch/amp/grad_scaler.py, and without CUDA
it warns and disables itself. Reported where the call gives no device; not where it gives one (by position
or keyword), spreads arguments that may, or is enabled only on CUDA."""

from conftest import findings_of, triples

SOURCE = '''import torch
from torch.amp import GradScaler


def make(device, amp, kwargs):
    a = torch.amp.GradScaler()
    b = GradScaler(enabled=amp)
    c = torch.amp.GradScaler(device.type)
    d = torch.amp.GradScaler(device=device.type, enabled=amp)
    e = torch.amp.GradScaler(**kwargs)
    f = torch.amp.GradScaler(enabled=device.type == "cuda")
    g = torch.GradScaler()
    return a, b, c, d, e, f, g
'''


def test_a_gradscaler_without_a_device_is_cudas():
    found = findings_of(SOURCE, select={"CDL207"})
    assert triples(found) == [("CDL207", 6, 9), ("CDL207", 7, 9), ("CDL207", 12, 9)]
    assert found[0].message == (
        "torch.amp.GradScaler(...) without a device is CUDA's gradient scaler (its default"
        ' device is "cuda"): off CUDA it disables itself; pass device.type'
    )
