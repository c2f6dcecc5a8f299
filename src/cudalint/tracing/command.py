"""`cudalint trace ...` on the command line: exit 1 when an operator the run reached would raise on MPS,
0 otherwise, 2 for usage errors (torch missing included)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import TorchMissing, UsageError, trace
from .program import check_runnable, program_from, run_program


def trace_command(command: Sequence[str], module: Optional[Sequence[str]], torch_version: Optional[str],
                  output: Optional[str], fmt: Optional[str]) -> int:
    """The report goes to stderr (the program keeps stdout to itself), or to `output`."""
    try:
        program = program_from(command, module)
        check_runnable(program)
        fmt = fmt or ("json" if output and output.endswith(".json") else "text")
        session = trace(torch_version, ran={"command": program.shown(), "kind": program.kind,
                                            "exit_code": None, "error": None}, asked_by="--torch-version")
    except (UsageError, TorchMissing) as exc:
        print(f"cudalint: error: {exc}", file=sys.stderr)
        return 2
    with session:
        exit_code, error = run_program(program)
    session.ran.update(exit_code=exit_code, error=error)
    doc = session.document()
    rendered = json.dumps(doc, indent=2) + "\n" if fmt == "json" else session.text()
    sys.stdout.flush()
    if output:
        Path(output).write_text(rendered, encoding="utf-8")
        summary = session.text().rstrip("\n").splitlines()[-1]
        print(f"cudalint trace: wrote {output}. {summary}", file=sys.stderr)
    else:
        sys.stderr.write(rendered)
    return doc["exit_status"]

