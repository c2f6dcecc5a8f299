"""bench/profile_cold.py times the stages of a real cold check in one process."""

import os
import subprocess
import sys

from conftest import ROOT


def stage_calls(output: str) -> dict:
    """stage -> number of calls, from the table the script prints."""
    rows = [line.strip("|").split("|") for line in output.splitlines() if line.startswith("| ") and "---" not in line]
    return {cells[0].strip(): cells[3].strip() for cells in rows[1:]}


def test_the_stage_profile_runs_the_cli_and_counts_one_cpython_parse_per_file(tmp_path):
    (tmp_path / "uses_cuda.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tmp_path / "clean.py").write_text("import os\nprint(os.getcwd())\n")
    (tmp_path / "fixable.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_cold.py"), str(tmp_path)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1:3] == ["| stage | CPU s | share | calls |", "|---|---:|---:|---:|"]
    calls = stage_calls(done.stdout)
    assert calls["project index (all)"] == "1"
    assert calls["CPython parse (index + gates)"] == "4"  # each file once, and the runner's warm-up text
    assert calls["libcst parse"] == "3"  # the two files that reach the engine, and the warm-up text
    assert calls["positions: whole module"] == "3"  # each plans a fix (fix planning reads every call's position)


def test_the_stage_profile_checks_only_the_listed_files_but_indexes_the_project(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "uses_cuda.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (tree / "clean.py").write_text("import os\nprint(os.getcwd())\n")
    (tree / "fixable.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    listed = tmp_path / "files.txt"
    listed.write_text("uses_cuda.py\n\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_cold.py"), str(tree), "--files", str(listed)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    calls = stage_calls(done.stdout)
    assert calls["CPython parse (index + gates)"] == "4"  # the index still reads every module, and the warm-up text
    assert calls["libcst parse"] == "2"  # only the listed file reaches the engine, and the warm-up text


def test_a_missing_file_list_is_a_clear_message(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_cold.py"), str(tmp_path), "--files", str(tmp_path / "absent.txt")],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert f"--files {tmp_path / 'absent.txt'}: " in done.stderr and "No such file" in done.stderr
