"""Where the CPU of a one-file `cudalint check -q clean.py` goes, step by step, for cudalint checkouts.

    python bench/startup_phases.py --src BEFORE/src --src src [--repeat 7]

A fresh process per run, in a scratch folder whose cache folder an earlier run filled (the file's text
differs every run). The process imports the modules a check loads in the order the CLI loads them,
then does the CLI's steps one by one, and says the CPU time (time.process_time) of each: an import
breakdown without `-X importtime`'s own cost, which on a loaded machine is as large as what it
measures. Best of --repeat per step; the runs of the checkouts are interleaved. Interpreter start-up
is not in the total (`python -c pass` is about 15 ms here).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

STEPS = r'''
import time
T = time.process_time
marks = []
start = T()


def mark(name):
    global start
    now = T()
    marks.append((name, (now - start) * 1000))
    start = now


import argparse, ast, hashlib, json, pathlib, re, typing
mark("stdlib: re, typing, argparse, json, pathlib, hashlib, ast")
import cudalint.findings
mark("import cudalint.findings (dataclasses, where a checkout's records are dataclasses)")
import cudalint.catalog
mark("import cudalint.catalog")
import cudalint.config
mark("import cudalint.config")
import cudalint.discover
mark("import cudalint.discover")
import cudalint.cli as cli
mark("import cudalint.report, cudalint.cli")
import cudalint.runner as runner
mark("import cudalint.runner")
from pathlib import Path
try:
    parser = cli.build_parser("check")
except TypeError:  # a checkout whose build_parser builds every command
    parser = cli.build_parser()
parser.parse_args(["check", "-q", "clean.py"])
mark("argument parser")
cli.find_pyproject(Path("clean.py"))
cli.keep_compact_copy(Path.cwd())
catalog = cli.load_catalog()
settings = cli.resolve(catalog, config_path=None)
mark("configuration and catalog")
import cudalint.progress
result = runner.run(["clean.py"], settings, cache=True)
mark("runner.run")
text = cli.FORMATS["text"](result, colour=False, statistics=False, quiet=True, fixes="", catalog=catalog)
mark("report")
marks.append(("total after interpreter start", sum(ms for _, ms in marks)))
for name, ms in marks:
    print(f"{ms:.3f}\t{name}")
'''


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, action="append", required=True)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    best: dict = {}
    order: list = []
    with tempfile.TemporaryDirectory() as scratch:
        base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = str(Path(scratch, "pycache"))
        for index in range(len(args.src)):
            Path(scratch, str(index)).mkdir()
        for run in range(args.repeat + 1):
            for index, src in enumerate(args.src):
                folder = Path(scratch, str(index))
                (folder / "clean.py").write_text(f"x = {run}\n")
                env = dict(base, PYTHONPATH=str(src.resolve()))
                done = subprocess.run([sys.executable, "-c", STEPS], cwd=folder, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.stderr.write(done.stderr)
                    return 1
                if not run:  # the first run fills the cache folder and the bytecode cache
                    continue
                for line in done.stdout.splitlines():
                    ms, name = line.split("\t")
                    if name not in order:
                        order.append(name)
                    key = (index, name)
                    best[key] = min(best.get(key, float("inf")), float(ms))
    names = [src.resolve().parent.name for src in args.src]
    print(f"| step (CPU ms, best of {args.repeat}) | {' | '.join(names)} |")
    print("|---|" + "---:|" * len(names))
    for name in order:
        print(f"| {name} | " + " | ".join(f"{best.get((index, name), 0):.1f}" for index in range(len(names))) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
