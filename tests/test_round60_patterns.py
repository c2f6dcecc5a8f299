"""Patterns from blind round 60 (bench/EVAL.md, session 37): an option whose default matches reported once,
a device test decided by a name's only written value, and a float64 dtype given through a dict of keywords
spread into a factory."""

from conftest import findings_of, triples


def test_an_option_and_its_default_are_one_finding():
    source = ('import argparse\n'
              'import pytorch_lightning as pl\n\n'
              'parser = argparse.ArgumentParser()\n'
              'parser.add_argument("--gpus", default=4, type=int, help="number of GPUs")\n'
              'parser.add_argument("--nodes", default=0, type=int)\n'
              'args = parser.parse_args()\n'
              'trainer = pl.Trainer(gpus=args.gpus)\n'
              'other = pl.Trainer(gpus=args.nodes)\n')
    found = findings_of(source, select={"CDL114"})
    assert triples(found) == [("CDL114", 5, 39), ("CDL114", 6, 1)]
    assert found[0].message.startswith("4 (reaching gpus=args.gpus) asks PyTorch Lightning 1.x for CUDA GPUs")


def test_a_device_test_decided_by_the_names_only_value():
    source = ('import torch\n\n'
              'device_id = "cpu"  # "cuda" if torch.cuda.is_available() else "cpu"\n'
              'chosen = "cuda" if torch.cuda.is_available() else "cpu"\n\n'
              'def fun(x):\n'
              '    if device_id != "cpu":\n'
              '        torch.cuda.synchronize()\n'
              '    if device_id == "cpu":\n'
              '        return x\n'
              '    torch.cuda.synchronize()\n'
              '    return x\n\n'
              'def other(x):\n'
              '    if chosen != "cpu":\n'
              '        torch.cuda.synchronize()\n'
              '    if device_id == "cuda":\n'
              '        torch.cuda.empty_cache()\n'
              '    torch.cuda.empty_cache()\n')
    found = findings_of(source, select={"CDL201", "CDL202"})
    # line 11 follows a return taken wherever the code runs (`device_id == "cpu"` always holds): dead code
    assert triples(found) == [("CDL202", 19, 5)]


def test_a_float64_dtype_spread_from_a_dict_of_keywords():
    source = ('import torch\n\n'
              'def precompute(length, device):\n'
              '    params = {"device": device, "dtype": torch.double}\n'
              '    n = torch.arange(length, **params)\n'
              '    k = torch.arange(length, **params)\n'
              '    host = {"dtype": torch.double}\n'
              '    w = torch.ones(length, **host)\n'
              '    return n * k, w\n')
    found = findings_of(source, select={"CDL601", "CDL608"})
    assert triples(found) == [("CDL608", 4, 42)]  # the host dict's float64 stays on the CPU
    assert found[0].message.startswith("a float64 tensor is made on the device")
    assert [(place.line, place.message) for place in found[0].related] == [(5, "torch.arange(...) makes it on the device here")]
