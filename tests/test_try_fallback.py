"""A try/except guards CUDA work only where it falls back: a handler that takes another way (not
one that reports and exits or re-raises), around a call that can raise off CUDA at all. A call that
never raises off CUDA (it is queued, or answers 0) is guarded only by an earlier statement of the
body that raises there."""

import textwrap

from conftest import findings_of, triples


def lint(text, select=("CDL201", "CDL202", "CDL203")):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select=set(select)))


def test_a_handler_that_falls_back_guards_the_body():
    # (a handler of RuntimeError alone catches nothing torch.cuda.synchronize raises without CUDA, which is
    # an AssertionError: test_round37_patterns.py)
    assert lint(
        """
        import torch

        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        """
    ) == []


def test_a_handler_that_only_reports_and_exits_is_no_fallback():
    assert lint(
        """
        import sys

        import torch

        try:
            torch.cuda.synchronize()
        except RuntimeError as error:
            print(f"no GPU: {error}")
            sys.exit(1)
        try:
            torch.cuda.synchronize()
        except RuntimeError:
            print("no GPU")
            raise
        """
    ) == [("CDL201", 6, 5), ("CDL201", 11, 5)]


def test_a_call_that_never_raises_off_cuda_is_not_guarded_by_a_try():
    assert lint(
        """
        import torch

        try:
            torch.cuda.empty_cache()
        except RuntimeError as exception:
            if "out of memory" not in str(exception):
                raise
        try:
            torch.cuda.manual_seed_all(0)
        except Exception:
            pass
        try:
            torch.cuda.empty_cache()
            torch.cuda.synchronize()
        except Exception:
            pass
        try:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        except Exception:
            pass
        """
    ) == [("CDL202", 4, 5), ("CDL203", 9, 5), ("CDL202", 13, 5)]  # the last one runs only after a raise


def test_cuda_autocast_and_grad_scaler_never_raise_off_cuda():
    # torch/amp/autocast_mode.py and grad_scaler.py: without CUDA they warn and disable themselves
    assert lint(
        """
        import torch


        def probe(a, b):
            try:
                with torch.cuda.amp.autocast(dtype=torch.float16):
                    c = a @ b
                with torch.autocast("cuda"):
                    c = a @ b
                scaler = torch.amp.GradScaler("cuda")
                torch.cuda.synchronize()
                with torch.autocast("cuda"):
                    c = a @ b
            except Exception as error:
                return {"supported": False, "error": str(error)}
            return c
        """,
        select=("CDL101", "CDL205", "CDL207"),
    ) == [("CDL205", 6, 14), ("CDL207", 8, 29), ("CDL101", 10, 39)]  # the last autocast runs only after a raise


def test_skipping_the_test_in_the_handler_is_a_way_out_off_cuda():
    assert lint(
        """
        import pytest
        import torch


        def test_sync():
            try:
                torch.cuda.synchronize()
            except (RuntimeError, AssertionError):
                pytest.skip("needs CUDA")
        """
    ) == []


def test_a_handler_that_returns_an_answer_is_a_fallback():
    # `_is_fp64_available(device)`: the probe fails on MPS, and the function says so instead of failing
    assert lint(
        """
        import torch


        def fp64_available(device):
            try:
                x = torch.zeros(2, dtype=torch.float64).to(device)
                return True
            except Exception:
                return False


        def fp64_or_exit(device):
            try:
                return torch.zeros(2, dtype=torch.float64).to(device)
            except Exception:
                raise SystemExit(1)
        """,
        select=("CDL601", "CDL608"),
    ) == [("CDL608", 14, 16)]


def test_a_call_queued_until_cuda_initializes_is_reported_inside_a_try_that_falls_back():
    # torch.load can raise and the handler logs, so the try falls back; but set_rng_state_all never raises
    # off CUDA (torch/cuda/random.py queues it), so on a Mac it silently restores nothing
    assert lint(
        """
        import logging
        import torch


        def load_states(path):
            try:
                states = torch.load(path, map_location="cpu")
                torch.set_rng_state(states["cpu"])
                torch.cuda.set_rng_state_all(states["cuda"])
                torch.cuda.synchronize()
            except Exception:
                logging.info("could not load the random states")
        """
    ) == [("CDL203", 9, 9)]
