"""The pre-commit hooks, run by the real pre-commit on throwaway git repositories.

pre-commit installs a hook from a repository's committed state, so the hook repository
here is a temporary git copy of this working tree (src/, rules/, pyproject.toml,
README.md, .pre-commit-hooks.yaml), committed by the test. pre-commit then builds the
hook's environment from that local copy with pip: nothing is fetched from a git host;
pip still fetches cudalint's dependencies (libcst, pyyaml) from the package index.

`try-repo` builds a fresh environment on every call (its store is temporary), about
15 s each, so it runs for the failing and the passing case; the other cases use
`pre-commit run` with a .pre-commit-config.yaml naming the same local repository and a
pre-commit home shared by this file's tests, where the environment is built once.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from cudalint.discover import kind_of

GIT_ENV = {
    "GIT_AUTHOR_NAME": "cudalint tests",
    "GIT_AUTHOR_EMAIL": "tests@cudalint.invalid",
    "GIT_COMMITTER_NAME": "cudalint tests",
    "GIT_COMMITTER_EMAIL": "tests@cudalint.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())


def git(*args, cwd, env):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


def commit_all(folder, env):
    git("init", "-q", cwd=folder, env=env)
    git("add", "-A", cwd=folder, env=env)
    git("commit", "-q", "--no-verify", "-m", "snapshot", cwd=folder, env=env)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    """(hook repository, environment) shared by this file's tests."""
    base = tmp_path_factory.mktemp("precommit")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(GIT_ENV)
    env["HOME"] = str(base / "home")  # no user git config or pre-commit settings leak in
    env["PRE_COMMIT_HOME"] = str(base / "cache")
    env.pop("VIRTUAL_ENV", None)
    repo = base / "hookrepo"
    repo.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".cudalint_cache")
    for name in ("src", "rules"):
        shutil.copytree(ROOT / name, repo / name, symlinks=True, ignore=ignore)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, repo / name)
    commit_all(repo, env)
    return repo, env


def make_project(path, files, env):
    path.mkdir()
    for name, text in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    commit_all(path, env)
    return path


def run_hook(hooks, project, hook_id):
    """`pre-commit run` with a config that pins the hook repository's commit: the environment is reused."""
    repo, env = hooks
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    config = project / ".pre-commit-config.yaml"
    config.write_text(f"repos:\n  - repo: {repo.as_posix()}\n    rev: {rev}\n    hooks:\n      - id: {hook_id}\n")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook_id, "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def try_repo(hooks, project, hook_id):
    repo, env = hooks
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), hook_id, "--all-files", "--color", "never"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_hook_fails_on_cuda_code_and_manifests(hooks, tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "train.py": "import torch\nx = torch.ones(1).cuda()\n",
            "requirements.txt": "torch>=2.3\nflash-attn\n",
            "README.md": "torch.cuda.synchronize() in prose is not linted\n",
        },
        hooks[1],
    )
    result = try_repo(hooks, project, "cudalint")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^cudalint\.+Failed$", result.stdout, re.M)
    assert "- hook id: cudalint\n- exit code: 1" in result.stdout
    assert "train.py:2:19: CDL102 .cuda() moves data to CUDA only; use .to(device)" in result.stdout
    assert "requirements.txt:2:1: CDL501 " in result.stdout
    assert "README.md" not in result.stdout
    assert "target torch 2.15 (the newest release torch>=2.3 in requirements.txt allows)" in result.stdout


def test_check_hook_passes_on_portable_code(hooks, tmp_path):
    project = make_project(
        tmp_path / "project",
        {
            "train.py": (
                "import torch\n\n"
                'device = torch.device("mps" if torch.backends.mps.is_available() else "cpu")\n'
                "x = torch.ones(1).to(device)\n"
            ),
            "requirements.txt": "torch>=2.3\nnumpy\n",
        },
        hooks[1],
    )
    result = try_repo(hooks, project, "cudalint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^cudalint\.+Passed$", result.stdout, re.M)


def test_check_hook_skips_files_it_does_not_read(hooks, tmp_path):
    project = make_project(tmp_path / "project", {"notes.md": "device = 'cuda'\n"}, hooks[1])
    result = run_hook(hooks, project, "cudalint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^cudalint\.+\(no files to check\)Skipped$", result.stdout, re.M)


def test_fix_hook_rewrites_then_passes(hooks, tmp_path):
    project = make_project(
        tmp_path / "project",
        {"train.py": 'import torch\n\ndevice = torch.device("cuda")\ntorch.cuda.synchronize()\n'},
        hooks[1],
    )
    first = run_hook(hooks, project, "cudalint-fix")
    assert first.returncode == 1, first.stdout + first.stderr
    assert re.search(r"^cudalint \(fix\)\.+Failed$", first.stdout, re.M)
    assert "- files were modified by this hook" in first.stdout
    fixed = (project / "train.py").read_text()
    assert 'torch.device("cuda")' not in fixed
    assert "torch.cuda.synchronize()" not in fixed
    second = run_hook(hooks, project, "cudalint-fix")
    assert second.returncode == 0, second.stdout + second.stderr
    assert (project / "train.py").read_text() == fixed


def test_file_names_that_look_like_options_are_linted(hooks, tmp_path):
    """pre-commit appends file names to the entry; `--` before them keeps `-dash.py` and `--fix.py` file names."""
    project = make_project(
        tmp_path / "project",
        {"-dash.py": "import torch\ntorch.cuda.synchronize()\n", "--fix.py": "import torch\nx = torch.ones(1).cuda()\n"},
        hooks[1],
    )
    result = run_hook(hooks, project, "cudalint")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "-dash.py:2:1: CDL201 " in result.stdout
    assert "--fix.py:2:19: CDL102 " in result.stdout
    assert (project / "--fix.py").read_text() == "import torch\nx = torch.ones(1).cuda()\n"  # linted, not a flag


def test_hook_definitions():
    validated = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True, text=True, timeout=60,
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert [(hook["id"], hook["entry"], hook["language"]) for hook in HOOKS] == [
        ("cudalint", "cudalint check --", "python"),
        ("cudalint-fix", "cudalint check --fix --", "python"),
    ]
    assert HOOKS[0]["files"] == HOOKS[1]["files"]
    assert f"files: '{HOOKS[0]['files']}'" in (ROOT / "README.md").read_text()  # the local-hook snippet


@pytest.mark.parametrize(
    "name",
    [
        "a.py", "pkg/b.pyi", "requirements.txt", "requirements-dev.in", "deps/requirements_gpu.txt",
        "constraints.txt", "requirements/base.txt", "pyproject.toml", "sub/setup.py", "setup.cfg",
        "environment.yml", "env/environment-gpu.yaml", "Pipfile", "poetry.lock", "uv.lock", "pixi.toml",
        "CMakeLists.txt", "cmake/cuda.cmake", "kernels/k.cu", "k.cuh", "Dockerfile", "docker/Dockerfile.gpu",
        "gpu.dockerfile", "conda.yaml", ".github/workflows/ci.yml", "cog.yaml", "Containerfile", "install.sh",
        "Makefile", "rules.mk", "tox.ini", "notebooks/train.ipynb", "pkg-1.0.dist-info/METADATA",
        "README.md", "notes.txt", "Pipfile.lock", "setup.pyc", "x.cpp", "cuda.txt", "requirements-x/a.txt", "install.shx", "tox.cfg", "train.ipynb.bak",
        "METADATA", "pkg.egg-info/PKG-INFO", "pkg-1.0.dist-info/RECORD",
    ],
)
def test_files_pattern_is_exactly_what_cudalint_reads(name):
    assert bool(re.search(HOOKS[0]["files"], name)) == (kind_of(Path(name)) is not None)
