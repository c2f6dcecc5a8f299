"""A `try:` whose handlers catch only exceptions CUDA work does not raise off CUDA (optional_code.toml
`unrelated_exceptions`: StopIteration, KeyError, ...) is no other way for the CUDA work in it: `except
StopIteration: done = True` around a generator step guards nothing. Nor is a handler for RuntimeError
alone around work that raises AssertionError where torch has no CUDA (torch.cuda.synchronize: optional_code.toml
`runtime_errors`). A bare `except:`, or a name the file binds itself, still falls back."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import queue

import torch


def stream(gen, half):
    done = False
    while not done:
        try:
            with torch.autocast(device_type="cuda", enabled=half):
                step = next(gen)
        except StopIteration:
            done = True
    try:
        torch.cuda.synchronize()
    except (KeyError, queue.Empty):
        pass
    try:
        torch.cuda.synchronize()
    except RuntimeError:
        pass
    try:
        torch.cuda.synchronize()
    except:
        pass


def rebound(StopIteration):
    try:
        torch.cuda.synchronize()
    except StopIteration:
        pass
'''


def test_handlers_for_exceptions_cuda_work_does_not_raise():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL201", "CDL207"}))
    assert found == [("CDL207", 10, 33), ("CDL201", 15, 9), ("CDL201", 19, 9)]
