"""Patterns from blind round 36 (bench/EVAL.md, session 32), each general: code under a test written as
a constant, an import-probing helper of another module that returns a local flag, `.cuda(non_blocking=True)`,
a torch requirement that allows no release with MPS, CUDA-numbered extras, a Read the Docs build, and
Python 3.12 syntax read by an older Python."""

import textwrap

import pytest

from conftest import findings_of, triples


def lint(text, **kwargs):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), **kwargs))


def test_code_under_a_constant_test_never_runs():
    # `if False:  # torch.cuda.is_available():` (compressai), `if 0:`, `while False:`: dead code; the value
    # it binds never reaches the load, and the `if` is no device selection (no CDL104). Live code stays.
    assert lint(
        """
        import torch


        def load(path):
            if False:  # torch.cuda.is_available():
                loc = "cuda"
                torch.cuda.current_device()
            else:
                loc = "cpu"
            return torch.load(path, map_location=loc)


        def other(x):
            if 0:
                x = x.cuda()
            while False:
                torch.cuda.synchronize()
            if True:
                torch.cuda.synchronize()
            else:
                x = x.cuda()
            return x
        """,
        select={"CDL101", "CDL102", "CDL104", "CDL105", "CDL109", "CDL201"},
    ) == [("CDL201", 19, 9)]


def test_a_constant_that_is_a_value_says_nothing_about_the_host():
    # `enabled=False` turns CUDA autocast off everywhere, on purpose; MPS autocast still lowers the region
    # (timm's fast_norm). A parameter defaulting to False may be passed True.
    assert lint(
        """
        import torch


        def norm(x):
            with torch.cuda.amp.autocast(enabled=False):
                return torch.mm(x, x)


        def generate(inputs, add_bos=False):
            if add_bos:
                return inputs.cuda()
            return inputs
        """,
        select={"CDL102", "CDL205"},
    ) == [("CDL205", 5, 10), ("CDL102", 11, 23)]


HELPER = '''
def is_apex_available():
    try:
        import apex  # NOQA

        apex_available = True
    except ImportError:
        apex_available = False
    return apex_available
'''


def test_an_import_probe_of_another_module_returning_a_local_flag():
    # vissl's is_apex_available(): True bound after the import in a try, False in its handler, returned
    source = """
    from pkg.misc import is_apex_available

    if is_apex_available():
        import apex

    import apex.amp
    """
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/misc.py": HELPER}
    assert lint(source, project_files=files, path="pkg/use.py", select={"CDL404"}) == [("CDL404", 6, 1)]


def test_a_non_blocking_copy_by_cuda_is_left_to_its_call():
    # `.cuda(non_blocking=True)` copies to CUDA only: CDL102 reports the call (its fix keeps the argument,
    # and CDL304 then judges the `.to`); a copy whose device may be MPS is still reported
    assert lint(
        """
        def step(x, y, device):
            x = x.cuda(non_blocking=True)
            y = y.to(device, non_blocking=True)
            return x + y
        """,
        select={"CDL102", "CDL304"},
    ) == [("CDL102", 2, 11), ("CDL304", 3, 22)]


@pytest.mark.parametrize(
    "line, reported",
    [
        ("torch>=1.4.0,<1.10.0", True),
        ("torch==1.11.0", True),
        ("torch~=1.11.0", True),
        ("torch<=1.12", False),
        ("torch>=1.8", False),
        ("torch==2.1.0", False),
        ("torch", False),
    ],
)
def test_a_torch_requirement_that_allows_no_release_with_mps(line, reported):
    found = findings_of(f"numpy\n{line}\n", path="requirements.txt", kind="requirements", select={"CDL505"})
    if not reported:
        assert found == []
        return
    assert [(f.code, f.line, f.column) for f in found] == [("CDL505", 2, 1)]
    assert found[0].message == (
        f"`{line}` allows only releases before 1.12.0, which have no MPS backend (MPS from 1.12.0); require `torch>=1.12.0`"
    )


def test_extras_numbered_for_cuda_are_not_installed_on_a_mac():
    # spaCy's `cuda80` ... `cuda112` extras of cupy builds; a plain `cuda` extra too; the base install is checked
    text = textwrap.dedent(
        """
        [metadata]
        name = pkg

        [options]
        install_requires =
            cupy-cuda12x>=12

        [options.extras_require]
        cuda =
            cupy>=5.0.0b4
        cuda80 =
            cupy-cuda80>=5.0.0b4
        cuda12x =
            cupy-cuda12x>=12
        """
    ).lstrip("\n")
    assert triples(findings_of(text, path="setup.cfg", kind="setup_cfg", select={"CDL502"})) == [("CDL502", 6, 5)]


def test_a_read_the_docs_build_runs_on_linux():
    text = textwrap.dedent(
        """
        version: 2
        build:
          os: "ubuntu-22.04"
          tools:
            python: "3.8"
          jobs:
            pre_install:
              - pip install torch==1.11.0+cpu
        """
    ).lstrip("\n")
    assert findings_of(text, path=".readthedocs.yml", kind="yaml", select={"CDL505"}) == []


def test_python_312_syntax_is_checked_whatever_python_runs_cudalint():
    # shap's `type` aliases and generic classes: valid code for the Python it is written for (a Python older
    # than 3.12 refuses it; libcst reads it); a real syntax error is still one
    assert lint(
        """
        import torch

        type Device = str


        class Box[T]:
            def move(self, x: T) -> T:
                return x.cuda()
        """,
        select={"CDL000", "CDL102"},
    ) == [("CDL102", 8, 18)]
    assert lint("x = (\n", select={"CDL000"}) == [("CDL000", 1, 5)]


def test_a_method_of_an_object_whose_class_the_code_annotates():
    # classy_vision's PerfTimer: `self._perf_stats: PerfStats = perf_stats`, then
    # `if self._perf_stats.use_cuda_events():`, a method that returns a CUDA query; an object of no known
    # class says nothing
    assert lint(
        """
        from typing import Optional

        import torch


        class PerfStats:
            def use_cuda_events(self):
                return torch.cuda.is_available() and self.pending is not None


        class Timer:
            def __init__(self, name: str, perf_stats: Optional["PerfStats"]):
                self._perf_stats: PerfStats = perf_stats

            def start(self, stats: PerfStats):
                if self._perf_stats.use_cuda_events():
                    self.event = torch.cuda.Event(enable_timing=True)
                if stats.use_cuda_events():
                    torch.cuda.synchronize()


        def other(stats):
            if stats.use_cuda_events():
                torch.cuda.synchronize()
        """,
        select={"CDL201", "CDL306"},
    ) == [("CDL201", 24, 9)]


def _package_lint(files, path, source, select):
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", **files}
    return lint(source, project_files=files, path=path, select=select)


PROBE = '''
def _can_import_egl_and_pycuda():
    import os

    try:
        import pycuda.gl
    except (ImportError, ModuleNotFoundError):
        return False

    try:
        os.environ["PYOPENGL_PLATFORM"] = "egl"
        import OpenGL.EGL
    except (AttributeError, ImportError):
        return False

    return True


if _can_import_egl_and_pycuda():
    from .raster import Raster
'''


def test_a_module_loaded_only_once_a_probe_found_a_cuda_only_library():
    # pytorch3d's OpenGL rasterizer: imported by its package only where `_can_import_egl_and_pycuda()`, which
    # returns True only after both imports succeeded (each `try:` returns False on failure)
    source = """
    import pycuda.driver as cuda
    import torch


    class Raster:
        def run(self):
            torch.cuda.synchronize()
    """
    assert _package_lint({"pkg/ogl/__init__.py": PROBE}, "pkg/ogl/raster.py", source, {"CDL201", "CDL404"}) == []
    # the same module loaded unconditionally: both are findings
    plain = {"pkg/ogl/__init__.py": "from .raster import Raster\n"}
    assert _package_lint(plain, "pkg/ogl/raster.py", source, {"CDL201", "CDL404"}) == [("CDL404", 1, 1), ("CDL201", 7, 9)]


def test_code_reached_only_once_an_extensions_cuda_module_imported():
    # performer-pytorch: the CUDA attention is chosen only where `causal_product_cuda` (another package's
    # compiled CUDA build) imports; the fallback is chosen otherwise. A project module named so is no such build.
    source = """
    from functools import partial

    from torch.cuda.amp import autocast


    def causal_cuda(q):
        with autocast(enabled=False):
            return q.cuda()


    def causal_plain(q):
        return q


    class Attention:
        def __init__(self):
            try:
                import fast_transformers.causal_product.causal_product_cuda
                self.fn = partial(causal_cuda)
            except ImportError:
                self.fn = causal_plain
    """
    assert _package_lint({}, "pkg/attn.py", source, {"CDL102", "CDL205"}) == []
    own = source.replace("import fast_transformers.causal_product.causal_product_cuda", "import pkg.ops_cuda")
    assert _package_lint({"pkg/ops_cuda.py": "X = 1\n"}, "pkg/attn.py", own, {"CDL102", "CDL205"}) == [
        ("CDL205", 3, 1), ("CDL205", 7, 10), ("CDL102", 8, 18)]


def test_python_314_exception_types_without_parentheses_are_checked_whatever_python_runs_cudalint():
    # fortuna (round 57, requires-python >= 3.14): `except OSError, subprocess.SubprocessError:` (PEP 758)
    assert lint(
        """
        import subprocess

        import torch


        def version():
            try:
                return subprocess.run(["uname"], timeout=2).stdout
            except OSError, subprocess.SubprocessError:
                return None


        x = torch.ones(1).cuda()
        """,
        select={"CDL000", "CDL102"},
    ) == [("CDL102", 13, 19)]
    assert lint("try:\n    pass\nexcept A, B\n    pass\n", select={"CDL000"}) == [("CDL000", 3, 9)]
