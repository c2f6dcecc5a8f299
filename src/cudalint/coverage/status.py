"""What running one ATen operator on an MPS tensor does, per release.

The database stores one character per operator and release; ``OpStatus`` is
the coarse public view of that character and ``Resolution`` says, for
composite operators, whether their decomposition runs on MPS.
"""

from __future__ import annotations

import enum


class OpStatus(str, enum.Enum):
    NATIVE = "native"                  # an MPS kernel (directly or via a structured delegate)
    COMPOSITE = "composite"            # backend-agnostic kernel; runs where its callees run
    CPU_FALLBACK = "cpu_fallback"      # explicit CPU fallback registered for MPS: always runs on CPU (slow,
                                       # one-time warning), with or without PYTORCH_ENABLE_MPS_FALLBACK
    NOT_IMPLEMENTED = "not_implemented"  # NotImplementedError unless PYTORCH_ENABLE_MPS_FALLBACK=1 (then CPU)
    UNKNOWN = "unknown"                # operator absent from that release, or not an ATen operator


class Resolution(str, enum.Enum):
    """Outcome of following a composite operator's callees, recursively."""

    RUNS = "runs"                  # every reachable operator has an MPS path
    PARTIAL = "partial"            # some code paths reach operators without MPS
    FAILS = "fails"                # the operators doing the work all lack MPS
    CPU_FALLBACK = "cpu_fallback"  # reaches an explicit CPU fallback, nothing missing
    UNKNOWN = "unknown"            # no callee information


# Storage codes (one character per operator and release).
CODE_NATIVE = "N"
CODE_CPU_FALLBACK = "F"
CODE_MISSING = "E"            # no MPS path; the operator has dense CPU and CUDA kernels
CODE_MISSING_BACKEND = "G"    # no MPS path; a kernel for a single other backend or layout
CODE_COMPOSITE_RUNS = "C"
CODE_COMPOSITE_PARTIAL = "P"
CODE_COMPOSITE_FAILS = "X"
CODE_COMPOSITE_FALLBACK = "B"
CODE_COMPOSITE_UNKNOWN = "U"
CODE_ABSENT = "-"

COMPOSITE_CODES = {
    CODE_COMPOSITE_RUNS: Resolution.RUNS,
    CODE_COMPOSITE_PARTIAL: Resolution.PARTIAL,
    CODE_COMPOSITE_FAILS: Resolution.FAILS,
    CODE_COMPOSITE_FALLBACK: Resolution.CPU_FALLBACK,
    CODE_COMPOSITE_UNKNOWN: Resolution.UNKNOWN,
}
RESOLUTION_CODES = {resolution: code for code, resolution in COMPOSITE_CODES.items()}

STATUS_OF_CODE = {
    CODE_NATIVE: OpStatus.NATIVE,
    CODE_CPU_FALLBACK: OpStatus.CPU_FALLBACK,
    CODE_MISSING: OpStatus.NOT_IMPLEMENTED,
    CODE_MISSING_BACKEND: OpStatus.NOT_IMPLEMENTED,
    CODE_ABSENT: OpStatus.UNKNOWN,
    **{code: OpStatus.COMPOSITE for code in COMPOSITE_CODES},
}

# Codes that mean "runs on the GPU": natively, or through a decomposition that fully runs there.
RUNS_ON_MPS = frozenset({CODE_NATIVE, CODE_COMPOSITE_RUNS})

CODE_LEGEND = {
    CODE_NATIVE: "native MPS kernel",
    CODE_COMPOSITE_RUNS: "composite; every reachable operator runs on MPS",
    CODE_COMPOSITE_PARTIAL: "composite; some code paths reach operators without MPS",
    CODE_COMPOSITE_FAILS: "composite; the operators doing the work lack MPS",
    CODE_COMPOSITE_FALLBACK: "composite; reaches an explicit CPU fallback",
    CODE_COMPOSITE_UNKNOWN: "composite; no callee information",
    CODE_CPU_FALLBACK: "explicit CPU fallback (always runs on CPU, with a warning)",
    CODE_MISSING: "not implemented (NotImplementedError, or CPU with PYTORCH_ENABLE_MPS_FALLBACK=1)",
    CODE_MISSING_BACKEND: "not implemented; only a kernel for one other backend or layout",
    CODE_ABSENT: "operator absent from this release",
}
