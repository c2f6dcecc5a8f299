"""Reachability through the project index: a class or function that the project uses only
where the host is not a Mac is judged as if its body were under a CUDA guard."""

import json
import textwrap

from conftest import findings_of, run_cli, triples
from cudalint.config import Settings
from cudalint.project.index import INDEX_VERSION
from cudalint.runner import project_index

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"

ACCELERATORS = """
import torch


class CudaAccelerator:
    def synchronize(self):
        torch.cuda.synchronize()


class CpuAccelerator:
    def synchronize(self):
        torch.cuda.synchronize()


def free():
    torch.cuda.empty_cache()
"""

CHOOSER = """
import os


def get_accelerator():
    name = os.environ.get("ACCELERATOR", "cpu")
    if name == "cuda":
        from .accelerators import CudaAccelerator, free

        free()
        return CudaAccelerator()
    from .accelerators import CpuAccelerator

    return CpuAccelerator()
"""


def lint(files, path="pkg/accelerators.py"):
    files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}}
    text = files.pop(path)
    return triples(findings_of(text, path=path, project_files=files))


def index_of(tmp_path, files):
    for name, text in {"setup.py": SETUP, "pkg/__init__.py": "", **files}.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return project_index(Settings(select=frozenset(), root=tmp_path))


def test_a_class_constructed_only_under_a_cuda_test_is_cuda_only():
    # CudaAccelerator and free() are used only under `if name == "cuda":`; CpuAccelerator everywhere.
    assert lint({"pkg/accelerators.py": ACCELERATORS, "pkg/chooser.py": CHOOSER}) == [("CDL201", 11, 9)]


def test_with_no_call_site_nothing_is_cuda_only():
    assert lint({"pkg/accelerators.py": ACCELERATORS}) == [("CDL201", 6, 9), ("CDL201", 11, 9), ("CDL202", 15, 5)]


def test_one_unguarded_call_anywhere_keeps_the_findings():
    script = "from pkg.accelerators import CudaAccelerator\n\nCudaAccelerator().synchronize()\n"
    found = lint({"pkg/accelerators.py": ACCELERATORS, "pkg/chooser.py": CHOOSER, "bench.py": script})
    assert found == [("CDL201", 6, 9), ("CDL201", 11, 9)]


def test_names_that_escape_are_never_cuda_only():
    escapes = {
        "in __all__": '__all__ = ["CudaAccelerator", "free"]\n',
        "stored as a value": "from pkg.accelerators import CudaAccelerator, free\n\nREGISTRY = {'cuda': CudaAccelerator, 'free': free}\n",
        "subclassed and passed": (
            "from pkg.accelerators import CudaAccelerator, free\n\n\n"
            "class Mine(CudaAccelerator):\n    pass\n\n\nimport atexit\natexit.register(free)\n"
        ),
        "reached through an attribute": "from pkg import accelerators\n\nx = accelerators.CudaAccelerator.synchronize\ny = accelerators.free.__name__\n",
    }
    for why, text in escapes.items():
        files = {"pkg/accelerators.py": ACCELERATORS, "pkg/chooser.py": CHOOSER, "pkg/other.py": text}
        if why == "in __all__":
            files = {"pkg/accelerators.py": ACCELERATORS + "\n\n" + text, "pkg/chooser.py": CHOOSER}
        found = lint(files)
        assert found[:1] == [("CDL201", 6, 9)] and ("CDL202", 15, 5) in found, why


def test_reachability_is_transitive_through_cuda_only_code():
    helpers = """
    import torch


    def warm_up():
        torch.cuda.synchronize()


    def recurse(n):
        torch.cuda.empty_cache()
        if n:
            recurse(n - 1)
    """
    accelerators = ACCELERATORS.replace(
        "    def synchronize(self):\n        torch.cuda.synchronize()\n",
        "    def synchronize(self):\n        from .helpers import recurse, warm_up\n\n        warm_up()\n        recurse(2)\n",
        1,
    )
    files = {"pkg/accelerators.py": accelerators, "pkg/chooser.py": CHOOSER, "pkg/helpers.py": helpers}
    assert lint(files, "pkg/helpers.py") == []  # called only from CudaAccelerator (and itself)
    files["pkg/chooser.py"] = CHOOSER.replace('    if name == "cuda":', "    if name:")
    assert lint(files, "pkg/helpers.py") == [("CDL201", 5, 5), ("CDL202", 9, 5)]


def test_guards_the_index_understands(tmp_path):
    caller = """
    import sys

    import torch
    from pkg.impl import a, b, c, d, e, f, g


    def run(kind, device):
        if not torch.cuda.is_available():
            return
        a()


    def pick(kind):
        if sys.platform == "linux":
            b()
        x = torch.cuda.device_count() > 0 and c()
        y = d() if kind in ("cuda", "cuda:0") else None
        if kind != "cuda":
            e()
        else:
            f()
        return x, y


    @torch.no_grad()
    def never(kind):
        if sys.platform == "darwin":
            g()
    """
    impl = "".join(f"def {name}():\n    pass\n\n\n" for name in "abcdefg")
    index = index_of(tmp_path, {"pkg/impl.py": impl, "pkg/caller.py": caller})
    assert index.cuda_only == {f"pkg.impl.{name}" for name in "abcdf"}


def test_skip_decorators_of_the_test_that_calls(tmp_path):
    files = {
        "pkg/testing.py": (
            "import unittest\nimport torch\n\n\n"
            "def require_cuda(test_case):\n    return unittest.skipUnless(torch.cuda.is_available(), 'CUDA')(test_case)\n"
        ),
        "tests/helpers.py": "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef c():\n    pass\n",
        "tests/test_impl.py": (
            "import unittest\n\nimport pytest\nimport torch\n\nfrom pkg.testing import require_cuda\nfrom tests.helpers import a, b, c\n\n\n"
            "@require_cuda\ndef test_a():\n    a()\n\n\n"
            "class TestB(unittest.TestCase):\n    @pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
            "    def test_b(self):\n        b()\n\n\n"
            "def test_c():\n    c()\n"
        ),
    }
    assert index_of(tmp_path / "helpers", files).cuda_only == {"tests.helpers.a", "tests.helpers.b"}
    # the same functions in the library's own package are its public API: only its tests call them here
    library = {**{name: text.replace("tests.helpers", "pkg.impl") for name, text in files.items() if name != "tests/helpers.py"},
               "pkg/impl.py": files["tests/helpers.py"]}
    assert index_of(tmp_path / "library", library).cuda_only == set()


REEXPORTED_SKIP = {  # a skip helper defined in one module and re-exported by its package
    "pkg/test_utils/__init__.py": "from .testing import require_multi_gpu\n",
    "pkg/test_utils/testing.py": (
        "import unittest\nimport torch\n\n\n"
        "def require_multi_gpu(test_case):\n"
        "    return unittest.skipUnless(torch.cuda.device_count() > 1, 'GPUs')(test_case)\n"
    ),
}


def test_helpers_are_found_through_reexports(tmp_path):
    files = {
        **REEXPORTED_SKIP,
        "pkg/api.py": "from .test_utils import require_multi_gpu as needs_gpus\n",
    }
    index = index_of(tmp_path, files)
    assert index.follow("pkg.test_utils.require_multi_gpu") == "pkg.test_utils.testing.require_multi_gpu"
    assert index.follow("pkg.api.needs_gpus") == "pkg.test_utils.testing.require_multi_gpu"
    assert index.skips_off_cuda("pkg.api.needs_gpus")
    assert index.origin("pkg.test_utils.require_multi_gpu.__name__") == ("pkg.test_utils.testing.require_multi_gpu", "__name__")
    assert index.origin("pkg.test_utils") is None


def test_reexported_skip_decorator_silences_the_test():
    files = {
        **REEXPORTED_SKIP,
    }
    test = """
    import torch
    from pkg.test_utils import require_multi_gpu


    @require_multi_gpu
    def test_dispatch():
        torch.cuda.empty_cache()


    def test_plain():
        torch.cuda.empty_cache()
    """
    assert lint({**files, "tests/test_dispatch.py": test}, "tests/test_dispatch.py") == [("CDL202", 11, 5)]


def test_cached_results_follow_reachability(tmp_path):
    project = tmp_path / "proj"
    for name, text in {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/accelerators.py": ACCELERATORS, "pkg/chooser.py": CHOOSER}.items():
        target = project / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")

    def codes():
        result = run_cli("check", "--format", "json", "pkg/accelerators.py", cwd=project)
        return [(d["code"], d["line"]) for d in json.loads(result.stdout)]

    assert codes() == [("CDL201", 11)]
    assert (project / ".cudalint_cache" / f"project-index-v{INDEX_VERSION}.data").is_file()
    chooser = project / "pkg" / "chooser.py"
    chooser.write_text(chooser.read_text().replace('if name == "cuda":', "if name:"), encoding="utf-8")
    assert codes() == [("CDL201", 6), ("CDL201", 11), ("CDL202", 15)]  # the cached result was not reused


def test_a_file_the_index_cannot_read_may_use_any_name(tmp_path):
    files = {
        "pkg/impl.py": "def f():\n    return 1\n",
        "pkg/caller.py": "import torch\nfrom pkg.impl import f\n\nif torch.cuda.is_available():\n    f()\n",
    }
    assert index_of(tmp_path, files).cuda_only == {"pkg.impl.f"}
    # Too deep for CPython's parser: its uses cannot be read, so f may be called there.
    (tmp_path / "pkg" / "deep.py").write_text("from pkg.impl import f\nx = " + " + ".join(["f()"] * 20000) + "\n")
    assert index_of(tmp_path, {}).cuda_only == set()


def test_uses_under_guards_of_other_modules(tmp_path):
    env = """
    import torch

    try:
        import triton

        HAS_TRITON = True
    except ImportError:
        HAS_TRITON = False


    def has_cuda():
        return torch.cuda.is_available()


    def has_disk():
        return True
    """
    caller = """
    import pkg.env
    from pkg.env import has_cuda, has_disk
    from pkg.impl import a, b, c, d


    def run(config):
        if pkg.env.HAS_TRITON and config.fast:
            a()
        if not has_cuda():
            return
        b()


    def other():
        if has_disk():
            c()
        x = has_cuda() or d()
    """
    impl = "".join(f"def {name}():\n    pass\n\n\n" for name in "abcd")
    index = index_of(tmp_path, {"pkg/env.py": env, "pkg/impl.py": impl, "pkg/caller.py": caller})
    assert index.cuda_only == {"pkg.impl.a", "pkg.impl.b"}


def test_modules_imported_only_under_a_guard(tmp_path):
    files = {
        "pkg/kernels/__init__.py": "from .fused import fused_add\n",
        "pkg/kernels/fused.py": "import triton\n\n\ndef fused_add(x):\n    return x\n",
        "pkg/model.py": (
            "import torch\n\n\ndef forward(x):\n    if torch.cuda.is_available():\n"
            "        from pkg.kernels import fused_add\n\n        return fused_add(x)\n    return x\n"
        ),
        "pkg/ops.py": "import torch\n\nif torch.cuda.is_available():\n    import pkg.tools\n",
        "pkg/tools.py": "import triton\n\nif __name__ == '__main__':\n    print('a program too')\n",
    }
    index = index_of(tmp_path, files)
    assert {"pkg.kernels", "pkg.kernels.fused", "pkg.kernels.fused.fused_add"} <= index.cuda_only
    assert "pkg.tools" not in index.cuda_only and "pkg" not in index.cuda_only
    found = lint({key: textwrap.dedent(value) for key, value in files.items()}, "pkg/kernels/fused.py")
    assert found == []  # `import triton` (CDL404) only runs where pkg.model found CUDA
    assert lint(files, "pkg/tools.py") == [("CDL404", 1, 1)]


def test_private_methods_called_only_under_a_guard():
    source = """
    import torch


    class Op:
        def __init__(self, fast):
            if torch.cuda.is_available() and fast:
                self._autotune()
                __class__._warm()
            self._plain()
            self._shared()

        def _autotune(self):
            torch.cuda.synchronize()

        @staticmethod
        def _warm():
            torch.cuda.synchronize()

        def _plain(self):
            torch.cuda.synchronize()

        def _shared(self):
            torch.cuda.synchronize()

        def forward(self):
            torch.cuda.synchronize()
    """
    other = "from pkg.op import Op\n\n\ndef f(op):\n    return op._shared\n"
    found = lint({"pkg/op.py": source, "pkg/other.py": other}, "pkg/op.py")
    # _plain is called unguarded, _shared is read elsewhere, forward is public.
    assert found == [("CDL201", 20, 9), ("CDL201", 23, 9), ("CDL201", 26, 9)]


def test_a_module_named_in_a_string_may_be_imported_by_name(tmp_path):
    files = {
        "pkg/ops/__init__.py": "",
        "pkg/ops/fused.py": "import triton\n",
        "pkg/extra.py": "import triton\n",
        "pkg/model.py": "import torch\n\nif torch.cuda.is_available():\n    import pkg.ops.fused\n    import pkg.extra\n",
    }
    assert {"pkg.ops.fused", "pkg.extra"} <= index_of(tmp_path, files).cuda_only
    loader = "import importlib\n\n\ndef load(name):\n    return importlib.import_module(f'pkg.ops.{name}_op')\n"
    assert "pkg.ops.fused" in index_of(tmp_path, {"pkg/loader.py": loader}).cuda_only  # not a *_op module
    loader = "import importlib\n\n\ndef load(name):\n    importlib.import_module('pkg.extra')\n    return importlib.import_module(f'pkg.ops.{name}')\n"
    reached = index_of(tmp_path, {"pkg/loader.py": loader}).cuda_only
    assert "pkg.ops.fused" not in reached and "pkg.extra" not in reached


def test_a_class_chosen_for_another_accelerator_is_never_used_on_a_mac():
    # `name == "hpu"` is true only where Habana's backend exists (rules/guards.toml off_mac_device_types).
    chooser = CHOOSER.replace('if name == "cuda":', 'if name == "hpu":')
    assert lint({"pkg/accelerators.py": ACCELERATORS, "pkg/chooser.py": chooser}) == [("CDL201", 11, 9)]


KERNELS = """
import torch
import triton


def run(x):
    torch.cuda.synchronize()
    return x.to("cuda")
"""


def test_a_module_that_cannot_load_on_a_mac_imported_only_where_import_errors_are_caught_is_off_mac(tmp_path):
    # pkg.kernels imports triton at its top, so it never loads on a Mac; its one importer catches the
    # ImportError (inside an if, and naming the module as a value afterwards): its code never runs there.
    dispatch = """
    import os

    try:
        if os.environ.get("FAST"):
            from pkg import kernels
        else:
            kernels = None
    except (OSError, ImportError):
        kernels = None


    def run(x):
        if kernels is not None:
            return kernels.run(x)
        return x
    """
    assert lint({"pkg/kernels.py": KERNELS, "pkg/dispatch.py": dispatch}, path="pkg/kernels.py") == []
    index = index_of(tmp_path, {"pkg/kernels.py": KERNELS, "pkg/dispatch.py": dispatch})
    assert "pkg.kernels" in index.cuda_only


def test_a_module_that_cannot_load_on_a_mac_is_reported_where_any_import_of_it_is_not_caught():
    dispatch = """
    try:
        from pkg import kernels
    except ImportError:
        kernels = None
    """
    plain = "from pkg.kernels import run\n"
    caught_elsewhere = """
    try:
        from pkg import kernels
    except RuntimeError:
        kernels = None
    """
    expected = [("CDL404", 2, 1), ("CDL201", 6, 5), ("CDL101", 7, 17)]
    assert lint({"pkg/kernels.py": KERNELS, "pkg/dispatch.py": dispatch, "pkg/plain.py": plain}, path="pkg/kernels.py") == expected
    assert lint({"pkg/kernels.py": KERNELS, "pkg/other.py": caught_elsewhere}, path="pkg/kernels.py") == expected


def test_a_function_spawned_after_an_assert_of_cuda_runs_only_off_a_mac():
    # nnunetv2's DDP training: mp.spawn hands run_ddp over only after `assert device.type == "cuda"`, so
    # run_ddp, and setup_ddp it calls, run only where CUDA is; an assert of anything else guards nothing.
    files = {
        "pkg/run.py": """
            import torch
            import torch.distributed as dist
            import torch.multiprocessing as mp


            def setup_ddp(rank, world_size):
                dist.init_process_group("nccl", rank=rank, world_size=world_size)


            def run_ddp(rank, world_size):
                setup_ddp(rank, world_size)
                torch.cuda.set_device(rank)


            def main(device, num_gpus):
                if num_gpus > 1:
                    assert device.type == "cuda", "DDP needs CUDA"
                    mp.spawn(run_ddp, args=(num_gpus,), nprocs=num_gpus)
            """,
        "pkg/other.py": """
            import torch
            import torch.multiprocessing as mp


            def work(rank):
                torch.cuda.set_device(rank)


            def main(num_gpus):
                assert num_gpus > 1, "DDP"
                mp.spawn(work, nprocs=num_gpus)
            """,
    }
    assert lint(files, path="pkg/run.py") == [("CDL112", 17, 9)]  # the assert itself is the finding
    assert lint(files, path="pkg/other.py") == [("CDL105", 6, 5)]


def test_a_function_picked_by_an_arm_of_a_cuda_test_runs_only_where_the_test_holds():
    picker = """
    from pkg.accelerators import CpuAccelerator, CudaAccelerator, free


    def measure(device, fn):
        accelerator = CudaAccelerator if device == "cuda" else CpuAccelerator
        release = None if device != "cuda" else free
        return accelerator(), release
    """
    assert lint({"pkg/accelerators.py": ACCELERATORS, "pkg/picker.py": picker}) == [("CDL201", 11, 9)]
    unguarded = picker.replace('if device == "cuda"', "if device").replace('if device != "cuda"', "if not device")
    assert lint({"pkg/accelerators.py": ACCELERATORS, "pkg/picker.py": unguarded}) == [
        ("CDL201", 6, 9), ("CDL201", 11, 9), ("CDL202", 15, 5)]


def test_a_worker_spawned_after_asserting_two_cuda_devices_runs_only_off_a_mac():
    # opacus' tensor-parallel demos: `assert n_gpus >= 2` with n_gpus = torch.cuda.device_count(); the count
    # is 0 on a Mac, so `>= 2` and `== 2` hold only with CUDA, while `!= 2` and `< 2` hold there.
    script = """
    import torch
    import torch.multiprocessing as mp


    def worker(rank, world_size):
        torch.cuda.set_device(rank)


    def helper(rank):
        torch.cuda.synchronize()


    def main():
        n_gpus = torch.cuda.device_count()
        assert n_gpus >= 2, "Requires at least 2 GPUs"
        mp.spawn(worker, args=(n_gpus,), nprocs=n_gpus)


    def other():
        if torch.cuda.device_count() != 2:
            helper(0)
    """
    assert lint({"pkg/demo.py": script}, path="pkg/demo.py") == [("CDL201", 10, 5), ("CDL112", 15, 5)]
