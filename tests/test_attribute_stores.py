"""A store into an attribute of a name other than self (`args.device = "cuda"`, `args.cuda = not
args.no_cuda and torch.cuda.is_available()`) is what that attribute holds where the same scope reads it:
a value that reaches an argument (reported where it is written) and a guard. Only the scope that binds
the name counts: a store into another function's `args` says nothing here. Where every store is made
under some test, the attribute may still hold what it held before: the stored value is one of its values
(reported), and the test it makes is not known (GradScaler's `enabled=` may be true on a Mac)."""

import textwrap

from conftest import findings_of, triples

SOURCE = textwrap.dedent('''
    import argparse

    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()

    model = torch.nn.Linear(2, 2)
    if args.cuda:
        model.cuda()
    device = torch.device("cuda" if args.cuda else "cpu")


    def init(opts):
        opts.dist_backend = "nccl"
        dist.init_process_group(backend=opts.dist_backend)


    def place(opts, model):
        opts.device = "cuda"
        return model.to(opts.device)


    def elsewhere(opts, model):
        return model.to(opts.device)


    def sometimes(opts, model, other):
        if other:
            opts.device = "cuda"
        return model.to(opts.device)


    def amp_off_sometimes(opts, other):
        if other:
            opts.amp = False
        return torch.cuda.amp.GradScaler(enabled=opts.amp)
''').lstrip("\n")


def test_stored_values_reach_arguments_and_guards():
    found = findings_of(SOURCE, select={"CDL101", "CDL102", "CDL104", "CDL205", "CDL701"})
    # `if args.cuda: model.cuda()` (12): a move only where the stored query holds, the CPU elsewhere
    assert triples(found) == [
        ("CDL104", 12, 1), ("CDL104", 14, 23), ("CDL701", 18, 25), ("CDL101", 23, 19), ("CDL101", 33, 23), ("CDL205", 40, 12),
    ]
