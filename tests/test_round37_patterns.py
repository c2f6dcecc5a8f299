"""Patterns from blind round 37 (bench/EVAL.md, session 32): a handler of RuntimeError is no fallback for
CUDA work that raises something else where torch has no CUDA, and quoted words of a requirements option line."""

import textwrap

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


def test_a_runtime_error_handler_is_no_fallback_for_a_device_move():
    # Measured with torch 2.13.0+cpu (optional_code.toml): a tensor made on or moved to CUDA raises
    # AssertionError where torch has no CUDA, which `except RuntimeError` (an out-of-memory fallback, nnU-Net)
    # lets by; torch.cuda.Stream raises a RuntimeError there, which it catches; `except Exception` catches both
    assert lint(
        """
        import torch


        def resample(x):
            try:
                out = torch.zeros(3, device="cuda:0")
                x = x.to(torch.device("cuda:0"))
            except RuntimeError:
                out = torch.zeros(3)
            return out, x


        def timed():
            try:
                stream = torch.cuda.Stream()
            except RuntimeError:
                stream = None
            return stream


        def broad(x):
            try:
                x = x.cuda()
            except Exception:
                pass
            try:
                torch.cuda.synchronize()
            except (RuntimeError, AssertionError):
                pass
            return x


        def oom(x):
            try:
                torch.cuda.synchronize()
            except torch.cuda.OutOfMemoryError:
                x = None
            return x
        """,
        select={"CDL101", "CDL102", "CDL201", "CDL305"},
    ) == [("CDL101", 6, 37), ("CDL101", 7, 31), ("CDL201", 35, 9)]


def test_quoted_words_of_an_option_line():
    # pip splits an option line as a shell does: `".[dev, docs]"` is one word (neuralcompression)
    text = '--editable ".[dev, docs]"\n-e "./vendor/lib"\n--index-url "https://example.com/simple"\ntorch==2.4.0\n'
    assert findings_of(text, path="requirements.txt", kind="requirements") == []
    assert triples(findings_of('--editable ".[dev\n', path="requirements.txt", kind="requirements")) == []
