"""What a trace holds, as plain data (no torch): operators, float64/complex128 created, CUDA-only calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from cudalint.config import Maybe

SCOPE = (
    "The trace covers only the code paths this run took: branches, configurations and inputs "
    "it did not reach were not checked."
)
WATCHED_DTYPES = ("float64", "complex128")  # MPS has no float64 and no complex128


@dataclass(frozen=True)
class Site:
    """The first frame of the user's own code (not torch, not cudalint, not the standard library)."""

    path: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "function": self.function}

    @classmethod
    def from_json(cls, data: Optional[dict]) -> Optional["Site"]:
        return cls(data["path"], data["line"], data["function"]) if data else None


def _site_json(site: Optional[Site]) -> Optional[dict]:
    return site.to_json() if site else None


@dataclass
class OpRecord:
    """One operator (``aten::name.overload``): how often it ran, with which input dtypes, reached from where."""

    op: str
    count: int = 0
    dtypes: Dict[str, int] = field(default_factory=dict)  # input dtype -> calls that had it
    site: Optional[Site] = None

    def to_json(self) -> dict:
        return {"op": self.op, "count": self.count, "dtypes": dict(sorted(self.dtypes.items())),
                "site": _site_json(self.site)}

    @classmethod
    def from_json(cls, data: dict) -> "OpRecord":
        return cls(data["op"], data["count"], dict(data.get("dtypes", {})), Site.from_json(data.get("site")))


@dataclass
class Created:
    """Tensors of a watched dtype produced by an operator none of whose tensor inputs had that dtype."""

    dtype: str
    op: str
    count: int
    site: Optional[Site]

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "op": self.op, "count": self.count, "site": _site_json(self.site)}

    @classmethod
    def from_json(cls, data: dict) -> "Created":
        return cls(data["dtype"], data["op"], data["count"], Site.from_json(data.get("site")))


@dataclass
class ApiCall:
    """A CUDA-only Python API (``torch.cuda.synchronize``, ``Tensor.cuda``) called from the user's code."""

    api: str
    count: int
    site: Optional[Site]

    def to_json(self) -> dict:
        return {"api": self.api, "count": self.count, "site": _site_json(self.site)}

    @classmethod
    def from_json(cls, data: dict) -> "ApiCall":
        return cls(data["api"], data["count"], Site.from_json(data.get("site")))


@dataclass
class TraceData:
    ops: List[OpRecord] = field(default_factory=list)
    created: List[Created] = field(default_factory=list)
    cuda_apis: List[ApiCall] = field(default_factory=list)
    cuda_tensor_ops: int = 0  # operator calls with a CUDA tensor among their inputs or outputs

    @property
    def calls(self) -> int:
        return sum(record.count for record in self.ops)


_SITE = Maybe({"path": str, "line": int, "function": str})
# What `cudalint report --trace` reads from a trace document: checked before it is used.
TRACE_SHAPE = {
    "format": str,
    "ran": {"command": str, "exit_code": Maybe(int), "error": Maybe(str)},
    "torch": {"installed": str},
    "target": {"release": str},
    "ops": [{"op": str, "count": int, "dtypes": Maybe(dict), "site": _SITE}],
    "created": [{"dtype": str, "op": str, "count": int, "site": _SITE}],
    "cuda_apis": [{"api": str, "count": int, "site": _SITE}],
    "cuda_tensor_ops": Maybe(int),
}
