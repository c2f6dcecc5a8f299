"""CDL203's `fork_rng(devices=...)` entry: an empty list or tuple forks no device's generator (only the
CPU's), on purpose, so it is no finding; any other value without `device_type` still is."""

from conftest import findings_of, triples

SOURCE = '''import torch


def seeded(seed, devices):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
    none = ()
    with torch.random.fork_rng(devices=none):
        torch.manual_seed(seed)
    with torch.random.fork_rng(devices=[0]):
        torch.manual_seed(seed)
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
    with torch.random.fork_rng(devices=[0], device_type="mps"):
        torch.manual_seed(seed)
'''


def test_an_empty_device_list_forks_the_cpu_generator_only():
    assert triples(findings_of(SOURCE, select={"CDL203"})) == [("CDL203", 10, 32), ("CDL203", 12, 32)]
