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


def test_the_index_reads_a_script_folders_sibling_imports_too():
    # testing_utils's decorator skips by a helper of tests/common.py, imported by its bare name: the index
    # resolves that import as the semantic model does, so the decorator is known to skip off CUDA.
    files = {
        "setup.py": "",
        "tests/common.py": "import torch\n\n\ndef has_cuda():\n    return torch.cuda.is_available()\n",
        "tests/testing_utils.py": """
        import unittest

        import common
        from common import has_cuda


        def require_gpu(test_case):
            return unittest.skipUnless(has_cuda(), "needs a GPU")(test_case)


        def require_gpu_too(test_case):
            return unittest.skipUnless(common.has_cuda(), "needs a GPU")(test_case)
        """,
        "tests/test_step.py": """
        import torch
        from testing_utils import require_gpu, require_gpu_too


        @require_gpu
        def test_cache():
            torch.cuda.empty_cache()


        @require_gpu_too
        def test_sync():
            torch.cuda.synchronize()


        def test_plain():
            torch.cuda.synchronize()
        """,
    }
    assert lint(files, "tests/test_step.py") == [("CDL201", 16, 5)]


def test_a_new_sibling_changes_what_the_stored_index_says(tmp_path):
    from cudalint.config import Settings
    from cudalint.runner import project_index

    (tmp_path / "setup.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("from common import has_cuda\n")
    settings = Settings(select=frozenset(), root=tmp_path)
    first = project_index(settings, cache=True)
    assert first.facts["tests/test_a.py"].imports == [("common", 1, 1, False), ("common.has_cuda", 1, 1, False)]
    (tmp_path / "tests" / "common.py").write_text("def has_cuda():\n    return False\n")
    second = project_index(settings, cache=True)
    assert second.facts["tests/test_a.py"].imports == [("tests.common", 1, 1, False), ("tests.common.has_cuda", 1, 1, False)]
