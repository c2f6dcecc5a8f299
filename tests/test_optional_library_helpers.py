"""Other libraries' helpers that are true only where one library imports (rules/optional_code.toml
`library_queries`: transformers' is_flash_attn_2_available, diffusers' is_xformers_available, ...): an
import of that library under one runs only where it succeeds, in the file and through a helper of
another module of the project. (As with `importlib.util.find_spec`, the test guards the imports under it
whichever library it names.)"""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
from diffusers.utils import is_xformers_available
from transformers.utils import is_flash_attn_2_available

if is_flash_attn_2_available():
    from flash_attn import flash_attn_func

if is_xformers_available():
    import xformers.ops

from flash_attn import flash_attn_varlen_func
'''


def lint(source: str, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL404"}, **kwargs))


def test_imports_under_another_librarys_helper():
    # kept: the unguarded import (10)
    assert lint(SOURCE) == [("CDL404", 10, 1)]


def test_through_a_helper_of_the_project():
    helper = ("from transformers.utils.import_utils import is_flash_attn_2_available\n\n\n"
              "def use_flash():\n    return is_flash_attn_2_available()\n")
    source = """
    from pkg.env import use_flash

    if use_flash():
        from flash_attn import flash_attn_func
    """
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/env.py": helper}
    assert lint(source, project_files=files, path="pkg/attention.py") == []
