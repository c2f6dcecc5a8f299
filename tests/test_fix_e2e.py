"""End to end with real torch (CPU build 2.13): a CUDA-only script fails here as written,
and after `--fix --unsafe-fixes` it runs and prints what the hand-written CPU version prints."""

import shutil
import subprocess
import sys

from conftest import FIXTURES, run_cli


def run_python(script, cwd):
    return subprocess.run([sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_fixed_cuda_script_runs_on_cpu_with_the_same_loss(tmp_path):
    shutil.copy(FIXTURES / "e2e" / "cuda_train.py", tmp_path / "train.py")
    before = run_python("train.py", tmp_path)
    assert before.returncode != 0
    assert "Torch not compiled with CUDA enabled" in before.stderr

    fixed = run_cli("check", "--fix", "--unsafe-fixes", "--torch-version", "2.13", "train.py", cwd=tmp_path)
    assert fixed.stdout.splitlines()[-1].startswith("Fixed 8 problems. Found 2 problems (2 warnings)")

    after = run_python("train.py", tmp_path)
    assert after.returncode == 0, after.stderr
    reference = run_python(str(FIXTURES / "e2e" / "cpu_train.py"), tmp_path)
    assert reference.returncode == 0
    assert after.stdout == reference.stdout
    assert after.stdout.count("loss") == 3

    again = run_cli("check", "--diff", "--unsafe-fixes", "--torch-version", "2.13", "train.py", cwd=tmp_path)
    assert (again.returncode, again.stdout) == (0, "")


def test_fixed_demo_project_runs_on_cpu(tmp_path):
    demo = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", demo)
    assert run_python("train.py", demo).returncode != 0
    fixed = run_cli("check", "--fix", "--unsafe-fixes", ".", cwd=demo)
    assert fixed.stdout.splitlines()[-1].startswith("Fixed 10 problems. Found 4 problems (1 error, 3 warnings)")
    after = run_python("train.py", demo)
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith("peak memory 0.0 MiB")
    assert (demo / "model.pt").is_file()
