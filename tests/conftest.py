import subprocess
import sys
from pathlib import Path

import pytest

from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.runner import lint_text

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
DATA = ROOT / "data"  # the facts the catalog and the coverage database are built from


def findings_of(
    text: str, *, path: str = "example.py", kind: str = "python", select=None, torch_version="2.15", project_files=None
):
    """Findings of one text; with `project_files` ({path: text}), as a file of a project holding them."""
    catalog = load_catalog()
    codes = frozenset(select) if select is not None else frozenset(rule.code for rule in catalog)
    if not project_files:
        return lint_text(path, kind, text, Settings(select=codes), torch_version)
    import os
    import tempfile

    from cudalint.runner import project_index

    with tempfile.TemporaryDirectory() as folder:
        for name, content in {**project_files, path: text}.items():
            target = Path(folder, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        settings = Settings(select=codes, root=Path(folder))
        settings.project = project_index(settings)
        previous = os.getcwd()
        os.chdir(folder)
        try:
            return lint_text(path, kind, text, settings, torch_version)
        finally:
            os.chdir(previous)


def triples(findings):
    return [(f.code, f.line, f.column) for f in sorted(findings, key=lambda f: f.sort_key)]


def run_cli(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "cudalint", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def settings():
    """The default settings with the bundled catalog."""
    from cudalint.config import resolve

    return resolve(load_catalog(), config_path=None)


@pytest.fixture
def engine_calls(monkeypatch):
    """The paths the libcst engine was asked to lint (a file the gates settle never gets there)."""
    from cudalint.python import engine

    calls = []
    real = engine.analyze_module

    def recording(path, *args):
        calls.append(path)
        return real(path, *args)

    monkeypatch.setattr(engine, "analyze_module", recording)
    return calls


def write_tree(root: Path, files) -> None:
    """A project of files: {relative path: text}."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def lint_tree(root: Path, monkeypatch, files):
    """`cudalint check .` in a project of `files` with the default rules: (path, code, line, column)."""
    from cudalint import runner
    from cudalint.config import resolve

    write_tree(root, files)
    monkeypatch.chdir(root)
    result = runner.run(["."], resolve(load_catalog(), config_path=None), jobs=1)
    return [(f.path, f.code, f.line, f.column) for f in result.findings]
