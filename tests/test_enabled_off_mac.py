"""A call that does its work only when its `enabled=` argument is true (a GradScaler, an autocast region)
names CUDA harmlessly when that argument is false on every Mac (context.FileContext._disabled_off_mac);
and a comparison of a device with "cuda" is true only where the device is CUDA, so a value it gives
(`pin_memory=(args.device == "cuda")`) is never taken on a Mac (values.Values._text_test)."""

from conftest import findings_of, triples

SCALERS = '''import torch


def train(device, model, amp):
    use_amp = device.type == "cuda"
    a = torch.amp.GradScaler("cuda", enabled=use_amp)
    b = torch.amp.GradScaler("cuda", enabled=amp and device.type == "cuda")
    c = torch.amp.GradScaler("cuda", enabled=torch.cuda.is_available())
    d = torch.amp.GradScaler("cuda", enabled=amp)
    e = torch.amp.GradScaler("cuda")
    with torch.amp.autocast("cuda", enabled=use_amp):
        f = torch.amp.GradScaler("cuda")
    with torch.cuda.amp.autocast(enabled=use_amp):
        pass
    with torch.cuda.amp.autocast(enabled=amp):
        pass
    return a, b, c, d, e, f
'''


def test_a_call_enabled_only_on_cuda_names_cuda_harmlessly():
    found = findings_of(SCALERS, select={"CDL101", "CDL205", "CDL207"})
    # d and e are enabled on a Mac; f is inside the region, not the call; the last autocast is enabled by `amp`
    assert triples(found) == [("CDL101", 9, 30), ("CDL101", 10, 30), ("CDL101", 12, 34), ("CDL205", 15, 10)]


PINNED = '''import argparse

import torch
from torch.utils.data import DataLoader


def main(args):
    pinned = DataLoader([1, 2], pin_memory=(args.device == "cuda"))
    always = DataLoader([1, 2], pin_memory=(args.pin == "yes"))
    return pinned, always


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--pin", type=str, default="yes")
    main(parser.parse_args())
'''


def test_a_device_compared_with_cuda_pins_only_for_cuda():
    found = findings_of(PINNED, select={"CDL108", "CDL301"})
    # the "cuda" default is the finding; pin_memory follows the device; "yes" pins everywhere
    assert triples(found) == [("CDL108", 15, 55), ("CDL301", 16, 52)]
