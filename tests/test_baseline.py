"""The baseline: write it, edit around a recorded finding, see only what is new, count what is gone."""

import json

from conftest import run_cli

SOURCE = "import torch\n\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
SUMMARY = "target torch 2.15 (newest release cudalint knows)."


def test_round_trip_survives_an_unrelated_edit_and_reports_a_new_finding(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    written = run_cli("check", "--no-cache", "--write-baseline", "base.json", ".", cwd=tmp_path)
    assert (written.returncode, written.stdout) == (0, "")
    assert written.stderr == "cudalint: wrote 2 findings to the baseline base.json\n"
    document = json.loads((tmp_path / "base.json").read_text())
    assert document["format"] == "cudalint-baseline"
    assert [(e["code"], e["path"], e["line"]) for e in document["findings"]] == [("CDL102", "a.py", 3), ("CDL201", "a.py", 4)]

    # The fingerprint reads the finding's line and its nearest non-blank neighbours, not its number.
    (tmp_path / "a.py").write_text(
        '"""A docstring, a new finding and an import added above."""\nimport torch\ny = torch.ones(2).cuda()\n'
        "import os\nimport torch\n\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
    )
    result = run_cli("check", "--no-cache", "--baseline", "base.json", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == (
        "a.py:3:19: CDL102 .cuda() moves data to CUDA only; use .to(device)\n"
        f"Found 1 problem (1 error) in 1 file checked; 0 fixable with --fix (1 more with --unsafe-fixes); {SUMMARY}\n"
    )
    assert result.stderr == "cudalint: baseline base.json: 2 findings left out; 0 entries no longer occur\n"


def test_entries_that_no_longer_occur_are_counted_only_for_files_checked(tmp_path):
    spaced = "import torch\n\nx = torch.ones(1).cuda()\ny = 2\n\nz = 3\ntorch.cuda.synchronize()\n"
    (tmp_path / "a.py").write_text(spaced)
    (tmp_path / "b.py").write_text(spaced)
    run_cli("check", "--no-cache", "--write-baseline", "base.json", ".", cwd=tmp_path)
    (tmp_path / "a.py").write_text(spaced.replace("torch.ones(1).cuda()", "torch.ones(1)"))
    everything = run_cli("check", "--no-cache", "--baseline", "base.json", ".", cwd=tmp_path)
    assert everything.returncode == 0
    assert everything.stderr == "cudalint: baseline base.json: 3 findings left out; 1 entry no longer occurs\n"
    only_b = run_cli("check", "--no-cache", "--baseline", "base.json", "b.py", cwd=tmp_path)
    assert only_b.stderr == "cudalint: baseline base.json: 2 findings left out; 0 entries no longer occur\n"


def test_paths_are_relative_to_the_baseline_so_another_working_directory_matches(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(SOURCE)
    run_cli("check", "--no-cache", "--write-baseline", "base.json", "src", cwd=tmp_path)
    assert [e["path"] for e in json.loads((tmp_path / "base.json").read_text())["findings"]] == ["src/a.py", "src/a.py"]
    inside = run_cli("check", "--no-cache", "--baseline", "../base.json", ".", cwd=tmp_path / "src")
    assert inside.returncode == 0
    assert inside.stderr == "cudalint: baseline ../base.json: 2 findings left out; 0 entries no longer occur\n"


def test_a_duplicate_line_is_new_even_when_its_twin_is_recorded(tmp_path):
    block = "import torch\ntorch.cuda.synchronize()\nprint(1)\n"
    (tmp_path / "a.py").write_text(block)
    run_cli("check", "--no-cache", "--write-baseline", "base.json", "a.py", cwd=tmp_path)
    (tmp_path / "a.py").write_text(block + "\n" + block)
    result = run_cli("check", "--no-cache", "-q", "--baseline", "base.json", "a.py", cwd=tmp_path)
    assert [line.split(" ")[0] for line in result.stdout.splitlines()] == ["a.py:6:1:"]


def test_a_bad_baseline_is_a_usage_error(tmp_path):
    (tmp_path / "a.py").write_text(SOURCE)
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    result = run_cli("check", "--baseline", "bad.json", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        "cudalint: error: --baseline bad.json: not a baseline written by `cudalint check --write-baseline`\n"
    )
    missing = run_cli("check", "--baseline", "none.json", "a.py", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (2, "cudalint: error: --baseline none.json: No such file or directory\n")
