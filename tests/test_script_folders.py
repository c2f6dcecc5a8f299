"""A script folder's files import the modules beside them by their bare names (Python puts the folder of
the script it runs on sys.path; pytest does the same for a tests folder without __init__.py). The semantic
model reads `from testing_utils import require_gpu` there as the project's tests/testing_utils.py, so a
guard helper or a skipping decorator beside the file counts as it does through a package import."""

import textwrap

from conftest import findings_of, triples

HELPERS = """
import unittest

import torch


def has_cuda():
    return torch.cuda.is_available()


def require_gpu(test_case):
    if not torch.cuda.is_available():
        return unittest.skip("needs a GPU")(test_case)
    return test_case
"""

USER = """
import torch
{imports}


@require_gpu
def test_cache():
    torch.cuda.empty_cache()


def step():
    if has_cuda():
        torch.cuda.synchronize()
    torch.cuda.synchronize()
"""


def lint(files, path):
    dedented = {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}
    text = dedented.pop(path)
    return triples(findings_of(text, path=path, select={"CDL201", "CDL202"}, project_files=dedented))


def test_a_tests_folder_without_init_imports_its_helpers_by_bare_name():
    for imports in ("from testing_utils import has_cuda, require_gpu",
                    "import testing_utils\nhas_cuda, require_gpu = testing_utils.has_cuda, testing_utils.require_gpu"):
        files = {"setup.py": "", "tests/testing_utils.py": HELPERS, "tests/test_step.py": USER.format(imports=imports)}
        found = lint(files, "tests/test_step.py")
        last = 13 + imports.count("\n")
        assert found == [("CDL201", last, 5)], imports


def test_a_nested_script_folder_and_a_package_beside_the_script():
    files = {
        "setup.py": "",
        "examples/vision/helpers/__init__.py": HELPERS,
        "examples/vision/train.py": USER.format(imports="from helpers import has_cuda, require_gpu"),
    }
    assert lint(files, "examples/vision/train.py") == [("CDL201", 13, 5)]


def test_a_package_module_never_imports_a_sibling_by_bare_name():
    # Inside a package, `from testing_utils import ...` is a top-level module, not the one beside the file:
    # nothing is known of it, so every call is reported.
    files = {
        "setup.py": "",
        "pkg/__init__.py": "",
        "pkg/testing_utils.py": HELPERS,
        "pkg/test_step.py": USER.format(imports="from testing_utils import has_cuda, require_gpu"),
    }
    assert lint(files, "pkg/test_step.py") == [("CDL202", 7, 5), ("CDL201", 12, 9), ("CDL201", 13, 5)]
