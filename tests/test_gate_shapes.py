"""The gates read a tensor-method word of the op-coverage checks (`mode`, `log_softmax`, ... at the target
release) in the shapes the check can report: the callee of a call on a name or on a call's result
(`x.mode()`, `torch.randn(3, device=dev).mode()`: the receiver may be a tensor), a name that resolves under torch
(`torch.mode`, `pick = torch.mode`) or an import. An attribute store (`self.mode = mode`), a keyword
(`mode="r"`) or a method on a receiver the check knows nothing of (`self.cfg.mode()`, `x[0].mode()`, `self.mode(x)` with
`self` never assigned nor annotated)
cannot be reported: a torch file holding the word only that way is settled without libcst."""

import ast

import pytest

from cudalint import runner
from cudalint.catalog import load_catalog
from cudalint.python import analyze

MODE_ELSEWHERE = '''import torch


class Pool(torch.nn.Module):
    def __init__(self, mode="nearest"):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        with open(self.path, mode="r") as f:
            x[0].mode()
            self.mode(x)
            return self.cfg.mode()
'''


def lint(text, settings, path="m.py"):
    found = runner.lint_text(path, "python", text, settings, "2.15")
    return [(f.code, f.line, f.column) for f in found]


def test_a_method_word_only_stored_passed_or_called_on_unknown_receivers_needs_no_libcst(settings, engine_calls):
    assert lint(MODE_ELSEWHERE, settings) == []
    assert engine_calls == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("import torch\nx = torch.randn(3, device=dev)\ny = x.mode()\n", [("CDL604", 3, 5)]),  # on a name
        ("import torch\ny = torch.randn(3, device=dev).mode()\n", [("CDL604", 2, 5)]),  # on a call's result
        ("import torch\ndef f(x: torch.Tensor):\n    return x.mode()\n", [("CDL604", 3, 12)]),
        ("import torch\ny = torch.mode(torch.randn(3, device=dev))\n", [("CDL604", 2, 5)]),  # the function
        ("import torch\npick = torch.mode\ny = pick(torch.randn(3, device=dev))\n", [("CDL604", 3, 5)]),  # through a name
        ("from torch import mode\ny = mode(x)\n", [("CDL604", 2, 5)]),  # imported
    ],
)
def test_a_file_that_holds_a_finding_in_a_method_shape_still_gets_it(settings, engine_calls, text, expected):
    assert lint(text, settings) == expected
    assert engine_calls == ["m.py"]


def test_the_method_words_are_in_both_maps(settings):
    checks = analyze.checks_for(settings.select, tuple(load_catalog()))
    names, strings, texts, keywords, rooted, resolved, imports, called, *_ = checks.words((2, 15, 0))
    assert {"torch", "torchvision"} <= rooted["mode"] and {"torch", "torchvision"} <= resolved["mode"]
    assert "interpolate" in resolved and "interpolate" not in rooted  # a function only: resolved as before
    assert "complex128" in rooted and "complex128" not in resolved  # a dtype word read anywhere: rooted as before


ROOTED = {"mode": frozenset({"torch"}), "float64": frozenset({"torch"})}
RESOLVED = {"mode": frozenset({"torch"})}


@pytest.mark.parametrize(
    "text, answer",
    [
        ("import torch\nself.mode = 1\n", False),
        ("import torch\nopen(p, mode='r')\n", False),
        ("import torch\nself.cfg.mode()\n", False),
        ("import torch\nx[0].mode()\n", False),
        ("import torch\nx.mode()\n", False),  # a name never assigned: nothing known of its value
        ("import torch\nclass M:\n    def f(self):\n        return self.mode(x)\n", False),
        ("import torch\nx.mode()\nx = make()\n", True),  # assigned somewhere in the file
        ("import torch\ndef f(x: T):\n    return x.mode()\n", True),  # an annotated parameter
        ("import torch\ndef f(*x: T):\n    return x.mode()\n", True),
        ("import torch\nf(x).mode()\n", True),
        ("import numpy\nx = 1\nx.mode()\n", False),  # rooted where called: the file must import torch
        ("import torch\nx = 1\nx.log_softmax()\n", False),  # a word in neither map
        ("import torch as t\nt.linalg.mode\n", True),
        ("import torch\nx = torch\nx.mode\n", True),
        ("from torch import mode\n", True),
        ("from . import x\nx.mode()\n", frozenset({"torch"})),  # x may be the package's torch module
        ("from . import y\nx = 1\nx.mode()\n", frozenset({"torch"})),
        ("import torch\nf(dtype=float64)\nf(float64=1)\n", True),  # a word only in `rooted`: a keyword still counts
    ],
)
def test_mentions_answers_for_a_word_in_both_maps(text, answer):
    assert analyze._mentions(ast.parse(text), frozenset(), set(), None, rooted=ROOTED, resolved=RESOLVED) == answer


CUDA_ELSEWHERE = """import torch

if torch.cuda.is_available():
    count = torch.cuda.device_count()
print(torch.double)
with torch.cuda.device(0):
    pass
"""


def test_a_method_word_counts_only_where_it_is_called(settings, engine_calls):
    # `double` and `record_stream` are read by the method checks only as a call's callee, and `double` also in
    # a file importing torch (torch.double, for the dtype checks): `cfg.double` or `opts.record_stream` alone does
    # not pass the gates. `cuda` and `pin_memory` stay names: other checks read them anywhere (torch.cuda.* for the
    # device-selection checks, the pin_memory keyword). `type` is CDL219's, a custom check's called word:
    # `device.type` alone lets no file through.
    checks = analyze.checks_for(settings.select, tuple(load_catalog()))
    names, strings, texts, keywords, rooted, resolved, imports, called, *_ = checks.words((2, 15, 0))
    assert called == {"double", "record_stream", "type"} and called.isdisjoint(names)
    assert {"cuda", "pin_memory"} <= names
    assert "torch" in rooted["double"]
    assert lint("import numpy\nprecision = cfg.double\nstreams = opts.record_stream\nkind = d.type\n", settings) == []
    assert engine_calls == []
    assert lint("import torch\nx = torch.ones(1, device=d).double()\ny = batch.record_stream(s)\n", settings) == [
        ("CDL602", 2, 29), ("CDL307", 3, 11)]


@pytest.mark.parametrize(
    "text, answer",
    [
        ("import torch\ntorch.cuda.is_available()\n", False),
        ("import torch\nx = torch.cuda\n", False),
        ("model.cuda()\n", True),
        ("self.model.cuda(device)\n", True),
        ("x[0].cuda()\n", True),
        ("f(x).cuda()\n", True),
        ("cuda()\n", False),  # a bare function named cuda is no method
        ("import torch\ntorch.double\n", True),  # still a name under torch for the dtype checks
    ],
)
def test_mentions_answers_for_a_called_word(text, answer):
    found = analyze._mentions(ast.parse(text), frozenset(), set(), None, rooted={}, resolved={"double": frozenset({"torch"})},
                              called=frozenset({"cuda", "double"}))
    assert found == answer


# A string a check reads as a value (a device, a variable's name, an argument's value) begins with the word;
# a text word (an error message, a command line) counts anywhere in a string.
EXAMPLE_CONSTANT = 'import torch\n\nEXAMPLES = """\n    >>> pipe = Pipeline.from_pretrained(name)\n    >>> pipe.to("cuda")\n"""\n'
HELP_TEXT = 'import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--device", help="run on cuda or cpu")\n'


@pytest.mark.parametrize("text", [EXAMPLE_CONSTANT, HELP_TEXT], ids=["example-constant", "help-text"])
def test_a_string_that_only_mentions_cuda_in_a_sentence_needs_no_libcst(settings, engine_calls, text):
    assert lint(text, settings) == []
    assert engine_calls == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ('import torch\n\nDEVICE = "cuda:0"\nx = torch.zeros(3, device=DEVICE)\n', [("CDL101", 3, 10)]),
        ('import torch\n\ndef place(x, rank):\n    return x.to(f"cuda:{rank}")\n', [("CDL101", 4, 17)]),
        ('def step(model, x):\n    try:\n        return model(x)\n    except RuntimeError as e:\n'
         '        if "CUDA out of memory. Tried" in str(e):\n            return None\n        raise\n', [("CDL218", 5, 12)]),
        ('import subprocess\n\nsubprocess.run("echo quit | nvidia-cuda-mps-control", shell=True)\n', [("CDL217", 3, 16)]),
    ],
    ids=["device-constant", "f-string-prefix", "message-anywhere", "command-anywhere"],
)
def test_strings_a_check_reads_still_reach_the_engine(settings, engine_calls, text, expected):
    assert lint(text, settings) == expected
    assert engine_calls == ["m.py"]


ATTRIBUTES_UNPACKED = '''import torch


class Embed(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.h, self.w = size
        [self.a, *self.rest] = size
        self.mode = torch.nn.LayerNorm(4)

    def forward(self, x):
        return self.mode(x)
'''


def test_an_unpacking_into_attributes_binds_no_name(settings, engine_calls):
    """`self.h, self.w = size` binds the attributes, not the name `self`: `self.mode(x)` after it is
    still a call on a receiver the check knows nothing of, and the file is settled without libcst."""
    assert lint(ATTRIBUTES_UNPACKED, settings) == []
    assert engine_calls == []
    rebound = ATTRIBUTES_UNPACKED.replace("return self.mode(x)", "self, t = self, torch\n        return self.mode(x)")
    assert lint(rebound, settings) == []
    assert engine_calls != []  # the name `self` itself rebound through a tuple may alias anything: the engine decides
