"""A type expression names an API without using it: annotations, the parameters of typing generics
(type aliases included) and `X: TypeAlias = ...` are no finding for any rule; runtime references are."""

import textwrap

from conftest import findings_of, triples


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n")))


def test_type_aliases_and_annotations_are_no_use():
    source = """
    import collections.abc
    import typing as t
    from typing import Optional, TypeAlias, Union

    import torch
    from torch.cuda import Stream

    _PROFILER = Union[torch.profiler.profile, torch.autograd.profiler.emit_nvtx]
    StreamT: TypeAlias = torch.cuda.Stream
    Streams = list[torch.cuda.Stream]
    Hook = collections.abc.Callable[[t.Optional[torch.cuda.Event]], None]
    x: Stream = None


    def f(s: torch.cuda.Stream, p: "torch.cuda.Event") -> Optional[torch.cuda.Event]:
        return None
    """
    assert lint(source) == []


def test_references_that_run_are_still_reported():
    source = """
    from typing import Annotated, Union

    import torch

    Meta = Annotated[torch.Tensor, torch.cuda.Stream]
    table = {torch.cuda.Stream: 1}
    table[torch.cuda.Stream]
    keep = torch.autograd.profiler.emit_nvtx
    list = {}
    list[torch.cuda.Stream]
    Union = {}
    Union[torch.cuda.Stream]


    def f(x: torch.Tensor = torch.cuda.Stream):
        with torch.autograd.profiler.emit_nvtx():
            return Union[torch.cuda.Event]
    """
    assert lint(source) == [
        ("CDL305", 5, 32),  # Annotated's metadata is a value (line 6: a dict's key, a type registered)
        ("CDL305", 7, 7),
        ("CDL213", 8, 8),
        ("CDL305", 10, 6),  # `list` is the program's own dict here
        ("CDL305", 12, 7),  # and so is `Union`
        ("CDL305", 15, 25),  # a default value runs
        ("CDL213", 16, 10),
        ("CDL306", 17, 22),
    ]


def test_the_type_argument_of_typing_cast_is_no_use_and_its_value_is():
    source = """
    import typing
    from typing import cast

    import torch


    def f(stream, x):
        s = cast(torch.cuda.Stream, stream)
        t = typing.cast(torch.cuda.Event, stream)
        u = cast(torch.cuda.Stream, torch.cuda.current_stream())
        return s, t, u
    """
    assert lint(source) == [("CDL305", 10, 33)]
