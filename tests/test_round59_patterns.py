"""Patterns from blind round 59 (bench/EVAL.md, session 37): a notebook whose only device is
`torch.device("cpu")`, an out-of-memory error caught by its base class beside it, a GPU count that `or 1`
keeps from zero, a caller's device replaced by the CPU where CUDA is missing (statement form), and
torch.cuda memory and NVML queries the catalog lacked."""

import json

from conftest import findings_of, triples


def _notebook(*cells):
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": cell.splitlines(True),
                                  "outputs": [], "execution_count": None} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_a_notebook_whose_only_device_is_the_cpu_runs_on_the_cpu():
    loads = 'import torch\ntorch.set_default_tensor_type(torch.DoubleTensor)\nnet = torch.load("n.pt", map_location=torch.device("cpu"))\n'
    assert findings_of(_notebook(loads), path="drum.ipynb", kind="notebook", select={"CDL601"}) == []
    moved = loads + 'net = net.to(torch.device("mps"))\n'
    found = findings_of(_notebook(moved), path="drum.ipynb", kind="notebook", select={"CDL601"})
    assert [f.code for f in found] == ["CDL601"]


def test_out_of_memory_caught_beside_its_base_class():
    source = ('import torch\n\n'
              'def step(run):\n'
              '    try:\n'
              '        run()\n'
              '    except (RuntimeError, torch.cuda.OutOfMemoryError):\n'
              '        return None\n'
              '    try:\n'
              '        run()\n'
              '    except (ValueError, torch.cuda.OutOfMemoryError):\n'
              '        return None\n'
              '    try:\n'
              '        run()\n'
              '    except torch.cuda.OutOfMemoryError:\n'
              '        return None\n')
    found = findings_of(source, select={"CDL202"}, torch_version="2.3")
    assert triples(found) == [("CDL202", 10, 25), ("CDL202", 14, 12)]


def test_a_gpu_count_kept_from_zero_by_or_divides_nothing_by_zero():
    source = ('import torch\n\n'
              'def local_rank(rank):\n'
              '    n = torch.cuda.device_count() or 1\n'
              '    m = torch.cuda.device_count()\n'
              '    return rank % n, rank % m\n')
    assert triples(findings_of(source, select={"CDL115"})) == [("CDL115", 5, 9)]


def test_a_callers_device_replaced_by_the_cpu_where_cuda_is_missing():
    source = '''import torch


class Trainer:
    def __init__(self, model, device):
        if not torch.cuda.is_available():
            print("CUDA not available, using cpu")
            self.device = "cpu"
        else:
            self.device = device


def run(model, device):
    if not torch.cuda.is_available():
        device = "cpu"
    return model.to(device)


def chosen(model, device):
    if torch.cuda.is_available():
        target = device
    else:
        target = "cpu"
    if torch.cuda.is_available():
        mode = "fast"
    else:
        mode = "cpu"
    return model.to(target), mode
'''
    found = findings_of(source, select={"CDL104"})
    assert triples(found) == [("CDL104", 6, 9), ("CDL104", 14, 5), ("CDL104", 20, 5)]
    assert found[0].message.startswith("device is replaced by the CPU wherever CUDA is missing")
    assert found[1].message.startswith("device is replaced by the CPU")


def test_memory_and_nvml_queries_the_catalog_had_missed():
    source = ('import torch\n\n'
              'torch.cuda.reset_max_memory_cached()\n'
              'stats = torch.cuda.memory_stats_as_nested_dict()\n'
              'print(torch.cuda.utilization(), torch.cuda.temperature())\n')
    found = findings_of(source, select={"CDL202", "CDL204"})
    assert triples(found) == [("CDL202", 3, 1), ("CDL202", 4, 9), ("CDL204", 5, 7), ("CDL204", 5, 33)]
    assert found[0].message == ("torch.cuda.reset_max_memory_cached is CUDA-only; use "
                                "torch.accelerator.reset_peak_memory_stats() (torch >= 2.9)")


def test_a_cuda_default_read_only_where_cuda_is_available_is_no_finding():
    source = '''import torch


class Trades:
    def __init__(self, model, device="cuda"):
        if not torch.cuda.is_available():
            self.device = "cpu"
        else:
            self.device = device


class Later:
    def __init__(self, model, device="cuda"):
        if not torch.cuda.is_available():
            self.device = "cpu"
        else:
            self.device = device
        self.backup = device
'''
    found = findings_of(source, select={"CDL108"})
    assert triples(found) == [("CDL108", 13, 38)]
