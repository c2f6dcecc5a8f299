"""`cudalint trace`: run the user's code under a TorchDispatchMode and say what MPS would do with it.

    with cudalint.trace(torch_version="2.5") as t:
        model(x)
    print(t.text())            # or t.document() for the JSON document, t.assessment.would_raise

Only this part of cudalint needs torch (`pip install cudalint[trace]`).
"""

from __future__ import annotations

from typing import Optional

from .assess import Assessment, assess
from .program import UsageError
from .records import TraceData
from .render import trace_document, trace_text
from .target import Target, choose_target

TORCH_MISSING = (
    "cudalint trace needs torch, which is not installed in this Python environment: "
    "pip install cudalint[trace]"
)


class TorchMissing(ImportError):
    pass


def import_torch():
    try:
        import torch
    except ImportError:
        raise TorchMissing(TORCH_MISSING) from None
    return torch


class trace:  # noqa: N801 - used as `with cudalint.trace() as t:`
    """Record what the code in a `with` block dispatches; afterwards `data`, `assessment`, `document()`,
    `text()`. The code runs unchanged."""

    def __init__(self, torch_version: Optional[str] = None, *, ran: Optional[dict] = None,
                 asked_by: str = "torch_version"):
        from .recorder import Recorder

        self._torch = import_torch()
        self.installed: str = self._torch.__version__
        self.target: Target = choose_target(torch_version, self.installed, asked_by)
        self.ran = ran or {"command": "the code inside `with cudalint.trace()`", "kind": "python-api",
                           "exit_code": None, "error": None}
        self._recorder = Recorder(self._torch)
        self.data: Optional[TraceData] = None
        self.assessment: Optional[Assessment] = None

    def __enter__(self) -> "trace":
        self._recorder.start()
        return self

    def __exit__(self, *exc_info) -> bool:
        self._recorder.stop()
        self.data = self._recorder.data()
        self.assessment = assess(self.data, self.target.release)
        return False

    def document(self) -> dict:
        return trace_document(self.ran, self.installed, self.target, self.data, self.assessment)

    def text(self) -> str:
        return trace_text(self.document())


__all__ = ["TORCH_MISSING", "Target", "TorchMissing", "UsageError", "trace"]
