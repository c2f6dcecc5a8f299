"""Paths on the command line -> the files to lint, each with its kind."""

from __future__ import annotations

import fnmatch
import os
import re
from collections import namedtuple
from collections.abc import Iterator, Sequence
from pathlib import Path

from cudalint import manifests
from cudalint.fileio import UnreadableFile, inside, is_regular, read_regular

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"  # a Jupyter notebook: its code cells are checked (notebooks.py)
MAX_FOLDER_REQUIREMENTS = 100  # .txt/.in files read as requirements because of their folder, per walk


class SourceFile(namedtuple("SourceFile", "path display kind")):
    """A file to lint: path, a Path as found on disk; display, a str as the user would write it; kind,
    "python" or a manifest kind. (A namedtuple: made at every start; see findings.py.)"""

    __slots__ = ()


class MissingPath(ValueError):
    pass


def kind_of(path: Path, include_docs: bool = False) -> str | None:
    """"python" for a Python file (setup.py too: the runner reads it as a manifest as well), "notebook" for
    a Jupyter notebook, else the manifest reader for the name, else None."""
    if path.name.endswith(PYTHON_SUFFIXES):
        return "python"
    if is_notebook(path.name):
        return "notebook"
    return manifests.manifest_kind(str(path), include_docs)


def is_notebook(path: str) -> bool:
    """A Jupyter notebook, by its name: checked as the script of its code cells (notebooks.py)."""
    return path.endswith(NOTEBOOK_SUFFIX)


def display_path(path: Path, cwd: Path) -> str:
    try:
        return str(Path(os.path.abspath(path)).relative_to(cwd))
    except ValueError:
        return str(path)


class GitIgnore:
    """The .gitignore files met on the way down, matched the way git does for common patterns."""

    def __init__(self) -> None:
        # (folder, compiled pattern, matches the path relative to folder?, negate, dir_only)
        self.rules: list[tuple[str, "re.Pattern[str]", bool, bool, bool]] = []

    def load(self, folder: str) -> None:
        try:
            lines = read_regular(os.path.join(folder, ".gitignore")).decode("utf-8", "replace").splitlines()
        except UnreadableFile:
            return
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            pattern = line[1:] if negate else line
            dir_only = pattern.endswith("/")
            pattern = pattern.rstrip("/")
            anchored = "/" in pattern
            pattern = pattern.lstrip("/")
            translated = fnmatch.translate(pattern)
            if anchored and pattern.startswith("**/"):
                translated = f"(?:{translated}|{fnmatch.translate(pattern[3:])})"
            self.rules.append((folder, re.compile(translated), anchored, negate, dir_only))

    def ignored(self, path: str, is_dir: bool) -> bool:
        result = False
        name = os.path.basename(path)
        for folder, pattern, anchored, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if not path.startswith(folder + os.sep):
                continue
            subject = path[len(folder) + 1 :].replace(os.sep, "/") if anchored else name
            if pattern.match(subject):
                result = not negate
        return result


class Excludes:
    """`exclude` globs, matched against a name or the path relative to the project root."""

    def __init__(self, patterns: Sequence[str], root: Path) -> None:
        joined = "|".join(fnmatch.translate(p.rstrip("/")) for p in patterns)
        self.pattern = re.compile(joined) if joined else None
        self.root = os.path.abspath(root)

    def __call__(self, path: str) -> bool:
        if self.pattern is None:
            return False
        if self.pattern.match(os.path.basename(path)):
            return True
        relative = os.path.relpath(path, self.root).replace(os.sep, "/") if path.startswith(self.root) else path
        return bool(self.pattern.match(relative))


def is_virtualenv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg")) or os.path.isdir(os.path.join(folder, "conda-meta"))


def discover(
    paths: Sequence[str], exclude: Sequence[str], root: Path, cwd: Path | None = None, include_docs: bool = False
) -> Iterator[SourceFile]:
    """Files named on the command line are always linted, read as what their content says when their
    name does not; folders are walked with the excludes.

    A walk yields regular files only (a FIFO, a device or a socket is passed over); anything else named
    on the command line is yielded too, and reading it then gives a CDL000 saying what it is."""
    cwd = (cwd or Path.cwd()).resolve()
    excludes: Excludes | None = None  # compiled for the first folder: files named alone need none
    seen: set = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise MissingPath(f"{raw}: no such file or directory")
        if not path.is_dir():
            key = os.path.abspath(path)
            if key not in seen:
                seen.add(key)
                yield SourceFile(path, display_path(path, cwd), kind_of(path) or manifests.sniff_kind(str(path)))
            continue
        excludes = excludes or Excludes(exclude, root)
        yield from _walk(os.path.abspath(path), excludes, cwd, seen, include_docs, os.path.abspath(root))


def _walk(
    top: str, excludes: Excludes, cwd: Path, seen: set, include_docs: bool = False, root: str | None = None
) -> Iterator[SourceFile]:
    gitignore = GitIgnore()
    ancestors = [str(folder) for folder in reversed(Path(top).parents)]
    git_root = next((folder for folder in reversed(ancestors) if os.path.exists(os.path.join(folder, ".git"))), None)
    if git_root is not None:
        for folder in ancestors[ancestors.index(git_root) :]:
            gitignore.load(folder)
    prefix = str(cwd) + os.sep
    by_folder = 0  # requirements lists known only by the requirements*/ folder they are in
    base = root or os.path.dirname(top)  # folders above the project do not make a requirements list
    for folder, dirnames, filenames in os.walk(top):
        gitignore.load(folder)
        kept = []
        for name in sorted(dirnames):
            child = os.path.join(folder, name)
            if excludes(child) or is_virtualenv(child) or gitignore.ignored(child, True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            child = os.path.join(folder, name)
            relative = os.path.relpath(child, base)
            kind = kind_of(Path(relative), include_docs)
            if kind is None or child in seen or excludes(child) or gitignore.ignored(child, False):
                continue
            if not is_regular(child) and os.path.exists(child):
                continue  # a FIFO, device or socket in the tree (a dangling link is reported when read)
            if kind == "requirements" and manifests.in_requirements_folder(relative):
                if by_folder >= MAX_FOLDER_REQUIREMENTS or not inside(top, child):
                    continue  # a folder of thousands of .txt files, or a link out of the tree: not a manifest
                by_folder += 1
            seen.add(child)
            display = child[len(prefix) :] if child.startswith(prefix) else child
            yield SourceFile(Path(child), display, kind)
