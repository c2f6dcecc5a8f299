"""Overrides of the user's own call (rules/overrides.toml): inside `def cuda(self, ...)` of a class the
CUDA work is what the caller's `.cuda()` asks for, and that call is where it is reported."""

import textwrap

import pytest

from conftest import findings_of, triples

from cudalint.catalog import CatalogError
from cudalint.python import overrides


def lint(source: str, select=None):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select))


MIXIN = """
import torch


class DeviceMixin(torch.nn.Module):
    def cuda(self, device=None):
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device())
        elif isinstance(device, int):
            device = torch.device("cuda", index=device)
        self._device = device
        torch.cuda.synchronize()
        return super().cuda(device=device)

    def double(self):
        _update(self, dtype=torch.double)
        return super().double()

    def float(self):
        _update(self, dtype=torch.float64)
        return super().float()


class Params4bit(torch.nn.Parameter):
    def cuda(self, device):
        w = self.data.contiguous().half().cuda(device)
        self.data = w
        return self


def cuda(tensor):
    return tensor.cuda()


def double(tensor):
    return tensor.double()


class Trainer:
    def fit(self, model):
        def cuda():
            return model.cuda()
        return cuda()


model = DeviceMixin().cuda().double()
"""


def test_cuda_and_double_overrides_are_silent_and_the_users_calls_are_reported():
    assert lint(MIXIN) == [
        # torch.cuda.synchronize at 11 is silent too: the body of a `cuda` override runs only where the
        # caller's `.cuda()` can, so the table silences every family there
        ("CDL601", 19, 29),  # float64 in a `float` method: no override of the table
        ("CDL102", 31, 19),  # a free function named cuda is ordinary code
        ("CDL602", 35, 19),  # a free function named double too
        ("CDL102", 41, 26),  # a function named cuda inside a method is no method of a class
        ("CDL102", 45, 23),  # the user's own calls
        ("CDL602", 45, 30),
    ]


def test_every_override_names_catalog_codes_and_says_why():
    table = overrides.load_overrides()
    assert table["cuda"].silences == ("CDL",)
    assert table["double"].silences == ("CDL601", "CDL602", "CDL608")
    assert table["pin_memory"].silences == ("CDL301", "CDL302")
    assert table["record_stream"].silences == ("CDL307",)
    assert [table[name].positional for name in ("cuda", "double", "pin_memory", "record_stream")] == [1, 0, 0, 1]
    assert all(entry.why for entry in table.values())


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[override]]\nmethod = "cuda"\npositional = 1\nsilences = ["CDL9"]\nwhy = "x"\n', "override 'cuda' silences unknown codes CDL9"),
        ('[[override]]\nmethod = "cuda"\npositional = 1\nsilences = []\nwhy = "x"\n', "override 'cuda' needs a list of codes in silences"),
        ('[[override]]\nmethod = "cu da"\nsilences = ["CDL1"]\nwhy = "x"\n', "override 1 needs a method name and a why"),
        ('[[override]]\nmethod = "cuda"\npositional = 1\nsilences = ["CDL1"]\nwhy = "x"\n' * 2, "override 'cuda' is listed twice"),
        ('[[override]]\nmethod = "cuda"\nsilences = ["CDL1"]\nwhy = "x"\n',
         "override 'cuda' needs positional, the most positional arguments torch's method takes"),
        ('[[override]]\nmethod = "cuda"\npositional = true\nsilences = ["CDL1"]\nwhy = "x"\n',
         "override 'cuda' needs positional, the most positional arguments torch's method takes"),
    ],
)
def test_a_bad_table_is_a_catalog_error_naming_the_entry(tmp_path, monkeypatch, text, message):
    (tmp_path / "overrides.toml").write_text(text, encoding="utf-8")
    overrides.load_catalog()  # the real catalog, read before rules/ points at tmp_path
    monkeypatch.setattr("cudalint.catalog.rules_dir", lambda: tmp_path)
    overrides.load_overrides.cache_clear()
    try:
        with pytest.raises(CatalogError) as caught:
            overrides.load_overrides()
    finally:
        monkeypatch.undo()
        overrides.load_overrides.cache_clear()
    assert str(caught.value) == f"overrides.toml: {message}"


CONTAINERS = """
import torch


class Batch:
    def pin_memory(self, *keys):
        return self.apply(lambda x: x.pin_memory(), *keys)

    def record_stream(self, stream, *keys):
        return self.apply(lambda x: x.record_stream(stream), *keys)


class Accelerator:
    def pin_memory(self, tensor, align_bytes=1):
        return tensor.pin_memory()

    def record_stream(self, tensor, stream):
        return tensor.record_stream(stream)


class Tensorish:
    def cuda(self, device, non_blocking=False):
        return self.data.cuda(device)

    def cuda_all(self, a, b):
        return self.data.cuda(a)


def pin_memory(batch):
    return batch.pin_memory()


loader = torch.utils.data.DataLoader([], pin_memory=True)
Batch().pin_memory()
"""


def test_pin_memory_and_record_stream_overrides_are_silent_when_callable_as_torchs():
    # Batch's methods are the protocol torch's DataLoader calls (data.pin_memory()) and Tensor.record_stream(stream):
    # silent. Accelerator's take the tensor to pin as an argument: ordinary code, reported. A `cuda` override
    # that needs the device is still callable as x.cuda(device); cuda_all is no override.
    assert lint(CONTAINERS) == [
        ("CDL302", 14, 23),
        ("CDL307", 17, 23),
        ("CDL102", 25, 26),
        ("CDL302", 29, 18),
        ("CDL301", 32, 42),
        ("CDL302", 33, 9),
    ]


WRAPPER = '''import torch


class Shares:
    def __init__(self, share):
        self.share = share

    @property
    def is_cuda(self):
        return self.share.is_cuda

def is_cuda(x):
    return x.is_cuda
'''


def test_an_is_cuda_property_forwarding_its_tensors_flag_is_silent():
    # the wrapper's own flag is the caller's test; a plain function of that name is ordinary code
    assert triples(findings_of(WRAPPER, select={"CDL103"})) == [("CDL103", 13, 12)]
    assert overrides.load_overrides()["is_cuda"].silences == ("CDL103",)
