"""An autocast turned off for CUDA (`enabled=False`) around a region that runs none of the operators MPS
autocast casts to float16 changes nothing on a Mac: it is not reported. One whose region multiplies, or
calls what the file cannot tell, is (CDL205 for torch.cuda.amp, CDL207 for torch.autocast("cuda"))."""

from conftest import findings_of, triples

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.amp import autocast
from einops import rearrange


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        with torch.cuda.amp.autocast(enabled=False):
            out = self.pool(x)
        with torch.cuda.amp.autocast(enabled=False):
            out = self.fc(out)
        return out


@autocast("cuda", enabled=False)
def rotate(x):
    x = rearrange(x, "... (d j) -> ... d j", j=2)
    x1, x2 = x.unbind(dim=-1)
    return torch.stack((-x2, x1), dim=-1)


@autocast("cuda", enabled=False)
def attend(q, k):
    return torch.einsum("i d, j d -> i j", q, k)


def loss(p, t):
    with torch.autocast("cuda", enabled=False):
        a = F.binary_cross_entropy(p.float(), t)
    with torch.autocast("cuda", enabled=False):
        b = p @ t
    with torch.autocast("cuda", enabled=False):
        c = helper(p)
    with torch.autocast("cuda", enabled=False):
        d = F.group_norm(p.half(), 2)
    return a, b, c, d


def helper(p):
    return p @ p
'''


def test_only_regions_that_may_multiply_keep_their_finding():
    assert triples(findings_of(SOURCE, select={"CDL205", "CDL207"})) == [
        ("CDL205", 18, 14),  # self.fc is an nn.Linear: MPS autocast would run it in float16
        ("CDL207", 30, 11),  # torch.einsum is cast
        ("CDL207", 38, 25),  # `@` is a matmul
        ("CDL207", 40, 25),  # a function of the file that multiplies (one that only reshapes is followed and not reported)
        ("CDL207", 42, 25),  # group_norm: MPS autocast would run it in float32, not in the half precision given
    ]


def test_an_autocast_left_on_or_not_known_off_is_reported_whatever_its_region():
    source = (
        "import torch\n\n\ndef f(x, amp):\n"
        "    with torch.autocast('cuda'):\n        y = x.float()\n"
        "    with torch.autocast('cuda', enabled=amp):\n        y = x.float()\n"
        "    ctx = torch.cuda.amp.autocast(enabled=False)\n    with ctx:\n        y = x.float()\n"
        "    return y\n"
    )
    assert triples(findings_of(source, select={"CDL205", "CDL207"})) == [
        ("CDL207", 5, 25), ("CDL207", 7, 25), ("CDL205", 9, 11)]


def test_a_module_bound_to_a_container_or_elsewhere_counts_as_casting():
    """`self.pool` is an nn.MaxPool2d: pooling runs in its input's precision under MPS autocast too."""
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self, pools):\n        super().__init__()\n"
        "        self.pools = nn.ModuleList(pools)\n        self.pool = nn.MaxPool2d(2)\n\n"
        "    def forward(self, x):\n"
        "        with torch.autocast('cuda', enabled=False):\n            x = self.pools[0](x)\n"
        "        with torch.autocast('cuda', enabled=False):\n            x = self.pool(x)\n"
        "        with torch.autocast('cuda', enabled=False):\n            x = self.head(x)\n"
        "        return x\n"
    )
    assert triples(findings_of(source, select={"CDL207"})) == [("CDL207", 12, 29), ("CDL207", 16, 29)]
