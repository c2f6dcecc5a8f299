"""CDL119: a table keyed by device type with "cpu" and "cuda" entries and no "mps" one, looked up with a
device's type: reported where it is read (exact code, line, column), the table as the related location when
written elsewhere."""

from conftest import findings_of, triples

SOURCE = '''import torch

BLOCK = {"cpu": 128, "cuda": 512}
KERNELS = dict(cpu=print, cuda=repr)
PORTABLE = {"cpu": 1, "cuda": 2, "mps": 3}
REGISTERED = {"cuda": 1, "meta": 2, "cpu": 3}
GPUS = {"cuda": 1, "xpu": 2}
MODES = {"cpu": 1, "fast": 2}


class Dot:
    kernels = {"cpu": print, "cuda:0": repr}

    def forward(self, x):
        self.kernels[x.device.type](x)
        return Dot.kernels[x.device.type](x)


def run(x, device, mode):
    size = BLOCK[x.device.type]
    KERNELS[device.type](x)
    BLOCK[device] = 3
    size = BLOCK["cuda"]
    size = PORTABLE[x.device.type] + REGISTERED[x.device.type] + GPUS[x.device.type] + MODES[device]
    if device.type in BLOCK:
        size = BLOCK[device.type]
    try:
        size = BLOCK[device.type]
    except KeyError:
        size = 64
    try:
        size = BLOCK[device.type]
    except KeyError:
        raise ValueError(device)
    kind = x.device.type
    size = BLOCK[kind] + BLOCK[mode]
    return {"cpu": 1, "cuda": 2}[device.type]
'''


def test_device_tables_without_mps():
    found = sorted(findings_of(SOURCE, select={"CDL119"}), key=lambda f: f.sort_key)
    assert triples(found) == [("CDL119", 15, 9), ("CDL119", 16, 16), ("CDL119", 20, 12), ("CDL119", 21, 5),
                              ("CDL119", 32, 16), ("CDL119", 36, 12), ("CDL119", 37, 12)]
    assert found[2].message == ('BLOCK has entries for "cpu", "cuda" and none for "mps": a lookup with a Mac\'s device type '
                                "raises KeyError('mps') here; add an \"mps\" entry")
    assert [(r.line, r.column, r.message) for r in found[2].related] == [(3, 9, 'BLOCK is written here, without an "mps" entry')]
    assert [(r.line, r.column) for r in found[0].related] == [(12, 15)]
    assert found[-1].related == ()


def test_device_tables_under_a_cuda_guard_are_not_reported():
    source = 'import torch\n\nT = {"cpu": 1, "cuda": 2}\nif torch.cuda.is_available():\n    n = T[DEVICE.type]\n'
    assert findings_of(source, select={"CDL119"}) == []


def test_a_table_bound_two_ways_with_mps_in_one_is_not_reported():
    source = ('import torch\n\nif torch.backends.mps.is_available():\n    T = {"cpu": 1, "cuda": 2, "mps": 3}\n'
              'else:\n    T = {"cpu": 1, "cuda": 2}\n\n\ndef f(x):\n    return T[x.device.type]\n')
    assert findings_of(source, select={"CDL119"}) == []
