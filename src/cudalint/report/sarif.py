"""`--format sarif`: one SARIF 2.1.0 log (OASIS), for GitHub code scanning and IDE viewers.

The driver lists every rule of the catalog with its documentation; each result points
at its rule by id and index. Paths relative to the working directory are given
relative to `%SRCROOT%` (the working directory, as `originalUriBaseIds` says); a
file outside it keeps an absolute file URI. Columns count Unicode code points
(`columnKind`), like the rest of cudalint, and an end column is exclusive, as in
SARIF. A finding with a fix carries it as a SARIF `fix` whose replacements are the
fix's edits; its safety is in the fix's property bag.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Dict, List
from urllib.parse import quote

from cudalint import __version__
from cudalint.catalog import FAMILIES, Catalog, Rule, load_catalog
from cudalint.findings import Finding, Fix, Severity
from cudalint.runner import RunResult

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://cudalint.invalid/"
RULE_HELP_URI = "https://cudalint.invalid/rules/{code}"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FIX_TEXT = {
    "none": "No automatic fix: the change needs a decision only the author can make.",
    "safe": "Fix is safe: behaviour on a CUDA machine is unchanged; applied by `--fix`.",
    "unsafe": "Fix is unsafe: it may change behaviour; applied only with `--unsafe-fixes`.",
}


def render_sarif(result: RunResult, **_options) -> str:
    return json.dumps(sarif_log(result), indent=2, ensure_ascii=False) + "\n"


def sarif_log(result: RunResult, catalog: Catalog = None, cwd: Path = None) -> dict:
    catalog = catalog or load_catalog()
    cwd = Path(cwd or os.getcwd())
    rules = list(catalog)
    index = {rule.code: position for position, rule in enumerate(rules)}
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
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": cwd.resolve().as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [{"executionSuccessful": True}],
                "results": [_result(finding, index) for finding in result.findings],
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
    why = " ".join(rule.why.split())
    text = (
        f"{why}\n\nExample ({rule.example_file}):\n{_indent(rule.bad)}\nUse instead:\n{_indent(rule.good)}\n"
        f"{FIX_TEXT[rule.fix]}"
    )
    language = "python" if rule.example_file.endswith(".py") else ""
    markdown = (
        f"## What it does\n{rule.summary}\n\n## Why is this bad\n{rule.why.strip()}\n\n"
        f"## Example (`{rule.example_file}`)\n```{language}\n{rule.bad.strip()}\n```\n\n"
        f"## Use instead\n```{language}\n{rule.good.strip()}\n```\n\n## Fix safety\n{FIX_TEXT[rule.fix]}\n"
    )
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": why},
        "help": {"text": text, "markdown": markdown},
        "helpUri": RULE_HELP_URI.format(code=rule.code),
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": bool(rule.default)},
        "properties": {"fix": rule.fix, "family": FAMILIES.get(rule.family, ""), "tags": ["portability", rule.family]},
    }


def _indent(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.strip("\n").splitlines(True)) + "\n"


def artifact_location(path: str) -> dict:
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(os.fsencode(pure.as_posix()), safe="/"), "uriBaseId": SRCROOT}  # a name's own bytes


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    end_line = max(end_line, line)
    if end_line == line:
        end_column = max(end_column, column)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _result(finding: Finding, index: Dict[str, int]) -> dict:
    location = artifact_location(finding.path)
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
    }
    if finding.code in index:
        out["ruleIndex"] = index[finding.code]
    if finding.related:
        out["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": {
                    "artifactLocation": artifact_location(place.path) if place.path else dict(location),
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
