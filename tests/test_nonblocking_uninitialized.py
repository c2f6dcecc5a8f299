"""CDL304 and a copy of a fresh uninitialized tensor: `torch.empty(...).to(device, non_blocking=True)`
(or `empty_like`, `x.new_empty(...)`) lands garbage by design, to be overwritten, so a late copy changes
nothing. A copy of anything with contents (zeros, a cast of an empty tensor) is still reported."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def centroids(k, dim, device, bank):
    first = torch.empty(k, dim).to(device, non_blocking=True)
    second = torch.empty_like(bank).to(device, non_blocking=True)
    third = bank.new_empty((k, dim)).to(device, non_blocking=True)
    zeros = torch.zeros(k, dim).to(device, non_blocking=True)
    cast = torch.empty(k, dim).float().to(device, non_blocking=True)
    return first, second, third, zeros, cast
'''


def test_a_copy_of_an_uninitialized_tensor_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL304"}))
    assert found == [("CDL304", 8, 44), ("CDL304", 9, 51)]
