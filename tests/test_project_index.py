"""The project index: facts of the whole repository that no single file shows."""

import json
import shutil
from pathlib import Path

from conftest import FIXTURES, run_cli
from cudalint.config import Settings
from cudalint.project.index import INDEX_VERSION
from cudalint.runner import project_index


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "project"
    shutil.copytree(FIXTURES / "project", target)
    return target


def _findings(project: Path, *args):
    result = run_cli("check", "--format", "json", *args, ".", cwd=project)
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def test_cross_file_findings_with_related_locations(tmp_path):
    project = _copy(tmp_path)
    data = _findings(project)
    assert [(d["path"], d["code"], d["line"], d["column"]) for d in data] == [
        ("mypkg/kernels/layer_norm.py", "CDL404", 1, 1),  # import triton: right
        ("mypkg/model.py", "CDL406", 1, 1),  # the extension setup.py builds
        ("mypkg/model.py", "CDL407", 2, 1),  # importing the module imports triton
        # `import mypkg` inside mypkg itself: no finding (the project's own package)
        ("sample.py", "CDL113", 3, 9),  # takes the "cuda" default of utils.get_batch
        ("setup.py", "CDL401", 4, 16),
        ("utils.py", "CDL108", 4, 31),  # the default itself, once
        # train.py: has_cuda() from lib/env.py is a guard: no finding
    ]
    by_code = {d["code"]: d for d in data}
    assert by_code["CDL406"]["related"] == [
        {"path": "setup.py", "line": 4, "column": 30, "end_line": 4, "end_column": 30, "message": "fused_ops_cuda is built here"}
    ]
    assert by_code["CDL113"]["related"][0]["path"] == "utils.py"
    assert (by_code["CDL113"]["related"][0]["line"], by_code["CDL113"]["related"][0]["column"]) == (4, 31)
    assert "mypkg/model.py → mypkg/kernels/layer_norm.py → triton" in by_code["CDL407"]["message"]


def test_sarif_carries_related_locations(tmp_path):
    project = _copy(tmp_path)
    result = run_cli("check", "--format", "sarif", ".", cwd=project)
    sarif = json.loads(result.stdout)
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    [related] = results["CDL406"]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("setup.py")
    assert related["physicalLocation"]["region"]["startLine"] == 4


def test_a_guard_helper_in_another_module_silences(tmp_path):
    project = _copy(tmp_path)
    (project / "lib" / "env.py").write_text("def has_cuda():\n    return True\n", encoding="utf-8")
    codes = [(d["path"], d["code"]) for d in _findings(project)]
    assert ("train.py", "CDL201") in codes  # no longer a guard: the call is reported


def test_subproject_roots_resolve_their_own_imports(tmp_path):
    _copy(tmp_path)
    # Linted from the folder above: the project's own setup.py makes its folder an import root.
    result = run_cli("check", "--format", "json", "project", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert ("project/mypkg/model.py", "CDL407") in [(d["path"], d["code"]) for d in data]
    assert ("project/train.py", "CDL201") not in [(d["path"], d["code"]) for d in data]


def test_index_is_cached_and_incremental(tmp_path):
    project = _copy(tmp_path)
    settings = Settings(select=frozenset({"CDL101"}), root=project)
    first = project_index(settings, cache=True)
    cache_file = project / ".cudalint_cache" / f"project-index-v{INDEX_VERSION}.data"
    assert cache_file.is_file()
    stored = json.loads(cache_file.read_text(encoding="utf-8"))
    assert "mypkg/model.py" in stored
    # An edit that changes no fact keeps the digest, so cached per-file results stay valid.
    (project / "sample.py").write_text((project / "sample.py").read_text() + "# a comment\n", encoding="utf-8")
    second = project_index(settings, cache=True)
    assert second.facts_digest == first.facts_digest
    # An edit that changes a fact other files read changes it.
    (project / "lib" / "env.py").write_text("def has_cuda():\n    return True\n", encoding="utf-8")
    third = project_index(settings, cache=True)
    assert third.facts_digest != first.facts_digest
    assert third.guard_of("lib.env.has_cuda") is None


def test_cached_result_is_invalid_when_an_index_fact_changes(tmp_path):
    project = _copy(tmp_path)
    result = run_cli("check", "--format", "json", "train.py", cwd=project)
    assert result.returncode == 0 and json.loads(result.stdout) == []
    (project / "lib" / "env.py").write_text("def has_cuda():\n    return True\n", encoding="utf-8")
    result = run_cli("check", "--format", "json", "train.py", cwd=project)
    assert [(d["code"], d["line"]) for d in json.loads(result.stdout)] == [("CDL201", 6)]


def test_flake8_plugin_sees_the_project(tmp_path):
    import subprocess
    import sys

    project = _copy(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=CDL", "sample.py", "train.py"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    assert result.stdout.splitlines() == [
        'sample.py:3:9: CDL113 get_batch() takes its device="cuda" default here (utils.py:4): pass the selected device'
    ]


def test_test_helpers_and_guard_constants_from_other_modules(tmp_path):
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n", encoding="utf-8")
    (project / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "pkg" / "testing.py").write_text(
        "import unittest\nimport torch\n\n"
        "CUDA_IS_AVAILABLE = torch.cuda.is_available()\n\n\n"
        "def is_cuda_available():\n    available = torch.cuda.is_available()\n    return available\n\n\n"
        "def require_multi_gpu(test_case):\n"
        "    return unittest.skipUnless(torch.cuda.device_count() > 1, 'needs GPUs')(test_case)\n",
        encoding="utf-8",
    )
    (project / "test_it.py").write_text(
        "import pytest\nimport torch\n\n"
        "from pkg.testing import CUDA_IS_AVAILABLE, is_cuda_available, require_multi_gpu\n\n\n"
        "@require_multi_gpu\ndef test_a():\n    torch.cuda.empty_cache()\n\n\n"
        "@pytest.mark.skipif(not CUDA_IS_AVAILABLE, reason='CUDA')\ndef test_b():\n    torch.cuda.synchronize()\n\n\n"
        "def test_c():\n    if is_cuda_available():\n        torch.cuda.synchronize()\n    torch.cuda.empty_cache()\n",
        encoding="utf-8",
    )
    result = run_cli("check", "--format", "json", ".", cwd=project)
    assert [(d["path"], d["code"], d["line"]) for d in json.loads(result.stdout)] == [("test_it.py", "CDL202", 20)]


def _places(project: Path, files) -> list:
    """(path, code, line) of each finding of a `check` of the project after writing `files` into it."""
    for name, text in files.items():
        (project / name).write_text(text, encoding="utf-8")
    result = run_cli("check", "--format", "json", ".", cwd=project)
    return [(d["path"], d["code"], d["line"]) for d in json.loads(result.stdout)]


def test_import_chain_is_reported_once_per_boundary(tmp_path):
    project = tmp_path / "proj"
    (project / "pkg" / "ops").mkdir(parents=True)
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n", encoding="utf-8")
    files = {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "",
        "pkg/ops/kernel.py": "import triton\n",  # CDL404 here
        "pkg/layer.py": "from pkg.ops import kernel\n",  # the boundary: CDL407 here only
        "pkg/model.py": "from pkg import layer\n",  # above the boundary: nothing more
        "pkg/fused.py": "import triton\nfrom pkg.ops import kernel\n",  # imports triton itself: CDL404 only
    }
    assert _places(project, files) == [
        ("pkg/fused.py", "CDL404", 1),
        ("pkg/layer.py", "CDL407", 1),
        ("pkg/ops/kernel.py", "CDL404", 1),
    ]


def test_imports_after_one_that_runs_a_failing_package_init_are_not_reported(tmp_path):
    # `from pkg.util import X` runs pkg/__init__.py, whose eager import ends in triton: on a Mac nothing the
    # test imports after it is reached, and pkg/__init__.py is the place to fix (reported there). A kernel
    # module imported first, which fails by itself, is a place of its own: what follows it still counts.
    project = tmp_path / "proj"
    for folder in ("pkg/ops", "lib/ops", "tests"):
        (project / folder).mkdir(parents=True)
    (project / "setup.py").write_text("from setuptools import setup\nsetup(name='pkg')\n", encoding="utf-8")
    files = {
        "pkg/__init__.py": "from pkg import layer\n",  # the top package: CDL407
        "pkg/util.py": "X = 1\n",
        "pkg/ops/__init__.py": "",
        "pkg/ops/kernel.py": "import triton\n",  # CDL404
        "pkg/layer.py": "from pkg.ops import kernel\n",  # CDL407 (inside pkg: its __init__ ran before it)
        "lib/__init__.py": "",
        "lib/ops/__init__.py": "",
        "lib/ops/kernel.py": "import triton\n",  # CDL404
        "lib/ops/other.py": "import triton\n",  # CDL404
        "tests/test_a.py": "from pkg.util import X\nfrom lib.ops import kernel\n",  # line 2 is never reached
        "tests/test_b.py": "from lib.ops import other\nfrom lib.ops import kernel\n",  # two places to fix
    }
    assert _places(project, files) == [
        ("lib/ops/kernel.py", "CDL404", 1),
        ("lib/ops/other.py", "CDL404", 1),
        ("pkg/__init__.py", "CDL407", 1),
        ("pkg/layer.py", "CDL407", 1),
        ("pkg/ops/kernel.py", "CDL404", 1),
        ("tests/test_b.py", "CDL407", 1),
        ("tests/test_b.py", "CDL407", 2),
    ]


def test_each_subtree_gets_the_target_of_its_nearest_manifest(tmp_path):
    project = tmp_path / "mono"
    for folder in ("examples/old", "examples/new"):
        (project / folder).mkdir(parents=True)
        (project / folder / "run.py").write_text("import torch\nx = torch.ones(3).to(0)\n", encoding="utf-8")
    (project / "requirements.txt").write_text("torch>=2.9\n", encoding="utf-8")
    (project / "examples" / "old" / "requirements.txt").write_text("torch==2.2.0\n", encoding="utf-8")
    result = run_cli("check", ".", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    # An integer device index means cuda:N only before torch 2.5: only the old example pins such a release.
    assert lines[0].startswith("examples/old/run.py:2:22: CDL101 ")
    assert lines[-1].endswith("; examples/old/: torch 2.2.0 (from examples/old/requirements.txt).")
    assert len(lines) == 2


def test_a_guarded_extension_import_is_reported_at_the_first_call_without_fallback(tmp_path):
    project = _copy(tmp_path)
    (project / "mypkg" / "model.py").write_text(
        "try:\n"
        "    import fused_ops_cuda\n"
        "except ImportError:\n"
        "    fused_ops_cuda = None\n"
        "\n"
        "\n"
        "def forward(x):\n"
        "    return fused_ops_cuda.fwd(x)\n"  # line 8: no fallback on a Mac
        "\n"
        "\n"
        "def backward(x):\n"
        "    return fused_ops_cuda.bwd(x)\n"  # the same extension: reported once
        "\n"
        "\n"
        "def checked(x):\n"
        "    if fused_ops_cuda is None:\n"
        "        return x * 2\n"
        "    return fused_ops_cuda.fwd(x)\n",  # tested first: a fallback
        encoding="utf-8",
    )
    (project / "mypkg" / "other.py").write_text(
        "try:\n"
        "    from fused_ops_cuda import fwd\n"
        "except ImportError:\n"
        "    from mypkg.reference import fwd\n"  # a fallback implementation: no finding
        "\n"
        "\n"
        "def forward(x):\n"
        "    return fwd(x)\n"
        "\n"
        "\n"
        "try:\n"
        "    import fused_ops_cuda as ops\n"
        "    HAVE_OPS = True\n"
        "except ImportError:\n"
        "    HAVE_OPS = False\n"
        "\n"
        "\n"
        "def fast(x):\n"
        "    return ops.fwd(x) if HAVE_OPS else x\n",  # a conditional expression: a fallback
        encoding="utf-8",
    )
    data = _findings(project)
    calls = [(d["path"], d["code"], d["line"], d["column"]) for d in data if d["path"].startswith("mypkg/") and d["code"] == "CDL406"]
    assert calls == [("mypkg/model.py", "CDL406", 8, 12)]
    [finding] = [d for d in data if d["code"] == "CDL406"]
    assert finding["message"].startswith("fused_ops_cuda.fwd() calls fused_ops_cuda, a CUDA extension this project builds (setup.py:4)")
    assert finding["related"][0]["path"] == "setup.py"


def test_a_helper_of_another_module_that_imports_torch_inside_it_is_a_guard(tmp_path):
    """layoutparser's `is_torch_cuda_available()`: `import torch` inside the function, the CUDA query in
    one arm and `return False` in the other. Another module's `if is_torch_cuda_available():` guards the
    "cuda" it binds, and its `else: device = "cpu"` is the CPU fallback CDL104 reports."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "file_utils.py").write_text(
        "import importlib.util\n\n_torch = importlib.util.find_spec('torch') is not None\n\n\n"
        "def is_torch_cuda_available():\n    if _torch:\n        import torch\n\n"
        "        return torch.cuda.is_available()\n    else:\n        return False\n",
        encoding="utf-8",
    )
    (package / "model.py").write_text(
        "import torch\n\nfrom .file_utils import is_torch_cuda_available\n\n\n"
        "class Model:\n    def __init__(self, device=None):\n        if is_torch_cuda_available():\n"
        "            if device is None:\n                device = 'cuda'\n        else:\n            device = 'cpu'\n"
        "        self.device = device\n\n    def run(self):\n        return torch.zeros(1, device=self.device)\n",
        encoding="utf-8",
    )
    found = [(d["path"], d["code"], d["line"], d["column"]) for d in _findings(tmp_path)]
    assert found == [("pkg/model.py", "CDL104", 8, 9)]
