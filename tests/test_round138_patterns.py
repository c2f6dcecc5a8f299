"""What blind rounds 138 to 142 showed: a manifest beside a subproject's code sets only that folder's target."""

import textwrap

from conftest import findings_of, load_catalog, write_tree


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


def run_tree(root, monkeypatch, files):
    from cudalint import runner
    from cudalint.config import resolve

    write_tree(root, files)
    monkeypatch.chdir(root)
    return runner.run(["."], resolve(load_catalog(), config_path=None), jobs=1)


SPECTRAL = "import torch\n\n\ndef spectral(x, device):\n    return torch.fft.rfftn(x.to(device), dim=(0,))\n"
OLD_ENV = "name: sub\ndependencies:\n  - pip:\n      - torch==2.1.1\n"


def test_a_subprojects_manifest_beside_its_code_is_not_the_projects_target(tmp_path, monkeypatch):
    result = run_tree(tmp_path / "a", monkeypatch, {
        "pkg/__init__.py": "", "pkg/models/net.py": SPECTRAL,
        "pkg/sub/environment.yml": OLD_ENV, "pkg/sub/dMC/train.py": "import torch\n",
        "pkg-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: pkg\nVersion: 0.1\nRequires-Dist: torch<3,>=2.3\n",
    })
    assert [(f.path, f.code) for f in result.findings] == []
    assert result.torch_version_source == "the newest release torch<3,>=2.3 in pkg-0.1.dist-info/METADATA allows"
    assert result.targets == {"pkg/sub": "torch 2.1.1 (from pkg/sub/environment.yml)"}


def test_a_folder_of_requirement_files_speaks_for_the_project(tmp_path, monkeypatch):
    result = run_tree(tmp_path / "b", monkeypatch, {
        "pkg/__init__.py": "", "pkg/net.py": SPECTRAL, "requirements/base.txt": "torch==2.1.1\n",
    })
    assert [(f.path, f.code, f.line, f.column) for f in result.findings] == [("pkg/net.py", "CDL604", 5, 12)]
    assert result.torch_version_source == "from requirements/base.txt"
