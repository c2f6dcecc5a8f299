"""Precision and recall of cudalint on a labelled corpus of real public PyTorch code.

    python bench/evaluate.py --fetch          # download the labelled sdists (sha256-checked), then score
    python bench/evaluate.py                  # score what is already in the cache
    python bench/evaluate.py --phase 1        # only the labels written before looking at cudalint
    python bench/evaluate.py --json OUT.json  # also every count, match and unjudged finding as JSON

Labels live in bench/labels/NAME.toml, one file per project: a [project] table (name,
version, sha256 of the sdist, kind) and one [[label]] per judged line (path relative to
the unpacked sdist, 1-based line, verdict "flag"|"ok", family CDL1..CDL7, why, phase 1|2).
Phase 1 labels were written by reading the code before seeing any cudalint output; phase 2
labels judge what cudalint reported on lines phase 1 did not cover. A project with
`heldout = true` in [project] is one nobody tuned the rules against: it is scored in
sections of its own, apart from the tuned corpus, and only its unjudged findings in files
that carry a label are listed (the others are counted).

Matching is by (path, line) and family (the first four characters of a code):
  a finding on a line labelled "flag" in its family      true positive
  a finding on a line labelled "ok" in its family, or on
  a line whose labels are all "ok"                       false positive
  a finding on any other line                            unjudged (listed, to judge in phase 2)
  a "flag" label with no finding of its family there     false negative
CDL000 (unreadable file) findings are counted apart and never scored.

The sdists go to a cache outside the repository (default $CUDALINT_EVAL_CACHE or
~/.cache/cudalint-eval), fetched the way bench/fetch.py fetches the speed corpus; an
optional `no_build_isolation`, `env` or `constraints` in [project] means what it means
in bench/corpus.toml. Writes bench/EVAL.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
LABELS = BENCH / "labels"
REPORT = BENCH / "EVAL.md"
TORCH_VERSION = "2.9.1"  # fixed (a release in the MPS coverage database), so runs on different days compare
FAMILIES = tuple(f"CDL{n}" for n in range(1, 8))
VERDICTS = ("flag", "ok")
KINDS = ("training scripts", "CUDA extensions", "device-agnostic library", "CUDA-pinned manifests")
MARKER = ".cudalint-eval.json"
KEEP = "<!-- evaluate.py rewrites everything above this line; what follows it is kept -->"
HELDOUT = " (held-out projects)"  # suffix of the section titles that score the held-out projects


class LabelError(ValueError):
    """A label file that does not follow the format; the message names the file and entry."""


@dataclass(frozen=True)
class Label:
    path: str
    line: int
    verdict: str
    family: str
    why: str
    phase: int


@dataclass(frozen=True)
class Finding:
    code: str
    path: str
    line: int
    message: str = ""

    @property
    def family(self) -> str:
        return self.code[:4]


@dataclass
class Project:
    name: str
    version: str
    sha256: str
    kind: str
    labels: List[Label]
    fetch_options: Dict[str, object] = field(default_factory=dict)
    source: str = ""
    heldout: bool = False


# --------------------------------------------------------------------------- labels


def _require(entry: dict, key: str, kind: type, where: str):
    value = entry.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise LabelError(f"{where}: `{key}` must be a {kind.__name__}, got {value!r}")
    return value


def parse_labels(text: str, source: str = "<labels>") -> Project:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LabelError(f"{source}: {error}") from None
    meta = data.get("project")
    if not isinstance(meta, dict):
        raise LabelError(f"{source}: missing [project] table")
    where = f"{source} [project]"
    name = _require(meta, "name", str, where)
    version = _require(meta, "version", str, where)
    sha256 = _require(meta, "sha256", str, where)
    kind = _require(meta, "kind", str, where)
    if kind not in KINDS:
        raise LabelError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    options = {key: meta[key] for key in ("no_build_isolation", "env", "constraints") if key in meta}
    heldout = meta.get("heldout", False)
    if not isinstance(heldout, bool):
        raise LabelError(f"{where}: `heldout` must be a bool, got {heldout!r}")
    labels: List[Label] = []
    seen: Dict[Tuple[str, int, str], int] = {}
    for index, entry in enumerate(data.get("label", []), start=1):
        where = f"{source} label {index}"
        if not isinstance(entry, dict):
            raise LabelError(f"{where}: not a table")
        label = Label(
            path=_require(entry, "path", str, where),
            line=_require(entry, "line", int, where),
            verdict=_require(entry, "verdict", str, where),
            family=_require(entry, "family", str, where),
            why=_require(entry, "why", str, where),
            phase=_require(entry, "phase", int, where),
        )
        where = f"{where} ({label.path}:{label.line})"
        if label.line < 1:
            raise LabelError(f"{where}: line must be 1 or more")
        if label.path.startswith("/") or ".." in Path(label.path).parts:
            raise LabelError(f"{where}: path must be relative to the sdist root")
        if label.verdict not in VERDICTS:
            raise LabelError(f"{where}: verdict must be one of {VERDICTS}, got {label.verdict!r}")
        if label.family not in FAMILIES:
            raise LabelError(f"{where}: family must be one of CDL1..CDL7, got {label.family!r}")
        if label.phase not in (1, 2):
            raise LabelError(f"{where}: phase must be 1 or 2, got {label.phase!r}")
        key = (label.path, label.line, label.family)
        if key in seen:
            raise LabelError(f"{where}: same path, line and family as label {seen[key]}")
        seen[key] = index
        labels.append(label)
    return Project(name, version, sha256, kind, labels, options, source, heldout)


def load_projects(folder: Path = LABELS) -> List[Project]:
    return [parse_labels(path.read_text(encoding="utf-8"), path.name) for path in sorted(folder.glob("*.toml"))]


def check_lines(project: Project, tree: Path) -> List[str]:
    """Labels pointing past the end of their file, or at a file the sdist lacks."""
    problems = []
    lengths: Dict[str, Optional[int]] = {}
    for label in project.labels:
        if label.path not in lengths:
            try:
                lengths[label.path] = len((tree / label.path).read_bytes().splitlines())
            except OSError:
                lengths[label.path] = None
        length = lengths[label.path]
        if length is None:
            problems.append(f"{project.source}: {label.path}: no such file in the sdist")
        elif label.line > length:
            problems.append(f"{project.source}: {label.path}:{label.line}: the file has {length} lines")
    return problems


# --------------------------------------------------------------------------- matching


@dataclass
class Score:
    """Counts for one label set; every list holds (project, finding-or-label) pairs."""

    tp: List[Tuple[str, Finding]] = field(default_factory=list)
    fp: List[Tuple[str, Finding]] = field(default_factory=list)
    unjudged: List[Tuple[str, Finding]] = field(default_factory=list)
    fn: List[Tuple[str, Label]] = field(default_factory=list)
    found: List[Tuple[str, Label]] = field(default_factory=list)  # flag labels with a finding
    unreadable: List[Tuple[str, Finding]] = field(default_factory=list)

    def merge(self, other: "Score") -> None:
        for name in ("tp", "fp", "unjudged", "fn", "found", "unreadable"):
            getattr(self, name).extend(getattr(other, name))


def match(project: str, labels: Iterable[Label], findings: Iterable[Finding]) -> Score:
    by_line: Dict[Tuple[str, int], List[Label]] = defaultdict(list)
    for label in labels:
        by_line[(label.path, label.line)].append(label)
    score = Score()
    hit: set = set()
    for finding in findings:
        if finding.code == "CDL000":
            score.unreadable.append((project, finding))
            continue
        here = by_line.get((finding.path, finding.line), [])
        same = [label for label in here if label.family == finding.family]
        if same:
            verdict = same[0].verdict
        elif here and all(label.verdict == "ok" for label in here):
            verdict = "ok"
        else:
            verdict = None
        if verdict == "flag":
            score.tp.append((project, finding))
            hit.add((finding.path, finding.line, finding.family))
        elif verdict == "ok":
            score.fp.append((project, finding))
        else:
            score.unjudged.append((project, finding))
    for group in by_line.values():
        for label in group:
            if label.verdict != "flag":
                continue
            if (label.path, label.line, label.family) in hit:
                score.found.append((project, label))
            else:
                score.fn.append((project, label))
    return score


def ratio(num: int, den: int) -> Optional[float]:
    return num / den if den else None


def summarize(score: Score) -> dict:
    """Precision per rule and family, recall per family, and overall figures."""
    per_rule: Dict[str, Counter] = defaultdict(Counter)
    per_family: Dict[str, Counter] = defaultdict(Counter)
    per_project: Dict[str, Counter] = defaultdict(Counter)
    for outcome in ("tp", "fp", "unjudged"):
        for project, finding in getattr(score, outcome):
            per_rule[finding.code][outcome] += 1
            per_family[finding.family][outcome] += 1
            per_project[project][outcome] += 1
    for outcome in ("found", "fn"):
        for project, label in getattr(score, outcome):
            per_family[label.family][outcome] += 1
            per_project[project][outcome] += 1
    tp, fp = len(score.tp), len(score.fp)
    found, fn = len(score.found), len(score.fn)

    def row(counts: Counter, recall: bool) -> dict:
        out = {
            "tp": counts["tp"],
            "fp": counts["fp"],
            "unjudged": counts["unjudged"],
            "precision": ratio(counts["tp"], counts["tp"] + counts["fp"]),
        }
        if recall:
            out.update(found=counts["found"], fn=counts["fn"], recall=ratio(counts["found"], counts["found"] + counts["fn"]))
        return out

    return {
        "overall": {
            "tp": tp, "fp": fp, "unjudged": len(score.unjudged), "precision": ratio(tp, tp + fp),
            "found": found, "fn": fn, "recall": ratio(found, found + fn), "unreadable": len(score.unreadable),
        },
        "rules": {code: row(per_rule[code], False) for code in sorted(per_rule)},
        "families": {family: row(per_family[family], True) for family in sorted(per_family)},
        "projects": {project: row(per_project[project], True) for project in sorted(per_project)},
    }


# --------------------------------------------------------------------------- fetching and running


def default_cache() -> Path:
    return Path(os.environ.get("CUDALINT_EVAL_CACHE") or Path.home() / ".cache" / "cudalint-eval")


def _fetch_module():
    sys.path.insert(0, str(BENCH))
    try:
        import fetch
    finally:
        sys.path.remove(str(BENCH))
    return fetch


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_of(cache: Path, project: Project) -> Path:
    return cache / "src" / f"{project.name}-{project.version}"


def ensure_tree(cache: Path, project: Project, download: bool) -> Path:
    """The unpacked sdist, whole (binaries and members over 2 MB aside), checked against its sha256."""
    fetch = _fetch_module()
    target = tree_of(cache, project)
    try:
        if json.loads((target / MARKER).read_text())["sha256"] == project.sha256:
            return target
    except (OSError, ValueError, KeyError):
        pass
    spec = {"name": project.name, "version": project.version, **project.fetch_options}
    archive = fetch.find_sdist(cache / "sdists", spec)
    if archive is None:
        if not download:
            raise SystemExit(f"evaluate: {project.name} {project.version} is not in {cache}; run with --fetch")
        archive = fetch.download(spec, cache / "sdists")
    actual = sha256_of(archive)
    if actual != project.sha256:
        raise SystemExit(f"evaluate: {archive.name}: sha256 {actual} does not match {project.source} ({project.sha256})")
    counts = fetch.unpack(archive, {"name": project.name, "version": project.version}, target)
    (target / MARKER).write_text(json.dumps({"sha256": actual, "sdist": archive.name, **counts}) + "\n")
    return target


def run_cudalint(tree: Path, torch_version: str = TORCH_VERSION) -> List[Finding]:
    """cudalint's default rule set on the whole tree, paths relative to it, from this checkout's code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    command = [
        sys.executable, "-m", "cudalint", "check", "--format", "json", "--no-cache", "--exit-zero",
        "--torch-version", torch_version, ".",
    ]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"evaluate: cudalint exited {done.returncode} on {tree.name}:\n{done.stderr[-2000:]}")
    return [Finding(item["code"], item["path"], item["line"], item["message"]) for item in json.loads(done.stdout)]


# --------------------------------------------------------------------------- report


def _pct(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2f}"


def cudalint_revision() -> str:
    """The commit of this checkout, marked when src/ or rules/ have uncommitted changes."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" with uncommitted changes" if git("status", "--porcelain", "--", "src", "rules") else "")


def _corpus_table(projects: Sequence[Project]) -> List[str]:
    lines = ["| project | version | kind | labels | flag | ok | phase 1 | phase 2 |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for p in projects:
        flags = sum(label.verdict == "flag" for label in p.labels)
        first = sum(label.phase == 1 for label in p.labels)
        lines.append(
            f"| {p.name} | {p.version} | {p.kind} | {len(p.labels)} | {flags} | {len(p.labels) - flags} | {first} | {len(p.labels) - first} |"
        )
    total = sum(len(p.labels) for p in projects)
    return lines + [f"| **all** | | | {total} | | | | |"]


def render(results: Dict[str, dict], projects: Sequence[Project], unjudged: List[Tuple[str, Finding]],
           torch_version: str, revision: str = "", unlisted: Optional[Dict[str, int]] = None) -> str:
    lines = [
        "# cudalint on labelled real code",
        "",
        "Written by `python bench/evaluate.py` (see its docstring for the matching rules); cudalint's",
        f"default rule set{f' at {revision}' if revision else ''}, target torch {torch_version}. Phase 1 labels were written by reading the code",
        "before looking at cudalint's output; phase 2 labels judge findings on lines phase 1 had not",
        "covered. Precision = TP / (TP + FP); unjudged findings are in neither. Recall = flagged lines",
        "with a finding of their family / flagged lines.",
        "",
    ]
    tuned = [p for p in projects if not p.heldout]
    heldout = [p for p in projects if p.heldout]
    if tuned:
        lines += ["## Corpus", ""] + _corpus_table(tuned)
    if heldout:
        lines += [
            *([""] if tuned else []),
            "## Held-out corpus",
            "",
            "Projects nobody tuned the rules against (`heldout = true`): scored apart, in the sections",
            f"whose titles end with \"{HELDOUT.strip()}\".",
            "",
        ] + _corpus_table(heldout)
    for title, summary in results.items():
        o = summary["overall"]
        lines += [
            "",
            f"## {title}",
            "",
            f"Overall: precision **{_pct(o['precision'])}** ({o['tp']} TP, {o['fp']} FP, {o['unjudged']} unjudged), "
            f"recall **{_pct(o['recall'])}** ({o['found']} of {o['found'] + o['fn']} flagged lines)"
            + (f"; {o['unreadable']} unreadable-file findings not scored" if o["unreadable"] else "")
            + ".",
            "",
            "| family | TP | FP | unjudged | precision | flagged found | missed | recall |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for family, r in summary["families"].items():
            lines.append(
                f"| {family} | {r['tp']} | {r['fp']} | {r['unjudged']} | {_pct(r['precision'])} | {r['found']} | {r['fn']} | {_pct(r['recall'])} |"
            )
        lines += ["", "| project | TP | FP | unjudged | precision | flagged found | missed | recall |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for project, r in summary["projects"].items():
            lines.append(
                f"| {project} | {r['tp']} | {r['fp']} | {r['unjudged']} | {_pct(r['precision'])} | {r['found']} | {r['fn']} | {_pct(r['recall'])} |"
            )
        lines += ["", "| rule | TP | FP | unjudged | precision |", "|---|---:|---:|---:|---:|"]
        for code, r in summary["rules"].items():
            lines.append(f"| {code} | {r['tp']} | {r['fp']} | {r['unjudged']} | {_pct(r['precision'])} |")
    lines += ["", f"## Unjudged findings ({len(unjudged)})", ""]
    for project, count in sorted((unlisted or {}).items()):
        lines += [f"Held-out {project}: {count} more findings in files that carry no label, not listed.", ""]
    if unjudged:
        lines += ["Findings on lines no label covers (with all labels); judge them as phase 2 labels.", ""]
        for project, f in sorted(unjudged, key=lambda item: (item[0], item[1].path, item[1].line, item[1].code)):
            lines.append(f"- {project} `{f.path}:{f.line}` {f.code} {f.message}")
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def write_report(path: Path, text: str) -> None:
    """Replace the generated part of the report; keep whatever follows the KEEP line."""
    kept = ""
    try:
        old = path.read_text(encoding="utf-8")
    except OSError:
        old = ""
    if KEEP in old:
        kept = old[old.index(KEEP) + len(KEEP):]
    path.write_text(text + "\n" + KEEP + (kept or "\n"), encoding="utf-8")


def _jsonable(score: Score) -> dict:
    return {
        name: [{"project": project, **vars(item)} for project, item in getattr(score, name)]
        for name in ("tp", "fp", "unjudged", "fn", "found", "unreadable")
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fetch", action="store_true", help="download sdists missing from the cache")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--phase", choices=("1", "all"), default=None, help="score only this label set (default: both)")
    parser.add_argument("--json", type=Path, default=None, help="also write counts, matches and unjudged findings here")
    parser.add_argument("--torch-version", default=TORCH_VERSION)
    parser.add_argument("--labels", type=Path, default=LABELS, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, default=REPORT, help="Markdown report to write (default bench/EVAL.md)")
    args = parser.parse_args(argv)
    cache = (args.cache_dir or default_cache()).expanduser()
    try:
        projects = load_projects(args.labels)
    except LabelError as error:
        print(f"evaluate: {error}", file=sys.stderr)
        return 2
    if not projects:
        print(f"evaluate: no label files in {args.labels}", file=sys.stderr)
        return 2
    phases = {"1": ("phase 1 labels",), "all": ("all labels",), None: ("phase 1 labels", "all labels")}[args.phase]
    groups = [suffix for suffix, held in (("", False), (HELDOUT, True)) if any(p.heldout == held for p in projects)]
    scores = {phase + suffix: Score() for suffix in groups for phase in phases}
    problems: List[str] = []
    for project in projects:
        tree = ensure_tree(cache, project, args.fetch)
        problems += check_lines(project, tree)
        findings = run_cudalint(tree, args.torch_version)
        for phase in phases:
            labels = [label for label in project.labels if phase == "all labels" or label.phase == 1]
            scores[phase + (HELDOUT if project.heldout else "")].merge(match(project.name, labels, findings))
        print(f"evaluate: {project.name} {project.version}: {len(findings)} findings, {len(project.labels)} labels", flush=True)
    for problem in problems:
        print(f"evaluate: {problem}", file=sys.stderr)
    results = {title: summarize(score) for title, score in scores.items()}
    labelled = {p.name: {label.path for label in p.labels} for p in projects if p.heldout}
    unjudged: List[Tuple[str, Finding]] = []
    unlisted: Dict[str, int] = {}
    for suffix in groups:
        for name, finding in scores[phases[-1] + suffix].unjudged:
            if name in labelled and finding.path not in labelled[name]:
                unlisted[name] = unlisted.get(name, 0) + 1
            else:
                unjudged.append((name, finding))
    write_report(args.report, render(results, projects, unjudged, args.torch_version, cudalint_revision(), unlisted))
    for title, summary in results.items():
        o = summary["overall"]
        print(f"{title}: precision {_pct(o['precision'])} ({o['tp']} TP, {o['fp']} FP, {o['unjudged']} unjudged), "
              f"recall {_pct(o['recall'])} ({o['found']}/{o['found'] + o['fn']})")
    if args.json:
        payload = {"torch_version": args.torch_version, "results": results,
                   "matches": {title: _jsonable(score) for title, score in scores.items()}}
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
