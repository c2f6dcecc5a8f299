"""GPU counts read from nvidia-smi: on a Mac the program cannot start, so a helper that returns a
falsy constant from its handler is truthy only off a Mac, in this file and through the project index."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

CHECKS = """
import subprocess


def cuda_device_count() -> int:
    try:
        output = subprocess.check_output(["nvidia-smi", "--query-gpu=count", "--format=csv"], encoding="utf-8")
        return int(output.strip().split("\\n")[0])
    except (subprocess.CalledProcessError, FileNotFoundError, ValueError):
        return 0


def cuda_is_available() -> bool:
    return cuda_device_count() > 0


def through_a_shell() -> int:
    try:
        output = subprocess.run("nvidia-smi -L", shell=True, capture_output=True, text=True).stdout
        return len(output.splitlines())
    except OSError:
        return 0


def maybe() -> int:
    try:
        if QUICK:
            output = subprocess.check_output(["nvidia-smi", "-L"], text=True)
        return 2
    except OSError:
        return 0


def other_program() -> int:
    try:
        return int(subprocess.check_output(["lspci", "-d", "10de:"]))
    except OSError:
        return 0
"""


def lint(source: str, project_files=None, path="example.py"):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL101"}, project_files=files, path=path))


def test_a_skip_on_a_constant_bound_to_an_nvidia_smi_count_of_another_module():
    init = "from pkg import checks\n\nCUDA_IS_AVAILABLE = checks.cuda_is_available()\nCOUNT = checks.cuda_device_count()\n"
    source = """
    import pytest
    from pkg import COUNT, CUDA_IS_AVAILABLE
    from pkg.checks import maybe, other_program, through_a_shell


    @pytest.mark.skipif(not CUDA_IS_AVAILABLE, reason="CUDA is not available")
    def test_a(model):
        model.to("cuda:0")


    @pytest.mark.skipif(COUNT < 1, reason="no GPU")
    def test_b(model):
        model.to("cuda:0")


    @pytest.mark.skipif(through_a_shell() == 0, reason="no GPU")
    def test_c(model):
        model.to("cuda:0")


    @pytest.mark.skipif(maybe() == 0, reason="no GPU")
    def test_d(model):
        model.to("cuda:0")


    @pytest.mark.skipif(other_program() == 0, reason="no GPU")
    def test_e(model):
        model.to("cuda:0")
    """
    files = {"pkg/checks.py": CHECKS, "pkg/__init__.py": init}
    # run() through a shell reports exit status 127 instead of raising; `maybe` may skip nvidia-smi;
    # lspci is no program a Mac lacks by its nature
    assert lint(source, files, path="tests/test_cuda.py") == [("CDL101", 18, 14), ("CDL101", 23, 14), ("CDL101", 28, 14)]


def test_a_helper_of_the_same_file():
    source = CHECKS + """

if cuda_is_available():
    DEVICE = "cuda:0"
    x.to(DEVICE)
if through_a_shell():
    y.to("cuda:0")
if maybe():
    y.to("cuda:0")
"""
    assert lint(source) == [("CDL101", 44, 10), ("CDL101", 46, 10)]
    assert lint(source, project_files={}) == [("CDL101", 44, 10), ("CDL101", 46, 10)]


def test_a_cuda_only_call_in_the_try_and_a_handler_that_returns_a_truthy_value():
    source = """
    import torch


    def has_gpu():
        try:
            torch.cuda.current_device()
            return True
        except RuntimeError:
            return False


    def names_a_gpu():
        try:
            name = torch.cuda.get_device_name(0)
        except RuntimeError:
            return "cpu"
        return name


    if has_gpu():
        x.to("cuda:0")
    if names_a_gpu():
        x.to("cuda:0")
    """
    # names_a_gpu: its handler says "cpu", which is true on a Mac too
    assert lint(source) == [("CDL101", 23, 10)]


def test_the_parameters_of_a_test_skipped_off_cuda_are_shielded_with_its_body():
    # mace's benchmark: `device: str = "cuda"` is read only when the skipped test runs. A default that
    # calls something runs where the function is defined, on a Mac too, so it stays reported.
    source = """
        import pytest
        import torch


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda is not available")
        def test_inference(size: int, device: str = "cuda"):
            torch.cuda.synchronize()
            return size, device


        def test_other(device: str = "cuda"):
            return device


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda is not available")
        def test_called(device=torch.device("cuda")):
            return device
        """
    found = triples(findings_of(textwrap.dedent(source).lstrip("\n"), path="tests/test_bench.py"))
    assert found == [("CDL108", 11, 30), ("CDL101", 16, 37)]
