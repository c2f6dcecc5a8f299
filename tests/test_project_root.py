"""The project a run lints, when no pyproject.toml has [tool.cudalint]: found from the paths, not the working folder.

The working folder used to be the root: linting ../proj/train.py from elsewhere indexed the working folder
(every file under it, unrelated ones too) and not the file's project, so a guard helper in another module of
that project went unseen and the findings depended on where the command was typed."""

import subprocess
import sys
from pathlib import Path

from conftest import run_cli

from cudalint.config import project_root

TRAIN = "import torch\nfrom pkg.helpers import has_cuda\nif has_cuda():\n    torch.cuda.synchronize()\nx = torch.ones(3).cuda()\n"
HELPERS = "import torch\n\n\ndef has_cuda():\n    return torch.cuda.is_available()\n"


def make_project(folder: Path, marker: str = "pyproject.toml") -> Path:
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "train.py").write_text(TRAIN)
    (folder / "pkg" / "helpers.py").write_text(HELPERS)
    if marker == ".git":
        (folder / ".git").mkdir()
    else:
        (folder / marker).write_text("[project]\nname = 'pkg'\n" if marker == "pyproject.toml" else "")
    return folder


def test_the_nearest_marked_folder_above_a_path_is_its_project(tmp_path):
    for marker in ("pyproject.toml", "setup.py", "setup.cfg", ".git"):
        project = make_project(tmp_path / marker.strip("."), marker)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        assert project_root([project / "pkg" / "train.py"], cwd=elsewhere) == project
        assert project_root([Path("../" + project.name + "/pkg")], cwd=elsewhere) == project
        # Inside a project the working folder bounds the run, as it always did.
        assert project_root([Path(".")], cwd=project / "pkg") == project / "pkg"
        assert project_root([project / "pkg" / "train.py"], cwd=project) == project


def test_without_a_marker_the_working_folder_or_the_paths_own_folder(tmp_path):
    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    (plain / "sub" / "a.py").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.py").write_text("")
    assert project_root([Path("sub/a.py")], cwd=plain) == plain
    assert project_root([], cwd=plain) == plain
    assert project_root([outside / "b.py"], cwd=plain) == outside
    assert project_root([outside], cwd=plain) == outside


def test_a_project_below_the_working_folder_is_the_root_not_the_working_folder(tmp_path):
    one = make_project(tmp_path / "one")
    make_project(tmp_path / "two")
    assert project_root([Path("one")], cwd=tmp_path) == one
    assert project_root([Path("one/pkg/train.py")], cwd=tmp_path) == one
    assert project_root([Path("one"), Path("two")], cwd=tmp_path) == tmp_path


def test_paths_in_two_projects_share_their_common_folder(tmp_path):
    one = make_project(tmp_path / "work" / "one")
    two = make_project(tmp_path / "work" / "two", "setup.py")
    assert project_root([one / "pkg", two / "pkg" / "train.py"], cwd=tmp_path) == tmp_path / "work"


def test_findings_do_not_depend_on_the_working_folder(tmp_path):
    project = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # An unrelated module in the working folder that would read as a CUDA-only helper if it were indexed.
    (elsewhere / "pkg").mkdir()
    (elsewhere / "pkg" / "helpers.py").write_text("def has_cuda():\n    return True\n")
    inside = run_cli("check", "--no-color", "pkg/train.py", cwd=project)
    outside = run_cli("check", "--no-color", str(project / "pkg" / "train.py"), cwd=elsewhere)
    assert inside.returncode == outside.returncode == 1
    assert inside.stdout.splitlines()[:-1] == ["pkg/train.py:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"]
    assert outside.stdout.splitlines()[:-1] == [
        f"{project / 'pkg' / 'train.py'}:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
    ]
    # The caches are the project's: nothing is written in the working folder.
    assert (project / ".cudalint_cache").is_dir()
    assert not (elsewhere / ".cudalint_cache").exists()


def test_show_settings_names_the_project_found_from_the_path(tmp_path):
    project = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_cli("check", "--show-settings", str(project / "pkg"), cwd=elsewhere)
    assert result.returncode == 0
    assert f"project root: {project.resolve()}" in result.stdout.splitlines()


def test_flake8_plugin_finds_the_project_from_the_file(tmp_path):
    project = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=CDL", str(project / "pkg" / "train.py")],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
    )
    assert result.stdout.splitlines() == [
        f"{project / 'pkg' / 'train.py'}:5:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"
    ]
    assert result.returncode == 1
