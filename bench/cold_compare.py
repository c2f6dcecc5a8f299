"""Cold-run CPU time of two cudalint checkouts on the same trees, interleaved, in one run.

    python bench/cold_compare.py --before PATH/TO/OLD/src [--base PATH/TO/OLDER/src] --after src [--repeat 3] TREE [TREE ...]

Each tree is linted with `check --no-cache -j 1 --exit-zero` (one process, so CPU seconds are the
whole cost) by each checkout in turn; the best of `--repeat` runs counts, and the spread (worst
less best, as a share of the best) is printed too. CPU seconds (user + system of the child) are
steadier than wall time on a shared machine. Prints a Markdown table and the ratio after/before
(and after/base) per tree and overall.
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
    parser.add_argument("--base", type=Path, help="a third checkout, e.g. an older release, timed the same way")
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("trees", nargs="+", type=Path)
    args = parser.parse_args()
    sides = [("before", args.before), ("after", args.after)] + ([("base", args.base)] if args.base else [])
    rows = []
    totals = {name: 0.0 for name, _ in sides}
    with tempfile.TemporaryDirectory() as empty:  # compile every checkout's bytecode before timing
        Path(empty, "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
        for _, src in sides:
            cpu_of(src, Path(empty))
    for tree in args.trees:
        times = {name: [] for name, _ in sides}
        counts = {}
        for _ in range(args.repeat):
            for name, src in sides:
                cpu, wall, count = cpu_of(src, tree)
                times[name].append(cpu)
                counts[name] = count
        best = {name: min(spent) for name, spent in times.items()}
        spread = {name: (max(spent) - min(spent)) / min(spent) for name, spent in times.items()}
        for name in totals:
            totals[name] += best[name]
        rows.append((tree.name, best, spread, counts))
        print(f"{tree.name}: " + ", ".join(f"{name} {' / '.join(f'{t:.1f}' for t in times[name])} s" for name in times), file=sys.stderr)
    names = [name for name, _ in sides]
    ratios = [("after", "before")] + ([("after", "base")] if args.base else [])
    print("| tree | " + " | ".join(f"{name} CPU s (spread)" for name in names) + " | "
          + " | ".join(f"{a} / {b}" for a, b in ratios) + " | " + " | ".join(f"findings {name}" for name in names) + " |")
    print("|---|" + "---:|" * (2 * len(names) + len(ratios)))
    for tree, best, spread, counts in rows:
        print(f"| {tree} | " + " | ".join(f"{best[name]:.1f} ({spread[name]:.0%})" for name in names) + " | "
              + " | ".join(f"{best[a] / best[b]:.2f}" for a, b in ratios) + " | " + " | ".join(str(counts[name]) for name in names) + " |")
    print("| **all** | " + " | ".join(f"{totals[name]:.1f}" for name in names) + " | "
          + " | ".join(f"**{totals[a] / totals[b]:.2f}**" for a, b in ratios) + " |" + " |" * len(names))
    shutil.rmtree(PYCACHE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
