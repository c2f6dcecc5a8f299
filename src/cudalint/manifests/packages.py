"""rules/packages.toml, the one table of CUDA-only, CUDA-first and multi-backend packages.

The dependency rules match its distribution names; CDL404 reports unguarded imports of its
import names (`import_rules`), so both read the same rows.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from cudalint.catalog import rules_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib


@dataclass(frozen=True)
class PackageGroup:
    group: str
    kind: str
    rule: str
    names: Tuple[str, ...]
    repos: Tuple[str, ...]
    alternative: str
    alternative_torch: Optional[str] = None
    portable_since: Optional[str] = None
    compiled_since: Tuple[Tuple[str, str], ...] = ()  # (name, first release with compiled kernels)
    backends: Tuple[Tuple[str, str], ...] = ()
    imports: Tuple[str, ...] = ()
    import_api: Optional[str] = None
    integration: bool = False
    needs: str = ""
    evidence: str = ""
    message: Optional[str] = None  # what the finding says instead of the rule's template
    unless: Tuple[str, ...] = ()  # names the row's globs leave out (`cuda-*`, but not `cuda-version`)
    compile_backends: Tuple[str, ...] = ()  # torch.compile backend names the package registers


@dataclass(frozen=True)
class _Pattern:
    name: str
    extra: Optional[str]
    group: PackageGroup

    @property
    def specificity(self) -> tuple:
        """Exact names first, then globs with more fixed characters."""
        literal = re.sub(r"[*?]", "", self.name)
        return ("*" in self.name or "?" in self.name, -len(literal))

    def matches(self, name: str, extras: Iterable[str]) -> bool:
        if not fnmatchcase(name, self.name) or any(fnmatchcase(name, left_out) for left_out in self.group.unless):
            return False
        return self.extra is None or any(fnmatchcase(extra, self.extra) for extra in extras)


def _patterns(groups: Iterable[PackageGroup]) -> List[_Pattern]:
    patterns = []
    for group in groups:
        for entry in group.names:
            name, _, extra = entry.partition("[")
            patterns.append(_Pattern(name, extra.rstrip("]") or None, group))
    return sorted(patterns, key=lambda pattern: pattern.specificity)


@dataclass(frozen=True)
class PackageCatalog:
    pypi: Tuple[_Pattern, ...]
    conda: Tuple[_Pattern, ...]
    repos: Dict[str, PackageGroup]
    cuda_channels: Tuple[str, ...]
    groups: Tuple[PackageGroup, ...] = ()

    def match(self, name: str, extras: Iterable[str] = ()) -> Optional[PackageGroup]:
        """The group a normalised pip name (with its extras) belongs to."""
        extras = tuple(extras)
        return next((p.group for p in self.pypi if p.matches(name, extras)), None)

    def match_conda(self, name: str) -> Optional[PackageGroup]:
        return next((p.group for p in self.conda if p.matches(name, ())), None)

    def match_repository(self, repository: str) -> Optional[PackageGroup]:
        return self.repos.get(repository.lower())


_KEYS = {"group", "kind", "rule", "names", "repos", "alternative", "alternative_torch", "portable_since", "compiled_since",
         "backends", "imports", "import_api", "integration", "needs", "evidence", "message", "unless", "compile_backends"}


class PackageTableError(ValueError):
    """rules/packages.toml itself is malformed (a bug in rules/, not in user input)."""


def _group(table: dict) -> PackageGroup:
    unknown = set(table) - _KEYS
    if unknown or not {"group", "rule", "names", "alternative"} <= set(table):
        raise PackageTableError(f"packages.toml: row {table.get('group', '?')!r}: unknown keys {sorted(unknown)}"
                                " or a missing group/rule/names/alternative")
    message = table.get("message")
    if message is not None:
        try:
            message.format(name="", alternative="")
        except (KeyError, IndexError, ValueError) as error:
            raise PackageTableError(f"packages.toml: row {table['group']!r}: message names {error}: only {{name}} and {{alternative}}")
    return PackageGroup(
        group=table["group"],
        kind=table.get("kind", "conda"),
        rule=table["rule"],
        names=tuple(table["names"]),
        repos=tuple(table.get("repos", ())),
        alternative=table["alternative"],
        alternative_torch=table.get("alternative_torch"),
        portable_since=table.get("portable_since"),
        compiled_since=tuple(table.get("compiled_since", {}).items()),
        backends=tuple((b["backend"], b["since"]) for b in table.get("backends", ())),
        imports=tuple(table.get("imports", ())),
        import_api=table.get("import_api"),
        integration=bool(table.get("integration", False)),
        needs=table.get("needs", ""),
        evidence=table.get("evidence", ""),
        message=table.get("message"),
        unless=tuple(table.get("unless", ())),
        compile_backends=tuple(table.get("compile_backends", ())),
    )


_IMPORT_WORDS = {
    "CDL501": "runs only on NVIDIA GPUs",
    "CDL502": "is a CUDA build",
    "CDL503": "is an NVIDIA CUDA library",
    "CDL504": "needs an NVIDIA GPU for its kernels",
}


def import_rules(directory: Optional[str] = None) -> List[Dict[str, str]]:
    """CDL404's `imports` entries, one per import name of the table: {module, use[, api][, integration]}."""
    entries = []
    for group in load_packages(directory).groups:
        for module in group.imports:
            entry = {"module": module, "use": f"{group.group} {_IMPORT_WORDS.get(group.rule, 'needs CUDA')};"
                                              f" use {group.alternative}"}
            if group.import_api:
                entry["api"] = group.import_api
            if group.integration:
                entry["integration"] = True
            entries.append(entry)
    return entries


# The calls that pick a torch.compile backend by name, and where they take it.
_COMPILE_CALLS = (("torch.compile", {"keyword": "backend"}), ("torch._dynamo.optimize", {"keyword": "backend", "position": 0}))


def compile_rules(directory: Optional[str] = None) -> List[Dict[str, object]]:
    """CDL404's `arguments` entries: a torch.compile backend named by a string that a row's package registers
    (`backend="torch_tensorrt"`) loads that package, which fails on a Mac as its import does."""
    entries: List[Dict[str, object]] = []
    for group in load_packages(directory).groups:
        if not group.compile_backends:
            continue
        words = f"{group.group}, which {_IMPORT_WORDS.get(group.rule, 'needs CUDA')}"
        for callee, where in _COMPILE_CALLS:
            entries.append({"callee": callee, **where, "values": list(group.compile_backends),
                            "message": f"{{found}} is a torch.compile backend of {words}; use {group.alternative}"})
    return entries


@functools.lru_cache(maxsize=None)
def load_packages(directory: Optional[str] = None) -> PackageCatalog:
    folder = Path(directory) if directory else rules_dir()
    data = tomllib.loads((folder / "packages.toml").read_text(encoding="utf-8"))
    pypi = [_group(table) for table in data.get("package", [])]
    conda = [_group(table) for table in data.get("conda", [])]
    repos = {repo.lower(): group for group in pypi for repo in group.repos}
    return PackageCatalog(
        pypi=tuple(_patterns(pypi)),
        conda=tuple(_patterns(conda)),
        repos=repos,
        cuda_channels=tuple(data.get("channels", {}).get("cuda", ())),
        groups=tuple(pypi),
    )
