"""`cudalint report`: one portability document for a project, as markdown, HTML or JSON.

Static findings grouped by family, dependency blockers, operator coverage (static, and traced when a
trace is given) and a verdict per acceptance-checklist item, each checked against one torch release.
The JSON document is built first; markdown and HTML render it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

from cudalint.catalog import FAMILIES, load_catalog
from cudalint.compare import read_compare
from cudalint.config import ConfigError, find_pyproject, read_json_input, resolve, shape_ok
from cudalint.tracing.records import TRACE_SHAPE
from cudalint.coverage import CoverageDB
from cudalint.discover import MissingPath
from cudalint.report.checklist import VERDICT_ORDER, Traced, build_checklist, is_op_coverage, overall
from cudalint.report.portability_plan import blockers, entry_points, per_file, per_folder, safe_fixable, trace_hint, verdict
from cudalint.tracing.assess import assess
from cudalint.tracing.records import SCOPE, ApiCall, Created, OpRecord, TraceData
from cudalint.tracing.render import FORMAT as TRACE_FORMAT

FORMAT, FORMAT_VERSION = "cudalint-report", 2


def machine_torch() -> dict:
    """The installed torch and what it says about MPS on this machine; None values when torch is absent."""
    try:
        import torch
    except ImportError:
        return {"installed": None, "mps_built": None, "mps_available": None,
                "note": "torch is not installed in this Python environment: MPS availability not checked"}
    return {"installed": torch.__version__, "mps_built": bool(torch.backends.mps.is_built()),
            "mps_available": bool(torch.backends.mps.is_available()), "note": "checked on this machine"}


def read_trace(path: Path) -> dict:
    return read_json_input(
        path, "--trace", lambda doc: doc.get("format") == TRACE_FORMAT and shape_ok(doc, TRACE_SHAPE),
        "a trace written by `cudalint trace --output FILE.json`"
    )


def traced_from(doc: dict, release: str) -> Traced:
    data = TraceData(
        ops=[OpRecord.from_json(op) for op in doc["ops"]],
        created=[Created.from_json(c) for c in doc["created"]],
        cuda_apis=[ApiCall.from_json(call) for call in doc["cuda_apis"]],
        cuda_tensor_ops=doc.get("cuda_tensor_ops", 0),
    )
    ran = doc["ran"]
    return Traced(ran["command"], doc["torch"]["installed"], data, assess(data, release), ran.get("exit_code"),
                  ran.get("error"))


def build_report(path: str, trace_path: Optional[Path] = None, torch_version: Optional[str] = None,
                 compare_path: Optional[Path] = None) -> dict:
    from cudalint.runner import run

    catalog = load_catalog()
    start = Path(path)
    settings = resolve(catalog, config_path=find_pyproject(start if start.exists() else Path.cwd()),
                       torch_version=torch_version)
    trace_doc = read_trace(trace_path) if trace_path else None
    compared = read_compare(compare_path) if compare_path else None
    try:
        result = run([path], settings)
    except MissingPath as exc:
        raise ConfigError(str(exc)) from None
    db = CoverageDB.load()
    release = db.nearest_release(result.torch_version)
    release_note = ""
    if release is None:
        release = db.versions()[0]
        release_note = f"torch {result.torch_version} is older than every covered release; answered for {release}"
    traced = traced_from(trace_doc, release) if trace_doc else None
    findings = result.findings

    families = []
    for family, name in FAMILIES.items():
        members = [f for f in findings if f.code.startswith(family)]
        codes = {}
        for finding in members:
            codes[finding.code] = codes.get(finding.code, 0) + 1
        families.append({"family": family, "name": name, "findings": len(members),
                         "fixable": sum(1 for f in members if f.fix is not None), "codes": dict(sorted(codes.items()))})
    points = entry_points(path, result.checked)
    checklist = build_checklist(findings, result.files, release, traced, compared, no_trace=trace_hint(points))
    found_blockers = blockers(findings, catalog, result.checked)
    files = per_file(findings, path)
    verdict_text = verdict(result.torch_version, len(found_blockers), findings, overall(checklist))
    codes = sorted({f.code for f in findings} | {b["code"] for b in found_blockers})
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "project": path,
        "verdict": verdict_text,
        "files_checked": result.files,
        "torch": {"target": result.torch_version, "target_source": result.torch_version_source,
                  "database_release": release, "database_note": release_note, **machine_torch()},
        "findings_total": len(findings),
        "fixable_total": sum(1 for f in findings if f.fix is not None),
        "fixable_with_fix": sum(1 for f in findings if safe_fixable(f)),
        "blockers": found_blockers,
        "families": families,
        "files": files,
        "folders": per_folder(files),
        "entry_points": points,
        "findings": [{"code": f.code, "path": f.path, "line": f.line, "column": f.column, "message": f.message,
                      "severity": f.severity.value, "fix": f.fix.safety.value if f.fix else None} for f in findings],
        "rules": {code: {"name": catalog[code].name, "summary": catalog[code].summary, "doc": catalog[code].explain()}
                  for code in codes if code in catalog},
        "op_coverage": {
            "static": [f.to_json() for f in findings if is_op_coverage(f.code)],
            "traced": _traced_json(trace_doc, traced) if traced else None,
        },
        "checklist": [item.to_json() for item in checklist],
        "overall": overall(checklist),
    }


def _traced_json(doc: dict, traced: Traced) -> dict:
    return {
        "ran": doc["ran"],
        "installed": traced.installed,
        "trace_release": doc["target"]["release"],
        "release": traced.assessment.release,
        "scope": SCOPE,
        "operators": len(traced.data.ops),
        "calls": traced.data.calls,
        "verdicts": traced.assessment.counts(),
        "would_raise": [op.to_json() for op in traced.assessment.would_raise],
        "cpu_fallbacks": [op.to_json() for op in traced.assessment.cpu_fallbacks],
    }


def _yes_no(value) -> str:
    return "not checked" if value is None else str(bool(value))


def torch_lines(doc: dict) -> List[str]:
    """The sentences every format opens with: target, database release, installed torch, MPS here."""
    t = doc["torch"]
    lines = [f"Target torch: {t['target']} ({t['target_source']}); the MPS coverage database answers for "
             f"torch {t['database_release']}." + (f" {t['database_note']}." if t["database_note"] else "")]
    if t["installed"] is None:
        lines.append(f"Installed torch: none ({t['note']}).")
    else:
        lines.append(f"Installed torch: {t['installed']}; on this machine torch.backends.mps.is_built() is "
                     f"{_yes_no(t['mps_built'])} and torch.backends.mps.is_available() is "
                     f"{_yes_no(t['mps_available'])}.")
    traced = doc["op_coverage"]["traced"]
    if traced:
        lines.append(f"Trace: `{traced['ran']['command']}` with torch {traced['installed']}, re-checked against "
                     f"torch {traced['release']}. {traced['scope']}")
    else:
        lines.append("No trace given: operator coverage and CPU fallbacks rest on static analysis only.")
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(doc: dict) -> str:
    out: List[str] = [f"# Portability report: {doc['project']}", "", f"**{_md(doc['verdict'])}**", ""]
    out += [line + "  " for line in torch_lines(doc)]
    out += ["", f"Checklist: **{doc['overall']}**; {doc['files_checked']} files checked, "
                f"{doc['findings_total']} findings, {doc['fixable_total']} auto-fixable "
                f"({doc['fixable_with_fix']} with `--fix`).", ""]
    out += blocker_section(doc) + [""] + files_section(doc) + [""]

    out += ["## Findings by family", "", "| family | name | findings | auto-fixable |", "|---|---|---|---|"]
    out += [f"| {f['family']}xx | {f['name']} | {f['findings']} | {f['fixable']} |" for f in doc["families"]]

    out += ["", "## Operator coverage", "", f"### Static (torch {doc['torch']['database_release']})", ""]
    out += [f"- {_finding(f)}" for f in doc["op_coverage"]["static"]] or ["No static operator-coverage finding."]
    traced = doc["op_coverage"]["traced"]
    out += ["", "### Traced", ""]
    if traced:
        out.append(f"`{traced['ran']['command']}`: {traced['operators']} operators, {traced['calls']} calls, "
                   f"checked against torch {traced['release']} (the trace was made for {traced['trace_release']}).")
        out.append("")
        out += ["| operator | calls | on MPS | runs on MPS from | first from |", "|---|---|---|---|---|"]
        for op in traced["would_raise"] + traced["cpu_fallbacks"]:
            out.append(f"| {op['op']} | {op['count']} | {op['mps']} | {op['first_supported'] or '-'} | "
                       f"{_site(op['site'])} |")
    else:
        out.append("No trace given.")
    out += ["", "## Entry points", ""]
    out += [f"- {_entry(point)}" for point in doc["entry_points"]] or ["None found."]

    out += ["", "## Acceptance checklist", "", "| item | verdict | checked against |", "|---|---|---|"]
    out += [f"| {item['item']} | **{item['verdict']}** | {item['checked_against']} |" for item in doc["checklist"]]
    for item in doc["checklist"]:
        out += ["", f"### {item['item']}: {item['verdict']}", ""]
        out += [f"- {_md(line)}" for line in item["evidence"]]
    return "\n".join(out) + "\n"


BLOCKS_WHAT = {"install": "install", "build": "build", "import": "import"}


def blocker_section(doc: dict) -> List[str]:
    out = ["## Blockers", ""]
    if not doc["blockers"]:
        return out + ["None: no dependency, native build or import stops the project from installing or importing on "
                      "a Mac."]
    out.append("What stops the project from installing, building or importing on a Mac, in file order:")
    out.append("")
    for number, b in enumerate(doc["blockers"], start=1):
        out.append(f"{number}. `{b['path']}:{b['line']}` ({b['kind']}, {b['code']}): {_md(b['what'])}  ")
        out.append(f"   To do: {_md(b['remedy'])}")
    return out


def files_section(doc: dict) -> List[str]:
    out = ["## Work left per file", ""]
    if not doc["files"]:
        return out + ["No file has a finding."]
    families = [family for family in (f["family"] for f in doc["families"]) if any(family in row["families"]
                                                                                    for row in doc["files"])]
    out.append("Sorted by what `--fix` leaves to do by hand.")
    out.append("")
    out.append("| file | " + " | ".join(f"{family}xx" for family in families) + " | findings | fixable with `--fix` | left |")
    out.append("|---|" + "---:|" * (len(families) + 3))
    for row in doc["files"]:
        cells = [str(row["families"].get(family, 0) or "") for family in families]
        out.append(f"| {_md(row['relative'])} | " + " | ".join(cells) +
                   f" | {row['findings']} | {row['fixable']} | {row['work_left']} |")
    return out


def _entry(point: dict) -> str:
    what = {"console_script": f"console script `{point['name']}` ({point.get('target')}, {point['source']})",
            "module": f"package `{point['name']}` ({point['source']})",
            "script": f"script `{point['name']}`"}[point["kind"]]
    command = f": `{point['command']}`" if point["command"] else ": its module has no `__main__` guard, trace it through a script that calls it"
    return _md(what + command)


def _finding(f: dict) -> str:
    return _md(f"`{f['path']}:{f['line']}:{f['column']}` {f['code']} {f['message']}")


def _site(site: Optional[dict]) -> str:
    return f"{site['path']}:{site['line']} in {site['function']}" if site else "-"


def report_command(path: str, trace_path: Optional[Path], fmt: str, output: Optional[Path],
                   torch_version: Optional[str], compare_path: Optional[Path] = None,
                   fail_on: Optional[str] = None) -> int:
    """Exit 0: the report is the product; with `fail_on` ("fail" or "warning"), 1 when the overall verdict is
    that or worse. Usage errors raise ConfigError (exit 2)."""
    doc = build_report(path, trace_path, torch_version, compare_path)
    if fmt == "json":
        text = json.dumps(doc, indent=2) + "\n"
    elif fmt == "html":
        from cudalint.report.portability_html import render_html

        text = render_html(doc)
    else:
        text = render_markdown(doc)
    if output:
        output.write_text(text, encoding="utf-8")
        print(f"cudalint report: wrote {output} (overall: {doc['overall']})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if fail_on and VERDICT_ORDER.index(doc["overall"]) <= VERDICT_ORDER.index(fail_on):
        return 1
    return 0


__all__ = ["blocker_section", "build_report", "files_section", "render_markdown", "report_command", "torch_lines"]
