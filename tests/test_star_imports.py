"""`from module import *` binds what Python binds (the module's `__all__`, else its public module-level
names, through its own star imports), so a name it brings is a guard, an API or a value like any
imported name; and a value bound after an optional library's import in a `try:` (wherever the try
sits) is bound only where that library imports."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

UTILS = """
import torch

__all__ = ["HAS_FLASH", "HAS_SOFTCAP", "clear"]
major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)
HAS_FLASH = False
HAS_SOFTCAP = False
if major >= 8:
    try:
        from flash_attn.flash_attn_interface import flash_attn_cuda
        HAS_FLASH = True
        from flash_attn import __version__ as flash_version
        HAS_SOFTCAP = flash_version >= "2.6.3"
    except ImportError:
        HAS_FLASH = False
else:
    HAS_FLASH = False


def clear():
    torch.cuda.empty_cache()
"""


def lint_in_project(files, path, select=("CDL404",)):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}}
    text = files.pop(path)
    return triples(findings_of(text, path=path, select=set(select), project_files=files))


def lint(text, select=("CDL404",)):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select=set(select)))


def test_a_flag_brought_by_a_star_import_guards_the_import():
    model = """
    from ._utils import *

    if HAS_FLASH:
        from flash_attn import flash_attn_func
    if HAS_SOFTCAP:
        from flash_attn import flash_attn_varlen_func
    if major >= 8:
        from flash_attn import flash_attn_qkvpacked_func
    """
    # `major` is not in __all__: not bound by the star import, so no guard (and no availability test anyway)
    assert lint_in_project({"pkg/_utils.py": UTILS, "pkg/model.py": model}, "pkg/model.py") == [("CDL404", 8, 5)]


def test_star_imports_of_star_imports_and_public_names_without_all():
    base = """
    import torch
    from ._utils import *

    _private = True
    """
    model = """
    from .base import *

    if HAS_FLASH:
        from flash_attn import flash_attn_func
    if _private:
        from flash_attn import bert_padding
    """
    # base has no __all__: its public names (torch, and what its own star import brings) pass on; _private does not
    found = lint_in_project({"pkg/_utils.py": UTILS, "pkg/base.py": base, "pkg/model.py": model}, "pkg/model.py")
    assert found == [("CDL404", 6, 5)]


def test_an_api_that_reaches_a_file_only_through_a_star_import_is_reported():
    base = """
    import torch
    import os
    """
    model = """
    from .base import *


    def release():
        torch.cuda.empty_cache()
        return os.getcwd()
    """
    found = lint_in_project({"pkg/base.py": base, "pkg/model.py": model}, "pkg/model.py", select=("CDL202",))
    assert found == [("CDL202", 5, 5)]


def test_a_name_the_file_binds_itself_wins_over_the_star_import():
    base = """
    import torch
    """
    model = """
    from .base import *
    from . import portable as torch


    def release():
        torch.cuda.empty_cache()
    """
    found = lint_in_project({"pkg/base.py": base, "pkg/portable.py": "", "pkg/model.py": model}, "pkg/model.py", select=("CDL202",))
    assert found == []


def test_a_value_bound_after_the_import_in_a_nested_try_is_an_availability_test():
    assert lint(
        """
        HAS = False
        SOFTCAP = False
        if True:
            try:
                import flash_attn
                HAS = True
                SOFTCAP = flash_attn.__version__ >= "2.6.3"
            except ImportError:
                pass
        if HAS:
            from flash_attn import flash_attn_func
        if SOFTCAP:
            from flash_attn import flash_attn_varlen_func
        if not HAS:
            from flash_attn import bert_padding
        """
    ) == [("CDL404", 15, 5)]


def test_a_value_bound_before_the_import_is_no_test():
    assert lint(
        """
        HAS = False
        try:
            HAS = check_gpu()
            import flash_attn
        except ImportError:
            pass
        if HAS:
            from flash_attn import flash_attn_func
        """
    ) == [("CDL404", 8, 5)]


def test_a_try_inside_a_function_inside_an_if_defines_a_helper_test():
    assert lint(
        """
        import sys

        if sys.version_info >= (3, 8):
            def has_xformers():
                try:
                    import xformers
                    return xformers.__version__ >= "0.0.20"
                except ImportError:
                    return False

        if has_xformers():
            import xformers.ops
        import xformers.ops as ops
        """
    ) == [("CDL404", 13, 1)]
