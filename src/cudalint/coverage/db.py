"""Query the shipped MPS coverage database (rules/mps_coverage.json); torch is not needed."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .database_format import FORMAT, FORMAT_VERSION, default_source, release_from_database
from .names import op_key, qualified
from .release_facts import ReleaseFacts
from .resolve import reachable_gaps
from .status import COMPOSITE_CODES, RUNS_ON_MPS, STATUS_OF_CODE, CODE_ABSENT, OpStatus, Resolution
from .versions import nearest_release
from .xfail import COMPLEX_SUPPORT, MACOS_LIST_PREFIX, UNIMPLEMENTED_LIST, DtypeLimits, KnownFailure

DATABASE_FILE = "mps_coverage.json"


@functools.lru_cache(maxsize=1)
def rules_dir() -> Path:
    """The rules folder: ``<repo>/rules`` in a checkout, else ``cudalint/_rules`` in the installed package."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parents[1] / "rules"
    if (checkout / DATABASE_FILE).exists():
        return checkout
    return package / "_rules"


class CoverageDB:
    """Per release MPS status of every ATen operator, with dtype limits and known failures."""

    def __init__(self, data: dict):
        if data.get("format") != FORMAT or data.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"not a {FORMAT} v{FORMAT_VERSION} database")
        self._data = data
        self._releases: Tuple[str, ...] = tuple(data["releases"])
        self._ops: Dict[str, object] = data["ops"]
        self._facts: Dict[str, ReleaseFacts] = {}

    @classmethod
    def load(cls, path: Optional[Path] = None) -> "CoverageDB":
        """Load (once per path) the database; the shipped one when ``path`` is None."""
        return _load(str(Path(path).resolve()) if path is not None else str(rules_dir() / DATABASE_FILE))

    # releases -------------------------------------------------------------

    def versions(self) -> Tuple[str, ...]:
        """Covered releases, oldest first."""
        return self._releases

    def newest(self) -> str:
        return self._releases[-1]

    def nearest_release(self, version: str) -> Optional[str]:
        """Covered release answering for a user's torch version ("2.3", "2.3.0", ">=2.1").

        Same major.minor if covered, else the nearest older one; None if older than all.
        """
        return nearest_release(version, self._releases)

    def release_info(self, version: str) -> dict:
        return dict(self._data["release_info"][self._release(version)])

    def _release(self, version: str) -> str:
        release = self.nearest_release(version)
        if release is None:
            raise ValueError(f"torch {version} is older than every covered release ({self._releases[0]})")
        return release

    # operators ------------------------------------------------------------

    def ops(self) -> Tuple[str, ...]:
        """Every operator of any covered release, as ``aten::name.overload``."""
        return tuple(qualified(key) for key in self._ops)

    def has_op(self, op: str) -> bool:
        return op_key(op) in self._ops

    def codes(self, op: str) -> str:
        """One status character per covered release (legend: the database's ``codes``)."""
        entry = self._ops.get(op_key(op))
        if entry is None:
            return CODE_ABSENT * len(self._releases)
        return entry if isinstance(entry, str) else entry["s"]  # type: ignore[index,return-value]

    def code(self, op: str, version: str) -> str:
        """The status character of ``op`` at ``version``."""
        return self.codes(op)[self._releases.index(self._release(version))]

    def status(self, op: str, version: str) -> OpStatus:
        """What running ``op`` on an MPS tensor does with torch ``version`` (mapped by nearest_release)."""
        return STATUS_OF_CODE[self.code(op, version)]

    def resolution(self, op: str, version: str) -> Optional[Resolution]:
        """For composites: whether the decomposition runs on MPS; None for other operators."""
        return COMPOSITE_CODES.get(self.code(op, version))

    def runs_on_mps(self, op: str, version: str) -> bool:
        """Runs on the GPU: a native kernel, or a composite whose reachable operators all have one."""
        return self.code(op, version) in RUNS_ON_MPS

    def sources(self, op: str) -> str:
        """Where each release's answer came from, one character per release (legend: ``SOURCE_LEGEND``)."""
        entry = self._ops.get(op_key(op))
        if isinstance(entry, dict) and "p" in entry:
            return entry["p"]  # type: ignore[return-value]
        return "".join(default_source(code) for code in self.codes(op))

    def source(self, op: str, version: str) -> str:
        return self.sources(op)[self._releases.index(self._release(version))]

    def registrations(self, op: str, version: str) -> Tuple[dict, ...]:
        """The Python registrations that make ``op`` run on MPS at ``version``."""
        index = self._releases.index(self._release(version))
        key = op_key(op)
        return tuple(r for r in self._data["registrations"] if r["op"] == key and index in r["releases"])

    def torchvision(self) -> dict:
        """The torchvision table: torch minor -> torchvision minor, and each operator's first MPS release."""
        return self._data["torchvision"]

    def corrections(self, op: str, version: str) -> Tuple[dict, ...]:
        """The manual corrections that decide ``op`` at ``version``."""
        index = self._releases.index(self._release(version))
        key = op_key(op)
        return tuple(c for c in self._data["corrections"] if key in c["ops"] and index in c["releases"])

    def first_supported(self, op: str, after: Optional[str] = None) -> Optional[str]:
        """First covered release where ``op`` runs on MPS (see runs_on_mps), later than ``after`` if given."""
        codes = self.codes(op)
        start = 0 if after is None else self._releases.index(self._release(after)) + 1
        for index in range(start, len(self._releases)):
            if codes[index] in RUNS_ON_MPS:
                return self._releases[index]
        return None

    def callees(self, op: str, version: str) -> Optional[Tuple[str, ...]]:
        """Direct callees of a composite operator (None when not a composite or unknown)."""
        facts = self._release_facts(version).ops.get(op_key(op))
        if facts is None or facts.callees is None:
            return None
        return tuple(qualified(c) for c in facts.callees)

    def blocked_by(self, op: str, version: str) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        """(operators without MPS, explicit CPU fallbacks) that ``op`` reaches, recursively."""
        gaps, fallbacks = reachable_gaps(op_key(op), self._release_facts(version).ops)
        return tuple(map(qualified, gaps)), tuple(map(qualified, fallbacks))

    def _release_facts(self, version: str) -> ReleaseFacts:
        release = self._release(version)
        if release not in self._facts:
            self._facts[release] = release_from_database(self._data, release)
        return self._facts[release]

    # test lists -----------------------------------------------------------

    def opinfo_keys(self, op: str) -> Tuple[str, ...]:
        """OpInfo test keys that concern ``op``: the name itself if it is one, plus name matches."""
        keys: List[str] = []
        if op in self._data["xfail"] or op in self._data["complex"]:
            keys.append(op)
        entry = self._ops.get(op_key(op))
        if isinstance(entry, dict):
            keys.extend(k for k in entry.get("x", ()) if k not in keys)
        return tuple(keys)

    def known_failures(self, op: str, version: str) -> Tuple[KnownFailure, ...]:
        """Entries of the MPS OpInfo test lists for ``op`` (an ATen op or an OpInfo key) at ``version``."""
        index = self._releases.index(self._release(version))
        found = []
        for key in self.opinfo_keys(op):
            for row in self._data["xfail"].get(key, ()):
                if index in row[0]:
                    name, kind, grad, dtypes, reason, condition = row[1:]
                    found.append(KnownFailure(key, name, kind, bool(grad),
                                              tuple(dtypes) if dtypes is not None else None, reason, condition))
        return tuple(found)

    def dtype_limits(self, op: str, version: str) -> DtypeLimits:
        release = self._release(version)
        info = self._data["release_info"][release]
        index = self._releases.index(release)
        keys = self.opinfo_keys(op)
        failures = [f for f in self.known_failures(op, release) if not f.grad]
        unimplemented = [f for f in failures if f.list_name == UNIMPLEMENTED_LIST and not f.condition]
        conditional = tuple(f for f in failures if (f.list_name == UNIMPLEMENTED_LIST and f.condition)
                            or f.list_name.startswith(MACOS_LIST_PREFIX))
        complex_codes = {self._data["complex"][k][index] for k in keys if k in self._data["complex"]}
        complex_codes.discard(".")
        complex_support = None
        if complex_codes:  # several OpInfo keys: the most limited one
            complex_support = COMPLEX_SUPPORT[min(complex_codes, key="nmy".index)]
        return DtypeLimits(
            version=release,
            opinfo_keys=keys,
            has_test_data=info.get("xfail") != "absent",
            approximate=info.get("xfail") == "approximate",
            all_dtypes_unsupported=any(f.dtypes is None for f in unimplemented),
            unsupported_dtypes=frozenset(d for f in unimplemented for d in (f.dtypes or ())),
            conditional=conditional,
            complex=complex_support,
        )


@functools.lru_cache(maxsize=4)
def _load(path: str) -> CoverageDB:
    return CoverageDB(json.loads(Path(path).read_text(encoding="utf-8")))
