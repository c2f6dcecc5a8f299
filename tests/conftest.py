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


def findings_of(text: str, *, path: str = "example.py", kind: str = "python", select=None, torch_version="2.15"):
    catalog = load_catalog()
    codes = frozenset(select) if select is not None else frozenset(rule.code for rule in catalog)
    return lint_text(path, kind, text, Settings(select=codes), torch_version)


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
