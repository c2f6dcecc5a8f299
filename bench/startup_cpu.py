"""CPU seconds of checking one clean one-line file: cudalint checkouts against plain flake8.

    python bench/startup_cpu.py --src src [--src OTHER/src ...] [--flake8 PATH] [--repeat 5]

Each run is a fresh process in a scratch folder (CPU = user + system of the process and its
children, best of --repeat). For cudalint, two rows per checkout: `check FILE` with the project's
cache folder in place (the gate words stored by an earlier run; the file's text differs every run,
so its result is never answered from the result cache) and `check --no-cache FILE`. flake8 runs as
`flake8 --isolated --select=E9 FILE`; pass an executable from an environment with no plugins.
Bytecode is cached under a scratch folder (PYTHONPYCACHEPREFIX), as an installed package's would be.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(command, cwd: Path, env) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(command, folder: Path, env, repeat: int) -> float:
    times = []
    for run in range(repeat + 1):
        (folder / "clean.py").write_text(f"x = {run}\n")
        cpu = cpu_of(command, folder, env)
        if run:  # the first run fills the cache folder
            times.append(cpu)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, action="append", required=True)
    parser.add_argument("--flake8", default="flake8")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = str(Path(scratch, "pycache"))
        for index, src in enumerate(args.src):
            env = dict(base, PYTHONPATH=str(src.resolve()))
            for flags in ([], ["--no-cache"]):
                folder = Path(scratch, f"{index}{''.join(flags)}")
                folder.mkdir()
                command = [sys.executable, "-m", "cudalint", "check", "-q", *flags, "clean.py"]
                rows.append((f"cudalint {src.resolve().parent.name} {' '.join(['check', *flags])}", best(command, folder, env, args.repeat)))
        folder = Path(scratch, "flake8")
        folder.mkdir()
        flake8 = best([args.flake8, "--isolated", "--select=E9", "clean.py"], folder, base, args.repeat)
        rows.append(("flake8 --select=E9", flake8))
    print("| run | CPU s | × flake8 |")
    print("|---|---:|---:|")
    for name, cpu in rows:
        print(f"| {name} | {cpu:.2f} | {cpu / flake8:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
