"""A method call is torch's only if its arguments bind to torch's signature (the `params` of a catalog
method entry): `x.cuda(t, meta=m)` is another library's `cuda` (HQQ's quantizer), `x.double(1)` no
Tensor.double. Calls that fit, or whose `*args`/`**kwargs` hide what they pass, are reported."""

import textwrap

import libcst as cst
import pytest

from conftest import findings_of, triples
from cudalint.python.matchers import fits

CUDA = ["device", "non_blocking", "*", "memory_format"]


def test_cuda_calls_that_cannot_be_torchs_are_not_reported():
    text = textwrap.dedent(
        """
        import torch


        def move(self, qtensor, meta, x, model, options):
            self.quantizer.cuda(qtensor, meta=meta, device=self.device)
            self.quantizer.cuda(qtensor, meta=meta)
            x.cuda(0, True, "extra")
            x.cuda(0, device=1)
            x.cuda()
            x.cuda(0, non_blocking=True)
            model.cuda(device=0)
            x.cuda(memory_format=torch.channels_last)
            x.cuda(*options)
            x.cuda(**options)
        """
    ).lstrip("\n")
    assert triples(findings_of(text, select={"CDL102"})) == [
        ("CDL102", 9, 7),
        ("CDL102", 10, 7),
        ("CDL102", 11, 11),
        ("CDL102", 12, 7),
        ("CDL102", 13, 7),
        ("CDL102", 14, 7),
    ]


def test_double_takes_only_a_memory_format_keyword():
    text = textwrap.dedent(
        """
        import torch


        def widen(x, buffer):
            a = x.double()
            b = x.double(memory_format=torch.contiguous_format)
            c = buffer.double(4)
            d = buffer.double(scale=2)
            return a, b, c, d
        """
    ).lstrip("\n")
    assert triples(findings_of(text, select={"CDL602"})) == [("CDL602", 5, 11), ("CDL602", 6, 11)]


@pytest.mark.parametrize(
    "call, expected",
    [
        ("f()", True),
        ("f(0)", True),
        ("f(0, True)", True),
        ("f(0, True, 1)", False),
        ("f(device=0, non_blocking=True, memory_format=m)", True),
        ("f(0, memory_format=m)", True),
        ("f(0, device=0)", False),
        ("f(meta=1)", False),
        ("f(*a)", True),
        ("f(0, 1, 2, **k)", False),
        ("f(**k)", True),
    ],
)
def test_fits_binds_arguments_as_python_would(call, expected):
    node = cst.parse_expression(call)
    assert fits({"params": CUDA}, node) is expected


def test_fits_without_params_only_counts_arguments():
    assert fits({}, cst.parse_expression("f(1, 2, k=3)")) is True
    assert fits({"max_args": 0}, cst.parse_expression("f(k=3)")) is False


def test_a_call_of_what_the_class_stores_on_self_is_the_projects():
    # yolox's DataPrefetcher keeps a helper under the name `record_stream`
    text = textwrap.dedent(
        """
        import torch


        class Prefetcher:
            def __init__(self):
                self.record_stream = Prefetcher._record

            @staticmethod
            def _record(tensor):
                tensor.record_stream(torch.cuda.current_stream())

            def next(self, batch, other):
                self.record_stream(batch)
                other.record_stream(torch.cuda.current_stream())
        """
    ).lstrip("\n")
    assert triples(findings_of(text, select={"CDL307"})) == [("CDL307", 10, 16), ("CDL307", 14, 15)]
