"""CDL601 and `torch.tensor`: it copies its data and, given no device, builds on the CPU unless the
data is a tensor (which PyTorch's docs steer away from). A float64 tensor made from records read off
disk (`conf["energy"][()]`, an h5py dataset) stays on the host; moved to a device it is CDL608's. A
`torch.tensor` of a torch call's result, or one given a device, is still CDL601's."""

from conftest import findings_of, triples

SOURCE = '''
import torch


def build(data, device, conf):
    a = torch.tensor(conf["energy"][()], dtype=torch.float64)
    b = torch.tensor(data, dtype=torch.float64).to(device)
    c = torch.tensor(torch.randn(3), dtype=torch.float64)
    d = torch.as_tensor(data, dtype=torch.float64)
    e = torch.tensor(data, dtype=torch.float64)
    e = e.to(device)
    return a, b, c, d, e
'''


def test_torch_tensor_of_data_read_off_disk_stays_on_the_host():
    assert triples(findings_of(SOURCE.lstrip("\n"), select={"CDL601", "CDL608"}, torch_version="2.9.1")) == [
        ("CDL608", 6, 9),
        ("CDL601", 7, 44),
        ("CDL601", 8, 37),
        ("CDL608", 10, 9),
    ]
