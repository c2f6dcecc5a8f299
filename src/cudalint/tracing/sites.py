"""The first stack frame of the user's own code: frames in torch, cudalint and the standard library are skipped."""

from __future__ import annotations

import os
import sys
from typing import Dict, Optional

from .records import Site


class SiteFinder:
    def __init__(self, torch_dir: str):
        cudalint_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        stdlib_dir = os.path.dirname(os.path.abspath(os.__file__))
        self._tool_dirs = tuple(os.path.join(d, "") for d in (torch_dir, cudalint_dir))
        self._stdlib = os.path.join(stdlib_dir, "")
        self._is_user: Dict[str, bool] = {}
        self._cwd = os.path.join(os.getcwd(), "")

    def is_user(self, filename: str) -> bool:
        known = self._is_user.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            in_stdlib = path.startswith(self._stdlib) and not any(
                part in path for part in ("site-packages", "dist-packages"))
            known = not (filename.startswith("<") or path.startswith(self._tool_dirs) or in_stdlib)
            self._is_user[filename] = known
        return known

    def find(self) -> Optional[Site]:
        """The innermost user frame of the current stack; None when there is none."""
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if self.is_user(filename):
                return Site(self.display(filename), frame.f_lineno, frame.f_code.co_name)
            frame = frame.f_back
        return None

    def display(self, filename: str) -> str:
        path = os.path.abspath(filename)
        return os.path.relpath(path, self._cwd) if path.startswith(self._cwd) else path
