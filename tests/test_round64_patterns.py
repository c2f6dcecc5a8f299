"""Patterns from blind round 64 (bench/EVAL.md, session 37): a device chosen into an attribute of the parsed
options (`args.device = torch.device("cpu")`, then `args.pin_memory = False`, then `if <CUDA>:` replacing both),
as openpifpaf's command lines do."""

from conftest import findings_of, triples

SOURCE = '''import argparse
import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--disable-cuda", action="store_true")
    args = parser.parse_args()
    args.device = torch.device("cpu")
    args.pin_memory = False
    if not args.disable_cuda and torch.cuda.is_available():
        args.device = torch.device("cuda")
        args.pin_memory = True
    model = torch.nn.Linear(2, 2).to(args.device)
    return model


def portable(args):
    args.device = torch.device("cpu")
    if torch.cuda.is_available():
        args.device = torch.device("cuda")
    elif torch.backends.mps.is_available():
        args.device = torch.device("mps")
    return args.device
'''


def test_a_device_chosen_into_an_attribute_of_the_options():
    found = findings_of(SOURCE, select={"CDL104"})
    assert triples(found) == [("CDL104", 11, 5)]
    assert found[0].message.startswith("device selection falls back to CPU and forgets MPS")
