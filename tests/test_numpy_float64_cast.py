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


def test_a_cast_to_a_name_bound_to_torch_dtypes_comes_before_the_move():
    # lama-cleaner's MAT: `self.torch_dtype` is float16 or float32, so the float64 NumPy noise is cast
    # before it moves; a cast to an unknown name and then a move is one finding, not one per `.to`.
    source = """
    import numpy as np
    import torch


    class MAT:
        def __init__(self, device, use_gpu, fp16):
            self.torch_dtype = torch.float16 if use_gpu and fp16 else torch.float32
            self.z = torch.from_numpy(np.random.randn(1, 512)).to(self.torch_dtype).to(device)
            self.w = torch.from_numpy(np.random.randn(1, 512)).to(device)


    def noise(device, half):
        dtype = torch.float16 if half else torch.float32
        return torch.from_numpy(np.random.randn(3)).to(dtype).to(device)


    def unknown(device, other):
        return torch.from_numpy(np.random.randn(3)).to(other).to(device)
    """
    assert lint(source) == [("CDL607", 9, 18), ("CDL607", 18, 12)]
