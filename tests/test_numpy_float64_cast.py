"""CDL607: `torch.from_numpy(a).to(dtype)` casts when `dtype` is a parameter annotated as a dtype
(`dtype: Optional[torch.dtype] = None`, `torch.dtype | None`): nothing moves to a device. A parameter
with no such annotation may be a device, and the move is still reported."""

import textwrap

from conftest import findings_of, triples


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL607"}))


def test_a_cast_to_a_dtype_parameter_moves_nothing():
    source = """
    from typing import Optional

    import numpy as np
    import torch


    def read(tokens, dtype: Optional[torch.dtype] = None):
        return torch.from_numpy(np.array(tokens, dtype=np.float64)).to(dtype)


    def read_new(tokens, dtype: torch.dtype | None = None):
        return torch.from_numpy(np.array(tokens, dtype=np.float64)).to(dtype)


    def read_to(tokens, target):
        return torch.from_numpy(np.array(tokens, dtype=np.float64)).to(target)
    """
    assert lint(source) == [("CDL607", 16, 12)]
