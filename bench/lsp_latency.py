"""How long `cudalint server` takes to answer an editor, on a 1,000-line file.

    python bench/lsp_latency.py            # print the figures
    python bench/lsp_latency.py --write    # and put them in bench/RESULTS.md (its language-server section)

A real LSP client (tests/lsp_client.py, pygls's client) starts the server over stdio, as an editor
does, in a temporary project holding one generated 1,000-line CUDA-first module (bench/cache_bench.py's
training script and model blocks). Measured from the client's side, so each figure includes the
JSON-RPC round trip:

- start: spawning the server until it answers `initialize`;
- first diagnostics: `didOpen` until the diagnostics for that version arrive (the server's first lint);
- subsequent diagnostics: an edit (`didChange` with the whole text, one line changed) until that
  version's diagnostics arrive, one edit at a time;
- code action: the light-bulb request at a finding with a fix, until the answer (its quick fix and the
  `# noqa` action; fix-all is offered unresolved, as VS Code and Neovim clients get it);
- fix-all resolve: choosing "fix all", until its edit arrives (it runs the fixer's rounds);
- the engine alone: `runner.run_text` on the same text in this process, CPU time (what any front end
  pays per lint; the difference to the wall figures above is the server, the protocol and the load).

The target: subsequent diagnostics within 200 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from cache_bench import BLOCK, TRAIN  # noqa: E402
from lsp_client import Editor  # noqa: E402
from lsprotocol import types  # noqa: E402

LINES = 1000
RESULTS = HERE / "RESULTS.md"
START, END = "<!-- lsp-latency:start -->\n", "<!-- lsp-latency:end -->\n"


def module(lines: int = LINES) -> str:
    """A CUDA-first module of exactly `lines` lines: the training script, model blocks, then comment lines."""
    text = TRAIN.format(index=0, width=128)
    block = 0
    while True:
        more = BLOCK.format(index=0, block=block, width=128)
        if (text + more).count("\n") > lines:
            break
        text, block = text + more, block + 1
    return text + "# padding\n" * (lines - text.count("\n"))


async def measure(root: Path, edits: int, actions: int) -> dict:
    editor = Editor(root, resolve=True)
    started = time.perf_counter()
    await editor.start()
    figures = {"start": time.perf_counter() - started}
    try:
        began = time.perf_counter()
        uri = editor.open("model.py")
        found = await editor.diagnostics(uri)
        figures["first"] = time.perf_counter() - began
        figures["findings"] = len(found)

        lines = editor.texts[uri].split("\n")
        middle = len(lines) // 2
        timings = []
        for n in range(edits):
            edited = list(lines)
            edited[middle] = f"{lines[middle]}  # edit {n}"
            began = time.perf_counter()
            version = editor.change(uri, "\n".join(edited))
            await editor.diagnostics(uri, version)
            timings.append(time.perf_counter() - began)
        figures["subsequent"] = timings

        target = next(d for d in await editor.diagnostics(uri) if d.code == "CDL201")
        round_trips, resolves = [], []
        for _ in range(actions):
            began = time.perf_counter()
            offered = await editor.code_actions(uri, target.range, [target])
            round_trips.append(time.perf_counter() - began)
            fix_all = next(a for a in offered if a.kind == "source.fixAll.cudalint")
            began = time.perf_counter()
            resolved = await editor.resolve_action(fix_all)
            resolves.append(time.perf_counter() - began)
        assert resolved.edit is not None and [a.title for a in offered][0].startswith("Fix CDL201")
        figures["code_action"] = round_trips
        figures["resolve"] = resolves
    finally:
        await editor.stop()
    return figures


def engine_cpu(root: Path, repeat: int = 3) -> list:
    from cudalint.catalog import load_catalog
    from cudalint.config import find_pyproject, resolve
    from cudalint.runner import run_text

    path = root / "model.py"
    settings = resolve(load_catalog(), config_path=find_pyproject(path))
    text = path.read_text()
    times = []
    for _ in range(repeat):
        began = time.process_time()
        run_text(str(path), text, settings)
        times.append(time.process_time() - began)
    return times


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def spread(values) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"{ms(statistics.median(ordered))} | {ms(p90)} | {ms(ordered[-1])}"


def report(figures: dict, edits: int, actions: int) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    return (
        "## Language server latency\n\n"
        f"Generated by `python bench/lsp_latency.py --write` (cudalint at {commit or 'unknown'}): a real LSP client "
        f"drives `cudalint server` over stdio on one generated {LINES:,}-line CUDA-first module "
        f"({figures['findings']} diagnostics), {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"1-minute load {load:.1f} at the end. Times are the client's, round trip included.\n\n"
        "| what | median | p90 | max |\n|---|---:|---:|---:|\n"
        f"| server start (spawn to `initialize` answered) | {ms(figures['start'])} | | |\n"
        f"| first diagnostics (`didOpen` to published) | {ms(figures['first'])} | | |\n"
        f"| subsequent diagnostics, {edits} edits (`didChange` to published) | {spread(figures['subsequent'])} |\n"
        f"| code action round trip at a finding, {actions} requests | {spread(figures['code_action'])} |\n"
        f"| fix-all resolve round trip, {actions} requests | {spread(figures['resolve'])} |\n"
        f"| the engine alone: `run_text` CPU time in-process, {len(figures['engine'])} runs | {spread(figures['engine'])} |\n\n"
        f"Target: subsequent diagnostics within 200 ms: {verdict(figures)}.\n"
    )


def verdict(figures: dict) -> str:
    median = statistics.median(figures["subsequent"])
    if median <= 0.2:
        return f"met (median {ms(median)})"
    return (f"not met (median {ms(median)}); the engine alone takes {ms(statistics.median(figures['engine']))} "
            "of CPU per lint of this file, before any protocol or scheduling cost")


def write(section: str) -> None:
    text = RESULTS.read_text(encoding="utf-8")
    block = START + section + END
    if START in text:
        head, rest = text.split(START, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    RESULTS.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--edits", type=int, default=30, help="edits timed one after another (default 30)")
    parser.add_argument("--actions", type=int, default=20, help="code action requests timed (default 20)")
    parser.add_argument("--write", action="store_true", help="update the section in bench/RESULTS.md")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cudalint-lsp-") as scratch:
        root = Path(scratch)
        (root / "pyproject.toml").write_text('[tool.cudalint]\ntorch-version = "2.7"\n')
        (root / "model.py").write_text(module())
        assert (root / "model.py").read_text().count("\n") == LINES
        figures = asyncio.run(measure(root, args.edits, args.actions))
        figures["engine"] = engine_cpu(root)
    section = report(figures, args.edits, args.actions)
    sys.stdout.write(section)
    if args.write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
