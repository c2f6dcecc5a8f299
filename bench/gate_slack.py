"""Which files the gates let through to libcst that end with nothing to report, and the word that let them.

    python bench/gate_slack.py TREE [--top N] [--files]

Runs `check --no-cache -j 1 --exit-zero -q TREE` in this process (as profile_cold.py does) with the engine's
per-file entry and the checks' `report` wrapped: per file that reaches libcst, its engine CPU seconds, how
many times its checks tried to report (before guards and suppressions decide), and how many findings it
ended with. For the files whose checks never tried, it runs the gates again on the same text, project and
release with each word they found in it taken out in turn, and names the word without which the file would
have been settled: the word a tighter gate would have to ask more of. Prints a summary and the words by
the CPU seconds of the files they let through. Reads internal names of the runner, engine and context, so
it may need updating when they change.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections import Counter


def _letting_through(analyze, catalog, text, rules, release, project, path) -> str:
    """The word without which the gates would have settled the file: each word of the gates' text search
    found in it is taken out of every word set in turn, and the gates run again. "(several)" when no one
    word decides (two or more would each let it through), "(the project's words)" when none of the
    catalog's words is in the text."""
    checks = analyze.checks_for(frozenset(rules), catalog)
    gates = checks.gates(release)
    found = {match.group(0) for match in gates.prefilter.finditer(text)} if gates.prefilter is not None else set()
    names, strings, texts, keywords, rooted, resolved, imports, called, argued, companions = gates.words
    for word in sorted(found):
        drop = frozenset({word})
        fewer = (names - drop, strings - drop, texts - drop, keywords - drop,
                 {key: value for key, value in rooted.items() if key != word},
                 {key: value for key, value in resolved.items() if key != word},
                 {key: value for key, value in imports.items() if key != word}, called - drop,
                 {key: value for key, value in argued.items() if key != word},
                 {key: value for key, value in companions.items() if key != word})
        without = analyze.Checks(checks.rules, checks.catalog_rules)
        without.prepare(release, fewer)
        if analyze.gate(path, text, without, release, project) == []:
            return word
    return "(several)" if found else "(the project's words)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--files", action="store_true", help="also list each such file with its word and seconds")
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
    inputs = {}  # path -> (text, selected rules, release, project index) as the engine was given them
    analyze_module = engine.analyze_module

    def timed(path, text, rules, *rest, **options):
        attempts.clear()
        started = time.process_time()
        found = analyze_module(path, text, rules, *rest, **options)
        rows.append((path, time.process_time() - started, sum(attempts.values()), len(found)))
        inputs[path] = (text, rules, rest[1], rest[4])
        return found

    engine.analyze_module = timed
    with contextlib.redirect_stdout(io.StringIO()):
        cli(["check", "--no-cache", "-j", "1", "--exit-zero", "-q", "."])
    catalog = tuple(load_catalog())
    words, spent = Counter(), Counter()
    listed = []  # (word, path, engine CPU s) of each file that never tried to report, with --files
    for path, seconds, tried, found in rows:
        if found or tried:
            continue
        word = _letting_through(analyze, catalog, *inputs[path], path)
        words[word] += 1
        spent[word] += seconds
        if args.files:
            listed.append((word, path, seconds))
    total = sum(row[1] for row in rows)
    empty = [row for row in rows if not row[3]]
    idle = [row for row in empty if not row[2]]
    print(f"{args.tree}: {len(rows)} files reach libcst ({total:.2f} engine CPU s); {len(empty)} end with no finding "
          f"({sum(row[1] for row in empty):.2f} s); {len(idle)} of those never try to report ({sum(row[1] for row in idle):.2f} s)")
    print("| word | files | engine CPU s |")
    print("|---|---:|---:|")
    for word, seconds in spent.most_common(args.top):
        print(f"| `{word}` | {words[word]} | {seconds:.2f} |")
    for word, path, seconds in sorted(listed):
        print(f"{word}\t{os.path.join(args.tree, path)}\t{seconds:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
