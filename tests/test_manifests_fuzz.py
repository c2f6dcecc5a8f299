"""Structure-aware mutations of every manifest format: whatever a mutation makes of a real file,
reading it never raises, and every finding points inside the file. Bounded: a fixed number of
examples per format, no deadline (the machine's load must not decide the result)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudalint.manifests import check_manifest, manifest_kind
from cudalint.manifests.base import split_lines

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"

# (the name it is checked under, the fixture its mutations start from)
FORMATS = [
    ("requirements.txt", "pip/requirements.txt"),
    ("pyproject.toml", "pep621/pyproject.toml"),
    ("pyproject.toml", "poetry/pyproject.toml"),
    ("pyproject.toml", "uv/pyproject.toml"),
    ("pyproject.toml", "hatch/pyproject.toml"),
    ("setup.py", "setup/setup.py"),
    ("setup.cfg", "setup/setup.cfg"),
    ("environment.yml", "conda/environment.yml"),
    ("conda.yaml", "conda/conda.yaml"),
    ("cog.yaml", "cog/cog.yaml"),
    ("ci.yml", "shell/.github/workflows/ci.yml"),
    ("Pipfile", "pipfile/Pipfile"),
    ("poetry.lock", "locks/poetry.lock"),
    ("uv.lock", "locks/uv.lock"),
    ("pixi.toml", "pixi/pixi.toml"),
    ("CMakeLists.txt", "cmake/CMakeLists.txt"),
    ("Dockerfile", "docker/Dockerfile.install"),
    ("install.sh", "shell/install.sh"),
    ("Makefile", "shell/Makefile"),
    ("README.md", "docs/README.md"),
]

# Pieces each format gives meaning to, and pieces that have broken readers before.
TOKENS = [
    "[", "]", "[[", "]]", "{", "}", "(", ")", '"', "'", '"""', "'''", "\\", "\\\n", "#", "#[[", "]]", "=", ":",
    "- ", "  - ", "::", "@", ";", " ; ", "&&", "|", "$(", "${", "`", "<<EOF\n", "\nEOF\n", "\t", "\n", "\r\n",
    "\r", "\f", "\u2028", "\x85", "\x00", "\ufeff", "https://[x", "git+https://[x", "-r ", "-c ", "-e ",
    "--index-url ", "-r /etc/passwd", "-r ../../x", "+cu118", "torch==2.1.0+cu121", "pip install ",
    "conda install -c nvidia ", "RUN ", "FROM ", "run: ", "script:\n  - ", "&a ", "*a", "!!python/object ",
    "[" * 100, "]" * 100, "{a=" * 70, "- " * 80, "é", "\U0001F600", "x" * 5000,
]


@st.composite
def mutated(draw, text: str) -> str:
    """A few edits, each at a line or character boundary: insert a token, delete or duplicate a
    span, swap two lines, or cut the text short."""
    for _ in range(draw(st.integers(1, 4))):
        operation = draw(st.sampled_from(["insert", "delete", "duplicate", "swap", "truncate"]))
        at = draw(st.integers(0, len(text)))
        if operation == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif operation == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif operation == "duplicate":
            piece = text[at: at + draw(st.integers(1, 200))]
            text = text[:at] + piece * draw(st.integers(2, 30)) + text[at:]
        elif operation == "swap":
            lines = text.split("\n")
            if len(lines) > 1:
                a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
                lines[a], lines[b] = lines[b], lines[a]
                text = "\n".join(lines)
        else:
            text = text[:at]
    return text


@pytest.mark.parametrize("name, fixture", FORMATS, ids=[fixture for _, fixture in FORMATS])
def test_mutations_never_raise(name, fixture):
    original = (FIXTURES / fixture).read_text(encoding="utf-8")
    kind = manifest_kind(name, include_docs=True)
    assert kind is not None

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(mutated(original))
    def check(text):
        lines = len(split_lines(text)) + 1
        for finding in check_manifest(name, text):
            assert 1 <= finding.line <= lines and finding.column >= 1, finding
            assert finding.end_line >= finding.line
            assert "hunter2" not in finding.message

    check()
