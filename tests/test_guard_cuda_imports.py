"""Code after an import of a CUDA-only library inside a function runs only where that library
imports, so never on a Mac: the import itself is the finding (CDL404). A `try:` whose handler
falls back on something else, code before the import, a portable library, an `if` with an arm
that goes on without the import, and module-level code keep their findings."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def export_engine(model, linux):
    try:
        import tensorrt as trt
    except ImportError:
        if linux:
            print("installing")
        import tensorrt as trt
    model.to("cuda")
    torch.cuda.empty_cache()


def plain(model):
    import tensorrt
    model.to("cuda")


def fallback(model):
    try:
        import tensorrt
    except ImportError:
        tensorrt = None
    model.to("cuda")


def inside_the_try(model):
    try:
        import tensorrt
        model.to("cuda")
    except ImportError:
        pass
    model.to("cuda")


def before(model):
    model.to("cuda")
    import tensorrt


def portable(model):
    import numpy
    model.to("cuda")


def branches(model, flag):
    if flag:
        import tensorrt
    else:
        return None
    model.to("cuda")


def one_branch(model, flag):
    if flag:
        import tensorrt
    model.to("cuda")


def nested(model):
    from tensorrt import Builder

    class Calibrator:
        def batch(self, im):
            return im.to("cuda")


import cupy
torch.cuda.synchronize()
'''


def lint(source, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL101", "CDL201", "CDL202", "CDL404"}, **kwargs))


def test_the_rest_of_a_function_after_a_cuda_only_import_runs_only_off_a_mac():
    assert lint(SOURCE) == [
        ("CDL404", 10, 9),  # the handler's import: nothing catches it
        ("CDL404", 16, 5),
        ("CDL101", 25, 14),  # the handler falls back on None
        ("CDL101", 34, 14),  # after a try whose handler passes
        ("CDL101", 38, 14),  # before the import
        ("CDL404", 39, 5),
        ("CDL101", 44, 14),  # numpy is not CUDA-only
        ("CDL404", 49, 9),
        ("CDL404", 57, 9),
        ("CDL101", 58, 14),  # the if may go on without the import
        ("CDL404", 62, 5),
        ("CDL404", 69, 1),  # module level: the import is the finding, and so is what follows (for a
        # library, not a runtime the module is built around: test_integration_modules)
        ("CDL201", 70, 1),
    ]


def test_a_project_module_that_imports_a_cuda_only_library_counts_as_one():
    kernels = "import triton\n\n\ndef fused(x):\n    return x\n"
    caller = '''
    import torch


    def run(x):
        from pkg.kernels import fused
        torch.cuda.synchronize()
        return fused(x)


    def portable(x):
        from pkg.plain import fused
        torch.cuda.synchronize()
        return fused(x)
    '''
    files = {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "pkg/plain.py": "def fused(x):\n    return x\n"}
    assert lint(caller, path="pkg/caller.py", project_files=files) == [("CDL201", 12, 5)]


VALUE = '''
import torch


def load(weights, device, engine):
    model = weights.to(device)
    if engine:
        import tensorrt
        if device.type == "cpu":
            device = torch.device("cuda:0")
    return model
'''


def test_a_value_bound_after_the_import_never_holds_on_a_mac():
    # the binding comes after the import, so "cuda:0" is no value `device` has on a Mac
    assert lint(VALUE) == [("CDL404", 7, 9)]


def test_after_a_portable_import_the_value_reaches_the_device_argument():
    assert lint(VALUE.replace("import tensorrt", "import numpy")) == [("CDL101", 9, 35)]


def test_torch2trt_is_tensorrt_s():
    # yolox's `--trt` branch: NVIDIA-AI-IOT's converter, a TensorRT import like tensorrt's own
    source = textwrap.dedent(
        """
        import torch


        def predictor(model, trt_file=None):
            if trt_file is not None:
                from torch2trt import TRTModule

                model_trt = TRTModule()
                model_trt.load_state_dict(torch.load(trt_file))
                model(torch.ones(1, 3, 8, 8).cuda())
            return model.to("cuda")
        """
    ).lstrip("\n")
    assert triples(findings_of(source)) == [("CDL404", 6, 9), ("CDL101", 11, 21)]


def test_a_vendored_library_importing_itself_is_its_own_code(tmp_path, monkeypatch):
    # stable-fast vendors NVIDIA CUTLASS (third_party/cutlass, a repository with its own pyproject.toml):
    # the package's imports of itself, and its examples' imports of it, are the library's code; the
    # project's own import of it is the finding
    from conftest import lint_tree

    found = lint_tree(tmp_path, monkeypatch, {
        "setup.py": "from setuptools import setup\nsetup(name='app')\n",
        "third_party/cutlass/pyproject.toml": "[project]\nname = 'nvidia-cutlass'\n",
        "third_party/cutlass/python/cutlass/__init__.py": "from cutlass.backend import compile\n",
        "third_party/cutlass/python/cutlass/backend/__init__.py": "from cutlass import backend as _self\n",
        "third_party/cutlass/examples/gemm.py": "import cutlass\n",
        "tools/bench.py": "import cutlass\n",
        "app/__init__.py": "import cutlass\n",
        "app/ops/__init__.py": "",
        "app/ops/triton/__init__.py": "import triton\n",  # mamba-ssm's kernels: a package named like the library
    })
    assert [(path, code, line) for path, code, line, _ in found] == [
        ("app/__init__.py", "CDL404", 1), ("app/ops/triton/__init__.py", "CDL404", 1), ("tools/bench.py", "CDL404", 1)]


def test_a_module_imported_only_where_a_tried_cuda_library_is_not_none(tmp_path, monkeypatch):
    # stable-fast's triton passes: `triton = None`, `try: import triton`, then `if triton is not None:
    # from sfast.triton import torch_ops`: the kernels' module loads only where triton does
    from conftest import lint_tree

    files = {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "pkg/__init__.py": "",
        "pkg/kern.py": "import triton\n",
        "pkg/passes.py": "triton = None\ntry:\n    import triton\nexcept ImportError:\n    pass\nif triton is not None:\n    from pkg import kern\n",
    }
    assert lint_tree(tmp_path, monkeypatch, files) == []
    files["pkg/passes.py"] = "from pkg import kern\n"
    assert lint_tree(tmp_path / "again", monkeypatch, files) == [("pkg/kern.py", "CDL404", 1, 1)]


def test_the_projects_own_package_named_like_a_library_is_no_such_test(tmp_path, monkeypatch):
    # flash-attn linted itself: `FusedMLP is not None` names its own class, not the library on a user's machine
    from conftest import lint_tree

    found = lint_tree(tmp_path, monkeypatch, {
        "setup.py": "from setuptools import setup\nsetup(name='flash_attn')\n",
        "flash_attn/__init__.py": "",
        "flash_attn/kern.py": "def fused():\n    return 1\n",
        "flash_attn/models.py": "try:\n    from flash_attn.kern import fused\nexcept ImportError:\n    fused = None\n"
                                "if fused is not None:\n    from flash_attn import other\n",
        "flash_attn/other.py": "import triton\n",
    })
    assert found == [("flash_attn/other.py", "CDL404", 1, 1)]
