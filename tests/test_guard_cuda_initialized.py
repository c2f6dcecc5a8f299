"""`torch.cuda._initialized` is set by torch's `_lazy_init()` only once CUDA has initialised, so a test of it
guards CUDA-only code like `torch.cuda.is_initialized()` does (rules/guards.toml, flags): the reversible
layers' RNG-state capture."""

from conftest import findings_of, triples

SOURCE = '''import torch
from torch.utils.checkpoint import get_device_states


class Deterministic(torch.nn.Module):
    def record_rng(self, *args):
        self.cpu_state = torch.get_rng_state()
        if torch.cuda._initialized:
            self.cuda_in_fwd = True
            self.gpu_devices, self.gpu_states = get_device_states(*args)
        if not torch.cuda._initialized:
            self.gpu_devices, self.gpu_states = get_device_states(*args)
'''


def test_a_test_of_cuda_initialized_guards_cuda_only_code():
    assert triples(findings_of(SOURCE, select={"CDL203"})) == [("CDL203", 12, 49)]
