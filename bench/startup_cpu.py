"""CPU seconds of checking one clean one-line file: cudalint checkouts against plain flake8.

    python bench/startup_cpu.py --src src [--src OTHER/src ...] [--flake8 PATH] [--torchfix PATH]
                                [--ruff PATH] [--plugin] [--repeat 5]

Each run is a fresh process in a scratch folder (CPU = user + system of the process and its
children, best of --repeat, median beside it). The runs are interleaved, one of each row per round,
so a change in the machine's load falls on every row alike. Every tool starts the way its
installed command does: flake8, TorchFix and ruff by their console scripts, and a cudalint checkout
by the same four-line launcher pip writes for the `cudalint` command (`from cudalint.cli import
main; sys.exit(main())`), not by `python -m cudalint`, whose runpy start-up no user's command pays.
For cudalint, two rows per checkout: `check FILE` with the project's cache folder in place (the gate words stored by an earlier run; the
file's text differs every run, so its result is never answered from the result cache) and
`check --no-cache FILE`. flake8 runs as
`flake8 --isolated --select=E9 FILE`; pass an executable from an environment with no plugins.
`--torchfix` and `--ruff` add those peers (`torchfix FILE`, `ruff check --no-cache --isolated
--select=E9 FILE`); `--plugin` adds, per checkout, this interpreter's flake8 with cudalint's plugin
(`python -m flake8 --select=CDL FILE`), the floor every flake8 run that loads the plugin pays.
Bytecode is cached under a scratch folder (PYTHONPYCACHEPREFIX), as an installed package's would be.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(command, cwd: Path, env) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, action="append", required=True)
    parser.add_argument("--flake8", default="flake8")
    parser.add_argument("--torchfix", default=None, help="a TorchFix executable (bench/fetch.py --tools puts one in its venv)")
    parser.add_argument("--ruff", default=None, help="a ruff executable")
    parser.add_argument("--plugin", action="store_true", help="also flake8 with cudalint's plugin, per checkout")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = str(Path(scratch, "pycache"))
        rows = []  # (name, command, folder, env)
        launcher = Path(scratch, "cudalint-command.py")  # what pip writes as the `cudalint` console script
        launcher.write_text("import re\nimport sys\nfrom cudalint.cli import main\n"
                            "if __name__ == '__main__':\n"
                            "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                            "    sys.exit(main())\n")
        for index, src in enumerate(args.src):
            env = dict(base, PYTHONPATH=str(src.resolve()))
            for flags in ([], ["--no-cache"]):
                folder = Path(scratch, f"{index}{''.join(flags)}")
                folder.mkdir()
                command = [sys.executable, str(launcher), "check", "-q", *flags, "clean.py"]
                rows.append((f"cudalint {src.resolve().parent.name} {' '.join(['check', *flags])}", command, folder, env))
            if args.plugin:  # the plugin keeps its gate words in the folder's cache, as `check` does
                folder = Path(scratch, f"{index}-plugin")
                folder.mkdir()
                command = [sys.executable, "-m", "flake8", "--select=CDL", "clean.py"]
                rows.append((f"flake8 + cudalint {src.resolve().parent.name} plugin --select=CDL", command, folder, env))
        peers = [("flake8 --select=E9", [args.flake8, "--isolated", "--select=E9", "clean.py"])]
        if args.torchfix:
            peers.append(("torchfix", [args.torchfix, "clean.py"]))
        if args.ruff:
            peers.append(("ruff check --select=E9", [args.ruff, "check", "--no-cache", "--isolated", "--select=E9", "clean.py"]))
        for name, command in peers:
            folder = Path(scratch, name.split()[0])
            folder.mkdir()
            rows.append((name, command, folder, base))
        times: dict = {name: [] for name, *_ in rows}
        for run in range(args.repeat + 1):
            for name, command, folder, env in rows:
                (folder / "clean.py").write_text(f"x = {run}\n")  # never answered from the result cache
                cpu = cpu_of(command, folder, env)
                if run:  # the first round fills the cache folders and the bytecode cache
                    times[name].append(cpu)
    flake8 = min(times["flake8 --select=E9"])
    print("| run | CPU s, best | median | best × flake8's best |")
    print("|---|---:|---:|---:|")
    for name, cpu in times.items():
        print(f"| {name} | {min(cpu):.3f} | {statistics.median(cpu):.3f} | {min(cpu) / flake8:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
