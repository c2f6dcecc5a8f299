"""CDL116: a list of accepted devices that has "cuda" but not "mps", where it accepts or rejects: the
choices of an argparse option or a click.Choice, an assert, an `if` that raises. Written out or bound
once to a name (reported where written, the reading test as the related location). A tensor's own
placement (`x.device.type in ...`), a list with the meta device (a kernel's implementations), a list that is not all device names, one that has "mps", and a
test whose branches do not raise are not reported."""

from conftest import findings_of, triples

SOURCE = '''import argparse

import click
import torch

ALLOWED = ("auto", "cpu", "cuda", "xpu")
parser = argparse.ArgumentParser()
parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
parser.add_argument("--device2", choices=["cpu", "cuda", "mps"], default="cpu")
parser.add_argument("--mode", choices=["cuda", "triton"])


@click.option("--device", type=click.Choice(["cpu", "cuda:0"]))
def main(device):
    assert device in ["cpu", "cuda"]
    if device not in ALLOWED:
        raise ValueError(device)
    if device in ("cpu", "cuda"):
        pass
    else:
        raise ValueError(device)
    x = torch.ones(2)
    assert x.device.type in ("cpu", "cuda")
    if device in ("cpu", "cuda"):
        return 1
    assert device.type in ["cuda", "meta"]
    if device not in [
        "cpu",
        "cuda",
    ]:
        raise ValueError(device)


def launch(x):
    device_type = x.device.type
    if device_type not in {"cuda", "xpu"}:
        raise NotImplementedError(device_type)
'''


def test_accepted_devices_without_mps():
    found = findings_of(SOURCE, select={"CDL116"})
    assert triples(found) == [("CDL116", 6, 12), ("CDL116", 8, 41), ("CDL116", 13, 45), ("CDL116", 15, 22), ("CDL116", 18, 19), ("CDL116", 27, 22)]
    first = sorted(found, key=lambda f: f.sort_key)[0]
    assert first.message == (
        'accepted devices ("auto", "cpu", "cuda", "xpu") leave out "mps": a Mac\'s GPU is turned away here; accept "mps" too')
    assert [(r.line, r.column, r.message) for r in first.related] == [(16, 22, "ALLOWED accepts only these devices")]
    assert sorted(found, key=lambda f: f.sort_key)[-1].message.startswith('accepted devices ["cpu", "cuda"] leave out')


def test_accepted_devices_under_a_cuda_guard_are_not_reported():
    source = 'import torch\n\nif torch.cuda.is_available():\n    assert DEVICE in ("cpu", "cuda")\n'
    assert findings_of(source, select={"CDL116"}) == []


def test_a_negated_membership_test_that_raises_turns_mps_away_too():
    # graphgallery's device(): `if not _device in {"cpu", "cuda", "gpu"}: raise RuntimeError(...)`
    source = ('def device(name):\n    if not name in {"cpu", "cuda", "gpu"}:\n        raise RuntimeError(name)\n'
              '    if not name in ("cpu", "cuda"):\n        pass\n    else:\n        raise ValueError(name)\n    return name\n')
    assert triples(findings_of(source, select={"CDL116"})) == [("CDL116", 2, 20)]


def test_an_assert_in_a_test_checks_a_result_and_accepts_nothing():
    # alibi-detect's test_saving.py: `assert detector_config["device"] in {"cpu", "gpu", "cuda"}`
    source = 'def test_saved(config):\n    assert config["device"] in {"cpu", "gpu", "cuda"}\n'
    assert findings_of(source, path="tests/test_saving.py", select={"CDL116"}) == []
    assert triples(findings_of(source, path="pkg/check.py", select={"CDL116"})) == [("CDL116", 2, 32)]


CHAINS = '''import torch


def place(model, device):
    if device == "cuda":
        model = model.cuda()
    elif device == "cpu":
        model = model.cpu()
    else:
        raise ValueError("Please input cpu or cuda")
    return model


class Distiller:
    def __init__(self, model, device="cpu"):
        if device == "cpu":
            self.device = torch.device("cpu")
        elif device in ("cuda", "cuda:0"):
            self.device = torch.device("cuda")
        self.model = model.to(self.device)


def portable(model, device, x, backend):
    if device == "cuda":
        model = model.cuda()
    elif device in ("cpu", "mps"):
        model = model.to(device)
    else:
        raise ValueError(device)
    if device == "cuda":
        model = model.cuda()
    elif device == "cpu":
        model = model.cpu()
    else:
        raise NotImplementedError(device)
    if backend == "cuda":
        handle = 0
    elif backend == "cpu":
        handle = -1
    else:
        raise RuntimeError(backend)
    if x.device.type == "cuda":
        x = x.cuda()
    elif x.device.type == "cpu":
        x = x.cpu()
    else:
        raise RuntimeError(x.device)
    target = "cpu"
    if device == "cuda":
        target = torch.device("cuda")
    elif device == "cpu":
        target = torch.device("cpu")
    return model, handle, target
'''


def test_device_chains_without_mps():
    found = findings_of(CHAINS, select={"CDL116"})
    assert triples(found) == [("CDL116", 10, 9), ("CDL116", 16, 12)]
    assert found[0].message == ('device may only be "cuda" or "cpu": any other device raises here, so a Mac\'s "mps" '
                                'is turned away; accept "mps" too')
    assert found[1].message.startswith('self.device is set only when device is "cpu" or "cuda": for a Mac\'s "mps" it '
                                       'is never set')


def test_device_chains_need_torch():
    assert findings_of(CHAINS.replace("import torch\n", "import warp\n", 1), select={"CDL116"}) == []
