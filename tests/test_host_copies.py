"""CDL120: a tensor copied to the host only where the device is CUDA, then read into NumPy (alibi-detect's
prediction helpers, imagededup's CNN features): reported at the test, with the NumPy read named."""

from conftest import findings_of, triples

SOURCE = '''import torch


def to_numpy(preds, device):
    if device.type == "cuda" and isinstance(preds, torch.Tensor):
        preds = preds.cpu()
    return preds.numpy()


def features(self, out):
    if self.device.type == "cuda":
        f = out.cpu().detach().numpy()
    else:
        f = out.detach().numpy()
    return f


def as_list(preds, device):
    if device.type == "cuda":
        preds = preds.cpu()
    return preds.tolist()


def pair(a, b, device):
    if "cuda" in str(device):
        a, b = a.cpu(), b.cpu()
    return a.numpy() + 1


def host(x):
    if torch.cuda.is_available():
        x = x.cpu()
    return x.numpy()


def every_device(x, device):
    if device.type == "cuda":
        torch.cuda.synchronize()
        x = x.cpu()
    return x.numpy()
'''


def test_a_host_copy_made_only_from_cuda_before_numpy():
    found = sorted(findings_of(SOURCE, select={"CDL120"}), key=lambda f: f.sort_key)
    assert triples(found) == [("CDL120", 5, 8), ("CDL120", 11, 8), ("CDL120", 25, 8)]
    assert found[0].message == ("copies to the host only where the device is CUDA: on MPS preds.numpy() raises "
                                "(\"can't convert mps:0 device type tensor to numpy\"); call .cpu() whatever the device")
    assert "out.detach().numpy()" in found[1].message


def test_a_host_copy_under_a_cuda_guard_is_not_reported():
    source = 'import torch\n\nif torch.cuda.is_available():\n    if DEVICE.type == "cuda":\n        y = y.cpu()\n    z = y.numpy()\n'
    assert findings_of(source, select={"CDL120"}) == []
