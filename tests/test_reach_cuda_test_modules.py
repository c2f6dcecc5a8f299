"""A test module that cannot load on a Mac (it imports a CUDA-only library, itself or through the
project) tests CUDA code: what it imports is reached only off a Mac, as if under a guard. A project
module that only such tests and `try: ... except ImportError:` imports is an optional CUDA backend:
its own import of the library is no finding (solo-learn's DALI loaders). One plain import elsewhere, and
the import is reported again."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

INIT = """
try:
    from pkg import dali_loader
except ImportError:
    dali_loader = None
"""

LOADER = """
import nvidia.dali.fn as fn


def pipeline(files):
    return fn.readers.file(files=files)
"""

TEST = """
from pkg.dali_loader import pipeline


def test_pipeline():
    assert pipeline([]) is not None
"""

TRAIN = """
from pkg.dali_loader import pipeline


def main(files):
    return pipeline(files)
"""


def lint(extra=None):
    files = {"setup.py": SETUP, "pkg/__init__.py": INIT, "tests/test_dali.py": TEST, **(extra or {})}
    files = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    return triples(findings_of(textwrap.dedent(LOADER).lstrip("\n"), path="pkg/dali_loader.py", project_files=files,
                               select={"CDL404"}))


def test_an_optional_backend_only_cuda_tests_import_is_not_reported():
    assert lint() == []


def test_a_plain_import_elsewhere_makes_it_a_finding():
    assert lint({"pkg/train.py": TRAIN}) == [("CDL404", 1, 1)]
