"""CDL304: a non_blocking copy between two tensors the code shows are on one device touches no host
memory (on MPS it is ordered on the one queue with what reads it): not reported. A copy whose two
sides the code cannot tie to one device (a host buffer, a device argument, a tensor of unknown
place) still is."""

import textwrap

from conftest import findings_of, triples


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL304"}))


def test_copies_between_places_on_one_device_are_not_reported():
    source = """
    import torch


    def step(params, flat, device):
        for p in params:
            buf = torch.empty_like(p)
            buf.copy_(p.grad, non_blocking=True)
            view = flat.narrow(0, 0, p.numel()).view_as(p)
            view.copy_(flat[1:], non_blocking=True)
            moved = view.to(flat.device, non_blocking=True)
            staged = torch.zeros(4, device=device)
            staged.copy_(torch.ones(4, device=device), non_blocking=True)
            p.grad.data.copy_(buf.detach(), non_blocking=True)
            cast = p.to(torch.float16, non_blocking=True)
        return moved, cast
    """
    assert lint(source) == []


def test_copies_the_code_cannot_tie_to_one_device_are_reported():
    source = """
    import torch


    def step(params, host, device):
        for p in params:
            pinned = torch.empty(p.shape, device="cpu", pin_memory=True)
            pinned.copy_(p.grad, non_blocking=True)
            p.grad.copy_(host, non_blocking=True)
            buf = host.to(p.device, non_blocking=True)
            p.data = p.data.to(device, non_blocking=True)
            x = p.grad
            x = x.cpu()
            x.copy_(p, non_blocking=True)
        return buf
    """
    assert lint(source) == [
        ("CDL304", 7, 30),
        ("CDL304", 8, 28),
        ("CDL304", 9, 33),
        ("CDL304", 10, 36),
        ("CDL304", 13, 20),
    ]
