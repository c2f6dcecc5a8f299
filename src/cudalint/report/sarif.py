"""`--format sarif`: one SARIF 2.1.0 log (OASIS), for GitHub code scanning and IDE viewers.

The driver lists every rule of the catalog with its whole documentation as help (text and
Markdown), so no web site is needed (there is no `helpUri`). Each result points at its rule by
id and index and carries `partialFingerprints.primaryLocationLineHash` (code_scanning.py), so an
alert keeps its identity when unrelated lines move. Paths are relative to `%SRCROOT%`, the root of
the git work tree holding the working directory (the working directory outside git), as
`originalUriBaseIds` says; a file outside it keeps an absolute file URI. Columns count Unicode code
points (`columnKind`), like the rest of cudalint, and an end column is exclusive, as in SARIF. A
finding with a fix carries it as a SARIF `fix` whose replacements are the fix's edits; its safety is
in the fix's property bag.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Dict, List
from urllib.parse import quote

from cudalint import __version__
from cudalint.catalog import FAMILIES, Catalog, Rule, load_catalog
from cudalint.findings import Finding, Fix, Severity
from cudalint.report.code_scanning import finding_fingerprints, relative_path, repository_root
from cudalint.runner import RunResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "primaryLocationLineHash"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(result: RunResult, **_options) -> str:
    return json.dumps(sarif_log(result), indent=2, ensure_ascii=False) + "\n"


def sarif_log(result: RunResult, catalog: Catalog = None, cwd: Path = None) -> dict:
    catalog = catalog or load_catalog()
    cwd = Path(cwd or os.getcwd()).resolve()
    root = repository_root(cwd)
    rules = list(catalog)
    index = {rule.code: position for position, rule in enumerate(rules)}
    hashes = finding_fingerprints(result.findings, cwd, result.texts)
    def locate(path: str) -> dict:
        return artifact_location(path, cwd, root)

    results = [_result(finding, index, locate, digest) for finding, digest in zip(result.findings, hashes)]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cudalint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [{"executionSuccessful": True}],
                "results": results,
                "properties": {
                    "filesChecked": result.files,
                    "torchVersion": result.torch_version,
                    "torchVersionSource": result.torch_version_source,
                    "torchVersionBySubtree": dict(sorted(result.targets.items())),
                },
            }
        ],
    }


def _rule(rule: Rule) -> dict:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.why.split())},
        "help": {"text": rule.explain(), "markdown": rule.markdown()},
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": bool(rule.default)},
        "properties": {"fix": rule.fix, "family": FAMILIES.get(rule.family, ""), "tags": ["portability", rule.family]},
    }


def artifact_location(path: str, cwd: Path, root: Path) -> dict:
    relative = relative_path(path, cwd, root)
    if relative is None:
        return {"uri": Path(os.path.abspath(cwd / path)).as_uri()}
    return {"uri": quote(os.fsencode(relative), safe="/"), "uriBaseId": SRCROOT}  # a name's own bytes


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    end_line = max(end_line, line)
    if end_line == line:
        end_column = max(end_column, column)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _result(finding: Finding, index: Dict[str, int], locate: Callable[[str], dict], fingerprint: str) -> dict:
    location = locate(finding.path)
    out = {
        "ruleId": finding.code,
        "level": LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": dict(location),
                    "region": _region(finding.line, finding.column, finding.end_line, finding.end_column),
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT: fingerprint},
    }
    if finding.code in index:
        out["ruleIndex"] = index[finding.code]
    if finding.related:
        out["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": {
                    "artifactLocation": locate(place.path) if place.path else dict(location),
                    "region": _region(place.line, place.column, place.end_line, place.end_column),
                },
                "message": {"text": place.message},
            }
            for number, place in enumerate(finding.related, 1)
        ]
    if finding.fix is not None and finding.fix.edits:
        out["fixes"] = [_fix(finding.fix, location)]
    return out


def _fix(fix: Fix, location: dict) -> dict:
    replacements: List[dict] = [
        {
            "deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column),
            "insertedContent": {"text": edit.content},
        }
        for edit in fix.edits
    ]
    return {
        "description": {"text": fix.description},
        "artifactChanges": [{"artifactLocation": dict(location), "replacements": replacements}],
        "properties": {"safety": fix.safety.value},
    }
