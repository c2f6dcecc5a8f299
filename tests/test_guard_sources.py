"""Guards that come from the toolkit, from test parameter marks and from helpers that lean on
helpers of other modules: each is false on every Mac, so the code it guards gets no finding."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"


def lint(source: str, select=None, project_files=None, path="example.py"):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select, project_files=files, path=path))


def test_cuda_home_checks_guard_the_toolkit_paths():
    source = """
    import os

    import torch
    from torch.utils import cpp_extension
    from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME


    def nvcc():
        if CUDA_HOME is None:
            return None
        return os.path.join(CUDA_HOME, "bin", "nvcc")


    def flags():
        if cpp_extension.CUDA_HOME:
            return [os.path.join(cpp_extension.CUDA_HOME, "lib64")]
        if ROCM_HOME is not None:
            return [os.path.join(torch.utils.cpp_extension.CUDA_HOME, "lib")]
        home = torch.utils.cpp_extension.CUDA_HOME
        return [home]


    NVCC = CUDA_HOME + "/bin/nvcc"
    """
    # The tests themselves decide; the uses they guard are silenced; line 19 only copies it (no use that
    # fails on None: the none-misuse check); line 23 adds a string to it unguarded.
    assert lint(source, select={"CDL403"}) == [("CDL403", 23, 8)]


def test_a_parameter_set_skipped_off_cuda_holds_cuda_only_values():
    source = """
    import pytest
    import torch

    needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")


    @pytest.mark.parametrize(
        "device",
        [
            torch.device("cpu"),
            pytest.param(torch.device("cuda"), marks=needs_cuda),
            pytest.param(torch.device("cuda:0"), marks=[pytest.mark.skipif(not torch.cuda.is_available(), reason="x")]),
            pytest.param(torch.device("cuda"), marks=pytest.mark.slow),
        ],
    )
    def test_ones(device):
        torch.ones(2, device=device)
    """
    assert lint(source, select={"CDL101"}) == [("CDL101", 13, 35)]


def test_parameter_marks_from_project_helpers_and_factories():
    testing = """
    import pytest
    import torch


    def requires_gpu():
        return pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU")


    def require_cuda(test_case):
        return pytest.mark.skipif(torch.cuda.device_count() == 0, reason="GPU")(test_case)
    """
    source = """
    import pytest
    import torch
    from pkg.testing import require_cuda, requires_gpu


    @pytest.mark.parametrize("d", ["cpu", pytest.param(torch.device("cuda"), marks=requires_gpu())])
    def test_a(d):
        pass


    @requires_gpu()
    def test_b():
        torch.cuda.synchronize()


    @require_cuda
    def test_c():
        torch.cuda.synchronize()


    def test_d():
        torch.cuda.synchronize()
    """
    found = lint(source, select={"CDL101", "CDL201"}, project_files={"pkg/testing.py": testing}, path="tests/test_x.py")
    assert found == [("CDL201", 22, 5)]


def test_helpers_that_lean_on_helpers_of_other_modules():
    imports = """
    import torch


    def is_cuda_available():
        available = torch.cuda.is_available()
        return available


    def is_xla_available():
        return False
    """
    testing = """
    import unittest

    from .imports import is_cuda_available, is_xla_available


    def require_cuda(test_case):
        return unittest.skipUnless(is_cuda_available() and not is_xla_available(), "CUDA")(test_case)


    def require_xla(test_case):
        return unittest.skipUnless(is_xla_available(), "XLA")(test_case)


    def has_gpu():
        return is_cuda_available() or is_xla_available()


    def use_gpu():
        return is_cuda_available()
    """
    source = """
    import torch
    from pkg.testing import has_gpu, require_cuda, require_xla, use_gpu


    @require_cuda
    def test_a():
        torch.cuda.synchronize()


    @require_xla
    def test_b():
        torch.cuda.synchronize()


    def test_c():
        if has_gpu():
            torch.cuda.synchronize()
        if use_gpu():
            torch.cuda.synchronize()
    """
    files = {"pkg/imports.py": imports, "pkg/testing.py": testing}
    # require_xla and has_gpu lean on is_xla_available, which says nothing about the host.
    assert lint(source, select={"CDL201"}, project_files=files, path="tests/test_x.py") == [("CDL201", 12, 5), ("CDL201", 17, 9)]


def test_a_flag_set_only_after_a_cuda_only_import_is_a_guard():
    init = """
    import torch

    if torch.version.hip is None:
        try:
            import triton

            HAS_TRITON = True
        except ImportError:
            HAS_TRITON = False
    else:
        HAS_TRITON = False

    try:
        import numpy

        HAS_NUMPY = True
    except ImportError:
        HAS_NUMPY = False

    try:
        HAS_EARLY = True
        import triton
    except ImportError:
        HAS_EARLY = False
    """
    source = """
    import pkg
    import torch

    if pkg.HAS_TRITON:
        torch.cuda.synchronize()
    if pkg.HAS_NUMPY:
        torch.cuda.synchronize()
    if pkg.HAS_EARLY:
        torch.cuda.synchronize()
    """
    found = lint(source, select={"CDL201"}, project_files={"pkg/__init__.py": init}, path="run.py")
    assert found == [("CDL201", 7, 5), ("CDL201", 9, 5)]


def test_a_name_that_is_none_on_every_mac_is_a_guard():
    source = """
    import torch


    def loop(loader, device):
        if torch.cuda.is_available() and device.type == "cuda":
            stream = torch.cuda.Stream()
        else:
            stream = None
        other = torch.cuda.Stream() if device.type == "mps" else None
        for batch in loader:
            if stream is not None:
                torch.cuda.current_stream().wait_stream(stream)
            if stream:
                torch.cuda.current_stream().wait_stream(stream)
            if other is not None:
                torch.cuda.current_stream().wait_stream(other)
    """
    # `other` is None on a Mac too: there the CUDA stream it would hold raises where it is made (line 9)
    assert lint(source, select={"CDL305"}) == [("CDL305", 9, 13)]


def test_a_constant_bound_to_a_helper_of_another_module():
    checks = "import torch\n\n\ndef cuda_is_available():\n    return torch.cuda.device_count() > 0\n"
    init = "from pkg import checks\n\nCUDA_IS_AVAILABLE = checks.cuda_is_available()\nSLOW = checks.slow()\n"
    source = """
    import pytest
    import torch
    from pkg import CUDA_IS_AVAILABLE, SLOW


    @pytest.mark.skipif(not CUDA_IS_AVAILABLE, reason="CUDA")
    def test_a():
        torch.cuda.synchronize()


    @pytest.mark.skipif(not SLOW, reason="slow")
    def test_b():
        torch.cuda.synchronize()
    """
    files = {"pkg/checks.py": checks, "pkg/__init__.py": init}
    assert lint(source, select={"CDL201"}, project_files=files, path="tests/test_x.py") == [("CDL201", 13, 5)]


def test_bool_of_a_guard_is_the_guard():
    source = """
    import torch


    class Profile:
        def __init__(self, device=None):
            self.cuda = bool(device and str(device).startswith("cuda"))

        def time(self):
            if self.cuda:
                torch.cuda.synchronize()
    """
    assert lint(source, select={"CDL201"}) == []
    shadowed = textwrap.dedent(source) + "\n\ndef bool(value):\n    return True\n"  # not the builtin any more
    assert lint(shadowed, select={"CDL201"}) == [("CDL201", 10, 13)]


def test_device_types_no_mac_has_guard_their_branch():
    source = """
    import torch


    def step(device_type, name):
        if device_type in ("cuda", "xpu"):
            torch.cuda.synchronize()
        if device_type == "npu:0":
            torch.cuda.synchronize()
        if name.startswith("hpu"):
            torch.cuda.synchronize()
        if device_type == "mps":
            torch.cuda.synchronize()
        if device_type == "gpu":
            torch.cuda.synchronize()
    """
    # "gpu" is no torch device type and "mps" is the Mac's own: those two stay findings.
    assert lint(source, select={"CDL201"}) == [("CDL201", 12, 9), ("CDL201", 14, 9)]


def test_an_early_exit_unless_the_device_type_is_one_no_mac_has():
    source = """
    import torch


    def scaler(device, kwargs):
        if device.type not in ("xpu", "cuda", "npu", "xla", "mlu", "musa"):
            raise ValueError(f"fp16 needs a GPU (not {device.type!r})")
        return torch.cuda.amp.GradScaler(**kwargs)


    def scaler_or_cpu(device, kwargs):
        if device.type not in ("cuda", "musa", "cpu"):
            raise ValueError(device.type)
        return torch.cuda.amp.GradScaler(**kwargs)
    """
    # "cpu" is a Mac's device type too: the second function still reaches the CUDA-only scaler there.
    assert lint(source, select={"CDL205"}) == [("CDL205", 13, 12)]


def test_an_environment_opt_in_beside_a_cuda_query_forces_the_cuda_path():
    # FORCE_CUDA is unset on every host until someone sets it: `is_available() or FORCE_CUDA` is the CUDA
    # branch. A default that is on, or an opt-in alone (a launcher's variable), guards nothing.
    found = triples(findings_of(textwrap.dedent(
        """
        import os
        import torch
        from torch.utils.cpp_extension import CUDAExtension, CppExtension

        FORCE = int(os.environ.get("FORCE_CUDA", 0))


        def make():
            if torch.cuda.is_available() or os.getenv("FORCE_CUDA", "0") == "1":
                extension = CUDAExtension
            else:
                extension = CppExtension
            if torch.cuda.is_available() or FORCE or os.environ.get("CUDA_HOME"):
                extension = CUDAExtension
            if torch.cuda.is_available() or os.getenv("NO_CUDA", "1") == "1":
                extension = CUDAExtension
            if os.environ.get("USE_CUDA"):
                torch.cuda.synchronize()
            return extension
        """
    ).lstrip("\n"), path="setup.py", select={"CDL401", "CDL201"}))
    assert found == [("CDL401", 16, 21), ("CDL201", 18, 9)]


def test_an_environment_read_without_a_default_is_unset_too():
    found = triples(findings_of(textwrap.dedent(
        """
        import os
        import torch
        from torch.utils.cpp_extension import CUDAExtension


        def make():
            if torch.cuda.is_available() or os.getenv("FORCE_CUDA", None) == "1" or os.environ.get("CUDA_HOME"):
                return CUDAExtension
            return None
        """
    ).lstrip("\n"), path="setup.py", select={"CDL401"}))
    assert found == []


def test_an_option_whose_default_is_a_cuda_query_guards_like_the_query():
    source = """
    import os

    import torch


    def profile(kwargs, config):
        if kwargs.get("use_cuda", torch.cuda.is_available()):
            torch.cuda.synchronize()
        if getattr(config, "use_cuda", torch.cuda.is_available()):
            torch.cuda.synchronize()
        if os.environ.get("USE_CUDA", torch.cuda.is_available()):
            torch.cuda.synchronize()
        if not kwargs.get("cpu_only", not torch.cuda.is_available()):
            torch.cuda.synchronize()
        if kwargs.get("use_cuda", True):
            torch.cuda.synchronize()
        if kwargs.get("use_cuda"):
            torch.cuda.synchronize()
        if kwargs.get("use_cuda", default=torch.cuda.is_available()):
            torch.cuda.synchronize()
    """
    assert lint(source, select={"CDL201"}) == [("CDL201", 16, 9), ("CDL201", 18, 9), ("CDL201", 20, 9)]


def test_a_helper_of_another_module_returning_an_option_with_a_cuda_default_is_a_guard():
    files = {
        "pkg/options.py": """
        import torch


        def wants_cuda(options):
            return options.get("cuda", torch.cuda.is_available())
        """,
    }
    source = """
    import torch

    from pkg.options import wants_cuda


    def step(options):
        if wants_cuda(options):
            torch.cuda.synchronize()
        torch.cuda.synchronize()
    """
    assert lint(source, select={"CDL201"}, project_files=files, path="pkg/train.py") == [("CDL201", 9, 5)]


def test_faiss_gpu_count_guards_the_cuda_path():
    source = """
    import faiss
    import torch


    def try_gpu(index, query, k, is_cuda, gpus):
        gpus_are_available = faiss.get_num_gpus() > 0
        if (is_cuda or gpus is not None) and gpus_are_available:
            return 1024 if float(torch.version.cuda) < 9.5 else 2048
        return float(torch.version.cuda)
    """
    assert lint(source, select={"CDL216"}) == [("CDL216", 9, 18)]


def test_a_variable_only_a_cuda_setup_reads_is_set_only_off_a_mac():
    # torch-fidelity's tests: `cuda` is true only where CUDA_VISIBLE_DEVICES lists devices. Its
    # unset side (`== ""`) runs on a Mac, and any other variable says nothing about the host.
    source = """
    import os
    import torch


    def test_lpips():
        cuda = os.environ.get("CUDA_VISIBLE_DEVICES", "") != ""
        x = torch.zeros(3)
        if cuda:
            x = x.cuda()
        if "CUDA_VISIBLE_DEVICES" in os.environ:
            torch.cuda.synchronize()
        if os.getenv("NVIDIA_VISIBLE_DEVICES"):
            torch.cuda.synchronize()
        if os.environ.get("CUDA_VISIBLE_DEVICES", "") == "":
            torch.cuda.synchronize()
        if os.getenv("MY_FLAG"):
            torch.cuda.synchronize()
        return x
    """
    found = lint(source, select={"CDL102", "CDL201"}, path="tests/test_lpips.py")
    assert found == [("CDL201", 15, 9), ("CDL201", 17, 9)]
