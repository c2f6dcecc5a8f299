"""`cudalint server`: a language server (LSP) over standard input and output, built on pygls.

A front end like the command line: every diagnostic comes from `runner.run_text` on the editor's
buffer, every fix is the finding's own fix or `fixes.fix_text`, and `# noqa` is checked by
`noqa.py`; no rule lives here. pygls is an optional dependency (the `server` extra).
"""

from __future__ import annotations

import importlib.util
from typing import Optional

REQUIRED = ("pygls", "lsprotocol")


def missing_dependency() -> Optional[str]:
    """The first module the server needs that is not installed, or None."""
    for module in REQUIRED:
        if importlib.util.find_spec(module) is None:
            return module
    return None


def serve() -> None:
    """Serve one client over stdio until it says exit."""
    from cudalint.server.app import build_server

    build_server().start_io()
