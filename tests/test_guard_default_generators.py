"""`torch.cuda.default_generators` is empty until CUDA is initialized (torch/cuda/__init__.py), which needs
a CUDA device: a test of its length or truth guards CUDA-only code (rules/guards.toml `flags`), and the
other branch is what a Mac runs."""

from conftest import findings_of, triples

SOURCE = '''import torch


def seed():
    if hasattr(torch.cuda, "default_generators") and len(torch.cuda.default_generators) > 0:
        index = torch.cuda.current_device()
        return torch.cuda.default_generators[index].seed()
    if torch.cuda.default_generators:
        return torch.cuda.get_rng_state()
    torch.cuda.manual_seed_all(0)
    return torch.seed()
'''


def test_the_cuda_generators_guard_their_branch():
    assert triples(findings_of(SOURCE, select={"CDL105", "CDL203"})) == [("CDL203", 10, 5)]
