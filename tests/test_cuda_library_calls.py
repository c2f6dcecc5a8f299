"""A function that calls, whatever branch it takes, a name the module binds only to a CUDA-only
library's function or to None (transformers-style FlashAttention2 classes vendored by lerobot:
`if is_flash_attn_2_available(): from flash_attn import flash_attn_func` / `else: flash_attn_func =
None`), or a method of its class that does, completes only where that library imports: what else it
does is that library's requirement. A call in one branch only, or of a name bound to something else
too, guards nothing."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch

from transformers.utils import is_flash_attn_2_available

if is_flash_attn_2_available():
    from flash_attn import flash_attn_func, flash_attn_varlen_func
else:
    flash_attn_func = None
    flash_attn_varlen_func = None


def portable(q):
    return q


class FlashAttention2(torch.nn.Module):
    def forward(self, q, k, v):
        if torch.is_autocast_enabled():
            q = q.to(torch.get_autocast_gpu_dtype())
        return self._flash_forward(q, k, v, None).reshape(q.shape)

    def _flash_forward(self, q, k, v, mask):
        if mask is not None:
            out = flash_attn_varlen_func(q, k, v)
        else:
            out = flash_attn_func(q, k, v)
        return out


class Sometimes(torch.nn.Module):
    def forward(self, q, k, v, use_flash):
        if torch.is_autocast_enabled():
            q = q.half()
        if use_flash:
            return flash_attn_func(q, k, v)
        return portable(q)
'''


def test_code_of_a_function_that_always_calls_a_cuda_only_library_is_not_reported():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL208"}))
    assert found == [("CDL208", 32, 12)]
