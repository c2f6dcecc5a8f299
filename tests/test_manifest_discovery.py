"""Requirements lists found in a tree: any *requirements*.txt/.in, and any .txt/.in file up to
three folders below a requirements*/ folder of the walked tree (requirements/pytorch/extra.txt),
at most MAX_FOLDER_REQUIREMENTS of those per walk, never through a link out of the tree."""

import re
from pathlib import Path

import pytest
import yaml

from cudalint.discover import MAX_FOLDER_REQUIREMENTS, discover
from cudalint.manifests import in_requirements_folder, manifest_kind


@pytest.mark.parametrize(
    "path, kind",
    [
        ("requirements/pytorch/extra.txt", "requirements"),
        ("requirements/fabric/strategies.txt", "requirements"),
        ("requirements-ci/gpu/test.in", "requirements"),
        ("requirements/a/b/c.txt", "requirements"),
        ("requirements/a/b/c/d.txt", None),  # four folders down: too deep
        ("dev-requirements.txt", "requirements"),
        ("docs/test_requirements.in", "requirements"),
        ("docs/notes.txt", None),
        ("requirements/pytorch/README.md", None),
        ("requirements/CMakeLists.txt", "requirements"),
    ],
)
def test_kind_by_name_and_folder(path, kind):
    assert manifest_kind(path) == kind


def test_in_requirements_folder_only_counts_the_folders_it_is_given():
    assert in_requirements_folder("requirements/pytorch/extra.txt")
    assert not in_requirements_folder("pytorch/extra.txt")
    assert not in_requirements_folder("requirements/pytorch/extra.py")


def _found(tmp_path, *paths):
    return sorted(
        (source.path.relative_to(tmp_path).as_posix(), source.kind)
        for source in discover([str(tmp_path / p) for p in paths], (), tmp_path, cwd=tmp_path)
    )


def test_a_walk_finds_nested_requirements(tmp_path):
    for name, text in {
        "requirements/pytorch/extra.txt": "bitsandbytes>=0.42.0,<0.43.0\n",
        "requirements/fabric/strategies.txt": "flash-attn\n",
        "requirements/fabric/a/b/deep.txt": "cupy-cuda12x\n",
        "docs/notes.txt": "xformers\n",
        "dev-requirements.txt": "xformers\n",
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _found(tmp_path, ".") == [
        ("dev-requirements.txt", "requirements"),
        ("requirements/fabric/strategies.txt", "requirements"),
        ("requirements/pytorch/extra.txt", "requirements"),
    ]


def test_folders_above_the_project_root_do_not_count(tmp_path):
    project = tmp_path / "requirements-parser"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "sample.txt").write_text("flash-attn\n", encoding="utf-8")
    (project / "requirements" / "ci").mkdir(parents=True)
    (project / "requirements" / "ci" / "gpu.txt").write_text("flash-attn\n", encoding="utf-8")
    found = sorted(source.path.relative_to(project).as_posix() for source in discover([str(project)], (), project, cwd=project))
    assert found == ["requirements/ci/gpu.txt"]


def test_a_link_out_of_the_tree_is_not_read_as_a_requirements_list(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("token\n", encoding="utf-8")
    project = tmp_path / "project"
    (project / "requirements").mkdir(parents=True)
    (project / "requirements" / "base.txt").write_text("torch\n", encoding="utf-8")
    (project / "requirements" / "leak.txt").symlink_to(outside / "secret.txt")
    found = sorted(source.path.relative_to(project).as_posix() for source in discover([str(project)], (), project, cwd=project))
    assert found == ["requirements/base.txt"]


def test_a_folder_of_many_text_files_is_read_only_up_to_the_bound(tmp_path):
    folder = tmp_path / "requirements" / "data"
    folder.mkdir(parents=True)
    for number in range(MAX_FOLDER_REQUIREMENTS + 5):
        (folder / f"{number:04}.txt").write_text("numpy\n", encoding="utf-8")
    found = [source.path.name for source in discover([str(tmp_path)], (), tmp_path, cwd=tmp_path)]
    assert found == [f"{number:04}.txt" for number in range(MAX_FOLDER_REQUIREMENTS)]


def test_a_nested_requirements_file_is_checked_in_a_tree(tmp_path, cli):
    (tmp_path / "requirements" / "pytorch").mkdir(parents=True)
    (tmp_path / "requirements" / "pytorch" / "extra.txt").write_text("flash-attn>=2\n", encoding="utf-8")
    done = cli("check", "--no-cache", "--select", "CDL501", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("requirements/pytorch/extra.txt:1:1: CDL501 `flash-attn` runs only on NVIDIA GPUs")


@pytest.mark.parametrize(
    "name",
    [
        "requirements/pytorch/extra.txt", "requirements/a/b/c.txt", "requirements/a/b/c/d.txt",
        "requirements-ci/gpu/test.in", "dev-requirements.txt", "docs/test_requirements.in", "deps/notes.txt",
    ],
)
def test_the_pre_commit_files_pattern_follows_nested_requirements(name):
    hooks = yaml.safe_load((Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert bool(re.search(hooks[0]["files"], name)) == (manifest_kind(name) is not None)


def test_name_globs_match_as_fnmatch_does():
    """manifest_kind matches its `*` globs without compiling them; every name built from the globs'
    own pieces (and near misses) gets the verdict fnmatchcase gives."""
    from fnmatch import fnmatchcase

    from cudalint.manifests import _NAMES, DOCS, _glob

    patterns = [pattern for _, globs in _NAMES for pattern in globs] + list(DOCS)
    pieces = sorted({piece for pattern in patterns for piece in pattern.split("*")} | {"", "x", "requirements.txt.bak", ".txt"})
    names = {a + b for a in pieces for b in pieces} | {a + "-" + b for a in pieces for b in pieces}
    assert all("?" not in pattern and "[" not in pattern for pattern in patterns)
    disagreements = [(name, pattern) for pattern in patterns for name in names if _glob(name, pattern) != fnmatchcase(name, pattern)]
    assert disagreements == []
    assert sum(_glob(name, pattern) for pattern in patterns for name in names) > 100  # the names do reach the globs
