"""The acceptance checklist a team runs before moving a project off CUDA: one verdict per item, with its
evidence (static findings, and traced operators when a trace is given)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence

from cudalint.catalog import load_catalog
from cudalint.findings import Finding, Severity
from cudalint.tracing.assess import CPU_FALLBACK, RAISES, UNCERTAIN, Assessment
from cudalint.tracing.records import TraceData

PASS, WARNING, FAIL, PENDING = "pass", "warning", "fail", "pending"
VERDICT_ORDER = (FAIL, WARNING, PENDING, PASS)  # worst first


def _item_of(code: str) -> Optional[str]:
    """The checklist item a finding of `code` is evidence for: the rule's `checklist` in the catalog."""
    rule = load_catalog().rules.get(code)
    return rule.checklist if rule is not None else None


def _for_item(findings: Sequence[Finding], item: str) -> List[Finding]:
    return [f for f in findings if _item_of(f.code) == item]


def is_op_coverage(code: str) -> bool:
    """A finding about an operator's MPS coverage: one that raises there, or falls back to the CPU."""
    return _item_of(code) in ("operators", "cpu_fallbacks")


@dataclass
class CheckItem:
    key: str
    title: str
    verdict: str
    release: str
    evidence: List[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"id": self.key, "item": self.title, "verdict": self.verdict, "checked_against": self.release,
                "evidence": self.evidence}


@dataclass
class Traced:
    """A trace re-checked against the report's release."""

    command: str
    installed: str
    data: TraceData
    assessment: Assessment
    exit_code: Optional[int] = 0  # of the traced program; None for a trace made with the Python API
    error: Optional[str] = None

    def stopped_early(self) -> Optional[str]:
        """Why the trace may be partial beyond its scope: a non-zero exit status; None for a clean exit."""
        if not self.exit_code:
            return None
        error = f" ({self.error})" if self.error else ""
        return (f"the traced program exited with status {self.exit_code}{error}: it may have stopped early, "
                "so the trace may be partial")


def _unless_stopped(verdict: str, traced: Traced, evidence: List[str]) -> str:
    """A pass from a trace that stopped early is only pending."""
    reason = traced.stopped_early()
    if reason:
        evidence.append(reason)
        if verdict == PASS:
            return PENDING
    return verdict


def finding_line(finding: Finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.column} {finding.code} {finding.message}"


def _by_severity(findings: Sequence[Finding]) -> str:
    if any(f.severity is Severity.ERROR for f in findings):
        return FAIL
    if any(f.severity is Severity.WARNING for f in findings):
        return WARNING
    return PASS


def _worst(verdicts: Iterable[str]) -> str:
    found = set(verdicts)
    return next((v for v in VERDICT_ORDER if v in found), PASS)


def _times(count: int) -> str:
    return f"{count} call{'' if count == 1 else 's'}"


def build_checklist(findings: Sequence[Finding], files: int, release: str, traced: Optional[Traced],
                    compared: Optional[dict] = None, no_trace: Optional[str] = None) -> List[CheckItem]:
    """`no_trace`: the evidence line of the trace-dependent items when no trace is given (the report names the
    project's own entry points in it)."""
    checked = f"torch {release}"
    no_trace = no_trace or ("no trace given: static analysis cannot see every operator a run reaches; "
                            "run `cudalint trace --output trace.json -- python SCRIPT.py` and pass --trace")
    where_trace = f"trace of `{traced.command}` (torch {traced.installed} installed)" if traced else ""
    items: List[CheckItem] = []

    deps = _for_item(findings, "dependencies")
    items.append(CheckItem(
        "dependencies", "Dependencies and native code install on a Mac", _by_severity(deps), checked,
        [finding_line(f) for f in deps] or [f"no dependency, build or native-code finding in {files} files"]))

    devices = _for_item(findings, "device_selection")
    items.append(CheckItem(
        "device_selection", "The device is chosen at run time (no hard-coded CUDA)", _by_severity(devices), checked,
        [finding_line(f) for f in devices] or [f"no hard-coded device, .cuda() or CUDA-or-CPU choice in {files} files"]))

    static_ops = _for_item(findings, "operators")
    evidence = [finding_line(f) for f in static_ops]
    verdicts = [_by_severity(static_ops)]
    if traced:
        raising = traced.assessment.having(RAISES)
        uncertain = traced.assessment.having(UNCERTAIN)
        evidence += [f"{op.record.op} would raise NotImplementedError ({_times(op.record.count)}, first from "
                     f"{op.record.site or 'no frame of your code'})"
                     + (f"; runs on MPS from torch {op.first_supported}" if op.first_supported else "")
                     for op in raising]
        evidence += [f"{op.record.op} may leave MPS: {op.meaning}" for op in uncertain]
        evidence.append(f"{where_trace}: {len(traced.data.ops)} operators, {len(raising)} without an MPS kernel")
        verdicts.append(_unless_stopped(FAIL if raising else WARNING if uncertain else PASS, traced, evidence))
    else:
        verdicts.append(PENDING)
        evidence.append(no_trace)
    items.append(CheckItem("operators", "Operators run on MPS", _worst(verdicts), checked, evidence))

    static_fallbacks = _for_item(findings, "cpu_fallbacks")
    evidence = [finding_line(f) for f in static_fallbacks]
    verdicts = [WARNING if static_fallbacks else PASS]
    if traced:
        fallbacks = traced.assessment.having(CPU_FALLBACK)
        evidence += [f"{op.record.op} runs on the CPU ({_times(op.record.count)}, first from "
                     f"{op.record.site or 'no frame of your code'})" for op in fallbacks]
        plural = "" if len(fallbacks) == 1 else "s"
        evidence.append(f"{where_trace}: {len(fallbacks)} operator{plural} falling back to the CPU")
        verdicts.append(_unless_stopped(WARNING if fallbacks else PASS, traced, evidence))
    else:
        verdicts.append(PENDING)
        evidence.append(no_trace)
    items.append(CheckItem("cpu_fallbacks", "No silent CPU fallbacks", _worst(verdicts), checked, evidence))

    dtype_findings = _for_item(findings, "dtypes")
    evidence = [finding_line(f) for f in dtype_findings]
    verdicts = [_by_severity(dtype_findings)]
    if traced:
        evidence += [f"{c.count} {c.dtype} tensor{'s' if c.count != 1 else ''} created by {c.op} at "
                     f"{c.site or 'no frame of your code'}" for c in traced.data.created]
        verdicts.append(WARNING if traced.data.created else PASS)
    if not evidence:
        evidence.append("no float64 or complex128 found" + (" statically or in the trace" if traced else " statically"))
    items.append(CheckItem("dtypes", "No float64/complex128 on MPS", _worst(verdicts), checked, evidence))

    cuda_runtime = _for_item(findings, "cuda_runtime")
    evidence = [finding_line(f) for f in cuda_runtime]
    verdicts = [_by_severity(cuda_runtime)]
    if traced:
        evidence += [f"{call.api} called ({_times(call.count)}, first from {call.site or 'no frame of your code'})"
                     for call in traced.data.cuda_apis]
        if traced.data.cuda_tensor_ops:
            evidence.append(f"{traced.data.cuda_tensor_ops} operator calls ran on CUDA tensors")
        verdicts.append(WARNING if traced.data.cuda_apis or traced.data.cuda_tensor_ops else PASS)
    if not evidence:
        evidence.append("no CUDA-only runtime, memory or stream code found")
    items.append(CheckItem("cuda_runtime", "No CUDA-only memory, stream or runtime code", _worst(verdicts), checked,
                           evidence))

    items.append(numerics_item(compared, checked))
    return items


def _sci(value) -> str:
    return f"{value:.1e}" if isinstance(value, (int, float)) else str(value)  # "nan"/"inf" arrive as strings


def numerics_item(compared: Optional[dict], checked: str) -> CheckItem:
    """Pass or fail from a `cudalint compare --format json` document; pending without one."""
    title = "Numerical agreement with a CUDA baseline"
    if not compared:
        return CheckItem("numerics", title, PENDING, checked, [
            "no comparison given: save the same outputs or state dict on the CUDA machine and on MPS or CPU, "
            "run `cudalint compare cuda.pt mps.pt --format json --output compare.json` and pass --compare"])
    from cudalint.compare import summary

    tol = f"rtol={compared['rtol']:g} atol={compared['atol']:g}"
    evidence = [f"{row['key']}: shape {row['shape_a']} vs {row['shape_b']}, dtype {row['dtype_a']} vs {row['dtype_b']}"
                if row["max_abs"] is None or row["dtype_a"] != row["dtype_b"]
                else f"{row['key']}: max_abs {_sci(row['max_abs'])}, max_rel {_sci(row['max_rel'])}, beyond {tol}"
                for row in compared["tensors"] if not row["within"]]
    evidence += [f"{key}: only in {compared['a']}" for key in compared["missing_in_b"]]
    evidence += [f"{key}: only in {compared['b']}" for key in compared["missing_in_a"]]
    evidence.append(f"comparison of {compared['a']} with {compared['b']}: {summary(compared)}")
    return CheckItem("numerics", title, PASS if compared["verdict"] == "pass" else FAIL, checked, evidence)


def overall(items: Sequence[CheckItem]) -> str:
    return _worst(item.verdict for item in items)
