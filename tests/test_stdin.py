"""Standard input: `cudalint check --stdin-filename PATH -` and flake8's `flake8 -`, each a real subprocess fed
through its stdin. The buffer is linted as the file PATH would be: that file's configuration, per-file-ignores
and target torch release, whatever is (or is not) on disk there."""

import json
import subprocess
import sys

import pytest


BUFFER = (
    "import torch\n"
    "x = torch.ones(1).cuda()\n"
    "torch.cuda.synchronize()\n"
    "opt = torch.optim.Adam([], fused=True)\n"
)
LINES = [
    "{path}:2:19: CDL102 .cuda() moves data to CUDA only; use .to(device)",
    "{path}:3:1: CDL201 torch.cuda.synchronize raises without CUDA; use torch.accelerator.synchronize() (torch >= 2.6)",
    "{path}:4:28: CDL705 fused=True has no MPS kernel before torch 2.5; drop it or target torch >= 2.5",
]


def feed(args, data, cwd, module="cudalint"):
    """Run `python -m MODULE ARGS` with `data` (str or bytes) on its standard input."""
    raw = data.encode() if isinstance(data, str) else data
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, input=raw, capture_output=True, timeout=120)


@pytest.fixture
def project(tmp_path):
    """A project that targets torch 2.4 and ignores CDL1 under tests/; src/train.py on disk is clean."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.cudalint]\nper-file-ignores = { "tests/*" = ["CDL1"] }\n')
    (root / "requirements.txt").write_text("torch==2.4.1\n")
    (root / "src" / "train.py").write_text("print('nothing here')\n")
    return root


def lines(path, *numbers):
    return [LINES[n].format(path=path) for n in numbers]


def test_buffer_is_linted_not_the_file_on_disk(project):
    result = feed(["check", "--stdin-filename", "src/train.py", "-"], BUFFER, project)
    assert result.returncode == 1
    out = result.stdout.decode().splitlines()
    assert out[:-1] == lines("src/train.py", 0, 1, 2)
    assert out[-1].startswith("Found 3 problems (2 errors, 1 warning) in 1 file checked;")
    assert out[-1].endswith("; target torch 2.4.1 (from requirements.txt).")
    assert result.stderr == b""
    assert (project / "src" / "train.py").read_text() == "print('nothing here')\n"


def test_per_file_ignores_follow_the_named_path(project):
    result = feed(["check", "-q", "--stdin-filename", "tests/test_train.py"], BUFFER, project)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == lines("tests/test_train.py", 1, 2)


def test_config_and_target_come_from_the_named_files_project_not_the_working_directory(project, tmp_path):
    # run from outside the project, naming a file that does not exist: its project's pyproject and pin still apply
    named = project / "tests" / "new_test.py"
    result = feed(["check", "--format", "json", "--stdin-filename", str(named)], BUFFER, tmp_path)
    assert result.returncode == 1
    found = json.loads(result.stdout)
    assert [(f["path"], f["code"], f["line"], f["column"]) for f in found] == [
        ("proj/tests/new_test.py", "CDL201", 3, 1),
        ("proj/tests/new_test.py", "CDL705", 4, 28),  # target torch 2.4.1, from the project's requirements.txt
    ]
    assert not named.exists()


def test_a_dash_alone_is_python_named_dash(project):
    result = feed(["check", "-q", "--torch-version", "2.6", "-"], BUFFER, project)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == lines("-", 0, 1)


def test_a_manifest_buffer_is_read_as_its_kind_and_pins_the_target(tmp_path):
    result = feed(["check", "--stdin-filename", "requirements.txt"], "torch==2.3.1\nflash-attn==2.5.0\n", tmp_path)
    assert result.returncode == 1
    out = result.stdout.decode().splitlines()
    assert out[0].startswith("requirements.txt:2:1: CDL501 ")
    assert out[-1].endswith("; target torch 2.3.1 (from requirements.txt).")


@pytest.fixture
def unpinned(tmp_path):
    """A folder whose project pins no torch: fixes for any target release are offered (a pinned
    project gets only the fixes every release it allows has, see test_fix_cases)."""
    folder = tmp_path / "unpinned"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "train.py").write_text("print('nothing here')\n")
    return folder


def test_fix_prints_the_fixed_buffer_and_reports_the_rest_on_stderr(unpinned):
    project = unpinned
    buffer = "import torch\n\ntorch.cuda.synchronize()\nx = torch.ones(1).cuda()\n"
    result = feed(["check", "--fix", "--torch-version", "2.7", "--stdin-filename", "src/train.py", "-"], buffer, project)
    assert result.returncode == 1  # the unsafe .cuda() fix is not applied: one finding is left
    assert result.stdout.decode() == (
        "import torch\n\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()\nx = torch.ones(1).cuda()\n"
    )
    err = result.stderr.decode().splitlines()
    assert err[0] == "src/train.py:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
    assert err[1].startswith("Fixed 1 problem. Found 1 problem (1 error) in 1 file checked;")
    assert (project / "src" / "train.py").read_text() == "print('nothing here')\n"  # nothing written


def test_fix_keeps_bom_and_crlf_and_exits_0_when_all_is_fixed(unpinned):
    project = unpinned
    buffer = b"\xef\xbb\xbfimport torch\r\ntorch.cuda.synchronize()\r\n"
    result = feed(["check", "--fix", "--torch-version", "2.7", "--stdin-filename", "src/train.py"], buffer, project)
    assert result.returncode == 0
    assert result.stdout == (
        b"\xef\xbb\xbfimport torch\r\nif torch.accelerator.is_available():\r\n    torch.accelerator.synchronize()\r\n"
    )
    assert result.stderr.decode().startswith("Fixed 1 problem. All clear")


def test_fix_on_a_buffer_that_does_not_parse_gives_it_back_unchanged(project):
    buffer = b"import torch\ndef broken(:\n    torch.cuda.synchronize()\n"
    result = feed(["check", "--fix", "--stdin-filename", "src/train.py"], buffer, project)
    assert result.returncode == 1
    assert result.stdout == buffer
    assert result.stderr.decode().splitlines()[0].startswith("src/train.py:2:")
    assert " CDL000 " in result.stderr.decode().splitlines()[0]


def test_undecodable_buffer_is_one_cdl000_finding(project):
    result = feed(["check", "-q", "--stdin-filename", "src/train.py"], b"x = 1\ny = '\xff'\n", project)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == [
        "src/train.py:2:6: CDL000 cannot decode byte 0xff as utf-8; the input was not checked"
    ]


def test_diff_shows_the_fix_of_the_buffer(unpinned):
    project = unpinned
    buffer = "import torch\ntorch.cuda.synchronize()\n"
    result = feed(["check", "--diff", "--torch-version", "2.7", "--stdin-filename", "src/train.py"], buffer, project)
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == [
        "--- a/src/train.py",
        "+++ b/src/train.py",
        "@@ -1,2 +1,3 @@",
        " import torch",
        "-torch.cuda.synchronize()",
        "+if torch.accelerator.is_available():",
        "+    torch.accelerator.synchronize()",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["-", "src"], "- (standard input) cannot be combined with other paths"),
        (["--stdin-filename", "a.py", "src"], "--stdin-filename names standard input; give no other path"),
    ],
)
def test_standard_input_mixed_with_paths_is_a_usage_error(project, args, message):
    result = feed(["check", *args], BUFFER, project)
    assert result.returncode == 2
    assert message in result.stderr.decode()


def test_flake8_stdin_mode(project):
    result = feed(["--select", "CDL", "-"], BUFFER, project, module="flake8")
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == lines("stdin", 0, 1, 2)  # target torch 2.4.1 from requirements.txt


def test_flake8_stdin_display_name_takes_that_files_per_file_ignores_and_project(project, tmp_path):
    (project / ".flake8").write_text("[flake8]\nper-file-ignores = tests/*:CDL1\n")
    result = feed(["--select", "CDL", "--stdin-display-name", "tests/test_x.py", "-"], BUFFER, project, module="flake8")
    assert result.returncode == 1
    assert result.stdout.decode().splitlines() == lines("tests/test_x.py", 1, 2)
    # from outside the project the display name still finds the project's pin (torch 2.4.1: CDL705 reported)
    elsewhere = str(project / "src" / "new.py")
    result = feed(["--isolated", "--select", "CDL", "--stdin-display-name", elsewhere, "-"], BUFFER, tmp_path,
                  module="flake8")
    assert result.stdout.decode().splitlines() == lines(elsewhere, 0, 1, 2)
    result = feed(["--isolated", "--select", "CDL", "--stdin-display-name", "new.py", "-"], BUFFER, tmp_path,
                  module="flake8")
    assert result.stdout.decode().splitlines() == lines("new.py", 0, 1)  # no project here: the newest release
