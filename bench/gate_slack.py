"""Which files the gates let through to libcst that end with nothing to report, and the word that let them.

    python bench/gate_slack.py TREE [--top N]

Runs `check --no-cache -j 1 --exit-zero -q TREE` in this process (as profile_cold.py does) with the engine's
per-file entry and the checks' `report` wrapped: per file that reaches libcst, its engine CPU seconds, how
many times its checks tried to report (before guards and suppressions decide), and how many findings it
ended with. For the files whose checks never tried, it reads the file again through the second gate with the
gates' word sets wrapped, and names the last word the gate matched: the word a tighter gate would have to
ask more of. Prints a summary and the words by the CPU seconds of the files they let through. Reads internal
names of the runner, engine and context, so it may need updating when they change.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import sys
import time
from collections import Counter
from pathlib import Path

RELEASE = (2, 9, 1)  # the gates' words are read for one release, the one bench/EVAL.md's figures use


class _Noted(frozenset):
    """A word set that notes each word the gate finds in it."""

    hits: list = []

    def __contains__(self, word):
        found = frozenset.__contains__(self, word)
        if found:
            _Noted.hits.append(word)
        return found


class _NotedMap(dict):
    def __contains__(self, word):
        found = dict.__contains__(self, word)
        if found:
            _Noted.hits.append(word)
        return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    os.chdir(args.tree)
    sys.setrecursionlimit(20000)  # the engine runs on this thread's stack here
    from cudalint import runner
    from cudalint.catalog import load_catalog
    from cudalint.cli import main as cli
    from cudalint.python import analyze, context, engine

    def in_process(todo, settings, jobs, finished, tick, passed=None):
        for index, source, version in todo:
            finished(index, runner.lint_source(source, settings, version, (passed or {}).get(index)))
            tick()

    analyze._deep_stack = lambda function, *rest: function(*rest)
    runner._lint_parallel = in_process
    attempts = Counter()
    report = context.FileContext.report

    def counted(self, code, *rest, **options):
        attempts[code] += 1
        return report(self, code, *rest, **options)

    context.FileContext.report = counted
    rows = []  # (path, engine CPU s, attempts, findings)
    analyze_module = engine.analyze_module

    def timed(path, *rest, **options):
        attempts.clear()
        started = time.process_time()
        found = analyze_module(path, *rest, **options)
        rows.append((path, time.process_time() - started, sum(attempts.values()), len(found)))
        return found

    engine.analyze_module = timed
    with contextlib.redirect_stdout(io.StringIO()):
        cli(["check", "--no-cache", "-j", "1", "--exit-zero", "-q", "."])
    catalog = tuple(load_catalog())
    gates = analyze.checks_for(frozenset(rule.code for rule in catalog), catalog).gates(RELEASE)
    words, spent = Counter(), Counter()
    for path, seconds, tried, found in rows:
        if found or tried:
            continue
        _Noted.hits = []
        try:
            tree = ast.parse(Path(path).read_text(errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        analyze._mentions(tree, _Noted(gates.names), _Noted(gates.keywords), gates.strings, None, _NotedMap(gates.rooted),
                          _NotedMap(gates.resolved), _Noted(gates.called), gates.argued)
        word = _Noted.hits[-1] if _Noted.hits else "(a string or an import)"
        words[word] += 1
        spent[word] += seconds
    total = sum(row[1] for row in rows)
    empty = [row for row in rows if not row[3]]
    idle = [row for row in empty if not row[2]]
    print(f"{args.tree}: {len(rows)} files reach libcst ({total:.2f} engine CPU s); {len(empty)} end with no finding "
          f"({sum(row[1] for row in empty):.2f} s); {len(idle)} of those never try to report ({sum(row[1] for row in idle):.2f} s)")
    print("| word | files | engine CPU s |")
    print("|---|---:|---:|")
    for word, seconds in spent.most_common(args.top):
        print(f"| `{word}` | {words[word]} | {seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
