"""What the project index costs on the speed corpus: cold, warm, and after touching one file.

    python bench/index_cost.py                 # every fetched project of bench/corpus.toml
    python bench/index_cost.py --repeat 3      # best of 3 per figure

For each project, on a scratch copy (so a file can be touched), in fresh interpreters:
  cold     the index built with an empty cache folder (every file read and parsed with ast)
  warm     built again with the cache the cold build wrote (no file changed)
  touched  one .py file gets a comment line appended, then built again (one file re-read)
  start    the same interpreter importing what the build imports, building nothing (the floor
           the three figures above include)
  check    `cudalint check --no-cache` of the whole project, which builds the index itself
All figures are CPU seconds (user + system of the child), steadier than wall time on a shared
machine. "share" is cold index / check. Writes the table to stdout and, with --output, to a file.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch  # noqa: E402

BUILD = r"""
import sys
from pathlib import Path
from cudalint.config import Settings
from cudalint.runner import project_index
index = project_index(Settings(select=frozenset(), root=Path(sys.argv[1])), cache=True)
print(len(index.modules))
"""


START = "from cudalint.config import Settings\nfrom cudalint.runner import project_index\n"


def child_cpu(command: Sequence[str], cwd: Path) -> float:
    """CPU seconds of one child process (and its children), run to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {result.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(repeat: int, run) -> float:
    return min(run() for _ in range(repeat))


def measure(project: Path, repeat: int) -> dict:
    build = [sys.executable, "-c", BUILD, str(project)]
    cache = project / ".cudalint_cache"

    def cold() -> float:
        shutil.rmtree(cache, ignore_errors=True)
        return child_cpu(build, project)

    def warm() -> float:
        return child_cpu(build, project)

    files = sorted(p for p in project.rglob("*.py") if ".cudalint_cache" not in p.parts)
    touched_file = files[len(files) // 2]

    def touched() -> float:
        with open(touched_file, "a", encoding="utf-8") as handle:
            handle.write("# touched\n")
        return child_cpu(build, project)

    figures = {"files": len(files), "cold": best(repeat, cold)}
    child_cpu(build, project)  # the cache is full again
    figures["warm"] = best(repeat, warm)
    figures["touched"] = best(repeat, touched)
    figures["start"] = best(repeat, lambda: child_cpu([sys.executable, "-c", START], project))
    figures["check"] = best(repeat, lambda: child_cpu([shutil.which("cudalint") or "cudalint", "check", "--no-cache", "--exit-zero", "."], project))
    shutil.rmtree(cache, ignore_errors=True)
    return figures


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(list(argv) or None)
    cache = fetch.default_cache()
    corpus = fetch.load_corpus()
    rows: List[str] = [
        "| project | .py files | index cold s | warm s | one file touched s | start (imports only) s | whole cold check s | index share of the check |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    totals = {"files": 0, "cold": 0.0, "warm": 0.0, "touched": 0.0, "start": 0.0, "check": 0.0}
    with tempfile.TemporaryDirectory(prefix="cudalint-index-cost-") as scratch:
        for spec in corpus["project"]:
            if not fetch.is_fetched(cache, corpus, spec):
                print(f"index_cost: {spec['name']} not fetched, left out", file=sys.stderr)
                continue
            source = fetch.project_dir(cache, spec)
            copy = Path(scratch) / source.name
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns(fetch.MARKER, "__pycache__", ".cudalint_cache"))
            figures = measure(copy, args.repeat)
            for key in totals:
                totals[key] += figures[key]
            rows.append(
                f"| {source.name} | {figures['files']} | {figures['cold']:.2f} | {figures['warm']:.2f} | "
                f"{figures['touched']:.2f} | {figures['start']:.2f} | {figures['check']:.2f} | {100 * figures['cold'] / figures['check']:.0f}% |"
            )
            print(rows[-1], flush=True)
            shutil.rmtree(copy)
    rows.append(
        f"| **all** | {totals['files']} | {totals['cold']:.2f} | {totals['warm']:.2f} | {totals['touched']:.2f} | {totals['start']:.2f} | "
        f"{totals['check']:.2f} | {100 * totals['cold'] / max(totals['check'], 1e-9):.0f}% |"
    )
    text = "\n".join(rows) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
