"""A switch that is off unless someone asks, guarding nothing but CUDA placement, is a CUDA opt-in
(semantic/opt_in_switch.py): `if cuda: x = x.cuda()` runs only where someone asked for CUDA. A
switch that guards anything else, one a caller in the file turns on, or one that is on by default
keeps what it guards reported."""

import textwrap

from conftest import findings_of, triples


def lint(source, torch_version="2.15"):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), torch_version=torch_version))


def test_a_parameter_off_by_default_that_only_places_on_cuda_is_an_opt_in():
    source = """
        import torch


        def batch(x, y, cuda=False):
            if cuda:
                x = x.cuda()
                x, y = x.cuda(), y.to("cuda:0")
                device = torch.device("cuda")
            else:
                y = y.cuda()
            return x, y


        def record(result, use_cuda=None):
            return result.cuda() if use_cuda else result
        """
    assert lint(source) == [("CDL102", 10, 15)]  # the else branch runs on a Mac


def test_an_attribute_set_from_such_a_parameter_is_an_opt_in_too():
    source = """
        class Subsample:
            def __init__(self, size, use_cuda=None):
                self.size = size
                self.use_cuda = use_cuda

            def sample(self, result):
                return result.cuda() if self.use_cuda else result

            def log_prob(self, result):
                if self.use_cuda:
                    result = result.cuda()
                return result
        """
    assert lint(source) == []


def test_a_command_line_option_off_unless_given_is_an_opt_in_and_one_on_by_default_is_not():
    source = """
        import argparse

        import torch

        parser = argparse.ArgumentParser()
        parser.add_argument("--cuda", action="store_true")
        parser.add_argument("--no-cuda", action="store_true")
        parser.add_argument("--gpu", default=True)
        args = parser.parse_args()
        model = torch.nn.Linear(2, 2)
        if args.cuda:
            model.cuda()
        if not args.no_cuda:
            model.cuda()
        if args.gpu:
            model = model.cuda()
        """
    assert lint(source) == [("CDL102", 14, 11), ("CDL102", 16, 19)]


def test_a_switch_a_caller_here_turns_on_or_that_guards_more_than_placement_is_no_opt_in():
    source = """
        import torch


        def train(x, cuda=False, fp16=False, flag=None):
            if cuda:
                x = x.cuda()
            if fp16:
                scaler = torch.cuda.amp.GradScaler()
            if flag:
                x = x.cuda()
                print("moved")
            return x


        def main(x):
            return train(x, cuda=True)


        def forwarded(x, cuda=False):
            if cuda:
                x = x.cuda()
            return x


        def forwarder(x, cuda=False):
            return forwarded(x, cuda=cuda)


        def required(x, cuda):
            if cuda:
                x = x.cuda()
            return x
        """
    # the flag a caller here passes on (forwarder) is still off unless asked; a required parameter is no switch
    assert lint(source) == [("CDL102", 6, 15), ("CDL205", 8, 18), ("CDL102", 10, 15), ("CDL102", 31, 15)]


def test_switches_forwarded_in_a_cycle_end_at_the_first_repeat():
    # sixty functions each forwarding `cuda` to every other: read once per parameter, not per path
    names = [f"f{index}" for index in range(60)]
    lines = ["import torch", ""]
    for name in names:
        lines += ["", f"def {name}(x, cuda=False):", "    if cuda:", "        x = x.cuda()"]
        lines += [f"    {other}(x, cuda=cuda)" for other in names if other != name]
        lines += ["    return x"]
    assert lint("\n".join(lines) + "\n") == []
