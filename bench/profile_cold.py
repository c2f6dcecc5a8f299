"""Where cudalint's cold time goes, on the corpus of bench/corpus.toml.

    python bench/profile_cold.py                 # every 4th file; --every 1 for all
    python bench/profile_cold.py --pyspy         # also py-spy on the real CLI (needs ptrace)

Single process, stage by stage, by calling the same internals the runner calls
(discover, decode, prefilter, the CPython compile gate, libcst parse, the one Dispatcher
pass, positions + fix planning) and timing each; then cProfile of the analysis (run
inside a big-stack thread, as the runner does); then the process-pool cost (`-j1`
against the default) on the same files. Prints a report; bench/PROFILE.md is written by
hand from it. Reads internal APIs, so it may need updating when they change.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch  # noqa: E402
import run as bench_run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--pyspy", action="store_true")
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--cprofile-every", type=int, default=4, help="cProfile every Nth parsed file (it doubles their time)")
    args = parser.parse_args()

    cache = (args.cache_dir or fetch.default_cache()).expanduser()
    corpus = fetch.load_corpus()
    root = cache / "src"
    dirs = [fetch.project_dir(cache, p).name for p in corpus["project"]]
    all_files = bench_run.python_files(root, [root / d for d in dirs])
    files = all_files[:: args.every]
    os.chdir(root)

    t0 = time.perf_counter()
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from cudalint.catalog import load_catalog
    from cudalint.config import resolve
    from cudalint.discover import discover
    from cudalint.python import analyze
    from cudalint.python.context import FileContext
    from cudalint.python.visitor import Dispatcher
    from cudalint.source import decode_python
    from cudalint.versions import parse_version

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    catalog = load_catalog()
    settings = resolve(catalog, config_path=None)
    checks = analyze.checks_for(settings.select, tuple(catalog))
    t_setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    discovered = list(discover(dirs, settings.exclude, settings.root))
    t_discover = time.perf_counter() - t0

    words = sorted(checks.engine.index.words, key=len, reverse=True)
    print(f"prefilter: {len(words)} words: {' '.join(sorted(words))}")
    torch_version = parse_version("2.15")
    stages = Counter()
    counts = Counter()
    first_word = Counter()  # which word let a file through
    file_words_no_hits = Counter()  # words present in files that were parsed for nothing
    lines_total = lines_parsed = 0
    slowest = []
    profiler = cProfile.Profile()
    errors = []
    import traceback

    def work() -> None:
        nonlocal lines_total, lines_parsed
        sys.setrecursionlimit(30000)
        for name in files:
            a = time.perf_counter()
            data = (root / name).read_bytes()
            b = time.perf_counter()
            decoded = decode_python(data)
            text = decoded.text
            c = time.perf_counter()
            stages["read"] += b - a
            stages["decode"] += c - b
            n_lines = text.count("\n") if text else 0
            lines_total += n_lines
            counts["files"] += 1
            if text is None:
                counts["undecodable"] += 1
                continue
            match = checks.prefilter.search(text)
            d = time.perf_counter()
            stages["prefilter"] += d - c
            if not match:
                continue
            counts["prefilter pass"] += 1
            lines_parsed += n_lines
            first_word[match.group(0)] += 1
            problem = analyze._syntax_problem(name, text)
            e = time.perf_counter()
            stages["compile gate"] += e - d
            if problem is not None:
                counts["gate refused"] += 1
                continue
            profiled = counts["prefilter pass"] % args.cprofile_every == 0
            if profiled:
                profiler.enable()
            try:
                module = cst.parse_module(text)
            except Exception:  # noqa: BLE001
                profiler.disable()
                counts["libcst parse error"] += 1
                continue
            f = time.perf_counter()
            ctx = FileContext(name, checks.rules, torch_version)
            try:
                module.visit(Dispatcher(ctx, checks.engine.registry.visit, checks.engine.registry.leave))
            except Exception as exc:  # noqa: BLE001 - the runner turns this into CDL000 "internal error"
                profiler.disable()
                counts["internal error"] += 1
                errors.append((name, "".join(traceback.format_exception(exc)[-4:])))
                continue
            g = time.perf_counter()
            if not profiled:
                stages["libcst parse"] += f - e
                stages["dispatcher pass"] += g - f
            h = g
            if ctx.hits:
                counts["files with hits"] += 1
                counts["hits"] += len(ctx.hits)
                positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
                h = time.perf_counter()
                if not profiled:
                    stages["positions"] += h - g
                try:  # fix planning, as _analyze does (its signature moves; skip if it does)
                    fixer = analyze.FileFixer(module, positions, ctx.imports, torch_version, settings.device, text)
                    fixer.decide([hit.fix for hit in ctx.hits if hit.fix is not None])
                    for hit in ctx.hits:
                        if hit.fix is not None:
                            fixer.build(hit.fix)
                except Exception as exc:  # noqa: BLE001
                    counts[f"fix planning error {type(exc).__name__}"] += 1
                if not profiled:
                    stages["fix planning"] += time.perf_counter() - h
                h = time.perf_counter()
            else:
                present = {m.group(0) for m in checks.prefilter.finditer(text)}
                file_words_no_hits.update(present)
            profiler.disable()
            if not profiled:
                slowest.append((h - e, n_lines, name))
            else:
                counts["cprofiled (not in stage times)"] += 1

    threading.stack_size(512 * 1024 * 1024)
    worker = threading.Thread(target=work)
    t0 = time.perf_counter()
    worker.start()
    worker.join()
    t_work = time.perf_counter() - t0

    print(f"\nfiles {counts['files']} (every {args.every}th of {len(all_files)}), lines {lines_total:,}")
    print(f"import {t_import:.2f} s, catalog+settings+checks {t_setup:.2f} s, discover (whole corpus, {len(discovered)} files) {t_discover:.2f} s")
    print(f"single-process analysis {t_work:.1f} s = {1e6 * t_work / max(lines_total, 1):.1f} µs/line")
    for key in ("files", "undecodable", "prefilter pass", "gate refused", "libcst parse error", "internal error", "files with hits", "hits", "cprofiled (not in stage times)"):
        print(f"  {key:<22} {counts[key]}")
    print(f"  prefilter hit rate     {counts['prefilter pass'] / max(counts['files'], 1):.1%} of files, {lines_parsed / max(lines_total, 1):.1%} of lines")
    print(f"  parsed for nothing     {counts['prefilter pass'] - counts['files with hits'] - counts['gate refused']} files")
    for name, trace in errors:
        print(f"  INTERNAL ERROR in {name}:\n{trace}")
    total = sum(stages.values())
    print("\nstage                 seconds   share")
    for key, value in sorted(stages.items(), key=lambda kv: -kv[1]):
        print(f"  {key:<20} {value:8.2f}  {value / total:6.1%}")
    print("\nword that let a file through (first match):", ", ".join(f"{w} {n}" for w, n in first_word.most_common(15)))
    print("words present in files parsed for nothing:", ", ".join(f"{w} {n}" for w, n in file_words_no_hits.most_common(20)))
    slowest.sort(reverse=True)
    print("\nslowest files (parse+pass+positions):")
    for seconds, n, name in slowest[:8]:
        print(f"  {seconds:6.2f} s  {n:6} lines  {name}")

    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    stats.sort_stats("tottime").print_stats(args.top)
    print("\ncProfile of parse + pass + positions, by own time:")
    print("\n".join(stream.getvalue().splitlines()[:args.top + 12]))
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(25)
    print("\ncProfile, cumulative:")
    print("\n".join(stream.getvalue().splitlines()[:40]))

    # process pool: -j1 against the default, on the same files, through the CLI
    print("\nCLI on the same files:")
    cudalint = bench_run.tool("cudalint")
    n_lines = bench_run.count_lines(root, files)
    for jobs in (["-j", "1"], []):
        bench_run.measure(f"cudalint check --no-cache {' '.join(jobs)}", [cudalint, "check", "--no-cache", "--exit-zero", "-q", *jobs, *files], root, len(files), n_lines)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import cudalint.runner, cudalint.cli"], check=True)
    print(f"  interpreter start + import cudalint.runner: {time.perf_counter() - start:.2f} s")

    if args.pyspy:
        out = cache / "work" / "pyspy.txt"
        command = [bench_run.tool("py-spy"), "record", "--subprocesses", "--format", "raw", "--rate", "50", "-o", str(out),
                   "--", cudalint, "check", "--no-cache", "--exit-zero", "-q", *files]
        done = subprocess.run(command, cwd=root, capture_output=True, text=True)
        print(f"\npy-spy: rc {done.returncode} {done.stderr.strip()[-300:]}")
        if out.exists():
            summarize_pyspy(out)
    return 0


def summarize_pyspy(path: Path) -> None:
    """Collapsed stacks -> own-time per function, and share of samples per process."""
    own, per_process, total = Counter(), Counter(), 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        try:
            n = int(count)
        except ValueError:
            continue
        total += n
        frames = stack.split(";")
        per_process[frames[0][:60]] += n
        leaf = re.sub(r"\s*\(.*", "", frames[-1])
        own[leaf] += n
    print(f"py-spy samples {total}")
    for proc, n in per_process.most_common(6):
        print(f"  {n / total:6.1%}  {proc}")
    for name, n in own.most_common(25):
        print(f"  {n / total:6.1%}  {name}")


if __name__ == "__main__":
    sys.exit(main())
