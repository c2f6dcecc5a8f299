"""CDL601 and data read off disk: `torch.tensor` of a mapping's entry read whole (`conf["energy"][()]`,
`f["forces"][...]`, `mol["energies"][:] * scale`: h5py's reads into NumPy) builds on the CPU; moved to
a device it is CDL608's. A `torch.tensor` of a torch call's result, of data the code does not show (a
parameter), or of a slice of something with no string key (a tensor may be sliced), is still CDL601's;
so is one scaled by what the code does not show is a number (a class's own float constant is one)."""

from conftest import findings_of, triples

SOURCE = '''
import torch


def build(data, device, conf):
    a = torch.tensor(conf["energy"][()], dtype=torch.float64)
    b = torch.tensor(data, dtype=torch.float64).to(device)
    c = torch.tensor(torch.randn(3), dtype=torch.float64)
    d = torch.as_tensor(data, dtype=torch.float64)
    e = torch.tensor(conf["forces"][...], dtype=torch.float64)
    e = e.to(device)
    f = torch.tensor(data[:], dtype=torch.float64)
    g = torch.tensor(conf["energies"][:] * 27.2, dtype=torch.float64)
    h = torch.tensor(conf[0][:], dtype=torch.float64)
    return a, b, c, d, e, f, g, h


class Molecules:
    HARTREE_TO_EV = 27.211386246

    def sample(self, mol, conf, other):
        y = torch.tensor(mol["energy"][conf][()] * self.HARTREE_TO_EV, dtype=torch.float64)
        z = torch.tensor(mol["energies"][:] * other.scale, dtype=torch.float64)
        return y, z
'''


def test_torch_tensor_of_data_read_off_disk_stays_on_the_host():
    assert triples(findings_of(SOURCE.lstrip("\n"), select={"CDL601", "CDL608"}, torch_version="2.9.1")) == [
        ("CDL608", 6, 9),
        ("CDL601", 7, 44),
        ("CDL601", 8, 37),
        ("CDL608", 10, 9),
        ("CDL601", 11, 37),
        ("CDL601", 13, 40),
        ("CDL601", 22, 66),
    ]
