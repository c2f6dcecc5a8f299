"""Fixed code is written like a person would: ruff's pycodestyle rules (E, W) find no kind of
problem in the fixed output of the fixture set and of every pinned case that they did not find
in the original (a file indented with tabs keeps its tabs, and its W191)."""

import collections
import json
import subprocess
import sys

import pytest
from conftest import FIXTURES
from test_fix_cases import CASES as ISSUE_CASES
from test_fix_outputs import CASES as RULE_CASES
from test_fix_outputs import DEFAULT

from cudalint.fixes import fix_text

FIXTURE_FILES = sorted(path for folder in ("python", "demo", "e2e") for path in (FIXTURES / folder).glob("*.py"))


def ruff_codes(folder):
    """Per file, the E/W codes ruff reports (isolated from any configuration, line length 88)."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "E,W", "--output-format", "json", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode in (0, 1), result.stderr
    found = collections.defaultdict(collections.Counter)
    for item in json.loads(result.stdout):
        found[item["filename"].rsplit("/", 1)[-1]][item["code"]] += 1
    return found


def _texts():
    for path in FIXTURE_FILES:
        yield f"{path.parent.name}_{path.name}", path.read_text(encoding="utf-8")
    for name, _, _, before, _ in RULE_CASES + ISSUE_CASES:
        yield f"case_{name.replace('-', '_')}.py", before


@pytest.mark.parametrize("version", ["2.3", "2.13"])
def test_fixed_output_adds_no_pycodestyle_findings(tmp_path, version):
    original, fixed = tmp_path / "original", tmp_path / "fixed"
    original.mkdir()
    fixed.mkdir()
    changed = 0
    for name, text in dict(_texts()).items():
        outcome = fix_text(name, text, DEFAULT, version, unsafe=True)
        assert outcome.error is None, (name, outcome.error)
        changed += outcome.fixed != text
        (original / name).write_text(text, encoding="utf-8")
        (fixed / name).write_text(outcome.fixed, encoding="utf-8")
    assert changed >= 30
    before, after = ruff_codes(original), ruff_codes(fixed)
    new = {name: set(codes) - set(before.get(name, ())) for name, codes in after.items()}
    assert {name: codes for name, codes in new.items() if codes} == {}


def test_ruff_sees_a_one_line_if(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nif torch.accelerator.is_available(): torch.accelerator.synchronize()\n")
    assert ruff_codes(tmp_path) == {"m.py": collections.Counter({"E701": 1})}
