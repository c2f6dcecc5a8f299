"""Paths on the command line -> the files to lint, each with its kind."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from cudalint import manifests

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class SourceFile:
    path: Path  # as found on disk
    display: str  # as the user would write it
    kind: str  # "python" or a manifest kind


class MissingPath(ValueError):
    pass


def kind_of(path: Path) -> Optional[str]:
    name = path.name
    manifest = manifests.manifest_kind(str(path))
    if manifest is not None and not name.endswith(PYTHON_SUFFIXES):
        return manifest
    if name.endswith(PYTHON_SUFFIXES):
        return "python"
    return manifest


def display_path(path: Path, cwd: Path) -> str:
    try:
        return str(Path(os.path.abspath(path)).relative_to(cwd))
    except ValueError:
        return str(path)


class GitIgnore:
    """The .gitignore files met on the way down, matched the way git does for common patterns."""

    def __init__(self) -> None:
        self.rules: List[Tuple[Path, str, bool, bool]] = []  # (base, pattern, negate, dir_only)

    def load(self, folder: Path) -> None:
        folder = folder.resolve()
        try:
            lines = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            pattern = line[1:] if negate else line
            dir_only = pattern.endswith("/")
            self.rules.append((folder, pattern.rstrip("/"), negate, dir_only))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        result = False
        for base, pattern, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if "/" in pattern.lstrip("/"):
                hit = fnmatch.fnmatchcase(relative, pattern.lstrip("/")) or fnmatch.fnmatchcase(
                    relative, pattern.lstrip("/").replace("**/", "")
                )
            else:
                hit = fnmatch.fnmatchcase(path.name, pattern.lstrip("/")) if not pattern.startswith("/") else (
                    relative == pattern[1:]
                )
            if hit:
                result = not negate
        return result


def excluded(path: Path, patterns: Sequence[str], root: Path) -> bool:
    name = path.name
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = path.as_posix()
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(relative, p.rstrip("/")) for p in patterns)


def is_virtualenv(folder: Path) -> bool:
    return (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta").is_dir()


def discover(paths: Sequence[str], exclude: Sequence[str], root: Path, cwd: Optional[Path] = None) -> Iterator[SourceFile]:
    """Files named on the command line are always linted; folders are walked with the excludes."""
    cwd = (cwd or Path.cwd()).resolve()
    seen = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise MissingPath(f"{raw}: no such file or directory")
        if path.is_file():
            kind = kind_of(path) or "python"
            if path.resolve() not in seen:
                seen.add(path.resolve())
                yield SourceFile(path, display_path(path, cwd), kind)
            continue
        yield from _walk(path, exclude, root, cwd, seen)


def _walk(top: Path, exclude: Sequence[str], root: Path, cwd: Path, seen: set) -> Iterator[SourceFile]:
    gitignore = GitIgnore()
    ancestors = list(reversed(top.resolve().parents))
    git_root = next((folder for folder in reversed(ancestors) if (folder / ".git").exists()), None)
    if git_root is not None:
        for folder in ancestors[ancestors.index(git_root) :]:
            gitignore.load(folder)
    for folder, dirnames, filenames in os.walk(top):
        here = Path(folder)
        gitignore.load(here)
        kept = []
        for name in sorted(dirnames):
            child = here / name
            if excluded(child, exclude, root) or is_virtualenv(child) or gitignore.ignored(child.resolve(), True):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            child = here / name
            kind = kind_of(child)
            if kind is None or excluded(child, exclude, root) or gitignore.ignored(child.resolve(), False):
                continue
            resolved = child.resolve()
            if resolved in seen:
                continue
            seen.add(resolved)
            yield SourceFile(child, display_path(child, cwd), kind)
