"""`.to(...)` given a tensor's dtype (`x.dtype`, or a local name every binding of which reads one) casts,
it moves nothing: a float64 tensor cast back to its input's dtype is no CDL608 move."""

from conftest import findings_of, triples

SOURCE = '''import torch


def wigner(angles, device):
    input_dtype = angles.dtype
    result = torch.zeros(3, dtype=torch.float64)
    back = result.to(input_dtype), result.to(angles.dtype)
    moved = result.to(device)
    return back, moved
'''


def test_a_cast_to_a_tensors_dtype_is_no_move():
    assert triples(findings_of(SOURCE, select={"CDL608"})) == [("CDL608", 8, 13)]
