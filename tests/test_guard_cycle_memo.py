"""An answer the guard or value evaluator works out while a cycle through bindings answered part of it
as unknown is not kept for later questions: `device` bound under `args.options.cuda and
torch.cuda.device_count()` is a CUDA-only binding however the question first arrived (here through
`data_device = device`, whose guard asks about `device` again)."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def pretrain(args, model, dataset):
    device = torch.device("cpu")
    if args.options.cuda and torch.cuda.device_count():
        device = torch.device("cuda")
    data_device = device
    if args.options.cpu_data:
        data_device = torch.device("cpu")
    loader = make_loader(dataset, device=device)
    model.to(data_device)
    return loader
'''


def test_a_binding_under_a_cuda_test_is_judged_whatever_asked_first():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL101", "CDL104"}))
    assert found == [("CDL104", 6, 5)]
