"""CDL404 on imports that run only where the library imports: availability tests (find_spec,
RequirementCache, helpers returning one, in the file or through the project index), early exits
on them, constructors that raise without the library, and `if TYPE_CHECKING:`."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"


def lint(text, **options):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select={"CDL404", "CDL407"}, **options))


def lint_in_project(files, path):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}}
    text = files.pop(path)
    return triples(findings_of(text, path=path, select={"CDL404", "CDL407"}, project_files=files))


def test_find_spec_helper_of_the_same_file_and_its_else_branch():
    assert lint(
        """
        import importlib.util


        def is_triton_available():
            return importlib.util.find_spec("triton") is not None


        if not is_triton_available():
            def kernel(x):
                return None
        else:
            import triton
            import triton.language as tl

        if is_triton_available():
            from triton import jit
        import triton
        """
    ) == [("CDL404", 17, 1)]


def test_the_branch_where_the_library_is_missing_is_still_reported():
    assert lint(
        """
        import importlib.util

        if importlib.util.find_spec("xformers") is None:
            import xformers
        if not importlib.util.find_spec("cupy"):
            import cupy
        """
    ) == [("CDL404", 4, 5), ("CDL404", 6, 5)]


def test_a_name_bound_only_to_a_test_or_false():
    assert lint(
        """
        import importlib.util

        _xformers = importlib.util.find_spec("xformers") is not None
        if _xformers:
            try:
                check()
            except ValueError:
                _xformers = False
        if _xformers:
            import xformers.ops
        maybe = importlib.util.find_spec("xformers") is not None
        maybe = True
        if maybe:
            import xformers
        """
    ) == [("CDL404", 14, 5)]


def test_requirement_cache_and_an_early_raise():
    assert lint(
        """
        from lightning_utilities.core.imports import RequirementCache

        _TE_AVAILABLE = RequirementCache("transformer_engine>=0.11.0")


        def make():
            if not _TE_AVAILABLE:
                raise ModuleNotFoundError(str(_TE_AVAILABLE))
            from transformer_engine.common.recipe import DelayedScaling
            return DelayedScaling()


        def other():
            if not _TE_AVAILABLE:
                print("missing")
            import transformer_engine
        """
    ) == [("CDL404", 16, 5)]


def test_methods_of_a_class_whose_constructor_requires_the_library():
    assert lint(
        """
        from lightning_utilities.core.imports import RequirementCache

        _TE = RequirementCache("transformer_engine")


        class Plugin:
            def __init__(self):
                if not _TE:
                    raise ModuleNotFoundError(str(_TE))

            def layers(self):
                import transformer_engine.pytorch as te
                return te.Linear


        class Other:
            def __init__(self):
                if not _TE:
                    self.fallback = True

            def layers(self):
                import transformer_engine.pytorch as te
                return te.Linear
        """
    ) == [("CDL404", 22, 9)]


def test_type_checking_imports_never_run():
    assert lint(
        """
        from typing import TYPE_CHECKING
        import typing

        if TYPE_CHECKING:
            from transformer_engine.common.recipe import DelayedScaling
        if typing.TYPE_CHECKING:
            import cupy
        else:
            import flash_attn
        if not TYPE_CHECKING:
            import xformers
        """
    ) == [("CDL404", 9, 5), ("CDL404", 11, 5)]


def test_a_name_that_merely_looks_like_type_checking_is_no_test():
    assert lint(
        """
        TYPE_CHECKING = True
        if TYPE_CHECKING:
            import cupy
        """
    ) == [("CDL404", 3, 5)]


def test_availability_helpers_of_another_module_through_the_project_index():
    utils = """
        import importlib.util


        def is_triton_available():
            return importlib.util.find_spec("triton") is not None


        _xformers_available = importlib.util.find_spec("xformers") is not None
        if _xformers_available:
            try:
                import importlib.metadata
                importlib.metadata.version("xformers")
            except Exception:
                _xformers_available = False


        def is_xformers_available():
            return _xformers_available


        def is_anything_available():
            return True
        """
    kernels = """
        from pkg.utils import is_anything_available, is_triton_available, is_xformers_available

        if not is_triton_available():
            def kernel(x):
                return None
        else:
            import triton

        if is_xformers_available():
            import xformers
            import xformers.ops
        else:
            xformers = None

        if is_anything_available():
            import cupy
        """
    assert lint_in_project({"pkg/utils.py": utils, "pkg/kernels.py": kernels}, "pkg/kernels.py") == [("CDL404", 16, 5)]


def test_code_that_runs_only_where_a_cuda_only_library_imports_never_runs_on_a_mac():
    kernels = """
        import torch
        from pkg.utils import is_triton_available

        if not is_triton_available():
            def quantize(x):
                return None
        else:
            import triton

            def quantize(x):
                assert x.is_cuda
                return torch.empty(x.shape, device="cuda")
        """
    utils = """
        import importlib.util


        def is_triton_available():
            return importlib.util.find_spec("triton") is not None
        """
    files = {"pkg/utils.py": utils, "pkg/kernels.py": kernels, "setup.py": SETUP, "pkg/__init__.py": ""}
    files = {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}
    text = files.pop("pkg/kernels.py")
    assert triples(findings_of(text, path="pkg/kernels.py", project_files=files)) == []


def test_an_available_library_that_macs_have_guards_nothing_else():
    assert triples(findings_of(textwrap.dedent(
        """
        import importlib.util
        import torch

        if importlib.util.find_spec("scipy") is not None:
            x = torch.zeros(3, device="cuda")
        if importlib.util.find_spec("triton") is not None:
            y = torch.zeros(3, device="cuda")
        """
    ).lstrip("\n"), select={"CDL101"})) == [("CDL101", 5, 31)]


def test_try_import_helpers_and_flags():
    assert lint(
        """
        def has_apex():
            try:
                import apex
                return True
            except ImportError:
                return False


        try:
            import flash_attn
            HAS_FLASH = True
        except ImportError:
            HAS_FLASH = False

        try:
            import numpy
            HAS_NUMPY = True
        except ValueError:
            HAS_NUMPY = False

        if has_apex():
            from apex import amp
        if HAS_FLASH:
            from flash_attn import flash_attn_func
        if HAS_NUMPY:
            import cupy
        """
    ) == [("CDL404", 26, 5)]


def test_try_import_helper_of_another_module():
    utils = """
        def is_apex_available():
            try:
                import apex  # noqa: F401
            except ImportError:
                return False
            else:
                return True


        def has_cupy():
            try:
                import cupy  # noqa: F401
                return True
            except ImportError:
                return False
        """
    user = """
        from pkg.utils import has_cupy

        if has_cupy():
            import cupy
        """
    assert lint_in_project({"pkg/utils.py": utils, "pkg/user.py": user}, "pkg/user.py") == []


PACKAGE_HELPERS = {
    "pkg/import_utils.py": """
        import importlib.metadata
        import importlib.util


        def _is_package_available(pkg_name, return_version=False):
            package_exists = importlib.util.find_spec(pkg_name) is not None
            package_version = "N/A"
            if package_exists:
                try:
                    package_version = importlib.metadata.version(pkg_name)
                except importlib.metadata.PackageNotFoundError:
                    package_exists = False
            if return_version:
                return package_exists, package_version
            return package_exists


        def _has_distribution(pkg_name, metadata_name=None):
            if importlib.util.find_spec(pkg_name) is not None:
                try:
                    importlib.metadata.metadata(metadata_name or pkg_name)
                    return True
                except importlib.metadata.PackageNotFoundError:
                    return False


        _flash_attn_available = _is_package_available("flash_attn")


        def is_flash_attn_2_available():
            return _flash_attn_available


        def is_msamp_available():
            return _has_distribution("msamp", "ms-amp")


        def is_transformer_engine_available():
            return _has_distribution("transformer_engine", "transformer-engine")


        def is_fp8_available():
            return is_msamp_available() or is_transformer_engine_available()


        def is_rich_available():
            return _has_distribution("rich")
    """,
    "pkg/model.py": """
        import torch
        from pkg.import_utils import is_flash_attn_2_available, is_fp8_available, is_rich_available

        if is_flash_attn_2_available():
            from flash_attn import flash_attn_func


        def precision(mixed_precision, capable):
            if mixed_precision == "fp8":
                if not is_fp8_available():
                    raise ValueError("fp8 needs Transformer Engine or MS-AMP")
                elif not capable():
                    print(torch.cuda.get_device_capability())
            if is_rich_available():
                print(torch.cuda.get_device_capability())
    """,
}


def test_helpers_that_test_the_package_their_caller_names():
    # `_is_package_available("flash_attn")` tests flash_attn, whatever form the helper takes (a local
    # bound to find_spec, True returned under it, a branch its defaults never take); a test true where
    # either of two CUDA-only libraries imports is a CUDA guard; one of a portable library guards nothing.
    found = triples(findings_of(
        textwrap.dedent(PACKAGE_HELPERS["pkg/model.py"]).lstrip("\n"), path="pkg/model.py", select={"CDL404", "CDL204"},
        project_files={"setup.py": SETUP, "pkg/__init__.py": "",
                       "pkg/import_utils.py": textwrap.dedent(PACKAGE_HELPERS["pkg/import_utils.py"]).lstrip("\n")},
    ))
    assert found == [("CDL204", 15, 15)]


def test_a_helper_that_returns_a_version_check_once_the_package_was_found():
    # transformers' form: early exits on the package test, then a version comparison; the package test
    # sets its flag back to True under itself (a dev build of torch)
    utils = """
        import importlib.metadata
        import importlib.util

        from packaging import version


        def _is_package_available(pkg_name, return_version=False):
            package_exists = importlib.util.find_spec(pkg_name) is not None
            package_version = "N/A"
            if package_exists:
                try:
                    package_version = importlib.metadata.version(pkg_name)
                except importlib.metadata.PackageNotFoundError:
                    if pkg_name == "torch":
                        package_exists = True
                    else:
                        package_exists = False
            if return_version:
                return package_exists, package_version
            else:
                return package_exists


        def is_flash_attn_2_available():
            if not _is_package_available("flash_attn"):
                return False
            return version.parse(importlib.metadata.version("flash_attn")) >= version.parse("2.1.0")


        def is_anything():
            return version.parse("2.1.0") > version.parse("2.0")
    """
    model = """
        from pkg.import_utils import is_anything, is_flash_attn_2_available

        if is_flash_attn_2_available():
            from flash_attn import flash_attn_func
        if is_anything():
            from flash_attn import flash_attn_varlen_func
    """
    assert lint_in_project({"pkg/import_utils.py": utils, "pkg/model.py": model}, "pkg/model.py") == [("CDL404", 6, 5)]


def test_a_stored_parameter_position_that_is_not_a_number_names_no_library():
    from cudalint.project.availability import called_library

    assert called_library("*0", ["flash_attn"], {}, []) == "flash_attn"
    assert called_library("*x", ["flash_attn"], {}, []) is None
    assert called_library("*1", ["flash_attn"], {}, ["pkg_name"]) is None


def test_a_test_of_one_library_guards_only_its_own_imports():
    # Where torch (or NumPy) imports, as on a Mac, the import of another library under its test still runs.
    assert lint(
        """
        import importlib.util
        import pkgutil

        if importlib.util.find_spec("torch") is not None:
            import flash_attn
            from flash_attn.layers import rotary
        if importlib.util.find_spec("xformers.ops") is not None:
            import xformers.ops as xops
        if pkgutil.find_loader("numpy") or importlib.util.find_spec("apex"):
            from apex import amp
        if importlib.util.find_spec("numpy"):
            try:
                import apex
            except ImportError:
                apex = None
        if importlib.util.find_spec("liger-kernel"):
            from liger_kernel.transformers import apply_liger_kernel_to_llama
        """
    ) == [("CDL404", 5, 5), ("CDL404", 6, 5), ("CDL404", 10, 5)]


def test_a_library_named_by_its_distribution_or_its_helper_guards_its_module():
    assert lint(
        """
        from transformers.utils import is_auto_awq_available, is_torch_available

        if is_auto_awq_available():
            from awq.modules.linear.gemm import WQLinear_GEMM
        if is_torch_available():
            from awq.modules.linear.gemv import WQLinear_GEMV
        """
    ) == [("CDL404", 6, 5)]
