"""A call from inside a class's `def cuda(self)` (an override of Module.cuda / Tensor.cuda) counts, for
the project index's reachability, as a call under a CUDA guard: the method runs only where the caller's
own `.cuda()` can, which on a Mac raises (and is reported there). A helper the project calls only from
such methods and under CUDA guards runs only off a Mac; one more call anywhere else, or a function of
that name outside a class, and it is ordinary code."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

HELPERS = """
def to_cuda(obj, *args, **kwargs):
    if hasattr(obj, "cuda"):
        return obj.cuda(*args, **kwargs)
    return {k: to_cuda(v, *args, **kwargs) for k, v in obj.items()}
"""

GRAPH = """
from pkg.helpers import to_cuda


class Graph:
    def cuda(self, *args, **kwargs):
        return type(self)(**to_cuda(self.data, *args, **kwargs))
"""

ENGINE = """
from pkg.helpers import to_cuda


def train(device, loader):
    for batch in loader:
        if device.type == "cuda":
            batch = to_cuda(batch, device=device)
"""

ELSEWHERE = """
from pkg.helpers import to_cuda


def cuda(batch):
    return to_cuda(batch)
"""


def lint(extra):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/graph.py": GRAPH, "pkg/engine.py": ENGINE, **extra}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    return triples(findings_of(textwrap.dedent(HELPERS).lstrip("\n"), path="pkg/helpers.py", project_files=files,
                               select={"CDL102"}))


def test_a_helper_called_from_cuda_overrides_and_under_guards_is_not_reported():
    assert lint({}) == []


def test_a_call_from_a_module_level_function_named_cuda_is_an_ordinary_call():
    assert lint({"pkg/other.py": ELSEWHERE}) == [("CDL102", 3, 20)]
