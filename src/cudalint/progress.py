"""A progress line on stderr for long runs, only for a person watching a terminal.

It stays silent when stderr is not a terminal (a pipe, a file, pre-commit's capture),
when CI is set, and on short runs: it appears once a run has more than `min_files`
files or has taken more than `min_seconds`, and it erases itself at the end.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from io import TextIOBase


def wanted(stream: TextIOBase, environ: Mapping[str, str]) -> bool:
    ci = environ.get("CI", "")
    if ci and ci.lower() not in ("0", "false", "no"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    def __init__(
        self,
        stream: TextIOBase | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        min_files: int = 200,
        min_seconds: float = 2.0,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = wanted(self.stream, os.environ if environ is None else environ)
        self.min_files = min_files
        self.min_seconds = min_seconds
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.shown = False
        self.last = float("-inf")
        self.width = 0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if not self.shown and total <= self.min_files and now - self.started <= self.min_seconds:
            return
        if done < total and now - self.last < self.interval:
            return
        self.shown = True
        self.last = now
        line = f"cudalint: checked {done}/{total} files ({100 * done // max(total, 1)}%)"
        self.width = max(self.width, len(line))
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()

    def close(self) -> None:
        """Erase the line so the report starts on a clean terminal line."""
        if self.shown:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.shown = False
