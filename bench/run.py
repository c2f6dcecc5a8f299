"""Benchmark and ecosystem check of cudalint on the corpus of bench/corpus.toml; writes bench/RESULTS.md.

    python bench/fetch.py --tools        # once: the corpus and the TorchFix venv
    python bench/run.py                  # the whole run (about 15 minutes on 2 cores)
    python bench/run.py --quick          # a smoke test on 1/20 of the files

Everything runs one command at a time (never two heavy processes at once), with the
working directory at the corpus root so paths stay relative. Speed runs get the same
explicit list of .py files; the ecosystem check runs on the project folders (manifests
included) in a scratch copy.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import pickle
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fetch  # noqa: E402

BENCH = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent

# Targets of issue 8.
TARGET_VS_TORCHFIX = 20.0  # cudalint cold at least 20x faster than TorchFix
TARGET_VS_FLAKE8 = 0.5  # at most half the time of flake8 --select=E9
TARGET_WARM = 0.05  # warm under 5% of cold
TARGET_MEMORY_MB = 500


# --------------------------------------------------------------------------- measuring


@dataclass
class Measurement:
    label: str
    command: List[str]
    files: int
    lines: int
    wall: float = 0.0
    cpu: float = 0.0  # user + sys of the process tree
    rc: int = 0
    max_rss_mb: float = 0.0  # the largest single process (rusage)
    tree_rss_mb: float = 0.0  # the whole process tree, sampled every 100 ms
    # The same tree's proportional set size: a page shared by several processes (a forked worker's
    # copy-on-write pages of its parent) is counted once, split among them, where the RSS sum counts it
    # in every process.
    tree_pss_mb: float = 0.0
    load_before: float = 0.0
    stdout: str = field(default="", repr=False)
    stderr: str = field(default="", repr=False)

    @property
    def files_per_s(self) -> float:
        return self.files / self.wall if self.wall else 0.0

    @property
    def lines_per_s(self) -> float:
        return self.lines / self.wall if self.wall else 0.0


def _tree_memory_kb(root: int) -> Tuple[int, int]:
    """Sums of VmRSS and of Pss over `root` and its descendants (via /proc/PID/task/TID/children; Pss from
    /proc/PID/smaps_rollup, 0 where the kernel has none)."""
    rss = pss = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
            with open(f"/proc/{pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                        break
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                        break
        except (OSError, ValueError):
            pass
    return rss, pss


def measure(label: str, command: Sequence[str], cwd: Path, files: int, lines: int, env=None) -> Measurement:
    result = Measurement(label, list(command), files, lines, load_before=os.getloadavg()[0])
    peak = peak_pss = 0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=err, env=env)
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak, peak_pss
            while not stop.is_set():
                rss, pss = _tree_memory_kb(process.pid)
                peak, peak_pss = max(peak, rss), max(peak_pss, pss)
                stop.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        result.wall = time.perf_counter() - start
        stop.set()
        sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result.stdout = out.read().decode("utf-8", "replace")
        result.stderr = err.read().decode("utf-8", "replace")
    result.rc = process.returncode
    result.cpu = usage.ru_utime + usage.ru_stime
    result.max_rss_mb = usage.ru_maxrss / 1024
    result.tree_rss_mb = peak / 1024
    result.tree_pss_mb = peak_pss / 1024
    print(
        f"  {label:<40} {result.wall:8.2f} s  cpu {result.cpu:8.2f} s  rc {result.rc}  "
        f"rss {result.max_rss_mb:6.0f}/{result.tree_rss_mb:6.0f} MB  load {result.load_before:.1f}",
        flush=True,
    )
    return result


# --------------------------------------------------------------------------- corpus


def python_files(root: Path, dirs: Sequence[Path]) -> List[str]:
    found = []
    for folder in dirs:
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            found.append(str(path.relative_to(root)))
    return sorted(found)


def count_lines(root: Path, files: Sequence[str]) -> int:
    return sum((root / name).read_bytes().count(b"\n") for name in files)


def project_of(path: str) -> str:
    return path.split("/", 1)[0]


# --------------------------------------------------------------------------- tools


def tool(name: str) -> str:
    candidate = BIN / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or name)


def version_of(command: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({exc})"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr).strip() else "?"


def cudalint_features() -> Dict[str, bool]:
    text = subprocess.run([tool("cudalint"), "check", "--help"], capture_output=True, text=True).stdout
    return {flag: flag in text for flag in ("--no-cache", "--cache", "--fix", "--unsafe-fixes", "--format", "-j")}


def libcst_version(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('libcst'))"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


# --------------------------------------------------------------------------- ecosystem


def compiles(text: bytes, name: str) -> Tuple[bool, str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, name, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return True, ""


CRASH_WORDS = ("internal error", "worker", "crashed", "syntax error", "nested too deeply", "cannot parse")


def crashes_in(findings: List[dict], root: Path) -> List[dict]:
    """CDL000 on a .py file CPython parses, or any internal/worker error, is a crash."""
    crashes = []
    for finding in findings:
        if finding.get("code") != "CDL000":
            continue
        message = finding.get("message", "")
        path = finding.get("path", "")
        if "internal error" in message or "worker" in message or "crashed" in message:
            crashes.append({**finding, "why": "internal error"})
            continue
        if path.endswith(".py") and any(word in message for word in CRASH_WORDS):
            try:
                ok, _ = compiles((root / path).read_bytes(), path)
            except OSError:
                continue
            if ok:
                crashes.append({**finding, "why": "CPython compiles this file"})
    return crashes


def parse_json(measurement: Measurement) -> Optional[List[dict]]:
    try:
        data = json.loads(measurement.stdout)
    except ValueError:
        return None
    if isinstance(data, dict):  # tolerate a future {"findings": [...]} envelope
        data = data.get("findings", [])
    return data


def tree_hashes(root: Path) -> Dict[str, str]:
    hashes = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            hashes[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def compileall_failures(root: Path, dirs: Sequence[str], prefix: Path) -> Tuple[List[str], Measurement]:
    """`python -m compileall -q`; the files it could not compile (relative to root)."""
    shutil.rmtree(prefix, ignore_errors=True)
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(prefix))
    m = measure("python -m compileall -q", [sys.executable, "-m", "compileall", "-q", *dirs], root, 0, 0, env=env)
    failed = sorted(set(re.findall(r"\*\*\* Error compiling '([^']+)'", m.stdout + m.stderr)))
    return [os.path.normpath(path) for path in failed], m


# ------------------------------------------------------------- fixed files: pyflakes and imports

PYFLAKES_KINDS = ("UndefinedName", "UndefinedLocal", "UndefinedExport", "UnusedImport")


def pyflakes_problems(text: str, name: str) -> Counter:
    """pyflakes' undefined names and unused imports of one file, as (kind, name) counts (lines move
    when a fix adds some, so they are left out). An unparsable file has none."""
    from pyflakes import checker

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Counter()
    found: Counter = Counter()
    for message in checker.Checker(tree, filename=name).messages:
        kind = type(message).__name__
        if kind in PYFLAKES_KINDS:
            found[(kind, str(message.message_args[0]) if message.message_args else "")] += 1
    return found


def new_pyflakes(before: str, after: str, name: str) -> List[str]:
    """What pyflakes finds in the fixed text and not in the original: `UndefinedName DEVICE`."""
    extra = pyflakes_problems(after, name) - pyflakes_problems(before, name)
    return sorted(f"{kind} {what}" + (f" (x{n})" if n > 1 else "") for (kind, what), n in extra.items())


IMPORT_PROBE = r"""
import importlib, json, os, signal, sys
sys.path[:0] = [p for p in sys.argv[1].split(os.pathsep) if p]
def stop(signum, frame):
    raise TimeoutError("import took longer than %s s" % sys.argv[2])
signal.signal(signal.SIGALRM, stop)
for name in sys.stdin.read().split():
    signal.alarm(int(sys.argv[2]))
    try:
        importlib.import_module(name)
        error = None
    except BaseException as exc:
        error = "%s: %s" % (type(exc).__name__, str(exc)[:300])
    finally:
        signal.alarm(0)
    print(json.dumps([name, error]), flush=True)
"""


def module_name(project: Path, path: Path) -> Optional[str]:
    """`pkg/sub/mod.py` -> `pkg.sub.mod` (a src layout's `src/` dropped); None when not importable by name."""
    parts = list(path.relative_to(project).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(part.isidentifier() for part in parts) else None


def import_statuses(project: Path, modules: Sequence[str], per_module_s: int = 60) -> Dict[str, Optional[str]]:
    """Import each module in one fresh interpreter (project root and src/ on the path): None when it
    imported, else the error. A module the run never reached (the process died) reads as an error."""
    if not modules:
        return {}
    paths = os.pathsep.join(str(p) for p in (project, project / "src"))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", CUDA_VISIBLE_DEVICES="")
    try:
        result = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE, paths, str(per_module_s)],
            input="\n".join(modules), cwd=project, env=env, capture_output=True, text=True,
            timeout=per_module_s * len(modules) + 60,
        )
        output = result.stdout
    except subprocess.TimeoutExpired as exc:
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    statuses: Dict[str, Optional[str]] = {name: "the import process ended before this module" for name in modules}
    for line in output.splitlines():
        try:
            name, error = json.loads(line)
        except ValueError:
            continue
        statuses[name] = error
    return statuses


def new_import_failures(before_root: Path, after_root: Path, changed: Sequence[str]) -> List[str]:
    """Changed files whose module imported from the original tree and fails from the fixed one."""
    by_project: Dict[str, List[Tuple[str, str]]] = defaultdict(list)
    for path in changed:
        if path.endswith(".py"):
            project = Path(path).parts[0]
            name = module_name(before_root / project, before_root / path)
            if name is not None:
                by_project[project].append((path, name))
    failures = []
    for project, entries in sorted(by_project.items()):
        names = [name for _, name in entries]
        before = import_statuses(before_root / project, names)
        imported = [name for name in names if before.get(name) is None]
        after = import_statuses(after_root / project, names)  # the same modules in the same order: one import can change the next
        for path, name in entries:
            if name in imported and after.get(name) is not None:
                failures.append(f"{path}: {after[name]}")
    return failures


def ruff_codes(project: Path, paths: Sequence[str]) -> Dict[str, Counter]:
    """ruff's pycodestyle findings (E, W) per file, with the project's own ruff/black settings
    (line length) found from each file; counts per code, since a fix moves lines."""
    found: Dict[str, Counter] = defaultdict(Counter)
    if not paths:
        return found
    result = subprocess.run(
        [tool("ruff"), "check", "--no-cache", "--select", "E,W", "--output-format", "json", "--exit-zero", *paths],
        cwd=project, capture_output=True, text=True,
    )
    try:
        rows = json.loads(result.stdout or "[]")
    except ValueError:
        return found
    for row in rows:
        path = os.path.relpath(row["filename"], project)
        found[path][row.get("code") or "E999"] += 1
    return found


def new_ruff(before_root: Path, after_root: Path, changed: Sequence[str]) -> Dict[str, List[str]]:
    """Changed .py files with ruff E/W findings their original did not have: `{path: ["E501 (x2)"]}`."""
    paths = [p for p in changed if p.endswith(".py")]
    before, after = ruff_codes(before_root, paths), ruff_codes(after_root, paths)
    problems = {}
    for path in paths:
        extra = after.get(path, Counter()) - before.get(path, Counter())
        if extra:
            problems[path] = sorted(f"{code}" + (f" (x{n})" if n > 1 else "") for code, n in extra.items())
    return problems


def device_reuse(findings: Sequence[dict]) -> Tuple[int, int]:
    """Of the offered fixes that need a device, how many use one the code already has
    (fixplan marks those "(the code's own NAME)"), and how many there are."""
    from cudalint.python.fixplan import LOCAL_NAMES, MODULE_NAMES

    named = re.compile(r"\b(%s)\b|current_accelerator\(|torch\.device\(" % "|".join(MODULE_NAMES + LOCAL_NAMES))
    reused = needing = 0
    for finding in findings:
        fix = finding.get("fix") or {}
        if not fix:
            continue
        if "(the code's own " in fix.get("description", ""):
            reused += 1
            needing += 1
        elif any(named.search(edit.get("content", "")) for edit in fix.get("edits", ())):
            needing += 1
    return reused, needing


# --------------------------------------------------------------------------- the run


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f}" if seconds < 100 else f"{seconds:.0f}"


def shown(command: Sequence[str], files: Sequence[str], dirs: Sequence[str]) -> str:
    """The command as a person would type it: the file list and project folders abbreviated."""
    out, listed, folders = [], False, False
    fileset, dirset = set(files), set(dirs)
    for arg in command:
        if arg in fileset:
            if not listed:
                out.append(f"<{len(files)} files>")
                listed = True
            continue
        if arg in dirset:
            if not folders:
                out.append("<project folders>")
                folders = True
            continue
        arg = Path(arg).name if arg.startswith(("/", str(Path.home()))) and "/bin/" in arg else arg
        out.append(arg)
    return " ".join(shlex.quote(a) if not a.startswith("<") else a for a in out)


def sample_of(files: Sequence[str], args: argparse.Namespace) -> List[str]:
    return list(files[:: max(1, args.torchfix_every)])


def render_state(args, cache, corpus, dirs, files, lines, sample, sample_lines, torchfix, state) -> str:
    return render(args, cache, corpus, dirs, files, lines, sample, sample_lines, state["results"], state["scaling"],
                  state["eco"], state["notes"], state["features"], state["load_start"], state["load_end"],
                  state["elapsed"], torchfix)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="1/20 of the files, for a smoke test")
    parser.add_argument(
        "--torchfix-every",
        type=int,
        default=20,
        help="TorchFix runs on every Nth file (it needs ~3 ms per line); 1 = all files",
    )
    parser.add_argument("--skip", default="", help="comma list of parts to skip: speed,peers,scaling,eco,fix")
    parser.add_argument("--output", type=Path, default=BENCH / "RESULTS.md")
    parser.add_argument("--flake8", default=None, help="the flake8 to compare with: one from an environment with no plugins (default: this one's)")
    parser.add_argument("--render-only", action="store_true", help="rewrite the report from the last run's saved measurements")
    args = parser.parse_args(argv)
    skip = {s for s in args.skip.split(",") if s}

    cache = (args.cache_dir or fetch.default_cache()).expanduser()
    corpus = fetch.load_corpus()
    missing = [p["name"] for p in corpus["project"] if not fetch.is_fetched(cache, corpus, p)]
    if len(missing) == len(corpus["project"]):
        print("run: nothing fetched yet; run `python bench/fetch.py --tools` first", file=sys.stderr)
        return 2
    if missing:  # measured without them, and the report says so
        print(f"run: not fetched, left out: {', '.join(missing)} (`python bench/fetch.py` fetches them)", file=sys.stderr)
        corpus = {**corpus, "project": [p for p in corpus["project"] if p["name"] not in missing]}
    root = cache / "src"
    work = cache / "work"
    work.mkdir(parents=True, exist_ok=True)
    dirs = [fetch.project_dir(cache, p).name for p in corpus["project"]]
    files = python_files(root, [root / d for d in dirs])
    if args.quick:  # a smoke test: 1/20 of the speed files, the two smallest projects for the ecosystem part
        files = files[::20]
        small = sorted(dirs, key=lambda d: sum(1 for _ in (root / d).rglob("*.py")))[:2]
        corpus = {**corpus, "project": [p for p in corpus["project"] if fetch.project_dir(cache, p).name in small]}
        dirs = [d for d in dirs if d in small]
    lines = count_lines(root, files)
    print(f"run: {len(files)} files, {lines} lines in {len(dirs)} projects", flush=True)

    features = cudalint_features()
    cudalint = tool("cudalint")
    flake8 = args.flake8 or tool("flake8")
    torchfix = str(cache / "torchfix-venv" / "bin" / "torchfix")
    cache_folder = root / ".cudalint_cache"
    results: Dict[str, Measurement] = {}
    notes: List[str] = [f"Not fetched, so left out of this run: {', '.join(missing)}."] if missing else []

    def cdl(*extra: str) -> List[str]:
        return [cudalint, "check", "--exit-zero", "--format", "json", *extra]

    cold_flags = ["--no-cache"] if features["--no-cache"] else []
    if not features["--no-cache"]:
        notes.append("`cudalint check` has no `--no-cache` flag in this build; the cold run is the plain command.")

    if args.render_only:  # re-render the last run's measurements (after a change to the report)
        with open(work / "last-run.pickle", "rb") as handle:
            state = pickle.load(handle)
        args.output.write_text(render_state(args, cache, corpus, dirs, files, lines, sample_of(files, args), 
                                            count_lines(root, sample_of(files, args)), torchfix, state))
        print(f"run: re-rendered {args.output}")
        return 0

    started = time.time()
    load_start = os.getloadavg()

    # ---- speed, whole corpus
    shutil.rmtree(cache_folder, ignore_errors=True)
    if "speed" not in skip:
        print("speed:", flush=True)
        results["ruff"] = measure("ruff check --select=E9", [tool("ruff"), "check", "--no-cache", "--isolated", "--select=E9", "--exit-zero", *files], root, len(files), lines)
        results["cold"] = measure("cudalint check (cold)", cdl(*cold_flags, *files), root, len(files), lines)
        warm_possible = features["--no-cache"] or features["--cache"]
        if warm_possible:
            cache_on = ["--cache"] if features["--cache"] and not features["--no-cache"] else []
            shutil.rmtree(cache_folder, ignore_errors=True)
            results["first"] = measure("cudalint check (cache empty, writing)", cdl(*cache_on, *files), root, len(files), lines)
            results["warm"] = measure("cudalint check (warm)", cdl(*cache_on, *files), root, len(files), lines)
            shutil.rmtree(cache_folder, ignore_errors=True)
        else:
            notes.append("No result cache is reachable from the CLI in this build (`--no-cache`/`--cache` absent): warm re-run not measured.")
        results["flake8"] = measure("flake8 --select=E9", [flake8, "--isolated", "--select=E9", "--exit-zero", *files], root, len(files), lines)

    # ---- TorchFix and the same sample for the others
    sample = sample_of(files, args)
    sample_lines = count_lines(root, sample)
    if "peers" not in skip:
        print(f"peer sample ({len(sample)} files, {sample_lines} lines):", flush=True)
        if Path(torchfix).exists():
            results["s_torchfix"] = measure("torchfix", [torchfix, *sample], root, len(sample), sample_lines)
        else:
            notes.append("TorchFix venv missing (`python bench/fetch.py --tools`): TorchFix not measured.")
        results["s_cold"] = measure("cudalint check (cold)", cdl(*cold_flags, *sample), root, len(sample), sample_lines)
        results["s_flake8"] = measure("flake8 --select=E9", [flake8, "--isolated", "--select=E9", "--exit-zero", *sample], root, len(sample), sample_lines)

    # ---- scaling
    scaling = []
    if "scaling" not in skip:
        print("scaling:", flush=True)
        for label, part in (("1/4", files[::4]), ("1/2", files[::2])):
            m = measure(f"cudalint check (cold) {label}", cdl(*cold_flags, *part), root, len(part), count_lines(root, part))
            scaling.append((label, m))
        scaling.append(("all", results["cold"]))

    # ---- ecosystem: crashes and findings on a copy of the project folders
    eco: Dict[str, object] = {}
    if "eco" not in skip:
        print("ecosystem:", flush=True)
        copy = work / "eco"
        shutil.rmtree(copy, ignore_errors=True)
        copy.mkdir(parents=True)
        for d in dirs:
            shutil.copytree(root / d, copy / d, ignore=shutil.ignore_patterns(fetch.MARKER, "__pycache__"))
        eco_dirs = dirs  # folders, so manifests count too
        listing = ["--unsafe-fixes"] if features["--unsafe-fixes"] else []  # every fix offered, for the reuse share
        check = measure("cudalint check <project folders>", cdl(*cold_flags, *listing, *eco_dirs), copy, 0, 0)
        findings = parse_json(check)
        eco["check"] = check
        eco["findings"] = findings
        if findings is None:
            notes.append(f"ecosystem check: cudalint did not print JSON (rc {check.rc}): {check.stderr[-2000:]}")
            findings = []
        crashes = crashes_in(findings, copy)
        if check.rc not in (0, 1) or "Traceback" in check.stderr:
            crashes.append({"path": "(whole run)", "line": 0, "code": "-", "message": check.stderr[-3000:], "why": f"exit {check.rc}"})
        eco["crashes"] = crashes
        (work / "ecosystem-findings.json").write_text(json.dumps(findings, indent=1) + "\n")  # for inspection; not committed
        with_hits = {f["path"] for f in findings if f["path"].endswith(".py") and f["code"] != "CDL000"}
        eco["hit_files"] = len(with_hits)
        eco["hit_lines"] = count_lines(copy, sorted(with_hits))
        per_project: Dict[str, Counter] = defaultdict(Counter)
        per_code: Counter = Counter()
        for finding in findings:
            per_project[project_of(finding["path"])][finding["code"][:4]] += 1
            per_code[finding["code"]] += 1
        eco["per_project"] = per_project
        eco["per_code"] = per_code

        # ---- fixes
        if "fix" not in skip:
            before_fail, cm_before = compileall_failures(copy, dirs, work / "pyc-before")
            eco["compile_before"] = before_fail
            if features["--fix"]:
                fix_flags = ["--fix"] + (["--unsafe-fixes"] if features["--unsafe-fixes"] else [])
                if not features["--unsafe-fixes"]:
                    notes.append("`--unsafe-fixes` is not in this build; only safe fixes were applied.")
                hashes0 = tree_hashes(copy)
                original = work / "before-fix"
                shutil.rmtree(original, ignore_errors=True)
                shutil.copytree(copy, original, symlinks=True)
                eco["fix1"] = measure("cudalint check --fix (1st)", cdl(*cold_flags, *fix_flags, *dirs), copy, 0, 0)
                hashes1 = tree_hashes(copy)
                eco["changed1"] = sorted(p for p in hashes1 if hashes0.get(p) != hashes1[p])
                eco["new_pyflakes"] = {
                    path: problems
                    for path in eco["changed1"] if path.endswith(".py")
                    for problems in [new_pyflakes((original / path).read_text(errors="replace"), (copy / path).read_text(errors="replace"), path)]
                    if problems
                }
                eco["new_import_failures"] = new_import_failures(original, copy, eco["changed1"])
                eco["new_ruff"] = new_ruff(original, copy, eco["changed1"])
                eco["device_reuse"] = device_reuse(eco.get("findings") or [])
                after_fail, cm_after = compileall_failures(copy, dirs, work / "pyc-after")
                eco["compile_after"] = after_fail
                eco["breakages"] = sorted(set(after_fail) - set(before_fail))
                eco["fix2"] = measure("cudalint check --fix (2nd)", cdl(*cold_flags, *fix_flags, *dirs), copy, 0, 0)
                hashes2 = tree_hashes(copy)
                eco["changed2"] = sorted(p for p in hashes2 if hashes1.get(p) != hashes2[p])
                for key in ("fix1", "fix2"):
                    run_ = eco[key]
                    if run_.rc not in (0, 1) or "Traceback" in run_.stderr:
                        eco["crashes"].append({"path": f"(--fix run {key[-1]})", "line": 0, "code": "-", "message": run_.stderr[-3000:], "why": f"exit {run_.rc}"})
            else:
                eco["fix_pending"] = True
                notes.append("`cudalint check --fix` is not in this build: the fix check (apply, compileall, second run) is pending; the code path is ready.")

    elapsed = time.time() - started
    state = dict(results=results, scaling=scaling, eco=eco, notes=notes, features=features,
                 load_start=load_start, load_end=os.getloadavg(), elapsed=elapsed)
    with open(work / "last-run.pickle", "wb") as handle:  # for --render-only
        pickle.dump(state, handle)
    args.output.write_text(render_state(args, cache, corpus, dirs, files, lines, sample, sample_lines, torchfix, state))
    raw = {
        "corpus_version": corpus["version"],
        "files": len(files),
        "lines": lines,
        "measurements": {k: {**{f: v for f, v in asdict(m).items() if f not in ("stdout", "stderr", "command")}} for k, m in results.items()},
        "scaling": [(label, m.files, m.lines, m.wall) for label, m in scaling],
        "crashes": eco.get("crashes", []),
    }
    (args.output.with_suffix(".json")).write_text(json.dumps(raw, indent=1, default=str) + "\n")
    print(f"run: wrote {args.output} in {elapsed:.0f} s", flush=True)
    return 0


# --------------------------------------------------------------------------- report


def machine() -> List[str]:
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    cpu = platform.processor() or "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return [
        f"- CPUs: {os.cpu_count()} ({cpu})",
        f"- memory: {mem}",
        f"- OS: {platform.system()} {platform.release()}",
        f"- Python: {platform.python_version()} ({platform.python_implementation()})",
    ]


def git_state() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=BENCH, capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=BENCH.parent, capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"
    return f"{head}{' + uncommitted changes under src/' if dirty else ''}"


def render(args, cache, corpus, dirs, files, lines, sample, sample_lines, results, scaling, eco, notes, features, load_start, load_end, elapsed, torchfix) -> str:
    out: List[str] = ["# cudalint benchmark and ecosystem check", ""]
    out.append(f"Generated by `python bench/run.py{' --quick' if args.quick else ''}` "
               f"(corpus version {corpus['version']}, cudalint at {git_state()}); the whole run took {elapsed:.0f} s.")
    out.append("Single measurements, one tool at a time, on a machine other people were also using: "
               f"load average {load_start[0]:.1f} at the start and {load_end[0]:.1f} at the end "
               "(each row shows the 1-minute load just before it ran).")
    out += ["", "## Machine", ""] + machine()
    out += ["", "## Versions", ""]
    out.append(f"- cudalint: {version_of([tool('cudalint'), '--version'])} (libcst {libcst_version(sys.executable)}); "
               f"CLI flags present: " + ", ".join(f"`{k}`" for k, v in features.items() if v)
               + "; absent: " + (", ".join(f"`{k}`" for k, v in features.items() if not v) or "none"))
    out.append(f"- flake8: {version_of([args.flake8 or tool('flake8'), '--version'])}")
    out.append(f"- ruff: {version_of([tool('ruff'), '--version'])}")
    if Path(torchfix).exists():
        out.append(f"- TorchFix: {version_of([torchfix, '--version'])} (own venv, libcst {libcst_version(str(Path(torchfix).parent / 'python'))})")
    out += ["", "## Corpus", ""]
    out.append(f"{len(files)} Python files, {lines:,} lines (the speed runs), from {len(dirs)} source distributions "
               "(`bench/corpus.toml`; the two largest are trimmed there):")
    out += ["", "| project | kind | .py files | lines |", "|---|---|---:|---:|"]
    per_files = Counter(project_of(f) for f in files)
    root = cache / "src"
    for project, d in zip(corpus["project"], dirs):
        mine = [f for f in files if project_of(f) == d]
        out.append(f"| {d} | {project['kind']} | {per_files[d]} | {count_lines(root, mine):,} |")

    def row(m: Measurement, ref: Optional[Measurement] = None) -> str:
        ratio = f"{m.wall / ref.wall:.2f}" if ref and ref.wall else "—"
        return (f"| {m.label} | {m.files} | {m.lines:,} | {fmt_s(m.wall)} | {fmt_s(m.cpu)} | {m.files_per_s:.1f} | "
                f"{m.lines_per_s:,.0f} | {m.max_rss_mb:.0f} | {m.tree_rss_mb:.0f} | {m.tree_pss_mb:.0f} | {ratio} | {m.load_before:.1f} |")

    header = ["| run | files | lines | wall s | CPU s | files/s | lines/s | peak RSS MB (largest process) | peak RSS MB (process tree) "
              "| peak PSS MB (process tree) | wall ÷ cudalint cold | load |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += ["", "## Speed: the whole corpus", ""] + header
    cold = results.get("cold")
    for key in ("ruff", "cold", "first", "warm", "flake8"):
        if key in results:
            out.append(row(results[key], cold))
    if "s_cold" in results:
        out += ["", f"## Speed: TorchFix sample (every {args.torchfix_every}th file of the sorted list)", "",
                "TorchFix needs about 3 ms per line here, so it runs on a fixed sample; the others run on the same files.", ""] + header
        for key in ("s_torchfix", "s_cold", "s_flake8"):
            if key in results:
                out.append(row(results[key], results["s_cold"]))
    if scaling:
        out += ["", "## Scaling (cudalint cold; interleaved fractions of the sorted file list)", "",
                "| part | files | lines | wall s | CPU s | µs per line (wall) | µs per line (CPU) |", "|---|---:|---:|---:|---:|---:|---:|"]
        for label, m in scaling:
            out.append(f"| {label} | {m.files} | {m.lines:,} | {fmt_s(m.wall)} | {fmt_s(m.cpu)} | "
                       f"{1e6 * m.wall / max(m.lines, 1):.1f} | {1e6 * m.cpu / max(m.lines, 1):.1f} |")
        if len(scaling) >= 2:
            (_, a), (_, b) = scaling[0], scaling[-1]
            slope = (b.wall - a.wall) / max(b.lines - a.lines, 1)
            fixed = a.wall - slope * a.lines
            cpu_slope = (b.cpu - a.cpu) / max(b.lines - a.lines, 1)
            cpu_fixed = a.cpu - cpu_slope * a.lines
            out += ["", f"Line through 1/4 and all: wall {1e6 * slope:.1f} µs per line + {fixed:.2f} s; "
                        f"CPU {1e6 * cpu_slope:.1f} µs per line + {cpu_fixed:.2f} s."]

    # targets
    out += ["", "## Targets (issue 8)", "", "| target | measured | holds |", "|---|---|---|"]

    def target(name: str, value: str, ok: Optional[bool]) -> None:
        out.append(f"| {name} | {value} | {'yes' if ok else ('no' if ok is not None else 'not measured')} |")

    if "s_torchfix" in results and "s_cold" in results:
        speedup = results["s_torchfix"].wall / results["s_cold"].wall
        cpu_speedup = results["s_torchfix"].cpu / max(results["s_cold"].cpu, 1e-9)
        target("cudalint cold ≥ 20× faster than TorchFix (sample)", f"{speedup:.1f}× wall ({cpu_speedup:.1f}× CPU)", speedup >= TARGET_VS_TORCHFIX)
    else:
        target("cudalint cold ≥ 20× faster than TorchFix", "—", None)
    if cold and "flake8" in results:
        ratio = cold.wall / results["flake8"].wall
        cpu_ratio = cold.cpu / max(results["flake8"].cpu, 1e-9)
        target("cudalint cold ≤ 0.5 × flake8 --select=E9 (whole corpus)", f"{ratio:.2f}× wall ({cpu_ratio:.2f}× CPU)", ratio <= TARGET_VS_FLAKE8)
    if "warm" in results and cold:
        ratio = results["warm"].wall / cold.wall
        target("warm re-run < 5% of cold", f"{100 * ratio:.1f}%", ratio < TARGET_WARM)
    else:
        target("warm re-run < 5% of cold", "no cache in this build", None)
    cudalint_runs = [m for k, m in results.items() if k in ("cold", "first", "warm", "s_cold")]
    if cudalint_runs:
        peak = max(m.tree_rss_mb for m in cudalint_runs)
        target("peak memory < 500 MB (cudalint process tree)", f"{peak:.0f} MB", peak < TARGET_MEMORY_MB)
        peak = max(m.tree_pss_mb for m in cudalint_runs)
        target("peak memory < 500 MB (cudalint process tree, PSS: shared pages once)", f"{peak:.0f} MB",
               peak < TARGET_MEMORY_MB if peak else None)
    fix_runs = [eco[k] for k in ("fix1", "fix2") if k in eco]
    if fix_runs:
        peak = max(m.tree_rss_mb for m in fix_runs)
        target("peak memory < 500 MB (`--fix` run, process tree)", f"{peak:.0f} MB", peak < TARGET_MEMORY_MB)
    if len(scaling) == 3:
        # CPU time per line: wall time on a shared 2-core machine moves with other people's load.
        per_line = [m.cpu / max(m.lines, 1) for _, m in scaling]
        spread = max(per_line) / min(per_line)
        target("linear scaling (CPU time per line, 1/4 vs 1/2 vs all)", f"max/min {spread:.2f}", spread < 1.3)
    if "crashes" in eco:
        target("zero crashes", str(len(eco["crashes"])), not eco["crashes"])
    if "breakages" in eco:
        target("zero fix breakages", str(len(eco["breakages"])), not eco["breakages"])
        target("idempotent fixes (2nd --fix changes nothing)", f"{len(eco['changed2'])} files changed", not eco["changed2"])
        if "new_pyflakes" in eco:
            target("no new pyflakes undefined names / unused imports in fixed files", str(len(eco["new_pyflakes"])), not eco["new_pyflakes"])
            target("no new import-time failures of fixed files", str(len(eco["new_import_failures"])), not eco["new_import_failures"])
        if "new_ruff" in eco:
            target("no new ruff E/W findings in fixed files", str(len(eco["new_ruff"])), not eco["new_ruff"])
    elif eco.get("fix_pending"):
        target("zero fix breakages / idempotent fixes", "pending: no `--fix` in this build", None)

    if eco:
        out += ["", "## Ecosystem check", ""]
        check = eco["check"]
        findings = eco.get("findings") or []
        out.append(f"`cudalint check` on the project folders (manifests included) of a scratch copy: {len(findings)} findings "
                   f"in {fmt_s(check.wall)} s, exit {check.rc}; {eco.get('hit_files', 0)} .py files "
                   f"({eco.get('hit_lines', 0):,} lines) have at least one finding.")
        families = sorted({fam for c in eco["per_project"].values() for fam in c})
        if families:
            out += ["", "| project | " + " | ".join(f"{f}xx" for f in families) + " | total |",
                    "|---|" + "---:|" * (len(families) + 1)]
            for d in dirs:
                counts = eco["per_project"].get(d, Counter())
                out.append(f"| {d} | " + " | ".join(str(counts.get(f, 0)) for f in families) + f" | {sum(counts.values())} |")
            totals = Counter()
            for c in eco["per_project"].values():
                totals.update(c)
            out.append("| **all** | " + " | ".join(f"**{totals.get(f, 0)}**" for f in families) + f" | **{sum(totals.values())}** |")
            out += ["", "By code: " + ", ".join(f"{code} {n}" for code, n in sorted(eco["per_code"].items())) + "."]
        out += ["", f"### Crashes: {len(eco['crashes'])}", ""]
        for crash in eco["crashes"][:50]:
            message = str(crash.get("message", "")).strip().replace("\n", "\n    ")
            out.append(f"- `{crash.get('path')}:{crash.get('line')}` {crash.get('code')} ({crash.get('why')}):\n\n    {message}\n")
        if "compile_before" in eco:
            out += ["", "### Fixes", ""]
            out.append(f"`python -m compileall -q` before fixing: {len(eco['compile_before'])} files do not compile "
                       f"(Python {platform.python_version()}; they are the projects' own)"
                       + (": " + ", ".join(f"`{p}`" for p in eco["compile_before"][:20]) if eco["compile_before"] else "") + ".")
            if "fix1" in eco:
                out.append(f"- 1st `--fix --unsafe-fixes` run: {fmt_s(eco['fix1'].wall)} s wall, {fmt_s(eco['fix1'].cpu)} s CPU, "
                           f"peak {eco['fix1'].tree_rss_mb:.0f} MB (process tree), {len(eco['changed1'])} files changed.")
                out.append(f"- compileall after: {len(eco['compile_after'])} files do not compile; breakages (compiled before, not after): "
                           f"{len(eco['breakages'])}" + (": " + ", ".join(f"`{p}`" for p in eco["breakages"]) if eco["breakages"] else "") + ".")
                out.append(f"- 2nd `--fix` run: {fmt_s(eco['fix2'].wall)} s, {len(eco['changed2'])} files changed"
                           + (": " + ", ".join(f"`{p}`" for p in eco["changed2"][:20]) if eco["changed2"] else "") + ".")
                if "new_pyflakes" in eco:
                    out.append(f"- pyflakes on original vs fixed (undefined names, unused imports): {len(eco['new_pyflakes'])} "
                               "fixed files have a problem their original did not"
                               + ("".join(f"\n  - `{p}`: {', '.join(v)}" for p, v in sorted(eco["new_pyflakes"].items())[:30])) + ".")
                    out.append(f"- import of each changed module in a fresh interpreter, where the original imported: "
                               f"{len(eco['new_import_failures'])} new import-time failures"
                               + ("".join(f"\n  - {line}" for line in eco["new_import_failures"][:30])) + ".")
                if "new_ruff" in eco:
                    out.append(f"- ruff `--select E,W` (the project's own line length) on original vs fixed: {len(eco['new_ruff'])} "
                               "fixed files have a finding their original did not"
                               + ("".join(f"\n  - `{p}`: {', '.join(v)}" for p, v in sorted(eco["new_ruff"].items())[:30])) + ".")
                if "device_reuse" in eco:
                    reused, needing = eco["device_reuse"]
                    share = f"{100 * reused / needing:.0f}%" if needing else "—"
                    out.append(f"- fixes that need a device: {needing}; {reused} of them ({share}) use a device the code already has.")
            else:
                out.append("- `--fix` is not in this build yet: applying fixes, the compileall comparison and the idempotency run are pending.")

    if notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in notes]

    out += ["", "## Commands", "", "Run from the corpus root (`$CACHE/src`, default cache `~/.cache/cudalint-bench`), "
            "one at a time; `<N files>` is the sorted list of the corpus's .py files (relative paths), passed as arguments.", "", "```"]
    seen = set()
    all_runs = list(results.values()) + [m for _, m in scaling] + [eco[k] for k in ("check", "fix1", "fix2") if k in eco]
    for m in all_runs:
        line = shown(m.command, files if m.files == len(files) else (sample if m.files == len(sample) else [a for a in m.command if a.endswith('.py')]), dirs)
        if line not in seen:
            seen.add(line)
            out.append(line)
    out.append("PYTHONPYCACHEPREFIX=<scratch> python -m compileall -q <project folders>   # before and after --fix")
    out.append("```")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
