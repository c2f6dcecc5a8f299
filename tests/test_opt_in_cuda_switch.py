"""`torch.cuda.is_available() if use_cuda is None else use_cuda`: beside a CUDA query, a parameter that is
off unless a caller turns it on (default None or False, no caller in sight passing anything else) asks
for the CUDA path, so a name bound to the expression is a CUDA guard, as `query or switch` is. What it
guards is then the device selection's own arm; the finding is the selection's CPU fallback (CDL104,
`torch.device(torch.cuda.current_device())` being a CUDA arm), not the CUDA call in it. A switch on by
default guards nothing."""

from conftest import findings_of, triples

SOURCE = '''import torch


def features(o, model, use_cuda=None):
    use = torch.cuda.is_available() if use_cuda is None else use_cuda
    device = torch.device(torch.cuda.current_device()) if use else torch.device("cpu")
    return model.to(device)


def other(o, model, use_cuda=True):
    use = torch.cuda.is_available() if use_cuda is None else use_cuda
    device = torch.device(torch.cuda.current_device()) if use else torch.device("cpu")
    return model.to(device)


features(1, 2)
other(1, 2)
'''


def test_a_switch_beside_a_cuda_query_guards_like_the_query():
    assert triples(findings_of(SOURCE, select={"CDL104", "CDL105"})) == [
        ("CDL104", 6, 14), ("CDL104", 12, 14), ("CDL105", 12, 27)]
