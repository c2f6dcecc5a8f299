"""CDL220: a subprocess started for a program only CUDA (or ROCm) hosts have.

    gpus = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv"])

On a Mac there is no nvidia-smi: Popen (and run, call, check_call and check_output, which start one)
raises FileNotFoundError, and through a shell the two that check the exit status raise
CalledProcessError. Which programs and calls count is rules/guards.toml's (off_mac_programs,
program_runners, checked_runners), the facts the guard evaluator reads for helpers that count GPUs
this way. The walk's guards apply as for every finding: a call under a CUDA test, in a test skipped
without CUDA, or in a `try:` whose handler catches the error and goes on is not reported.
"""

from __future__ import annotations

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.mac_failures import missing_program
from cudalint.python.names import source_of
from cudalint.python.visitor import Registry


def program_runs(registry: Registry) -> None:
    registry.on(cst.Call, _program_run)


def _program_run(node: cst.Call, ctx: FileContext) -> None:
    program = missing_program(ctx.model, node, ctx.model.scope)
    if program is not None:
        ctx.report("CDL220", node, f"{source_of(node.func)} starts {program}, which a Mac does not have: the call raises there;"
                                   f" check shutil.which({program!r}) first, or catch the error and go on without it")
