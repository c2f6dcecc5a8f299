"""Where a cold `cudalint check` spends its CPU time, stage by stage, in one process.

    python bench/profile_cold.py TREE [--cprofile OUT.prof] [--files LIST] [-- CHECK ARGS...]

Runs `check --no-cache -j 1 --exit-zero -q TREE` (run from inside TREE; with `--files`, the paths the
file LIST names one per line, relative to TREE, instead of the whole tree: bench/run.py's TorchFix sample) with the worker pool
replaced by a loop in this process and the engine's big-stack thread by a direct call, so that
every stage is timed here: the project index (its CPython parse, which the gates share, and
the reachability pass), the gates, libcst's parse, the semantic model, positions, fix planning,
noqa, cutting large files into parts, and the cyclic garbage collector (whose passes fall inside
the other stages). Times are CPU seconds of this process (time.process_time), summed per stage;
"walk" is the engine's time less the stages inside it. `--cprofile` also writes a cProfile of the whole
run (which roughly doubles the time of Python-heavy stages). Reads internal names of the
runner and engine, so it may need updating when they change.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import gc
import io
import os
import sys
import time
from collections import Counter
from pathlib import Path

SPENT: Counter = Counter()
CALLS: Counter = Counter()


def timed(owner, name: str, label: str) -> None:
    """Count the CPU time of owner.name (not re-entrant: for functions that do not call themselves)."""
    function = getattr(owner, name)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[label] += time.process_time() - start
            CALLS[label] += 1

    setattr(owner, name, wrapper)


def in_process(todo, settings, jobs, finished, tick, passed=None):
    """The worker pool's work, here."""
    from cudalint import runner

    for index, source, version in todo:
        finished(index, runner.lint_source(source, settings, version, (passed or {}).get(index)))
        tick()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--cprofile", metavar="OUT")
    parser.add_argument("--files", metavar="LIST", help="check the paths this file lists (one per line) instead of TREE")
    parser.add_argument("extra", nargs="*", help="more `check` arguments, after --")
    args = parser.parse_args()
    paths = ["."]
    if args.files:
        try:
            paths = [line.strip() for line in Path(args.files).read_text().splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError) as error:
            parser.error(f"--files {args.files}: {error}")
    os.chdir(args.tree)
    started = time.process_time()
    import libcst

    from cudalint import noqa, runner
    from cudalint.project import facts, index
    from cudalint.python import analyze, engine, fixplan, parts, positions, semantic  # noqa: F401 - imported to be timed

    imported = time.process_time() - started
    sys.setrecursionlimit(20000)  # the engine runs on this thread's stack here
    analyze._deep_stack = lambda function, *rest: function(*rest)
    runner._lint_parallel = in_process
    timed(runner, "project_index", "project index (all)")
    timed(analyze, "cpython_tree", "CPython parse (index + gates)")
    timed(facts, "collect_uses", "index: reachability pass")
    timed(analyze, "_mentions", "gates: tree search")
    timed(analyze.Checks, "gates", "gate words")
    timed(libcst, "parse_module", "libcst parse")
    timed(engine, "analyze_module", "engine (all)")
    timed(engine, "SemanticModel", "semantic model pre-pass")
    timed(engine, "whole_module", "positions: whole module")
    timed(engine, "_anchored", "positions: per statement")
    timed(engine, "FileFixer", "fix planning: setup")
    timed(runner, "_filter", "noqa and selection")
    timed(runner, "_warm_up", "warm-up")
    timed(parts, "top_level_starts", "parts: cutting a large file")
    timed(parts, "_import_lines", "parts: the imports of each part")
    collecting = []

    def collection(phase, info):  # the cyclic garbage collector's passes, wherever they fall
        if phase == "start":
            collecting.append(time.process_time())
        elif collecting:
            SPENT["cyclic garbage collection (inside the stages above)"] += time.process_time() - collecting.pop()
            CALLS["cyclic garbage collection (inside the stages above)"] += 1

    gc.callbacks.append(collection)
    profile = cProfile.Profile() if args.cprofile else None
    if profile:
        profile.enable()
    from cudalint.cli import main as cli

    with contextlib.redirect_stdout(io.StringIO()):  # the findings: only the table is printed
        cli(["check", "--no-cache", "-j", "1", "--exit-zero", "-q", *args.extra, *paths])
    if profile:
        profile.disable()
        profile.dump_stats(args.cprofile)
    total = time.process_time() - started
    engine_inner = sum(SPENT[label] for label in ("libcst parse", "semantic model pre-pass", "positions: whole module",
                                                  "positions: per statement", "fix planning: setup"))
    SPENT["walk and fix planning (engine less the above)"] = SPENT["engine (all)"] - engine_inner
    SPENT["imports before the run"] = imported
    print(f"{args.tree}: {total:.2f} CPU s in one process")
    print("| stage | CPU s | share | calls |")
    print("|---|---:|---:|---:|")
    for label, spent in sorted(SPENT.items(), key=lambda item: -item[1]):
        print(f"| {label} | {spent:.2f} | {spent / total:.0%} | {CALLS.get(label, '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
