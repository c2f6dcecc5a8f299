"""How the project index names a file (its path relative to the project root, with "/") and a module a
script folder's file imports by its bare name."""

from __future__ import annotations

import os
from typing import Dict


def project_key(path: str, root: str) -> str:
    """A path as the index names it: relative to the project root, with "/"."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:
        return absolute
    return relative.replace(os.sep, "/")


def as_sibling(module: str, siblings: Dict[str, str]) -> str:
    """An absolute import's module as the project names it: in a script folder (one Python puts on sys.path
    for its files, as pytest does for a tests folder without __init__.py), a module beside the file comes
    before any other of that name (`siblings`: bare name -> module, index.sibling_folders)."""
    head, dot, rest = module.partition(".")
    found = siblings.get(head)
    return found + dot + rest if found else module
