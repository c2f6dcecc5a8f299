"""Cross-reference traced operators with the MPS coverage database for one torch release (no torch needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudalint.coverage import CoverageDB
from cudalint.coverage import status as codes

from .records import OpRecord, TraceData

# What an operator this run reached does on an MPS tensor with the target release.
RAISES = "raises"                  # no MPS kernel: NotImplementedError unless PYTORCH_ENABLE_MPS_FALLBACK=1
CPU_FALLBACK = "cpu_fallback"      # always runs on the CPU, with a warning: correct but slow
UNCERTAIN = "uncertain"            # a composite whose callees are partly without MPS, or unknown
DEVICE_KERNEL = "device_kernel"    # a kernel of one other backend (CPU-only, CUDA-only): on MPS the API takes
                                   # another path, so this operator says nothing about MPS
ABSENT = "absent"                  # the operator does not exist in the target release
NOT_ATEN = "not_aten"              # not an ATen operator (custom or library op): not in the database
RUNS = "runs"

VERDICT_OF_CODE = {
    codes.CODE_NATIVE: RUNS,
    codes.CODE_COMPOSITE_RUNS: RUNS,
    codes.CODE_MISSING: RAISES,
    codes.CODE_COMPOSITE_FAILS: RAISES,
    codes.CODE_CPU_FALLBACK: CPU_FALLBACK,
    codes.CODE_COMPOSITE_FALLBACK: CPU_FALLBACK,
    codes.CODE_COMPOSITE_PARTIAL: UNCERTAIN,
    codes.CODE_COMPOSITE_UNKNOWN: UNCERTAIN,
    codes.CODE_MISSING_BACKEND: DEVICE_KERNEL,
    codes.CODE_ABSENT: ABSENT,
}


@dataclass
class OpOnMps:
    record: OpRecord
    verdict: str
    code: str                       # the database's status character ("" for operators outside it)
    meaning: str
    first_supported: Optional[str]  # for ops that do not run: the first later release where they do

    def to_json(self) -> dict:
        return {**self.record.to_json(), "mps": self.verdict, "status_code": self.code, "meaning": self.meaning,
                "first_supported": self.first_supported}


@dataclass
class Assessment:
    release: str
    ops: List[OpOnMps] = field(default_factory=list)

    def having(self, verdict: str) -> List[OpOnMps]:
        return [op for op in self.ops if op.verdict == verdict]

    @property
    def would_raise(self) -> List[OpOnMps]:
        return self.having(RAISES)

    @property
    def cpu_fallbacks(self) -> List[OpOnMps]:
        return self.having(CPU_FALLBACK)

    def counts(self) -> Dict[str, int]:
        counted: Dict[str, int] = {}
        for op in self.ops:
            counted[op.verdict] = counted.get(op.verdict, 0) + 1
        return counted


def assess(data: TraceData, release: str, db: Optional[CoverageDB] = None) -> Assessment:
    """Each traced operator's verdict on MPS with ``release`` (a release the database covers)."""
    db = db or CoverageDB.load()
    result = Assessment(release)
    for record in data.ops:
        if not record.op.startswith("aten::"):
            result.ops.append(OpOnMps(record, NOT_ATEN, "", "not an ATen operator; the database does not cover it",
                                      None))
            continue
        code = db.code(record.op, release)
        verdict = VERDICT_OF_CODE[code]
        later = db.first_supported(record.op, after=release) if verdict != RUNS else None
        result.ops.append(OpOnMps(record, verdict, code, codes.CODE_LEGEND[code], later))
    return result
