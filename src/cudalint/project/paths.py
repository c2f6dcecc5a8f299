"""How the project index names a file (its path relative to the project root, with "/"), a module a
script folder's file imports by its bare name, and whether a module belongs to a test suite."""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

TEST_PARTS = frozenset({"test", "tests", "testing"})
ABSOLUTE = re.compile(r"^([A-Za-z]:)?[\\/]")  # /x, \x, C:\x, C:/x


def project_key(path: str, root: str) -> str:
    """A path as the index names it: relative to the project root, with "/"."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:
        return absolute
    return relative.replace(os.sep, "/")


def as_sibling(module: str, siblings: dict[str, str]) -> str:
    """An absolute import's module as the project names it: in a script folder (one Python puts on sys.path
    for its files, as pytest does for a tests folder without __init__.py), a module beside the file comes
    before any other of that name (`siblings`: bare name -> module, index.sibling_folders)."""
    head, dot, rest = module.partition(".")
    found = siblings.get(head)
    return found + dot + rest if found else module


# A module that says it holds tests: a test function or class, a TestCase, or pytest's or unittest's import.
DEFINES_TESTS = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+test|class[ \t]+Test|(?:import|from)[ \t]+(?:pytest|unittest)\b)|\bTestCase\b", re.M)


def test_module(module_name: str, path: str = "", text: str | bytes | None = None) -> bool:
    """A module of a test suite, by where it sits or its name (pytest's and unittest's conventions):
    under a test folder, `test_*.py`, `*_test.py`, `test.py` or `tests.py` (unittest's `test*.py`, Django's
    `tests.py`), or a conftest. The module name says where in the
    project; without one (a file linted alone) the path as given does, its folders only when relative.
    A `test.py` outside a test folder whose `text` holds no test (no test function or class, no TestCase,
    no pytest or unittest) is a program: the evaluation script beside a `train.py`."""
    if module_name:
        parts = module_name.replace("/", ".").split(".")  # `tests/test-io` names a file no import can name
    elif not path.strip("/"):
        return False
    else:
        parts = PurePosixPath(path.replace("\\", "/")).with_suffix("").parts
        if ABSOLUTE.match(path):
            parts = parts[-1:]  # the folders above the project say nothing about it
    if not parts:
        return False
    if TEST_PARTS.intersection(parts[:-1]):
        return True
    name = parts[-1]
    if name == "test" and text is not None:
        return DEFINES_TESTS.search(text if isinstance(text, str) else text.decode("utf-8", "replace")) is not None
    return name.startswith("test_") or name.endswith("_test") or name in ("test", "tests", "conftest")
