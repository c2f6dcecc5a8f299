"""The catalog documents itself, and its examples are its tests."""

import re
import sys

import pytest

from conftest import DATA, ROOT, findings_of
from cudalint.catalog import CODE_RE, load_catalog
from cudalint.cli import rules_table
from cudalint.manifests import manifest_kind
from cudalint.python.semantic import guard_facts

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

CATALOG = load_catalog()
RULES = [rule for rule in CATALOG if rule.code != "CDL000"]


def _kind(rule):
    return "python" if rule.example_file.endswith(".py") and rule.example_file != "setup.py" else manifest_kind(
        rule.example_file
    ) or "python"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_bad_example_produces_exactly_this_rule(rule):
    found = findings_of(
        rule.bad, path=rule.example_file, kind=_kind(rule), torch_version=rule.example_torch or "2.15", project_files=rule.example_files
    )
    assert found, f"{rule.code}: bad example produces nothing"
    assert {f.code for f in found} == {rule.code}


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_good_example_produces_nothing(rule):
    found = findings_of(
        rule.good, path=rule.example_file, kind=_kind(rule), torch_version=rule.example_torch or "2.15", project_files=rule.example_files
    )
    assert [(f.code, f.line, f.message) for f in found] == []


@pytest.mark.parametrize("rule", list(CATALOG), ids=lambda rule: rule.code)
def test_rule_is_documented(rule):
    assert CODE_RE.match(rule.code)
    assert re.match(r"^[a-z0-9]+(-[a-z0-9]+)*$", rule.name)
    assert rule.summary and rule.why.strip() and rule.bad.strip() and rule.good.strip()
    text = rule.explain()
    for section in ("## What it does", "## Why is this bad", "## Example", "## Use instead", "## Fix safety"):
        assert section in text


def test_rule_names_are_unique():
    names = [rule.name for rule in CATALOG]
    assert len(names) == len(set(names))


def test_every_api_in_the_reference_is_covered():
    reference = tomllib.loads((DATA / "reference" / "api-map.toml").read_text(encoding="utf-8"))
    covered = set()
    for rule in CATALOG:
        for kind in ("refs", "imports", "methods", "attributes", "arguments", "env"):
            covered.update(spec["api"] for spec in rule.match.get(kind, ()) if "api" in spec)
    # APIs that idiom checks cover rather than a table entry: api id -> the rule that reports it.
    by_check = {
        "cuda.is_available": "CDL104",
        "device.cuda_literal": "CDL101",
        "generator.cuda": "CDL101",
        "load.map_location": "CDL109",
        "cpp_extension.load_cuda": "CDL402",
        "cpp_extension.CUDA_HOME": "CDL403",
    }
    for api, code in by_check.items():
        assert code in CATALOG
        covered.add(api)
    # Capability queries are never findings; the guard evaluator reads them (rules/guards.toml).
    queries = {"cuda.device_count": "torch.cuda.device_count", "dist.is_nccl_available": "torch.distributed.is_nccl_available"}
    for api, name in queries.items():
        assert name in guard_facts().queries
        covered.add(api)
    missing = sorted(entry["id"] for entry in reference["api"] if entry["id"] not in covered)
    assert missing == []


def test_readme_rule_table_is_generated_from_the_catalog():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- rules:start -->") + len("<!-- rules:start -->\n")
    end = readme.index("<!-- rules:end -->")
    assert readme[start:end] == rules_table(markdown=True), "run: python scripts/update_readme.py"


def test_every_check_reports_only_its_own_codes():
    from cudalint.python import idioms

    idioms.validate(CATALOG)  # raises CatalogError on a mismatch


def test_a_check_reporting_another_checks_code_is_refused():
    from cudalint.catalog import CatalogError
    from cudalint.python import idioms

    moved = [rule._replace(match={**rule.match, "check": "torch-load"}) if rule.code == "CDL101" else rule for rule in CATALOG]
    with pytest.raises(CatalogError, match="CDL101: check 'torch-load' does not report it"):
        idioms.validate(moved)


def test_each_rule_names_the_checklist_item_its_findings_are_evidence_for():
    items = {rule.code: rule.checklist for rule in CATALOG}
    assert items["CDL101"] == "device_selection" and items["CDL201"] == "cuda_runtime" and items["CDL301"] == "cuda_runtime"
    assert items["CDL401"] == items["CDL451"] == items["CDL501"] == "dependencies"
    assert items["CDL601"] == "dtypes" and items["CDL604"] == "operators" and items["CDL605"] == "cpu_fallbacks"
    assert items["CDL000"] is None and items["CDL701"] is None  # no checklist item is about them
    from cudalint.report.checklist import is_op_coverage

    assert [code for code in sorted(items) if is_op_coverage(code)] == sorted(
        code for code, item in items.items() if item in ("operators", "cpu_fallbacks"))


def test_an_unknown_checklist_item_is_a_catalog_error_naming_the_rule():
    from cudalint.catalog import CatalogError, _rule_from_table

    table = {"code": "CDL999", "name": "x", "severity": "error", "summary": "s", "why": "w", "bad": "b", "good": "g",
             "checklist": "devices"}
    with pytest.raises(CatalogError, match="rules.toml: CDL999: checklist must be one of"):
        _rule_from_table(table, "rules.toml")
