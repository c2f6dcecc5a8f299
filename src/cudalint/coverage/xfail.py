"""Known MPS failures and dtype limits, from pytorch's OpInfo MPS test lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

# Lists whose entries mean "not implemented on MPS" (for the listed dtypes).
UNIMPLEMENTED_LIST = "UNIMPLEMENTED_XFAILLIST"
MACOS_LIST_PREFIX = "MACOS_"
COMPLEX_SUPPORT = {"y": "supported", "m": "macos14", "n": "unsupported"}


@dataclass(frozen=True)
class KnownFailure:
    opinfo: str                        # OpInfo test key, e.g. "nn.functional.grid_sample"
    list_name: str                     # test list, e.g. "UNIMPLEMENTED_XFAILLIST"
    kind: str                          # "xfail" or "skip"
    grad: bool                         # from the backward-pass test lists
    dtypes: Optional[Tuple[str, ...]]  # None: every dtype
    reason: str
    condition: str                     # "" when unconditional


@dataclass(frozen=True)
class DtypeLimits:
    version: str
    opinfo_keys: Tuple[str, ...]
    has_test_data: bool               # False: no test lists for this release (nothing below is known)
    approximate: bool                 # test lists from a main-branch commit near the release
    all_dtypes_unsupported: bool      # listed as unimplemented for every dtype
    unsupported_dtypes: FrozenSet[str]  # listed as unimplemented for these dtypes, unconditionally
    conditional: Tuple[KnownFailure, ...]  # unimplemented only under a condition (macOS version, ...)
    complex: Optional[str]            # "supported", "macos14", "unsupported" or None (unknown)
    float64_supported: bool = False   # MPS has no float64 at all
