"""CDL218: out-of-memory handling that knows only CUDA's message; messages made, not tested, are left alone."""

import textwrap

from conftest import findings_of, triples


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL218"}))


def test_each_way_of_testing_for_cudas_message():
    assert lint(
        """
        def should_reduce(exception, message):
            if "CUDA out of memory" in str(exception):
                return True
            statements = [
                "CUDA out of memory.",
                "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED.",
            ]
            if any(s in exception.args[0] for s in statements):
                return True
            if "CUDA" in message and len(message) > 1 and "out of memory" in message:
                return True
            return str(exception).startswith("CUDA error: out of memory")
        """
    ) == [("CDL218", 2, 8), ("CDL218", 5, 9), ("CDL218", 10, 8), ("CDL218", 12, 38)]


def test_tests_that_also_match_mps_and_messages_that_are_made_are_no_finding():
    assert lint(
        """
        def should_reduce(exception, message):
            if "out of memory" in str(exception):
                return True
            known = ("CUDA out of memory.", "MPS backend out of memory")
            if "CUDA" in message:
                print("CUDA out of memory")
            raise RuntimeError("CUDA out of memory. Tried to allocate 2 GiB")
        """
    ) == []


def test_a_message_handed_back_to_the_caller_is_made_not_looked_for():
    # lama-cleaner's server: the test is the `in`; the tuple returned is the HTTP response.
    assert lint(
        """
        def inpaint(model, image):
            try:
                return model(image)
            except RuntimeError as e:
                if "CUDA out of memory. " in str(e):
                    return "CUDA out of memory", 500
                yield "CUDA out of memory", 500
                return {"error": ("CUDA out of memory", 500)}
        """
    ) == [("CDL218", 5, 12)]


def test_a_handler_under_a_cuda_guard_is_no_finding():
    assert lint(
        """
        import torch

        def should_reduce(exception):
            if torch.cuda.is_available():
                return "CUDA out of memory" in str(exception)
            return False
        """
    ) == []
