"""The facts about one torch release that the database is built from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# Raw kinds, before composite resolution.
KIND_NATIVE = "native"
KIND_COMPOSITE = "composite"
KIND_CPU_FALLBACK = "cpu_fallback"
KIND_MISSING = "missing"                  # dense CPU and CUDA kernels exist, MPS has none
KIND_MISSING_BACKEND = "missing_backend"  # only one other backend / layout has a kernel


@dataclass
class OpFacts:
    kind: str
    callees: Optional[Tuple[str, ...]] = None  # composite ops: direct ATen callees (database keys); None = unknown


@dataclass
class XfailEntry:
    """One line of pytorch's MPS OpInfo test lists, for one OpInfo key."""

    list_name: str
    kind: str                          # "xfail" or "skip"
    grad: bool                         # from the backward-pass test lists
    dtypes: Optional[Tuple[str, ...]]  # None: every dtype
    reason: str
    condition: str                     # e.g. "MACOS_VERSION < 14.0"; "" when unconditional

    def row(self) -> list:
        return [self.list_name, self.kind, int(self.grad), list(self.dtypes) if self.dtypes is not None else None,
                self.reason, self.condition]

    @classmethod
    def from_row(cls, row: list) -> "XfailEntry":
        name, kind, grad, dtypes, reason, condition = row
        return cls(name, kind, bool(grad), tuple(dtypes) if dtypes is not None else None, reason, condition)


@dataclass
class ReleaseFacts:
    version: str
    info: Dict[str, str]                              # provenance, shown in the database header
    ops: Dict[str, OpFacts]
    xfail: Optional[Dict[str, List[XfailEntry]]] = None  # OpInfo key -> entries; None: no test lists
    complex_support: Dict[str, str] = field(default_factory=dict)  # OpInfo key -> "y" / "m" (macOS 14+) / "n"
    opinfo_links: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # op key -> OpInfo keys (name match)
    complex_default: str = ""  # complex support of OpInfo keys not in complex_support; "" = no data
