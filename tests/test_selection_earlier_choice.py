"""CDL104 and a CPU choice some statements before the `if` that replaces it: `device =
torch.device("cpu")`, then seeding, then `if <CUDA>: device = torch.device("cuda")` is a selection that
forgets MPS like the one with the choice right above the `if`. The look back passes simple statements
only: a compound statement between them may choose again."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import random

import torch


def pretrain(args):
    device = torch.device("cpu")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.cuda and torch.cuda.device_count():
        device = torch.device("cuda")
        torch.cuda.manual_seed(args.seed)
    return device


def chosen_again(args):
    device = torch.device("cpu")
    if args.mps:
        device = torch.device("mps")
    if torch.cuda.is_available():
        device = torch.device("cuda")
    return device


def another_name(args):
    data_device = torch.device("cpu")
    random.seed(args.seed)
    if torch.cuda.is_available():
        device = torch.device("cuda")
    return device
'''


def test_a_cpu_choice_before_seeding_statements_makes_a_selection():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL101", "CDL104"}))
    # line 10: the selection (its "cuda" only taken with CUDA); chosen_again: an `if` between may pick
    # MPS; another_name: no CPU choice of that name (its "cuda" reaches `return`, no device argument)
    assert found == [("CDL104", 10, 5)]
