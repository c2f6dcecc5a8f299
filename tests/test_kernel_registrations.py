"""A function registered as an operator's kernel only for device types or dispatch keys no Mac has
(rules/guards.toml `kernel_registrations`, `kernel_methods`, `dispatch_prefixes`) runs only there: its
body gets no finding a CUDA guard silences. Registrations for a device a Mac has, or for several
devices one of which a Mac has, keep theirs."""

from conftest import findings_of, triples

SOURCE = '''import torch
from torch.library import impl


@torch.library.impl("ns::op", "AutocastCUDA")
def autocast_kernel(x):
    with torch.autocast("cuda", enabled=False):
        return x.cuda()


@impl("ns::op", ["cuda"])
def cuda_kernel(x):
    return x.cuda()


@torch.library.register_kernel("ns::op", "cpu")
def cpu_kernel(x):
    return x.cuda()


@my_op.register_kernel(device_types="cuda")
def method_kernel(x):
    return x.cuda()


@torch.library.impl("ns::op", ("cuda", "cpu"))
def both(x):
    return x.cuda()


@torch.library.impl(lib, "op", "CUDA")
def old_style(x):
    return x.cuda()


@torch.library.impl(lib, "op", "SparseCsrCUDA")
def sparse(x):
    return x.cuda()
'''


def test_kernels_registered_off_a_mac_only_get_no_finding():
    assert triples(findings_of(SOURCE, select={"CDL102", "CDL207"})) == [("CDL102", 18, 14), ("CDL102", 28, 14)]
