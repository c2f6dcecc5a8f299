"""`torch.set_default_dtype(torch.float64)` makes every floating tensor made after it float64: reported
where the dtype is written, through a name of the file or a module constant of another module of the
project (the index keeps `DTYPE = torch.float64`), once at a literal (not again as a float64 reference)."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch

torch.set_default_dtype(torch.float64)
DT = torch.float64


def setup(flag):
    torch.set_default_dtype(DT)
    torch.set_default_dtype(torch.float32)
    torch.set_default_dtype(d=torch.double)
'''


def lint(source: str, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL601"}, **kwargs))


def test_the_default_dtype_set_to_float64():
    assert lint(SOURCE) == [("CDL601", 3, 25), ("CDL601", 4, 6), ("CDL601", 10, 29)]


def test_through_a_constant_of_another_module():
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "",
             "pkg/dtypes.py": "import torch\n\nGLOBAL_DTYPE = torch.float64\nOTHER = torch.float32\n"}
    source = """
    import torch

    from .dtypes import GLOBAL_DTYPE, OTHER


    def init():
        torch.set_default_dtype(GLOBAL_DTYPE)
        torch.set_default_dtype(OTHER)
    """
    found = findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL601"}, project_files=files, path="pkg/state.py")
    assert triples(found) == [("CDL601", 7, 29)]
    assert "set in pkg/dtypes.py:3" in found[0].message
