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


# Where an operator's answer for one release comes from (the database's per-release provenance).
SOURCE_YAML = "y"        # native_functions.yaml: an MPS kernel, a structured delegate, a composite, or no MPS key
SOURCE_BINARY = "b"      # a registration in the macOS libtorch outside the yaml (MPSFallback.mm's CPU fallbacks, ...)
SOURCE_PYTHON = "p"      # a kernel registered for MPS from Python (torch.library) in the wheel's .py files
SOURCE_CORRECTION = "m"  # a reviewed manual correction (data/mps-coverage/corrections.toml), with its reference
SOURCE_TORCHVISION = "t"  # torchvision's own operators, by the torchvision release paired with the torch release
SOURCE_LEGEND = {
    SOURCE_YAML: "native_functions.yaml dispatch table of the release",
    SOURCE_BINARY: "registration in the release's macOS libtorch outside the yaml (MPSFallback.mm)",
    SOURCE_PYTHON: "MPS kernel registered from Python (torch.library) in the release's wheel",
    SOURCE_CORRECTION: "reviewed manual correction",
    SOURCE_TORCHVISION: "torchvision release facts (data/torchvision/ops.toml)",
}


@dataclass
class OpFacts:
    kind: str
    callees: Optional[Tuple[str, ...]] = None  # composite ops: direct ATen callees (database keys); None = unknown
    source: str = SOURCE_YAML
    forced: Optional[str] = None  # a corrected composite outcome (storage code), instead of resolving the callees


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
