"""The per-file result cache in `.cudalint_cache/` at the project root.

An entry is the findings of one file, found again only when everything that could
change them is the same: the file's bytes, cudalint's version and code, the rule
catalog and the data files beside it (the MPS coverage database among them), and the
effective configuration (selected codes, per-file ignores, the torch release
targeted). Entries are JSON, never pickles: a cache folder that came with a cloned
repository must not be able to run code. A corrupt or foreign entry is a miss;
writes go to a temporary file renamed into place, so a reader never sees half an
entry. Nothing here ever fails a run: a folder that cannot be written is skipped.
An entry is read only if it is a regular file under ENTRY_MAX_BYTES, and any failure to
read or decode it (a link to /dev/zero, a FIFO, JSON nested past the recursion limit)
means "no entry". A cache folder that leads outside the project (a committed symlink)
is not used at all; writes never follow a link.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from pathlib import Path

import cudalint
from cudalint.catalog import Catalog, CatalogError, rules_dir
from cudalint.config import Settings
from cudalint.digests import sha256
from cudalint.fileio import (
    files_fingerprint,
    inside,
    read_regular,
    replace_file,
    sweep_temporaries,
)
from cudalint.findings import Edit, Finding, Fix, Related, Safety, Severity

CACHE_DIR = ".cudalint_cache"
FORMAT = 1  # bump when the layout of an entry changes
ENTRY_MAX_BYTES = 64 * 1024 * 1024


def content_digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def _data_fingerprint(folder: str | None) -> str:
    """Every data file in rules/ (the catalog TOML, the coverage database, package tables), by name,
    size and mtime, as cudalint's modules are: an edited file is a new key, and no run reads and
    hashes the whole coverage database only to learn it is the one it was."""
    if folder is None:
        return "no-rules-folder"
    return files_fingerprint(folder, lambda name: True, recurse=False)


@functools.lru_cache(maxsize=None)  # once per process: the code that runs is the code that was loaded
def _code_fingerprint() -> str:
    """cudalint's own modules by size and mtime: an edited check must not be answered from the cache."""
    return files_fingerprint(os.path.dirname(os.path.realpath(cudalint.__file__)), lambda name: name.endswith(".py"))


def _schema() -> str:
    """The shape of the values stored, so a new Finding field invalidates old entries."""
    return ",".join(
        f"{cls.__name__}({' '.join(cls._fields)})" for cls in (Finding, Fix, Edit, Related)
    )


def run_fingerprint(catalog: Catalog, settings: Settings, torch_version: str) -> str:
    """Everything but the file itself that decides a file's findings."""
    try:
        folder: str | None = str(rules_dir())
    except CatalogError:
        folder = None
    parts = {
        "format": FORMAT,
        "version": cudalint.__version__,
        "code": _code_fingerprint(),
        "schema": _schema(),
        "catalog": catalog.version,
        "data": _data_fingerprint(folder),  # the coverage database among them
        "settings": {
            name: _canonical(getattr(settings, name))
            for name in Settings.FIELDS
            if name not in NOT_PER_FILE
        },
        "torch": torch_version,
        # A file's findings can read facts of other files (a guard helper, a "cuda" default, a CUDA
        # extension): when any such fact changes, every cached result is stale.
        "index": getattr(settings.project, "facts_digest", None),
    }
    return sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


# Settings fields that choose which files are linted, not what a file's findings are. Every other
# field (select, per-file-ignores, torch-version, the fix device expression, ...) is part of the key.
NOT_PER_FILE = frozenset({"exclude", "root", "config_file", "project", "file_timeout"})  # a timed-out file is never stored


def _is_record(value: object) -> bool:
    """A NamedTuple (Finding, Fix, Edit, Related, DeviceSetting): stored as a table of its fields."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _canonical(value: object) -> object:
    """A JSON value that is the same for equal settings in any process (sets sorted, no hash order)."""
    if _is_record(value):
        return {name: _canonical(item) for name, item in zip(value._fields, value)}
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(item) for item in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _canonical(item) for key, item in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


class ResultCache:
    """One JSON file per linted file, named by its path and kind, holding the key it was computed under."""

    def __init__(self, root: Path, fingerprint: str):
        self.root = Path(root)
        self.folder = self.root / CACHE_DIR
        self.fingerprint = fingerprint
        self.writable = True
        self.hits = 0
        self.misses = 0
        self.refused: str | None = None  # why the cache is not used at all
        if os.path.lexists(self.folder) and not inside(self.root, self.folder):
            self.refused = f"{CACHE_DIR} leads outside the project (to {os.path.realpath(self.folder)}); the cache is not used"
            self.writable = False
        elif self.folder.is_dir():
            sweep_temporaries(self.folder)

    def _entry(self, display: str, kind: str) -> Path:
        name = sha256(f"{display}\0{kind}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
        return self.folder / f"{name}.json"

    def _key(self, digest: str) -> str:
        return sha256(f"{self.fingerprint}:{digest}".encode()).hexdigest()

    def get(self, display: str, kind: str, digest: str) -> list[Finding] | None:
        if self.refused:
            return None
        try:
            entry = json.loads(read_regular(self._entry(display, kind), ENTRY_MAX_BYTES).decode("utf-8"))
            if entry.get("key") != self._key(digest):
                raise ValueError("stale")
            findings = [decode_finding(item, display) for item in entry["findings"]]
        except Exception:  # noqa: BLE001 - whatever is wrong with an entry (RecursionError, MemoryError too), it is a miss
            self.misses += 1
            return None
        self.hits += 1
        return findings

    def put(self, display: str, kind: str, digest: str, findings: Sequence[Finding]) -> None:
        if not self.writable:
            return
        entry = {"key": self._key(digest), "findings": [encode(finding) for finding in findings]}
        try:
            self._prepare()
            data = json.dumps(entry, separators=(",", ":")).encode("utf-8", "surrogatepass")
            replace_file(self._entry(display, kind), data, self.root, follow_links=False)
        except (OSError, TypeError, ValueError):
            self.writable = False  # a read-only checkout: lint on, cache nothing

    def _prepare(self) -> None:
        prepare_folder(self.folder)


def prepare_folder(folder: Path) -> None:
    """The cache folder, made with a .gitignore that ignores everything in it."""
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    try:  # O_EXCL: never through a link, never over an existing file
        fd = os.open(folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as handle:
        handle.write(b"# created by cudalint: this folder is a cache\n*\n")


def encode(value: object) -> object:
    if _is_record(value):
        return {name: encode(item) for name, item in zip(value._fields, value)}
    if isinstance(value, (Severity, Safety)):
        return value.value
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    return value


def decode_finding(data: dict[str, object], display: str) -> Finding:
    fields = dict(data)
    fields["path"] = display
    fields["severity"] = Severity(fields["severity"])
    fix = fields.get("fix")
    if fix is not None:
        fix = dict(fix)
        fix["safety"] = Safety(fix["safety"])
        fix["edits"] = tuple(Edit(**edit) for edit in fix.get("edits", ()))
        fields["fix"] = Fix(**fix)
    fields["related"] = tuple(Related(**place) for place in fields.get("related", ()))
    return Finding(**fields)
