"""CDL602 (and the operator checks that share mps_fallback.moved_off_mps): a tensor the code has tested
not to be on MPS (`if x.device.type != "mps":`, the `else` of `if x.is_mps:`, after `if x.device.type ==
"mps": return`, after `assert not x.is_mps`, or through a function of the file that returns such a test
of its parameter, roma's `_supports_float64(device)`) is not reported. A test of another tensor, an `and`
whose one side may fail on MPS, and a move to a device after the test still are."""

import textwrap

from conftest import findings_of, triples


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL602"}))


def test_double_of_a_tensor_tested_off_mps_is_not_reported():
    source = """
    import torch


    def _supports_float64(device):
        return device.type != "mps"


    def inside(x):
        if x.device.type != "mps":
            return x.double()


    def on_the_cpu(x):
        if x.device.type == "cpu" or x.is_cuda:
            return x.double()


    def otherwise(x):
        if x.is_mps:
            return x.float()
        else:
            return x.double()


    def after_leaving(x, y):
        if x.device.type == "mps" or y.is_mps:
            raise ValueError("no float64 on MPS")
        return x.double() + y.double()


    def after_assert(x):
        assert not x.is_mps
        return x.double()


    def in_a_loop(xs):
        for x in xs:
            if x.device.type in ("mps",):
                continue
            x.double()


    def through_a_helper(M):
        if not _supports_float64(M.device):
            return M
        M = M.contiguous()
        return M.double()


    def chosen(M):
        return M.double() if _supports_float64(device=M.device) else M
    """
    assert lint(source) == []


def test_double_where_the_test_does_not_cover_the_tensor_is_reported():
    source = """
    import torch


    def supports(device):
        return device.type != "mps"


    def another_tensor(M, N):
        if supports(N.device):
            return M.double()


    def one_side_of_an_and(x, y):
        if x.device.type == "mps" and y.is_mps:
            raise ValueError("both on MPS")
        return y.double()


    def moved_after_the_test(x, device):
        if x.device.type != "mps":
            x = x.to(device)
            return x.double()


    def only_in_the_branch(x):
        if x.device.type != "mps":
            pass
        return x.double()
    """
    assert lint(source) == [
        ("CDL602", 10, 18),
        ("CDL602", 16, 14),
        ("CDL602", 22, 18),
        ("CDL602", 28, 14),
    ]


def test_float64_handed_to_a_function_of_the_file_that_tests_for_mps_is_not_reported():
    """lerobot's `get_safe_dtype(torch.float64, device.type)`: the function itself returns float32 for
    "mps". A function that never tests for MPS still passes the dtype on."""
    source = """
    import torch


    def get_safe_dtype(dtype, device_type):
        if device_type == "mps" and dtype == torch.float64:
            return torch.float32
        return dtype


    def widen(dtype, device_type):
        return dtype


    def build(n, device):
        a = torch.arange(n, dtype=get_safe_dtype(torch.float64, device.type), device=device)
        b = torch.arange(n, dtype=widen(torch.float64, device.type), device=device)
        return a, b
    """
    assert triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL601"})) == [("CDL601", 16, 37)]
