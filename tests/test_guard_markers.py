"""Test markers whose definition is not in the tree: `RunIf(min_cuda_gpus=1)` imported from a
tests/conftest.py that the sdist leaves out. The catalog's marker keywords (rules/guards.toml,
from Lightning's _runif_reasons) say such a marker skips its test unless CUDA is there; a
definition the project ships is judged by what it does, never by the keyword."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

TESTS = """
import pytest
import torch
from tests.conftest import RunIf

GPUS = 2


@RunIf(min_cuda_gpus=1)
def test_one_gpu():
    torch.ones(1, device="cuda")


@RunIf(min_cuda_gpus=GPUS, standalone=True)
def test_two_gpus():
    torch.ones(1, device="cuda")


@RunIf(bf16_cuda=True)
def test_bf16():
    torch.ones(1, device="cuda")


@RunIf(min_cuda_gpus=0)
def test_no_gpu_needed():
    torch.ones(1, device="cuda")


@RunIf(dynamo=True)
def test_dynamo():
    torch.ones(1, device="cuda")


@pytest.mark.parametrize(
    "device",
    [
        torch.device("cpu"),
        pytest.param(torch.device("cuda"), marks=[pytest.mark.xfail(strict=False), RunIf(min_cuda_gpus=1)]),
        pytest.param(torch.device("cuda"), marks=RunIf(min_cuda_gpus=0)),
    ],
)
def test_params(device):
    pass
"""


def lint(source, project_files=None, path="tests/test_x.py"):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL101"}, project_files=files, path=path))


# Unskipped: test_no_gpu_needed (line 25), test_dynamo (line 30), the min_cuda_gpus=0 parameter (line 38).
UNSKIPPED = [("CDL101", 25, 26), ("CDL101", 30, 26), ("CDL101", 38, 35)]


def test_a_marker_from_a_module_the_project_does_not_ship_skips_off_cuda_by_its_keywords():
    assert lint(TESTS, project_files={}) == UNSKIPPED


def test_a_single_file_reads_the_marker_the_same_way():
    assert lint(TESTS) == UNSKIPPED


def test_a_shipped_definition_is_judged_by_what_it_does():
    never_skips = """
    import pytest


    def RunIf(**kwargs):
        return pytest.mark.skipif(False, reason="never")
    """
    found = lint(TESTS, project_files={"tests/__init__.py": "", "tests/conftest.py": never_skips})
    assert found == [
        ("CDL101", 10, 26), ("CDL101", 15, 26), ("CDL101", 20, 26), ("CDL101", 25, 26), ("CDL101", 30, 26),
        ("CDL101", 37, 35), ("CDL101", 38, 35),
    ]


def test_a_shipped_definition_that_skips_off_cuda_still_silences():
    skips = """
    import pytest
    import torch


    def RunIf(**kwargs):
        return pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
    """
    assert lint(TESTS, project_files={"tests/__init__.py": "", "tests/conftest.py": skips}) == []


def test_a_marker_defined_in_the_same_file_is_never_read_by_its_keywords():
    source = """
    import pytest
    import torch


    def RunIf(**kwargs):
        return pytest.mark.skipif(False, reason="never")


    @RunIf(min_cuda_gpus=1)
    def test_one_gpu():
        torch.ones(1, device="cuda")
    """
    assert lint(source) == [("CDL101", 11, 26)]


def test_a_keyword_whose_value_is_unknown_keeps_the_finding():
    source = """
    import os

    import torch
    from tests.conftest import RunIf


    @RunIf(min_cuda_gpus=int(os.environ["GPUS"]))
    def test_gpus():
        torch.ones(1, device="cuda")
    """
    assert lint(source) == [("CDL101", 9, 26)]


FORWARDING = """
import pytest
from lightning.fabric.utilities.testing import _runif_reasons


def RunIf(thunder=None, **kwargs):
    reasons, marker_kwargs = _runif_reasons(**kwargs)
    if thunder:
        reasons.append("Thunder")
    return pytest.mark.skipif(condition=len(reasons) > 0, reason="Requires", **marker_kwargs)
"""

SKIPPED_BY_A_SHIPPED_DEFINITION = [("CDL101", 25, 26), ("CDL101", 30, 26), ("CDL101", 38, 35)]


def test_a_shipped_definition_that_forwards_its_keywords_to_lightning_reads_them():
    files = {"tests/__init__.py": "", "tests/conftest.py": FORWARDING}
    assert lint(TESTS, project_files=files) == SKIPPED_BY_A_SHIPPED_DEFINITION


def test_a_definition_in_the_same_file_that_forwards_its_keywords_reads_them():
    source = """
    import pytest
    import torch
    from lightning.fabric.utilities.testing import _runif_reasons


    def RunIf(**kwargs):
        reasons, marker_kwargs = _runif_reasons(**kwargs)
        return pytest.mark.skipif(condition=len(reasons) > 0, reason="Requires", **marker_kwargs)


    @RunIf(min_cuda_gpus=1)
    def test_one_gpu():
        torch.ones(1, device="cuda")


    @RunIf(dynamo=True)
    def test_dynamo():
        torch.ones(1, device="cuda")
    """
    assert lint(source) == [("CDL101", 18, 26)]


def test_a_definition_that_forwards_something_else_or_returns_no_skip_is_judged_by_what_it_does():
    other = FORWARDING.replace("_runif_reasons(**kwargs)", "_runif_reasons(min_cuda_gpus=0)")
    no_skip = FORWARDING.replace("return pytest.mark.skipif(", "return pytest.mark.xfail(")
    for definition in (other, no_skip):
        found = lint(TESTS, project_files={"tests/__init__.py": "", "tests/conftest.py": definition})
        assert found == [
            ("CDL101", 10, 26), ("CDL101", 15, 26), ("CDL101", 20, 26), ("CDL101", 25, 26), ("CDL101", 30, 26),
            ("CDL101", 37, 35), ("CDL101", 38, 35),
        ]


SKIPPING_DECORATOR = """
import unittest

import pytest
import torch


def require_torch_gpu(test_case):
    if not torch.cuda.is_available():
        return unittest.skip("test requires GPU")(test_case)
    else:
        return test_case


def require_gpu_early(test_case):
    if not torch.cuda.is_available():
        return pytest.mark.skip(reason="GPU")(test_case)
    return test_case


def require_nothing(test_case):
    if torch.cuda.is_available():
        return unittest.skip("runs on CPU only")(test_case)
    return test_case


def not_on_rocm(test_case):
    if torch.version.hip:
        return unittest.skip("ROCm")(test_case)
    return test_case
"""

DECORATED = """
import unittest

import torch
from tests.testing_utils import require_gpu_early, require_nothing, require_torch_gpu, not_on_rocm


@require_torch_gpu
class OffloadTests(unittest.TestCase):
    def tearDown(self):
        torch.cuda.empty_cache()


@require_gpu_early
def test_early():
    torch.cuda.empty_cache()


@require_nothing
def test_cpu_only():
    torch.cuda.empty_cache()


@not_on_rocm
def test_tagged():
    torch.cuda.empty_cache()
"""


def lint_cache_calls(source, project_files=None):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    found = findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL202"}, project_files=files, path="tests/test_x.py")
    return triples(found)


def test_a_decorator_that_returns_a_plain_skip_off_cuda_and_the_test_elsewhere_silences():
    # The test comes back as it was only where CUDA is there (else branch, or after an early return);
    # require_nothing skips on CUDA hosts and keeps the test on a Mac; not_on_rocm keeps it on a Mac too.
    files = {"tests/__init__.py": "", "tests/testing_utils.py": SKIPPING_DECORATOR}
    assert lint_cache_calls(DECORATED, project_files=files) == [("CDL202", 20, 5), ("CDL202", 25, 5)]


def test_the_same_decorators_in_the_same_file():
    source = SKIPPING_DECORATOR + DECORATED.replace(
        "from tests.testing_utils import require_gpu_early, require_nothing, require_torch_gpu, not_on_rocm\n", ""
    )
    lines = textwrap.dedent(source).lstrip("\n").splitlines()
    cpu_only, tagged = lines.index("def test_cpu_only():") + 2, lines.index("def test_tagged():") + 2
    assert lint_cache_calls(source) == [("CDL202", cpu_only, 5), ("CDL202", tagged, 5)]


def test_a_fixture_only_skipped_tests_request_is_never_built_on_a_mac():
    # curated-transformers: model fixtures on cuda:0 that only GPU tests request; pytest builds a fixture
    # for the tests that run
    source = textwrap.dedent(
        """
        import pytest
        import torch

        needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")


        @pytest.fixture(scope="module")
        def generator():
            return torch.ones(2, device=torch.device("cuda", index=0))


        @pytest.fixture
        def shared():
            return torch.ones(2).cuda()


        @needs_cuda
        def test_generate(generator, shared):
            pass


        class TestGreedy:
            @needs_cuda
            def test_greedy(self, generator):
                pass


        def test_cpu(shared):
            pass
        """
    ).lstrip("\n")
    assert triples(findings_of(source, path="tests/test_generation.py", select={"CDL101", "CDL102"})) == [("CDL102", 14, 26)]


def test_a_skip_unless_an_opt_in_flag_whose_reason_needs_a_gpu():
    # curated-transformers: `GPU_TESTS_ENABLED = False`, which an opt-in pytest plugin sets; the reason says GPU
    source = textwrap.dedent(
        """
        import os

        import pytest
        import torch

        GPU_TESTS_ENABLED = False
        if os.environ.get("GPU_TESTS"):
            GPU_TESTS_ENABLED = True


        @pytest.mark.skipif(not GPU_TESTS_ENABLED, reason="requires GPU")
        def test_gpu():
            torch.ones(2).cuda()


        @pytest.mark.skipif(not GPU_TESTS_ENABLED, reason="slow")
        def test_slow():
            torch.ones(2).cuda()
        """
    ).lstrip("\n")
    assert triples(findings_of(source, path="tests/test_generation.py", select={"CDL102"})) == [("CDL102", 18, 19)]
