"""The files a requirements file pulls in with -r/-c, read the way a cautious reviewer would.

An include is followed only when it is a regular file inside the project (so `-r /etc/shadow` or
`-r ../../.netrc` is never opened, and its content never reaches a message), no larger than
MAX_BYTES, and while fewer than MAX_FILES files have been read for one top-level file. Each refusal is
one problem on the include's line that names the target as the manifest writes it, and nothing more.
"""

from __future__ import annotations

import os
import stat
from typing import Callable, List, Optional, Tuple

from cudalint.manifests.base import Parsed, Problem
from cudalint.manifests.requirement import looks_like_url
from cudalint.manifests.requirements import read_requirements

MAX_FILES = 256
MAX_BYTES = 16 * 1024 * 1024


def project_root(path: str) -> str:
    """The nearest folder at or above the file's that holds `.git`; else the working directory when
    the file is under it; else the file's own folder."""
    folder = os.path.dirname(os.path.abspath(path))
    probe = folder
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    cwd = os.getcwd()
    return cwd if _inside(folder, cwd) else folder


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_limited(path: str, limit: int = MAX_BYTES) -> Tuple[Optional[str], Optional[str]]:
    """(text, None), or (None, why not): only a regular file, at most `limit` bytes, UTF-8.

    Opened without blocking, so a FIFO named like a requirements file cannot stall the run."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        return None, f"cannot open it ({error.strerror or error})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "it is not a regular file"
        if info.st_size > limit:
            return None, f"it is larger than {limit // (1024 * 1024)} MiB"
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        return None, f"cannot read it ({error.strerror or error})"
    finally:
        os.close(fd)
    if len(data) > limit:
        return None, f"it is larger than {limit // (1024 * 1024)} MiB"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        return None, f"it is not UTF-8 (byte {error.start})"


def requirements_tree(
    path: str, text: str, linted_on_its_own: Callable[[str], bool], root: Optional[str] = None
) -> List[Parsed]:
    """A requirements file and the -r/-c files it includes (the ones the engine would not lint anyway)."""
    root = root or project_root(path)
    seen = {os.path.normcase(os.path.abspath(path))}
    results: List[Parsed] = []
    pending = [(path, text)]
    while pending:
        current, current_text = pending.pop()
        parsed, includes = read_requirements(current, current_text)
        results.append(parsed)
        for include in includes:
            if looks_like_url(include.target) or "$" in include.target:
                continue

            def refuse(why: str) -> None:
                parsed.problems.append(
                    Problem(current, include.span, f"line {include.span.line}: {include.target!r} was not read: {why}")
                )

            target = os.path.normpath(os.path.join(os.path.dirname(current), include.target))
            key = os.path.normcase(os.path.abspath(target))
            if not _inside(target, root):
                refuse("it is outside the project")
                continue
            if not os.path.lexists(target):
                parsed.problems.append(
                    Problem(current, include.span, f"line {include.span.line}: included file {include.target!r} not found")
                )
                continue
            if key in seen or linted_on_its_own(target):
                continue
            if len(seen) >= MAX_FILES:
                refuse(f"more than {MAX_FILES} requirement files are included from {os.path.basename(path)!r}")
                continue
            included, why = read_limited(target)
            if included is None:
                refuse(why or "unreadable")
                continue
            seen.add(key)
            pending.append((target, included))
    return results
