"""`cudalint trace` on real torch (CPU): exact operators, verdicts against the MPS coverage database,
exit codes, the JSON document, the program's own output untouched, the -m form and the Python API."""

import importlib.util
import json
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, run_cli
from cudalint.cli import main

TRACE = FIXTURES / "trace"
PROGRAM_STDOUT = "grid_sample 252.0000\nnorms True\nweights 3.0\n"
SCOPE = ("The trace covers only the code paths this run took: branches, configurations and inputs "
         "it did not reach were not checked.")
# Every operator volume_model.py dispatches with torch 2.13 on CPU, and how often.
OP_COUNTS = {
    "aten::_local_scalar_dense": 3,
    "aten::arange": 1,
    "aten::detach": 2,
    "aten::embedding": 2,
    "aten::embedding_renorm_": 2,
    "aten::empty.memory_format": 1,
    "aten::grid_sampler_3d": 3,
    "aten::lift_fresh": 2,
    "aten::linalg_vector_norm": 1,
    "aten::max": 1,
    "aten::normal_": 1,
    "aten::ones": 1,
    "aten::sum": 2,
    "aten::view": 1,
    "aten::zeros": 1,
}


def site(line, function):
    return {"path": "volume_model.py", "line": line, "function": function}


@pytest.fixture(scope="module")
def script_run(tmp_path_factory):
    """The fixture traced as `-- python volume_model.py 3` against torch 2.5, and run plainly."""
    out = tmp_path_factory.mktemp("trace") / "trace.json"
    traced = run_cli("trace", "--torch-version", "2.5", "--output", str(out), "--", "python", "volume_model.py", "3",
                     cwd=TRACE)
    plain = subprocess.run([sys.executable, "volume_model.py", "3"], cwd=TRACE, capture_output=True, text=True,
                           timeout=120)
    return traced, plain, json.loads(out.read_text())


def test_program_output_and_exit_code_untouched(script_run):
    traced, plain, doc = script_run
    assert plain.returncode == 3
    assert traced.stdout == plain.stdout == PROGRAM_STDOUT
    assert doc["ran"] == {"command": "python volume_model.py 3", "kind": "script", "exit_code": 3, "error": None}


def test_exit_1_when_an_operator_would_raise(script_run):
    traced, _, doc = script_run
    assert traced.returncode == 1
    assert doc["exit_status"] == 1
    assert traced.stderr.splitlines()[-1] == (
        f"cudalint trace: wrote {traced.args[traced.args.index('--output') + 1]}. "
        "Result: 1 operator this run reached would raise on MPS with torch 2.5.1.")


def test_json_document(script_run):
    _, _, doc = script_run
    assert set(doc) == {"format", "format_version", "ran", "torch", "target", "scope", "summary", "would_raise",
                        "cpu_fallbacks", "ops", "created", "cuda_apis", "cuda_tensor_ops", "exit_status"}
    assert (doc["format"], doc["format_version"]) == ("cudalint-trace", 1)
    import torch

    assert doc["torch"] == {"installed": torch.__version__}
    assert doc["target"] == {"requested": "2.5", "release": "2.5.1", "source": "--torch-version"}
    assert doc["scope"] == SCOPE
    assert {op["op"]: op["count"] for op in doc["ops"]} == OP_COUNTS
    assert doc["summary"] == {
        "operators": 15, "calls": 24, "runs": 13, "raises": 1, "cpu_fallback": 1, "uncertain": 0,
        "device_kernel": 0, "absent": 0, "not_aten": 0, "float64_created": 1, "complex128_created": 0,
        "cuda_api_calls": 2, "cuda_tensor_ops": 0,
    }
    assert doc["would_raise"] == [{
        "op": "aten::grid_sampler_3d", "count": 3, "dtypes": {"float32": 3}, "site": site(12, "sample"),
        "mps": "raises", "status_code": "E",
        "meaning": "not implemented (NotImplementedError, or CPU with PYTORCH_ENABLE_MPS_FALLBACK=1)",
        "first_supported": "2.9.1",
    }]
    assert doc["cpu_fallbacks"] == [{
        "op": "aten::embedding_renorm_", "count": 2, "dtypes": {"float32": 2, "int64": 2}, "site": site(25, "main"),
        "mps": "cpu_fallback", "status_code": "F",
        "meaning": "explicit CPU fallback (always runs on CPU, with a warning)", "first_supported": None,
    }]
    assert doc["created"] == [{"dtype": "float64", "op": "aten::ones", "count": 1, "site": site(26, "main")}]
    assert doc["cuda_apis"] == [
        {"api": "torch.cuda.empty_cache", "count": 1, "site": site(27, "main")},
        {"api": "torch.cuda.manual_seed_all", "count": 1, "site": site(17, "main")},
    ]


def test_module_form_text_report_exit_0_when_nothing_raises():
    """grid_sampler_3d has an MPS kernel from 2.9.1 on; embedding_renorm_ still falls back."""
    result = run_cli("trace", "--torch-version", "2.13", "-m", "tracedpkg.run", "0", cwd=TRACE)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "args ['0']\n" + PROGRAM_STDOUT
    import torch

    assert result.stderr == f"""\
cudalint trace: ran python -m tracedpkg.run 0; it exited with status 0.
torch installed: {torch.__version__}. The MPS coverage database answers for torch 2.13.0 (--torch-version 2.13).
{SCOPE}

Would raise NotImplementedError on MPS with torch 2.13.0 (unless PYTORCH_ENABLE_MPS_FALLBACK=1, which runs them on the CPU):
  none
Fall back to the CPU on MPS with torch 2.13.0 (always, with a warning; slow):
  aten::embedding_renorm_  2 calls  [float32, int64]  first from volume_model.py:25 in main
float64/complex128 tensors created (MPS has neither):
  float64  1 tensor from aten::ones at volume_model.py:26 in main
CUDA-only APIs called by your code:
  torch.cuda.empty_cache  1 call  first from volume_model.py:27 in main
  torch.cuda.manual_seed_all  1 call  first from volume_model.py:17 in main

Operators: 15 distinct, 24 calls; 14 run on MPS with torch 2.13.0.
Result: no operator this run reached would raise on MPS with torch 2.13.0.
"""


def test_python_api():
    import cudalint

    spec = importlib.util.spec_from_file_location("volume_model_api", TRACE / "volume_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with cudalint.trace(torch_version="2.5") as t:
        assert module.main(0) == 0
    assert [(op.record.op, op.record.count) for op in t.assessment.would_raise] == [("aten::grid_sampler_3d", 3)]
    assert [(op.record.op, op.record.count) for op in t.assessment.cpu_fallbacks] == [("aten::embedding_renorm_", 2)]
    assert {record.op: record.count for record in t.data.ops} == OP_COUNTS
    assert [(c.dtype, c.op, c.count, c.site.line) for c in t.data.created] == [("float64", "aten::ones", 1, 26)]
    doc = t.document()
    assert doc["ran"]["kind"] == "python-api"
    assert doc["target"] == {"requested": "2.5", "release": "2.5.1", "source": "torch_version"}
    assert t.text().splitlines()[-1] == "Result: 1 operator this run reached would raise on MPS with torch 2.5.1."
    import torch

    assert torch.cuda.empty_cache.__name__ == "empty_cache" and not hasattr(torch.cuda.empty_cache, "__wrapped__")
    assert "cuda" not in vars(torch.Tensor)


def test_failing_program_is_reported_and_argv_restored(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(TRACE)
    argv = list(sys.argv)
    out = tmp_path / "fails.json"
    assert main(["trace", "--output", str(out), "fails.py", "--flag"]) == 0
    assert sys.argv == argv
    captured = capsys.readouterr()
    assert captured.out == "before the error 2.0\n"
    assert 'File "' + str(TRACE / "fails.py") + '", line 7, in <module>' in captured.err
    assert "RuntimeError: the program failed on purpose" in captured.err
    # the traceback shows the user's frames only: none of runpy's, none of cudalint's own
    frames = re.findall(r'File "([^"]+)"', captured.err.split("RuntimeError")[0])
    assert frames == [str(TRACE / "fails.py")]
    doc = json.loads(out.read_text())
    assert doc["ran"] == {"command": "python fails.py --flag", "kind": "script", "exit_code": 1,
                          "error": "RuntimeError: the program failed on purpose"}
    assert {op["op"] for op in doc["ops"]} == {"aten::ones", "aten::sum", "aten::_local_scalar_dense"}


@pytest.mark.parametrize("args, message", [
    (["trace"], "nothing to trace"),
    (["trace", "--", "ls", "-l"], "cannot trace 'ls'"),
    (["trace", "missing.py"], "missing.py: no such file"),
    (["trace", "-m", "no_such_module_here"], "no module named 'no_such_module_here'"),
    (["trace", "--", "python", "-c", "print(1)"], "other interpreter options are not supported"),
    (["trace", "--torch-version", "1.0", "volume_model.py"], "older than every release"),
    (["trace", "--torch-version", "banana", "volume_model.py"], "is not a version"),
])
def test_usage_errors_exit_2(args, message, monkeypatch, capsys):
    monkeypatch.chdir(TRACE)
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_without_torch_a_clear_message_and_exit_2():
    hide_torch = ("import sys; sys.modules['torch'] = None; from cudalint.cli import main; "
                  "sys.exit(main(['trace', '--', 'python', 'volume_model.py']))")
    result = subprocess.run([sys.executable, "-c", hide_torch], cwd=TRACE, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == ("cudalint: error: cudalint trace needs torch, which is not installed in this Python "
                             "environment: pip install cudalint[trace]\n")


def test_importing_cudalint_never_imports_torch():
    code = "import sys, cudalint; cudalint.trace; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout == "False\n", result.stderr
