"""What `cudalint trace` runs, and running it in this process the way `python` would."""

from __future__ import annotations

import importlib.util
import os
import runpy
import shlex
import sys
import traceback
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple


class UsageError(ValueError):
    """The command to trace cannot be run (exit 2)."""


@dataclass(frozen=True)
class Program:
    kind: str  # "script" or "module"
    target: str  # a path, or a dotted module name
    args: Tuple[str, ...]

    def shown(self) -> str:
        head = ["python", self.target] if self.kind == "script" else ["python", "-m", self.target]
        return shlex.join(head + list(self.args))


def program_from(command: Sequence[str], module: Optional[Sequence[str]] = None) -> Program:
    """`-m pkg.mod args`, `python script.py args`, `python -m pkg.mod args` or `script.py args`."""
    if module is not None:
        if not module:
            raise UsageError("-m needs a module name")
        return Program("module", module[0], tuple(module[1:]))
    words = list(command)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("nothing to trace: give `-- python script.py ARGS`, `-m package.module ARGS` "
                         "or `script.py ARGS`")
    if _is_python(words[0]):
        words = words[1:]
        if words and words[0] == "-m":
            if len(words) < 2:
                raise UsageError("-m needs a module name")
            return Program("module", words[1], tuple(words[2:]))
        if not words or words[0].startswith("-"):
            raise UsageError("trace runs a script or a module in its own process: give `python script.py ARGS` "
                             "or `python -m package.module ARGS` (other interpreter options are not supported)")
    elif not words[0].endswith(".py"):
        raise UsageError(f"cannot trace {words[0]!r}: trace runs Python code in this process; give "
                         "`python script.py ARGS`, `python -m package.module ARGS` or `script.py ARGS`")
    return Program("script", words[0], tuple(words[1:]))


def _is_python(word: str) -> bool:
    name = os.path.basename(word)
    return name == "python" or name.startswith("python3") or word == sys.executable


def check_runnable(program: Program) -> None:
    if program.kind == "script":
        if not os.path.isfile(program.target):
            raise UsageError(f"{program.target}: no such file")
        return
    sys.path.insert(0, os.getcwd())
    try:
        found = importlib.util.find_spec(program.target)
    except (ImportError, ValueError):
        found = None
    finally:
        sys.path.pop(0)
    if found is None:
        raise UsageError(f"no module named {program.target!r}")


def run_program(program: Program) -> Tuple[int, Optional[str]]:
    """Run as `python` would, as __main__ with its own sys.argv and sys.path[0]; both are restored after.

    Returns (exit status, the exception that ended it or None). An uncaught exception's traceback is
    printed to stderr, as Python prints it, and gives exit status 1.
    """
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if program.kind == "script":
            sys.argv = [program.target, *program.args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(program.target)))
            runpy.run_path(os.path.abspath(program.target), run_name="__main__")  # as python 3.9+: absolute __file__
        else:
            sys.argv = [program.target, *program.args]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(program.target, run_name="__main__", alter_sys=True)
        return 0, None
    except SystemExit as exc:
        return _exit_status(exc.code), None
    except BaseException as exc:  # noqa: BLE001 - the program's own failure is reported, not raised
        _print_user_traceback(exc)
        return 1, f"{type(exc).__name__}: {exc}"
    finally:
        try:
            sys.stdout.flush()
        except (ValueError, OSError, AttributeError):  # the program closed or replaced stdout
            pass
        sys.argv, sys.path[:] = saved_argv, saved_path


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_user_traceback(exc: BaseException) -> None:
    """The traceback as Python prints it, less the frames of cudalint (and runpy) that ran the program."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
    report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    report.stack = traceback.StackSummary.from_list(
        [frame for frame in report.stack
         if not (frame.filename.startswith(here) or os.path.basename(frame.filename) == "runpy.py"
                 or frame.filename.startswith("<frozen runpy"))])
    sys.stderr.write("".join(report.format()))
