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


def test_a_copy_the_next_statement_waits_for_on_a_mac_is_not_reported():
    source = """
    import functools
    import torch


    def _nothing():
        return


    def _sync_function(device):
        if torch.cuda.is_available():
            return functools.partial(torch.cuda.synchronize, device=device)
        if torch.backends.mps.is_available():
            return torch.mps.synchronize
        return _nothing


    class Mover:
        def __init__(self, device):
            self.device = device
            if torch.cuda.is_available():
                self._sync = torch.cuda.synchronize
            elif torch.backends.mps.is_available():
                self._sync = torch.mps.synchronize
            else:
                self._sync = _nothing

        def move(self, batch, stream):
            a = batch.to(self.device, non_blocking=True)
            self._sync()
            sync = _sync_function(self.device)
            b = batch.to(self.device, non_blocking=True)
            sync()
            c = batch.to(self.device, non_blocking=True); torch.mps.synchronize()
            d = batch.to(self.device, non_blocking=True)
            if torch.cuda.is_available() and self.device.type == "cpu":
                torch.cuda.synchronize()
            elif torch.backends.mps.is_available():
                torch.mps.synchronize()
            e = batch.to(self.device, non_blocking=True)
            stream.synchronize()
            f = batch.to(self.device, non_blocking=True)
            torch.accelerator.synchronize()
            return a, b, c, d, e, f
    """
    assert lint(source) == []


def test_a_copy_not_waited_for_at_once_or_only_by_a_cuda_wait_is_reported():
    # the sources are temporaries (`batch.float()`): nothing holds them until a later wait (see
    # test_nonblocking_held_source.py for sources held for the whole call)
    source = """
    import torch


    class Mover:
        def __init__(self, device):
            self.device = device
            self._sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)

        def move(self, batch):
            a = batch.float().to(self.device, non_blocking=True)
            self._sync()
            b = batch.float().to(self.device, non_blocking=True)
            torch.cuda.synchronize()
            c = batch.float().to(self.device, non_blocking=True)
            print(c.sum())
            torch.mps.synchronize()
            if batch.is_pinned():
                d = batch.float().to(self.device, non_blocking=True)
            torch.mps.synchronize()
            e = batch.float().to(self.device, non_blocking=True)
            torch.cuda.current_stream().synchronize()
            return a, b, c, d, e
    """
    assert lint(source) == [
        ("CDL304", 10, 43),
        ("CDL304", 12, 43),
        ("CDL304", 14, 43),
        ("CDL304", 18, 47),
        ("CDL304", 20, 43),
    ]


def test_copies_between_tensors_made_from_one_tensor_are_not_reported():
    """A solver's scalars made with `b.new_tensor(...)`, results of operators and math methods on b,
    and b rebound where it already was (`b = torch.atleast_1d(b)`): all on b's device."""
    source = """
    import torch


    def solve(A, b, x0):
        b = torch.atleast_1d(b)
        r = b - A.mv(x0)
        rs = r.dot(r)
        rs_new = b.new_tensor(0.0)
        torch.dot(r, r, out=rs_new)
        rs.copy_(rs_new, non_blocking=True)
        old = b.new_zeros(())
        old.copy_(rs.sqrt() * 2, non_blocking=True)
        other = A.new_tensor(0.0)
        other.copy_(rs, non_blocking=True)
        return old, other
    """
    assert lint(source) == [("CDL304", 14, 21)]


def test_a_cast_to_what_a_dtype_helper_returns_moves_nothing():
    # deepinv's MMSE: `acc_dtype = _select_accumulator_dtype(dtype)`, annotated `-> torch.dtype`
    source = """
    import torch


    def _accumulator(dtype: torch.dtype) -> torch.dtype:
        return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


    def _place(name):
        return name


    def step(x, dtype):
        acc_dtype = _accumulator(dtype)
        a = x.to(acc_dtype, non_blocking=True)
        b = x.to(_accumulator(dtype), non_blocking=True)
        c = x.to(_place("mps"), non_blocking=True)
        return a, b, c
    """
    assert lint(source) == [("CDL304", 16, 29)]
