"""`cudalint trace ...` on the command line: exit 1 when an operator the run reached would raise on MPS,
0 otherwise, 2 for usage errors (torch missing included).

The report is written exactly once, by this process: also when the program ends with os._exit()
(the report is written first, then the process ends), never by a process the program forked. Processes
the program starts (DataLoader workers) are counted and the report says their operators were not traced.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from cudalint.fileio import writable_output

from . import TorchMissing, UsageError, trace
from .program import check_runnable, program_from, run_program


def trace_command(command: Sequence[str], module: Optional[Sequence[str]], torch_version: Optional[str],
                  output: Optional[str], fmt: Optional[str]) -> int:
    """The report goes to stderr (the program keeps stdout to itself), or to `output`."""
    try:
        program = program_from(command, module)
        check_runnable(program)
        if output:
            problem = writable_output(Path(output))
            if problem:
                raise UsageError(f"--output {output}: {problem}")  # before the program runs, not after
        fmt = fmt or ("json" if output and output.endswith(".json") else "text")
        session = trace(torch_version, ran={"command": program.shown(), "kind": program.kind,
                                            "exit_code": None, "error": None}, asked_by="--torch-version")
    except (UsageError, TorchMissing) as exc:
        print(f"cudalint: error: {exc}", file=sys.stderr)
        return 2
    tracer = os.getpid()
    watch = _ProcessWatch(tracer)

    def finish(exit_code: int, error: Optional[str]) -> int:
        session.ran.update(exit_code=exit_code, error=error)
        if watch.started:
            session.ran["untraced_processes"] = watch.started
        return _report(session, fmt, output)

    real_exit = os._exit

    def exit_now(status: int) -> None:
        """os._exit() in the traced program: end the trace and write the report, then end the process."""
        if os.getpid() == tracer:
            _flush(sys.stdout)
            os._exit = real_exit
            session.__exit__(None, None, None)
            status = finish(status, None)
            _flush(sys.stderr)
        real_exit(status)

    os._exit = exit_now
    try:
        with watch, session:
            exit_code, error = run_program(program)
    finally:
        os._exit = real_exit
    if os.getpid() != tracer:  # a forked child that returned through the program: the parent reports
        _flush(sys.stdout)
        _flush(sys.stderr)
        os._exit(exit_code)
    return finish(exit_code, error)


def _report(session, fmt: str, output: Optional[str]) -> int:
    doc = session.document()
    rendered = json.dumps(doc, indent=2) + "\n" if fmt == "json" else session.text()
    _flush(sys.stdout)
    if output:
        try:
            Path(output).write_text(rendered, encoding="utf-8")
        except OSError as exc:
            print(f"cudalint: error: --output {output}: {exc.strerror or exc}", file=sys.__stderr__)
            return 2
        summary = session.text().rstrip("\n").splitlines()[-1]
        _say(f"cudalint trace: wrote {output}. {summary}\n")
    else:
        _say(rendered)
    return doc["exit_status"]


def _flush(stream) -> None:
    try:
        stream.flush()
    except (ValueError, OSError, AttributeError):  # the program closed or replaced it
        pass


def _say(text: str) -> None:
    """To stderr; to the original stderr when the program closed or replaced sys.stderr."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            stream.write(text)
            stream.flush()
            return
        except (ValueError, OSError, AttributeError):
            continue


class _ProcessWatch:
    """Counts the processes the traced program starts: multiprocessing's (any start method) and bare forks."""

    def __init__(self, tracer: int):
        self.tracer = tracer
        self.started = 0
        self.active = False
        self.starting = False  # inside multiprocessing's start(): its fork is already counted
        self._restore = None

    def _forked(self) -> None:
        if self.active and not self.starting and os.getpid() == self.tracer:
            self.started += 1

    def __enter__(self) -> "_ProcessWatch":
        import multiprocessing.process

        self.active = True
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(before=self._forked)  # cannot be unregistered: `active` turns it off
        base = multiprocessing.process.BaseProcess
        real_start = base.start
        watch = self

        def start(process):
            if watch.active and os.getpid() == watch.tracer:
                watch.started += 1
            watch.starting = True
            try:
                return real_start(process)
            finally:
                watch.starting = False

        base.start = start
        self._restore = lambda: setattr(base, "start", real_start)
        return self

    def __exit__(self, *exc_info) -> bool:
        self.active = False
        if self._restore:
            self._restore()
        return False
