"""How the project index names a file: its path relative to the project root, with "/"."""

from __future__ import annotations

import os


def project_key(path: str, root: str) -> str:
    """A path as the index names it: relative to the project root, with "/"."""
    absolute = os.path.abspath(path)
    try:
        relative = os.path.relpath(absolute, root)
    except ValueError:
        return absolute
    return relative.replace(os.sep, "/")
