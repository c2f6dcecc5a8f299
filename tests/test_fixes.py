"""--fix, --unsafe-fixes and --diff: what gets written, and that nothing is ever lost."""

import os
import stat
import textwrap

from conftest import run_cli
from test_fix_outputs import DEFAULT

from cudalint.config import Settings
from cudalint.fixes import apply_fixes, fix_text
from cudalint.findings import Edit, Finding, Fix, Safety, Severity
from cudalint.python.fixplan import DeviceSetting

SCRIPT = 'import torch\n\nx = torch.ones(2).to("cuda")\ny = x.cuda()\ntorch.cuda.synchronize()\n'


def write_project(tmp_path, text=SCRIPT, name="train.py", torch_version="2.13"):
    (tmp_path / "pyproject.toml").write_text(f'[tool.cudalint]\ntorch-version = "{torch_version}"\n')
    target = tmp_path / name
    target.write_text(text)
    return target


def test_fix_applies_safe_fixes_only_and_reports_the_rest(tmp_path):
    target = write_project(tmp_path)
    result = run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    assert target.read_text() == (
        "import torch\n\n"
        "DEVICE = (\n"
        "    torch.accelerator.current_accelerator(check_available=True)\n"
        '    or torch.device("cpu")\n'
        ")\n\n"
        "x = torch.ones(2).to(DEVICE)\n"
        "y = x.cuda()\n"
        "if torch.accelerator.is_available():\n"
        "    torch.accelerator.synchronize()\n"
    )
    lines = result.stdout.splitlines()
    assert lines[0].startswith("train.py:9:7: CDL102")
    assert lines[-1].startswith("Fixed 2 problems. Found 1 problem (1 error)")


def test_unsafe_fixes_use_one_device_variable(tmp_path):
    target = write_project(tmp_path)
    result = run_cli("check", "--fix", "--unsafe-fixes", "train.py", cwd=tmp_path)
    assert result.returncode == 0
    assert target.read_text() == (
        "import torch\n\n"
        "DEVICE = (\n"
        "    torch.accelerator.current_accelerator(check_available=True)\n"
        '    or torch.device("cpu")\n'
        ")\n\n"
        "x = torch.ones(2).to(DEVICE)\n"
        "y = x.to(DEVICE)\n"
        "if torch.accelerator.is_available():\n"
        "    torch.accelerator.synchronize()\n"
    )
    assert result.stdout.startswith("Fixed 3 problems. All clear")


def test_diff_writes_nothing_and_exits_1(tmp_path):
    target = write_project(tmp_path)
    result = run_cli("check", "--diff", "train.py", cwd=tmp_path)
    assert result.returncode == 1
    assert target.read_text() == SCRIPT
    assert result.stdout.splitlines()[:2] == ["--- a/train.py", "+++ b/train.py"]
    assert '-x = torch.ones(2).to("cuda")' in result.stdout.splitlines()
    assert "Would fix 2 problems in 1 file." in result.stderr


def test_diff_exits_0_when_nothing_to_fix(tmp_path):
    write_project(tmp_path, "import torch\nx = torch.ones(2)\n")
    result = run_cli("check", "--diff", "train.py", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "")


def test_file_mode_bom_crlf_and_encoding_are_kept(tmp_path):
    text = '# -*- coding: latin-1 -*-\r\nimport torch\r\nname = "caf\xe9"\r\ntorch.cuda.synchronize()\r\n'
    target = tmp_path / "latin.py"
    write_project(tmp_path, "", name="unused.py")
    target.write_bytes(text.encode("latin-1"))
    os.chmod(target, 0o751)
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport torch\ntorch.cuda.synchronize()")
    assert run_cli("check", "--fix", ".", cwd=tmp_path).returncode == 0
    assert target.read_bytes() == (
        '# -*- coding: latin-1 -*-\r\nimport torch\r\nname = "caf\xe9"\r\n'
        "if torch.accelerator.is_available():\r\n    torch.accelerator.synchronize()\r\n"
    ).encode("latin-1")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o751
    assert bom.read_bytes() == b"\xef\xbb\xbfimport torch\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".cudalint_cache") == ["bom.py", "latin.py", "pyproject.toml", "unused.py"]


def test_file_that_does_not_parse_is_never_written(tmp_path):
    broken = 'import torch\nx = torch.ones(2).to("cuda")\ndef f(:\n'
    target = write_project(tmp_path, broken)
    result = run_cli("check", "--fix", "train.py", cwd=tmp_path)
    assert target.read_text() == broken
    assert result.stdout.startswith("train.py:3:7: CDL000 syntax error")


def test_imports_added_once_in_the_right_place():
    before = '"""Module."""\nfrom torch.cuda import synchronize\n\nsynchronize()\nsynchronize()\n'
    outcome = fix_text("m.py", before, DEFAULT, "2.13", unsafe=False)
    assert outcome.fixed == (
        '"""Module."""\nimport torch\n\n'  # the import the fixes left unused is gone
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
    )


def test_torch_alias_is_used():
    outcome = fix_text("m.py", "import torch as T\nT.cuda.synchronize()\n", DEFAULT, "2.13", unsafe=False)
    assert outcome.fixed == "import torch as T\nif T.accelerator.is_available():\n    T.accelerator.synchronize()\n"


def test_configured_device_expression_and_import():
    settings = Settings(
        select=DEFAULT.select,
        device=DeviceSetting("get_device()", "from myproject.devices import get_device"),
    )
    before = 'import torch\na = torch.zeros(1, device="cuda")\nb = torch.ones(1).to("cuda")\n'
    outcome = fix_text("m.py", before, settings, "2.13", unsafe=False)
    assert outcome.fixed == (
        "import torch\nfrom myproject.devices import get_device\n"
        "a = torch.zeros(1, device=get_device())\nb = torch.ones(1).to(get_device())\n"
    )


def test_device_expression_setting_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.cudalint]
            torch-version = "2.13"
            device-expression = "pick()"
            device-import = "from helpers import pick"
            """
        )
    )
    (tmp_path / "m.py").write_text('import torch\nx = torch.ones(1).to("cuda")\n')
    assert run_cli("check", "--fix", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text() == "import torch\nfrom helpers import pick\nx = torch.ones(1).to(pick())\n"


def test_bad_device_expression_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.cudalint]\ndevice-expression = "get_device("\n')
    (tmp_path / "m.py").write_text("x = 1\n")
    result = run_cli("check", "m.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "device-expression/device-import is not valid Python" in result.stderr


def _finding(code, edits):
    fix = Fix(Safety.SAFE, "test", tuple(Edit(*edit) for edit in edits))
    return Finding(code, "m.py", edits[0][0], edits[0][1], edits[0][2], edits[0][3], "m", Severity.ERROR, fix)


def test_overlapping_fixes_first_wins_identical_edits_count_once():
    text = "abcdef\n"
    first = _finding("CDL101", [(1, 1, 1, 4, "X")])
    overlapping = _finding("CDL102", [(1, 3, 1, 6, "Y")])
    shared = _finding("CDL103", [(1, 5, 1, 6, "Z"), (1, 1, 1, 1, "import torch\n")])
    also_shared = _finding("CDL104", [(1, 6, 1, 7, "W"), (1, 1, 1, 1, "import torch\n")])
    fixed, applied = apply_fixes(text, [overlapping, shared, first, also_shared])
    assert (fixed, applied) == ("import torch\nXdZW\n", 3)


def test_an_import_kept_in_all_is_not_dropped():
    before = 'from torch.cuda import synchronize\n__all__ = ["synchronize"]\nsynchronize()\n'
    outcome = fix_text("m.py", before, DEFAULT, "2.13", unsafe=False)
    assert outcome.fixed == (
        'from torch.cuda import synchronize\nimport torch\n__all__ = ["synchronize"]\n'
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
    )
