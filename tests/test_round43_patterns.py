"""Patterns from blind round 43 (bench/EVAL.md, session 34): a device helper that returns MPS before its
CUDA-or-CPU fallback (CDL104), the backward of an autograd Function whose forward refuses every tensor a
Mac holds (CDL103), a `try:` whose handler catches only an exception the CUDA work in it never raises off
CUDA, and `torch.cuda.stream(...)` given a stream that is None on a Mac (CDL305)."""

import textwrap

from conftest import findings_of, triples


def found(text, select):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select=select))


DEVICE_HELPERS = """
import torch

NEW = torch.__version__ >= "1.12"


def get_device():
    if NEW:
        if torch.backends.mps.is_available():
            return torch.device("mps")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_device_statements():
    if NEW and torch.backends.mps.is_available():
        return "mps"
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def forgets():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def forgets_too():
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def assigned(model):
    device = "cuda" if torch.cuda.is_available() else "cpu"

    def inner():
        return "mps"
    return model.to(device)
"""


def test_a_helper_that_returns_mps_first_keeps_its_fallback():
    # a return of MPS in a nested function is another function's answer: `assigned` still forgets MPS
    assert found(DEVICE_HELPERS, {"CDL104"}) == [("CDL104", 22, 25), ("CDL104", 26, 5), ("CDL104", 32, 14)]


AUTOGRAD = """
import torch
from torch.autograd import Function


class DeformConvFunction(Function):
    @staticmethod
    def forward(ctx, input, weight):
        ctx.save_for_backward(input, weight)
        if not input.is_cuda:
            raise NotImplementedError
        else:
            output = ext.forward(input, weight)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        if not grad_output.is_cuda:
            raise NotImplementedError
        return ext.backward(grad_output)


class Portable(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        if input.is_cuda:
            return ext.forward(input)
        return input * 2

    @staticmethod
    def backward(ctx, grad_output):
        if not grad_output.is_cuda:
            raise NotImplementedError
        return grad_output


class NotAutograd:
    def forward(self, input):
        if not input.is_cuda:
            raise NotImplementedError
        return input

    def backward(self, grad_output):
        if not grad_output.is_cuda:
            raise NotImplementedError
        return grad_output
"""


def test_the_backward_of_a_forward_that_refuses_mac_tensors_is_not_reported_again():
    # the forward's test is reported; a backward whose forward runs on a Mac, or of no autograd Function, still is
    assert found(AUTOGRAD, {"CDL103"}) == [("CDL103", 9, 16), ("CDL103", 31, 16), ("CDL103", 38, 16), ("CDL103", 43, 16)]


HANDLERS = """
import torch


def try_to_cuda(t):
    try:
        t = t.cuda()
    except AttributeError:
        pass
    return t


def set_device(rank):
    try:
        torch.cuda.set_device(rank)
    except AttributeError:
        pass


def to_gpu(t):
    try:
        return t.cuda()
    except (AssertionError, RuntimeError):
        return t


def legacy(n):
    try:
        return torch.cuda.FloatTensor(n)
    except TypeError:
        return torch.FloatTensor(n)


def unrelated_and_narrow(t):
    try:
        return t.cuda()
    except (KeyError, TypeError):
        return t


def legacy_other_handler(n):
    try:
        return torch.cuda.FloatTensor(n)
    except AttributeError:
        return torch.FloatTensor(n)


def set_device_other_handler(rank):
    try:
        torch.cuda.set_device(rank)
    except TypeError:
        pass
"""


def test_a_handler_of_an_exception_the_cuda_work_never_raises_is_no_fallback():
    # `.cuda()` raises AssertionError without CUDA; set_device AttributeError, the legacy types TypeError
    assert found(HANDLERS, {"CDL102", "CDL105", "CDL212"}) == [
        ("CDL102", 6, 15), ("CDL102", 35, 18), ("CDL212", 42, 16), ("CDL105", 49, 9),
    ]


STREAMS = """
import torch


def write_metrics(loss_dict, use_streams):
    device = next(iter(loss_dict.values())).device
    with torch.cuda.stream(torch.cuda.Stream() if device.type == "cuda" else None):
        pass
    side = torch.cuda.Stream() if use_streams else None
    with torch.cuda.stream(side):
        pass
    guarded = torch.cuda.Stream() if torch.cuda.is_available() else None
    with torch.cuda.stream(guarded):
        pass
    with torch.cuda.stream(stream=None):
        pass
    with torch.cuda.stream(torch.cuda.Stream()):
        pass
    made = torch.cuda.Stream()
    with torch.cuda.stream(made):
        pass
"""


def test_a_stream_context_given_none_on_a_mac_does_nothing_there():
    # a stream made under a user's option, and the contexts given one or a stream made anyway, stay reported
    assert found(STREAMS, {"CDL305"}) == [
        ("CDL305", 8, 12), ("CDL305", 9, 10), ("CDL305", 16, 10), ("CDL305", 16, 28), ("CDL305", 18, 12), ("CDL305", 19, 10),
    ]
