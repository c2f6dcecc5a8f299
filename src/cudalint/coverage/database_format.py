"""Write the shipped database (``rules/mps_coverage.json``) and read releases back out of it.

Layout (minified JSON, sorted keys)::

    format, format_version, provenance, codes (legend of the status characters)
    releases      ["1.13.1", ...] oldest first; the index of a release is its position
    release_info  {release: {source, dispatch_table, git_version, xfail, [callees_from]}}
    ops           {op key: "NNNC..."}                  one status character per release
                  {op key: {"s": "NNNC...",             or, when there is more to say,
                            "d": [[i, "callee callee"|null], ...],   composite callees from release i on
                            "p": "yyppyyy...",           where each answer came from (sources), when not
                                                         the default (b for F, y otherwise)
                            "x": ["OpInfo key", ...]}}   OpInfo keys whose test lists concern the op
    sources       legend of the provenance characters
    registrations [{op, releases: [i, ...], file, reference}]        Python registrations applied
    torchvision   {pairs: {torch minor: torchvision minor}, ops: [{op, mps_from, reference}]}
    corrections   [{ops, releases: [i, ...], code, reference, why}]  manual corrections applied
    xfail         {OpInfo key: [[[i, ...], list, kind, grad, dtypes|null, reason, condition], ...]}
    complex       {OpInfo key: "yyymn.."}  complex dtypes per release: y yes, m from macOS 14, n no, . no data
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional, Sequence, Tuple

from .release_facts import (
    KIND_COMPOSITE,
    KIND_CPU_FALLBACK,
    KIND_MISSING,
    KIND_MISSING_BACKEND,
    KIND_NATIVE,
    SOURCE_BINARY,
    SOURCE_CORRECTION,
    SOURCE_LEGEND,
    SOURCE_YAML,
    OpFacts,
    ReleaseFacts,
    XfailEntry,
)
from .resolve import resolve_release
from .reviewed_facts import Correction, Registration, TorchvisionTable, apply
from .status import CODE_ABSENT, CODE_LEGEND, COMPOSITE_CODES
from .versions import sort_releases

FORMAT = "cudalint-mps-coverage"
FORMAT_VERSION = 2
PROVENANCE = (
    "Per-release MPS facts of the mps-coverage data set, kept in data/mps-coverage (native_functions.yaml and "
    "libtorch binaries of released torch wheels, composite call graphs from the binaries, OpInfo MPS test lists), "
    "releases read from an installed torch (see release_info), MPS kernels registered from Python and reviewed "
    "manual corrections (registrations, corrections). Built by scripts/build_coverage_db.py."
)

_KIND_OF_CODE = {"N": KIND_NATIVE, "F": KIND_CPU_FALLBACK, "E": KIND_MISSING, "G": KIND_MISSING_BACKEND}


def _callee_runs(per_release: List[Optional[Tuple[str, ...]]], codes: str) -> list:
    """Run-length encode composite callees; releases where the op is no composite don't break a run."""
    runs: list = []
    current: object = object()
    for index, callees in enumerate(per_release):
        if codes[index] not in COMPOSITE_CODES:
            continue
        value = " ".join(callees) if callees is not None else None
        if value != current:
            runs.append([index, value])
            current = value
    return runs


def default_source(code: str) -> str:
    return SOURCE_BINARY if code == "F" else SOURCE_YAML


def build_database(releases: List[ReleaseFacts], registrations: Sequence[Registration] = (),
                   corrections: Sequence[Correction] = (), torchvision: Optional[TorchvisionTable] = None) -> dict:
    versions = sort_releases([r.version for r in releases])
    by_version = {r.version: r for r in releases}
    ordered = [by_version[v] for v in versions]
    for release in ordered:
        if torchvision is not None:
            release.ops.update(torchvision.facts(release.version))
        apply(release.version, release.ops, registrations, corrections)
    resolved = [resolve_release(r.ops) for r in ordered]
    names = sorted(set().union(*(r.ops for r in ordered)))
    ops: Dict[str, object] = {}
    for name in names:
        codes = "".join(table.get(name, CODE_ABSENT) for table in resolved)
        callees = [r.ops[name].callees if name in r.ops else None for r in ordered]
        runs = _callee_runs(callees, codes)
        links = sorted(set().union(*(r.opinfo_links.get(name, ()) for r in ordered)))
        sources = "".join(r.ops[name].source if name in r.ops else default_source(code)
                          for r, code in zip(ordered, codes))
        marked = sources != "".join(default_source(code) for code in codes)
        if not runs and not links and not marked:
            ops[name] = codes
            continue
        entry: Dict[str, object] = {"s": codes}
        if runs:
            entry["d"] = runs
        if marked:
            entry["p"] = sources
        if links:
            entry["x"] = links
        ops[name] = entry
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "provenance": PROVENANCE,
        "codes": CODE_LEGEND,
        "releases": versions,
        "release_info": {r.version: r.info for r in ordered},
        "ops": ops,
        "sources": SOURCE_LEGEND,
        "registrations": [
            {"op": r.op, "releases": _covered(versions, r.span), "file": r.file, "reference": r.reference}
            for r in registrations if _covered(versions, r.span)
        ],
        "corrections": [
            {"ops": list(c.ops), "releases": _covered(versions, c.span), "code": c.code, "reference": c.reference,
             "why": c.why}
            for c in corrections if _covered(versions, c.span)
        ],
        "torchvision": torchvision.to_json() if torchvision is not None else {"pairs": {}, "ops": []},
        "xfail": _xfail_table(ordered),
        "complex": _complex_table(ordered),
    }


def _covered(versions: List[str], span) -> List[int]:
    return [index for index, version in enumerate(versions) if span.covers(version)]


def _xfail_table(ordered: List[ReleaseFacts]) -> dict:
    rows: Dict[str, Dict[str, List[int]]] = {}
    for index, release in enumerate(ordered):
        for key, entries in (release.xfail or {}).items():
            for entry in entries:
                encoded = json.dumps(entry.row(), sort_keys=True)
                indices = rows.setdefault(key, {}).setdefault(encoded, [])
                if index not in indices:
                    indices.append(index)
    table = {}
    for key, grouped in rows.items():
        table[key] = sorted(([indices] + json.loads(encoded) for encoded, indices in grouped.items()),
                            key=lambda row: json.dumps(row, sort_keys=True))
    return table


def _complex_table(ordered: List[ReleaseFacts]) -> dict:
    keys = sorted(set().union(*(r.complex_support for r in ordered)))
    table = {}
    for key in keys:
        table[key] = "".join(r.complex_support.get(key, r.complex_default) or "." for r in ordered)
    return table


def dumps(database: dict) -> bytes:
    return (json.dumps(database, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def release_from_database(database: dict, version: str) -> ReleaseFacts:
    """Rebuild one release's facts from a database, e.g. to keep a release added from an installed torch."""
    index = database["releases"].index(version)
    ops: Dict[str, OpFacts] = {}
    for name, entry in database["ops"].items():
        codes = entry if isinstance(entry, str) else entry["s"]
        code = codes[index]
        if code == CODE_ABSENT:
            continue
        sources = entry.get("p") if isinstance(entry, dict) else None
        source = sources[index] if sources else default_source(code)
        if code in COMPOSITE_CODES:
            forced = code if source == SOURCE_CORRECTION else None
            ops[name] = OpFacts(KIND_COMPOSITE, _callees_at(entry, index), source, forced)
        else:
            ops[name] = OpFacts(_KIND_OF_CODE[code], source=source)
    xfail = None
    if database["release_info"][version].get("xfail") != "absent":
        xfail = {}
        for key, rows in database["xfail"].items():
            entries = [XfailEntry.from_row(row[1:]) for row in rows if index in row[0]]
            if entries:
                xfail[key] = entries
    complex_support = {key: chars[index] for key, chars in database["complex"].items() if chars[index] != "."}
    return ReleaseFacts(version, dict(database["release_info"][version]), ops, xfail, complex_support, {},
                        complex_default="n" if complex_support else "")


def _callees_at(entry: object, index: int) -> Optional[Tuple[str, ...]]:
    if isinstance(entry, str):
        return None
    value = None
    for start, callees in entry.get("d", []):
        if start > index:
            break
        value = callees
    return tuple(value.split()) if value else (() if value == "" else None)
