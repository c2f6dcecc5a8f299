"""The guard evaluator and a name bound again in straight-line code: a statement of the function's own
body that assigns it, before the read, hides the bindings before it (the parameter, an earlier
assignment), so `use_cuda = use_cuda and torch.cuda.is_available()` makes `if use_cuda:` a CUDA guard.
A binding under a branch after it still reaches the read, as does one before a read inside the
assigning statement."""

from conftest import findings_of, triples

SOURCE = '''import torch
import torch.distributed as dist


def init(backend=None, use_cuda=True):
    use_cuda = use_cuda and torch.cuda.is_available()
    if backend is None:
        backend = "nccl" if use_cuda else "gloo"
    dist.init_process_group(backend=backend)
    if use_cuda:
        torch.cuda.set_device(0)


def later(use_cuda=True, force=False):
    use_cuda = use_cuda and torch.cuda.is_available()
    if force:
        use_cuda = True
    if use_cuda:
        torch.cuda.set_device(0)


def before(use_cuda=True):
    if use_cuda:
        torch.cuda.set_device(0)
    use_cuda = use_cuda and torch.cuda.is_available()
    return use_cuda
'''


def test_a_name_bound_again_before_the_read_is_judged_by_that_binding():
    found = findings_of(SOURCE, select={"CDL105", "CDL701"})
    assert triples(found) == [("CDL105", 19, 9), ("CDL105", 24, 9)]
