"""What blind rounds 138 to 142 showed: a manifest beside a subproject's code sets only that folder's target."""

import textwrap

from conftest import findings_of, lint_tree, load_catalog, write_tree


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


def run_tree(root, monkeypatch, files):
    from cudalint import runner
    from cudalint.config import resolve

    write_tree(root, files)
    monkeypatch.chdir(root)
    return runner.run(["."], resolve(load_catalog(), config_path=None), jobs=1)


SPECTRAL = "import torch\n\n\ndef spectral(x, device):\n    return torch.fft.rfftn(x.to(device), dim=(0,))\n"
OLD_ENV = "name: sub\ndependencies:\n  - pip:\n      - torch==2.1.1\n"


def test_a_subprojects_manifest_beside_its_code_is_not_the_projects_target(tmp_path, monkeypatch):
    result = run_tree(tmp_path / "a", monkeypatch, {
        "pkg/__init__.py": "", "pkg/models/net.py": SPECTRAL,
        "pkg/sub/environment.yml": OLD_ENV, "pkg/sub/dMC/train.py": "import torch\n",
        "pkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: pkg\nVersion: 0.1\nRequires-Dist: torch<3,>=2.3\n",
    })
    assert [(f.path, f.code) for f in result.findings] == []
    assert result.torch_version_source == "the newest release torch<3,>=2.3 in pkg-0.1.dist-info/METADATA allows"
    assert result.targets == {"pkg/sub": "torch 2.1.1 (from pkg/sub/environment.yml)"}


def test_a_folder_of_requirement_files_speaks_for_the_project(tmp_path, monkeypatch):
    result = run_tree(tmp_path / "b", monkeypatch, {
        "pkg/__init__.py": "", "pkg/net.py": SPECTRAL, "requirements/base.txt": "torch==2.1.1\n",
    })
    assert [(f.path, f.code, f.line, f.column) for f in result.findings] == [("pkg/net.py", "CDL604", 5, 12)]
    assert result.torch_version_source == "from requirements/base.txt"


def test_a_module_its_package_imports_only_under_an_availability_test_is_optional(tmp_path, monkeypatch):
    files = {
        "pkg/__init__.py": "import importlib.util\n\nif importlib.util.find_spec('megatron') is not None:\n    import pkg.mega\n",
        "pkg/mega/__init__.py": "from megatron.core import mpu\n\nfrom pkg.mega.gpt import GPT\n",
        "pkg/mega/gpt.py": "from megatron.core import tensor_parallel\n\nfrom pkg.mega import mpu\n\n\nclass GPT:\n    pass\n",
        "pkg/cli/__init__.py": "try:\n    from pkg.cli.mega_task import Task\nexcept ImportError:\n    Task = None\n",
        "pkg/cli/mega_task.py": "from pkg.mega import GPT\n\n\nclass Task(GPT):\n    pass\n",
    }
    assert lint_tree(tmp_path / "a", monkeypatch, files) == []
    files["pkg/plain.py"] = "from pkg.mega.gpt import GPT\n"  # an unconditional import makes the library a requirement
    assert lint_tree(tmp_path / "b", monkeypatch, files) == [
        ("pkg/mega/__init__.py", "CDL404", 1, 1),
        ("pkg/mega/gpt.py", "CDL404", 1, 1),
        ("pkg/plain.py", "CDL407", 1, 1),
    ]


def test_a_module_under_a_package_whose_init_fails_through_another_module_is_fixed_there(tmp_path, monkeypatch):
    assert lint_tree(tmp_path, monkeypatch, {
        "pkg/__init__.py": "",
        "pkg/_features.py": "import tensorrt\n\nE = 1\n",
        "pkg/sub/__init__.py": "from pkg._features import E\n",
        "pkg/sub/mod.py": "from pkg._features import E\n",  # pkg/sub/__init__ ran first and failed
        "pkg/other.py": "from pkg._features import E\n",
    }) == [
        ("pkg/_features.py", "CDL404", 1, 1),
        ("pkg/sub/__init__.py", "CDL407", 1, 1),
    ]


def test_an_import_under_a_test_of_the_projects_own_code_is_no_optional_import(tmp_path, monkeypatch):
    assert lint_tree(tmp_path, monkeypatch, {
        "pkg/__init__.py": "import sys\n\nif sys.version_info >= (3, 8):\n    from pkg import fast\n",
        "pkg/fast.py": "import triton\n",
    }) == [("pkg/__init__.py", "CDL407", 4, 5), ("pkg/fast.py", "CDL404", 1, 1)]


def test_a_device_type_among_gpu_labels_no_mac_has_is_a_guard():
    assert lint(
        """
        import torch


        def get_torch_device(device_type: str):
            if device_type in ("cuda", "rocm"):
                return torch.device("cuda:0")
            elif device_type == "mps":
                return torch.device("mps")
            return torch.device("cpu")


        def plain(device_type: str):
            if device_type in ("gpu", "rocm"):
                return torch.device("cuda:0")
            return torch.device("cpu")
        """,
        select=["CDL101"],
    ) == [("CDL101", 14, 29)]  # "gpu" is a label a Mac's user may give too


SELECT_DEVICE = ('import torch\n\nif __name__ == "__main__":\n    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
                 '    model = torch.nn.Linear(2, 2).to(device)\n')


def test_a_test_py_that_holds_no_tests_is_a_program(tmp_path, monkeypatch):
    unittest_case = "import unittest\n\nimport torch\n\n\nclass TestSum(unittest.TestCase):\n    def test_sum(self):\n" \
                    "        device = 'cuda' if torch.cuda.is_available() else 'cpu'\n        self.assertEqual(torch.ones(2, device=device).sum(), 2)\n"
    assert lint_tree(tmp_path, monkeypatch, {
        "scripts/train.py": SELECT_DEVICE,
        "scripts/test.py": SELECT_DEVICE,  # the evaluation program beside train.py
        "pkg/test.py": unittest_case,
        "tests/test.py": SELECT_DEVICE,  # in a test folder: the suite's
    }) == [
        ("scripts/test.py", "CDL104", 4, 27),
        ("scripts/train.py", "CDL104", 4, 27),
    ]


def test_batchgenerators_augmenters_pin_only_where_cuda_is():
    assert lint(
        """
        from batchgenerators.dataloading import MultiThreadedAugmenter
        from batchgenerators.dataloading.nondet_multi_threaded_augmenter import NonDetMultiThreadedAugmenter
        from torch.utils.data import DataLoader


        def loaders(dl, transforms):
            train = MultiThreadedAugmenter(dl, transforms, 4, 2, pin_memory=True)
            val = NonDetMultiThreadedAugmenter(dl, transforms, 2, pin_memory=True)
            return train, val, DataLoader(dl, pin_memory=True)
        """,
        select=["CDL301"],
    ) == [("CDL301", 9, 39)]


def test_a_numba_cuda_kernel_launch_needs_the_driver():
    assert lint(
        """
        import numpy as np
        from numba import cuda


        @cuda.jit
        def add_one(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1


        @cuda.jit("void(float32[:])")
        def eager(a):
            pass


        @cuda.jit(device=True)
        def helper(a):
            return a


        def run(x):
            add_one[1, 32](np.asarray(x))
            eager[1, 32](np.asarray(x))  # reported where it compiles, at its decorator
            helper(np.asarray(x))
            if cuda.is_available():
                add_one[1, 32](np.asarray(x))
        """,
        select=["CDL222"],
    ) == [("CDL222", 12, 11), ("CDL222", 23, 5)]


def test_a_plain_fixtures_returned_device_is_what_its_tests_take(tmp_path, monkeypatch):
    test = (
        "import pytest\nimport torch\n\n\n@pytest.fixture\ndef device():\n"
        "    return torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "@pytest.fixture\ndef gpu():\n    yield 'cuda'\n\n\n"
        "def test_sum(device):\n    v = torch.tensor([1.0, 2.0], device=device, dtype=torch.float64)\n    assert v.sum() == 3\n\n\n"
        "def test_gpu(gpu):\n    assert torch.ones(2, device=gpu).sum() == 2\n"
    )
    assert lint_tree(tmp_path, monkeypatch, {"tests/test_vals.py": test}) == [("tests/test_vals.py", "CDL101", 12, 11)]


def test_torch_normal_given_a_size_is_made_on_the_host():
    assert lint(
        """
        import torch


        def noise(mean, std):
            a = torch.normal(0, 1, size=(3, 2), dtype=torch.double)
            b = torch.normal(0.0, 1.0, (3,), dtype=torch.float64)
            return a, b, torch.normal(mean.double(), std)
        """,
        select=["CDL601", "CDL602"],
    ) == [("CDL602", 7, 36)]


def test_is_cuda_asserted_false_by_comparison_holds_on_a_mac():
    assert lint(
        """
        import torch


        def check(x):
            assert x.is_cuda is False
            assert x.is_cuda == False and x.ndim == 2
            assert x.is_cuda is True
        """,
        select=["CDL103"],
    ) == [("CDL103", 7, 12)]


def test_a_test_module_whose_first_failing_import_is_the_projects_module_reports_it(tmp_path, monkeypatch):
    assert lint_tree(tmp_path, monkeypatch, {
        "pkg/__init__.py": "",
        "pkg/kernels.py": "import cupy as cp\n\n\ndef run(x):\n    return cp.asarray(x)\n",
        "tests/test_run.py": "import pytest\nfrom pkg.kernels import run\nimport cupy as cp\n\n\ndef test_run():\n    assert run([1]) is not None\n",
    }) == [("pkg/kernels.py", "CDL404", 1, 1), ("tests/test_run.py", "CDL407", 2, 1)]


def test_a_cmake_configuration_a_package_installs_is_not_the_projects_build():
    from cudalint.manifests import manifest_kind

    assert [manifest_kind(path) for path in (
        "CMakeLists.txt", "cmake/FindTorch.cmake", "src/kernels/CMakeLists.txt",
        "cuda/bench/lib/cmake/nvbench/nvbench-CUDA-language.cmake", "pkg/share/cmake/Foo/FooConfig.cmake",
        "pkg/lib64/cmake/Bar/BarTargets.cmake",
    )] == ["cmake", "cmake", "cmake", None, None, None]


def test_python_numbers_chosen_by_a_conditional_expression_are_host_data():
    assert lint(
        """
        import torch


        def compute(n: int, secs: float, x):
            window = n / secs if secs else 0.0
            moved = x.sum() if secs else 0.0
            return torch.tensor(window, dtype=torch.double), torch.tensor(moved, dtype=torch.double)
        """,
        select=["CDL601"],
    ) == [("CDL601", 7, 80)]
