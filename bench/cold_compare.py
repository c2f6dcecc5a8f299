"""Cold-run CPU time of two cudalint checkouts on the same trees, interleaved, in one run.

    python bench/cold_compare.py --before PATH/TO/OLD/src --after src [--repeat 3] TREE [TREE ...]

Each tree is linted with `check --no-cache -j 1 --exit-zero` (one process, so CPU seconds are the
whole cost) by each checkout in turn; the best of `--repeat` runs counts. CPU seconds (user +
system of the child) are steadier than wall time on a shared machine. Prints a Markdown table
and the ratio after/before per tree and overall.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


PYCACHE = Path(tempfile.mkdtemp(prefix="cudalint-cold-compare-pycache-"))


def cpu_of(src: Path, tree: Path) -> tuple:
    # Bytecode cached outside both checkouts, as an installed package's would be (the first run compiles).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(src.resolve()), PYTHONPYCACHEPREFIX=str(PYCACHE))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "--no-cache", "-j", "1", "--exit-zero", "--format", "json", "."],
        cwd=tree, env=env, capture_output=True, text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{src}: exit {done.returncode} on {tree}: {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, done.stdout.count('"code"')


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("trees", nargs="+", type=Path)
    args = parser.parse_args()
    rows = []
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as empty:  # compile both checkouts' bytecode before timing
        Path(empty, "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
        for src in (args.before, args.after):
            cpu_of(src, Path(empty))
    for tree in args.trees:
        best = [None, None]
        counts = [0, 0]
        for _ in range(args.repeat):
            for side, src in enumerate((args.before, args.after)):
                cpu, wall, count = cpu_of(src, tree)
                best[side] = cpu if best[side] is None else min(best[side], cpu)
                counts[side] = count
        totals[0] += best[0]
        totals[1] += best[1]
        rows.append((tree.name, best[0], best[1], counts[0], counts[1]))
        print(f"{tree.name}: before {best[0]:.1f} s, after {best[1]:.1f} s, ratio {best[1] / best[0]:.2f}", file=sys.stderr)
    print("| tree | before CPU s | after CPU s | ratio | findings before | findings after |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, before, after, n0, n1 in rows:
        print(f"| {name} | {before:.1f} | {after:.1f} | {after / before:.2f} | {n0} | {n1} |")
    print(f"| **all** | {totals[0]:.1f} | {totals[1]:.1f} | **{totals[1] / totals[0]:.2f}** | | |")
    shutil.rmtree(PYCACHE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
