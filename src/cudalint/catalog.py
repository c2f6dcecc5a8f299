"""The rule catalog: rules/*.toml loaded into Rule objects.

A rule is data. Its documentation (summary, why, bad and good examples, fix
safety) and what it matches live in one TOML table; the checks read `match`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections import namedtuple
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from cudalint.digests import sha256
from cudalint.findings import Severity

CODE_RE = re.compile(r"^CDL\d{3}$")
PREFIX_RE = re.compile(r"^CDL\d{0,3}$")
FIX_KINDS = ("none", "safe", "unsafe")
# What a blocking rule stops on a Mac: `pip install`, building the project's native code, importing a module.
BLOCKS = ("install", "build", "import")
# The items of the acceptance checklist (report/checklist.py) a rule's findings are evidence for.
CHECKLIST_ITEMS = ("dependencies", "device_selection", "operators", "cpu_fallbacks", "dtypes", "cuda_runtime")
EMPTY: Mapping = MappingProxyType({})  # a rule's match and example_files when it has none

FAMILIES = {
    "CDL0": "unreadable input and unused noqa",
    "CDL1": "device selection",
    "CDL2": "CUDA-only runtime APIs",
    "CDL3": "memory model and async",
    "CDL4": "native code and kernels",
    "CDL5": "dependencies",
    "CDL6": "MPS operator coverage and dtypes",
    "CDL7": "distributed and compile",
}


FIX_SAFETY = {
    "none": "No automatic fix: the change needs a decision only the author can make.",
    "safe": "Fix is safe: behaviour on a CUDA machine is unchanged, applied by `--fix`.",
    "unsafe": "Fix is unsafe: it may change behaviour, applied only with `--unsafe-fixes`.",
}


class CatalogError(ValueError):
    """The rule catalog itself is malformed (a bug in rules/, not in user input)."""


# A rule's fields: the seven it must have, then the rest with their defaults. (A namedtuple, not a
# dataclass nor a typing.NamedTuple: see findings.py on start-up cost.)
_RULE_FIELDS = ("code", "name", "severity", "summary", "why", "bad", "good")  # str, but severity: a Severity
_RULE_DEFAULTS = (  # (field, default), in order
    ("fix", "none"),
    ("default", True),
    ("blocks", None),  # one of BLOCKS: the finding is a blocker in the portability report
    ("remedy", ""),  # what to do about a blocker
    ("checklist", None),  # one of CHECKLIST_ITEMS: the checklist item its findings are evidence for
    ("example_file", "example.py"),
    ("example_torch", None),  # the target release the examples are checked against
    ("match", EMPTY),
    ("silenced_by_guard", True),  # code that never runs on a Mac (a CUDA guard) gets no finding
    ("supersedes", ()),  # codes whose finding on the same node this rule's finding replaces
    ("silenced_in_tests", False),  # a reference inside an if/while test is a decision, not a use
    # none in a test module that places no tensor on a device: its tensors stay on the CPU (host_tests.py)
    ("silenced_in_host_tests", False),
    # none in the CPU arm of a CUDA-or-CPU selection statement: a Mac runs it with the CPU chosen (cpu_arms.py)
    ("silenced_in_cpu_arm", False),
    # none in a test module at all: what it reports there costs a Mac nothing but the tests' coverage of MPS
    ("silenced_in_test_modules", False),
    ("example_files", EMPTY),  # other files of the examples' project (path -> text)
    ("provenance", ""),  # the PyTorch source or docs a policy (leaving the default set, say) rests on
    # a `try:` whose handler falls back guards its findings: false where what the rule finds raises nothing on a
    # Mac (a device selection that forgets MPS just runs on the CPU), so no handler ever runs for it
    ("shielded_by_try", True),
)


class Rule(namedtuple("Rule", _RULE_FIELDS + tuple(name for name, _ in _RULE_DEFAULTS),
                      defaults=tuple(default for _, default in _RULE_DEFAULTS))):
    __slots__ = ()

    # A rule is itself, not its fields: rules key caches and sets, and `match` is a dict.
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    @property
    def family(self) -> str:
        return self.code[:4]

    def explain(self) -> str:
        """The rule's doc, with ruff's sections: what, why, example, use instead, fix safety."""
        return (
            f"{self.code} ({self.name}) [{self.severity.value}] — {FAMILIES.get(self.family, '')}\n\n"
            f"## What it does\n{self.summary}\n\n"
            f"## Why is this bad\n{self.why.strip()}\n\n"
            f"## Example ({self.example_file})\n{_indent(self.bad)}\n"
            f"## Use instead\n{_indent(self.good)}\n"
            f"## Fix safety\n{FIX_SAFETY[self.fix]}\n{self._not_default()}"
        )

    def markdown(self) -> str:
        """The same doc as Markdown (SARIF's rule help, the editor's link from a diagnostic)."""
        language = "python" if self.example_file.endswith((".py", ".pyi")) else ""
        return (
            f"# {self.code} {self.name}\n\n"
            f"Severity: {self.severity.value}. Family: {self.family}xx, {FAMILIES.get(self.family, '')}.\n\n"
            f"## What it does\n{self.summary}\n\n"
            f"## Why is this bad\n{self.why.strip()}\n\n"
            f"## Example (`{self.example_file}`)\n```{language}\n{self.bad.strip(chr(10))}\n```\n\n"
            f"## Use instead\n```{language}\n{self.good.strip(chr(10))}\n```\n\n"
            f"## Fix safety\n{FIX_SAFETY[self.fix]}\n{self._not_default()}"
        )

    def _not_default(self) -> str:
        if self.default:
            return ""
        source = f" Source: {self.provenance}" if self.provenance else ""
        return f"\nThis rule is not in the default set; select it with `--select {self.code}`.{source}\n"


def _indent(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.strip("\n").splitlines(True)) + "\n"


class Catalog:
    def __init__(self, rules: Iterable[Rule], version: str, data: Mapping[str, dict] | None = None):
        self.rules: dict[str, Rule] = {}
        self.data: Mapping[str, dict] = data or {}  # DATA_FILES as parsed, by path
        for rule in rules:
            if rule.code in self.rules:
                raise CatalogError(f"duplicate rule code {rule.code}")
            self.rules[rule.code] = rule
        self.version = version

    def __iter__(self):
        return iter(sorted(self.rules.values(), key=lambda r: r.code))

    def __getitem__(self, code: str) -> Rule:
        return self.rules[code]

    def __contains__(self, code: str) -> bool:
        return code in self.rules

    def codes_for(self, selector: str) -> list[str]:
        """All codes a selector (a code or a prefix like CDL1, CDL20) names; empty when none."""
        return sorted(code for code in self.rules if code.startswith(selector))

    def is_selector(self, selector: str) -> bool:
        return selector == "ALL" or (bool(PREFIX_RE.match(selector)) and bool(self.codes_for(selector)))


def rules_dir() -> Path:
    """rules/ beside src/ in a checkout, or the copy packaged inside cudalint."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "rules", here / "_rules"):
        if candidate.is_dir():
            return candidate
    raise CatalogError("cannot find the rules/ folder")


def docs_dir() -> Path:
    """docs/rules/ (one Markdown doc per rule, generated from the catalog) in a checkout, or its packaged copy."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "docs" / "rules", here / "_docs"):
        if candidate.is_dir():
            return candidate
    raise CatalogError("cannot find the docs/rules/ folder")


def _rule_from_table(table: dict, source: str) -> Rule:
    required = ("code", "name", "severity", "summary", "why", "bad", "good")
    missing = [key for key in required if key not in table]
    if missing:
        raise CatalogError(f"{source}: rule {table.get('code', '?')} lacks {', '.join(missing)}")
    code = table["code"]
    if not CODE_RE.match(code):
        raise CatalogError(f"{source}: bad rule code {code!r}")
    table = dict(table)
    blocks, remedy = table.pop("blocks", None), table.pop("remedy", "").strip()
    if blocks is not None and (blocks not in BLOCKS or not remedy):
        raise CatalogError(f"{source}: {code}: blocks must be one of {BLOCKS}, with a remedy")
    checklist = table.pop("checklist", None)
    if checklist is not None and checklist not in CHECKLIST_ITEMS:
        raise CatalogError(f"{source}: {code}: checklist must be one of {CHECKLIST_ITEMS}")
    if table.get("fix", "none") not in FIX_KINDS:
        raise CatalogError(f"{source}: {code}: fix must be one of {FIX_KINDS}")
    known = set(required) | {"fix", "default", "example_file", "example_torch", "match", "silenced_by_guard", "supersedes", "silenced_in_tests", "silenced_in_host_tests", "silenced_in_cpu_arm", "silenced_in_test_modules", "example_files",
                             "provenance", "shielded_by_try"}
    extra = set(table) - known
    if extra:
        raise CatalogError(f"{source}: {code}: unknown keys {sorted(extra)}")
    return Rule(
        blocks=blocks,
        remedy=remedy,
        checklist=checklist,
        code=code,
        name=table["name"],
        severity=Severity(table["severity"]),
        summary=table["summary"].strip(),
        why=table["why"],
        bad=table["bad"],
        good=table["good"],
        fix=table.get("fix", "none"),
        default=table.get("default", True),
        example_file=table.get("example_file", "example.py"),
        example_torch=table.get("example_torch"),
        match=table.get("match", {}),
        silenced_by_guard=bool(table.get("silenced_by_guard", True)),
        supersedes=tuple(table.get("supersedes", ())),
        silenced_in_tests=bool(table.get("silenced_in_tests", False)),
        silenced_in_host_tests=bool(table.get("silenced_in_host_tests", False)),
        silenced_in_cpu_arm=bool(table.get("silenced_in_cpu_arm", False)),
        silenced_in_test_modules=bool(table.get("silenced_in_test_modules", False)),
        example_files=dict(table.get("example_files", {})),
        provenance=" ".join(table.get("provenance", "").split()),
        shielded_by_try=bool(table.get("shielded_by_try", True)),
    )


@functools.lru_cache(maxsize=None)
def load_catalog(directory: str | None = None) -> Catalog:
    folder = Path(directory) if directory else rules_dir()
    from cudalint.fileio import files_fingerprint

    # The compact copy is found by the catalog files' names, sizes and mtimes (as the result cache
    # knows its data files), so a run that finds it reads none of them; the version stays a digest
    # of their bytes, made when they are parsed and kept in the copy.
    stamp = files_fingerprint(str(folder), _is_compact_source, recurse=False)
    key = sha256(json.dumps([COMPACT_FORMAT, _package_version(), str(folder), stamp]).encode()).hexdigest()
    stored = _read_compact(key)
    if stored is None:
        names = sorted((name for name in os.listdir(folder) if _is_catalog_file(name)), key=lambda name: (name == "packages.toml", name))
        sources = [(name, (folder / name).read_bytes()) for name in names]
        digest = sha256()
        for _, data in sources:
            digest.update(data)
        version = digest.hexdigest()[:16]
        tables = [(name, _tables(data, directory)) for name, data in sources]
        data_files = {str(folder / name): _data_file(folder / name) for name in DATA_FILES if (folder / name).is_file()}
        _write_compact(key, version, tables, data_files)
    else:
        version, tables, data_files = stored
    rules = [_rule_from_table(table, name) for name, group in tables for table in group]
    rules.append(UNREADABLE)
    return Catalog(rules, version=version, data=data_files)


def _is_catalog_file(name: str) -> bool:
    """The files the catalog is read from: the rule tables (cdl*.toml) and packages.toml, read last."""
    return (name.startswith("cdl") and name.endswith(".toml")) or name == "packages.toml"


# The rules/ data files that checking a file reads whatever it holds (the guards, the optional-code
# facts, the overrides, the aliases): kept parsed in the catalog's compact copy, so a run that finds the
# copy never imports a TOML parser. The coverage data stay apart: only a file that calls an operator
# reads them.
DATA_FILES = ("aliases.toml", "autocast_ops.toml", "guards.toml", "optional_code.toml", "overrides.toml")


def _is_compact_source(name: str) -> bool:
    """The files the compact copy is made from: a change to any of them makes a new copy."""
    return _is_catalog_file(name) or name in DATA_FILES


def _data_file(path: Path) -> dict:
    return toml_parser().loads(path.read_text(encoding="utf-8"))


def toml_parser():
    """tomllib (tomli before Python 3.11), imported when TOML is first read: a run that reads none never loads it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python < 3.11 only
        import tomli as tomllib
    return tomllib


def rules_table(name: str) -> dict:
    """One data file of rules/ (guards.toml, optional_code.toml, overrides.toml, aliases.toml), parsed:
    one of DATA_FILES from the catalog, which holds them parsed."""
    path = rules_dir() / name
    kept = load_catalog().data.get(str(path)) if name in DATA_FILES else None
    return kept if kept is not None else _data_file(path)


def rules_sets(name: str) -> dict[str, frozenset]:
    """A rules/ data file whose lists are sets of names: each list-valued key as a frozenset."""
    return {key: frozenset(value) for key, value in rules_table(name).items() if isinstance(value, list)}


def _tables(data: bytes, directory: str | None) -> list[dict]:
    """A TOML file's rule tables; CDL404's `imports = "packages.toml"` becomes the import names of that table,
    and its `arguments` gain the torch.compile backends the table's packages register."""
    tables = toml_parser().loads(data.decode("utf-8")).get("rule", [])
    for table in tables:
        if table.get("match", {}).get("imports") == "packages.toml":
            from cudalint.manifests.packages import compile_rules, import_rules

            table["match"]["imports"] = import_rules(directory)
            table["match"]["arguments"] = [*table["match"].get("arguments", ()), *compile_rules(directory)]
    return tables


# A compact copy of the parsed catalog: JSON in the project's cache folder, read instead of the TOML
# (parsing it costs more than linting a small clean file). Keyed by cudalint's version, the catalog
# folder and its files' names, sizes and mtimes, under the result cache's rules: never used through a folder that leads out of
# the project, read only as a bounded regular file, any failure a miss, written atomically.
COMPACT_FORMAT = 3  # 2: keyed by the files' stamps, the version kept beside the tables; 3: DATA_FILES too
COMPACT_NAME = "catalog.data"
COMPACT_MAX_BYTES = 8 * 1024 * 1024
_compact_root: Path | None = None


def keep_compact_copy(root: Path | None) -> None:
    """Let load_catalog read and write its compact copy in `root`'s cache folder (None: parse the TOML).
    The copy changes how fast the catalog loads, never what it holds."""
    global _compact_root
    _compact_root = None if root is None else Path(root)


def _package_version() -> str:
    from cudalint import __version__

    return __version__


def _compact_folder() -> Path | None:
    from cudalint.fileio import inside

    if _compact_root is None:
        return None
    folder = _compact_root / ".cudalint_cache"
    return None if os.path.lexists(folder) and not inside(_compact_root, folder) else folder


def _read_compact(key: str) -> tuple[str, list[tuple[str, list[dict]]], dict[str, dict]] | None:
    folder = _compact_folder()
    if folder is None:
        return None
    from cudalint.fileio import read_regular

    try:
        entry = json.loads(read_regular(folder / COMPACT_NAME, COMPACT_MAX_BYTES).decode("utf-8"))
        if entry["key"] != key:
            return None
        tables = [(name, group) for name, group in entry["tables"]]
        if not all(isinstance(name, str) and all(isinstance(table, dict) for table in group) for name, group in tables):
            return None
        version, data = entry["version"], entry["data"]
        if not (isinstance(data, dict) and all(isinstance(table, dict) for table in data.values())):
            return None
        return (version, tables, data) if isinstance(version, str) else None
    except Exception:  # noqa: BLE001 - whatever is wrong with the copy, it is a miss
        return None


def _write_compact(key: str, version: str, tables: list[tuple[str, list[dict]]], data: dict[str, dict]) -> None:
    folder = _compact_folder()
    if folder is None:
        return
    from cudalint.cache import prepare_folder
    from cudalint.fileio import replace_file

    try:
        data = json.dumps({"key": key, "version": version, "tables": tables, "data": data}).encode("utf-8")
        prepare_folder(folder)
        replace_file(folder / COMPACT_NAME, data, folder.parent, follow_links=False)
    except (OSError, ValueError, TypeError):
        pass  # a read-only checkout, or a value JSON cannot hold: parse the TOML next time too


UNREADABLE = Rule(
    code="CDL000",
    name="unreadable-file",
    severity=Severity.ERROR,
    summary="The file could not be read, decoded or parsed, so nothing in it was checked.",
    why="A file cudalint cannot parse is a file whose CUDA-only code goes unreported; "
    "the message names the file, the line and what went wrong.",
    bad="def broken(:\n    pass\n",
    good="def fixed():\n    pass\n",
)
