"""Guards that only a CUDA host passes: handling of an error whose text is CUDA's out-of-memory
message (MPS says "MPS backend out of memory"), and other GPU libraries' availability queries
(CuPy, Numba's CUDA target), which no Mac answers with True, as they are or kept in a flag."""

import textwrap

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


def test_a_handler_past_a_cuda_oom_test_runs_only_where_cuda_raised():
    # yolox's label assignment: re-raised unless CUDA's message, then the cache is freed
    assert lint(
        """
        import torch


        def assign(step):
            try:
                return step()
            except RuntimeError as e:
                if "CUDA out of memory. " not in str(e):
                    raise
                torch.cuda.empty_cache()
                return step()


        def generic(step):
            try:
                return step()
            except RuntimeError as e:
                if "out of memory" not in str(e):
                    raise
                torch.cuda.empty_cache()
                return step()
        """,
        select={"CDL202", "CDL218"},
    ) == [("CDL218", 8, 12), ("CDL202", 20, 9)]


def test_gpu_libraries_availability_queries():
    assert lint(
        """
        import cupy as cp
        import numba.cuda
        import torch


        def maps(y):
            if cp.cuda.is_available():
                return y.to("cuda")
            if numba.cuda.is_available():
                return y.to("cuda")
            if cp.cuda.runtime.getDeviceCount() > 0:
                return y.to("cuda")
            return y.to("cuda")
        """,
        select={"CDL101"},
    ) == [("CDL101", 13, 17)]


def test_a_flag_rebound_under_its_own_truth_to_a_query_is_that_query():
    # deepinv's coil maps: `use_cupy` is asked for, then kept only where CuPy sees a GPU
    assert lint(
        """
        import torch


        def maps(y, use_cupy=True):
            if use_cupy:
                try:
                    import cupy as cp

                    use_cupy = cp.cuda.is_available()
                except ImportError:
                    use_cupy = False
            if use_cupy:
                return y.to("cuda")
            return y


        def partly(y, use_cupy=True):
            if use_cupy:
                try:
                    import cupy as cp

                    use_cupy = cp.cuda.is_available()
                except ImportError:
                    pass
            if use_cupy:
                return y.to("cuda")
            return y
        """,
        select={"CDL101"},
    ) == [("CDL101", 26, 21)]
