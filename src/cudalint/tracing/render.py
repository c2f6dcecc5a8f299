"""A trace as a JSON document, and the same document as text."""

from __future__ import annotations

from typing import List, Optional

from .assess import ABSENT, CPU_FALLBACK, DEVICE_KERNEL, NOT_ATEN, RAISES, RUNS, UNCERTAIN, Assessment
from .records import SCOPE, WATCHED_DTYPES, TraceData
from .target import Target

FORMAT, FORMAT_VERSION = "cudalint-trace", 1
NOT_JUDGED = {
    UNCERTAIN: "composite; some of its paths may leave MPS",
    DEVICE_KERNEL: "a kernel of the device this run used; on MPS the API takes another path",
    ABSENT: "does not exist in the target release",
    NOT_ATEN: "not an ATen operator; the database does not cover it",
}


def trace_document(ran: dict, installed: str, target: Target, data: TraceData, assessment: Assessment) -> dict:
    """`ran`: command, kind, exit_code (None for the Python API), error."""
    would_raise = assessment.would_raise
    created = {dtype: sum(c.count for c in data.created if c.dtype == dtype) for dtype in WATCHED_DTYPES}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ran": ran,
        "torch": {"installed": installed},
        "target": target.to_json(),
        "scope": SCOPE,
        "summary": {
            "operators": len(data.ops),
            "calls": data.calls,
            **{verdict: len(assessment.having(verdict))
               for verdict in (RUNS, RAISES, CPU_FALLBACK, UNCERTAIN, DEVICE_KERNEL, ABSENT, NOT_ATEN)},
            **{f"{dtype}_created": count for dtype, count in created.items()},
            "cuda_api_calls": sum(call.count for call in data.cuda_apis),
            "cuda_tensor_ops": data.cuda_tensor_ops,
        },
        "would_raise": [op.to_json() for op in would_raise],
        "cpu_fallbacks": [op.to_json() for op in assessment.cpu_fallbacks],
        "ops": [op.to_json() for op in assessment.ops],
        "created": [c.to_json() for c in data.created],
        "cuda_apis": [call.to_json() for call in data.cuda_apis],
        "cuda_tensor_ops": data.cuda_tensor_ops,
        "exit_status": 1 if would_raise else 0,
    }


def _site(site: Optional[dict]) -> str:
    return f"{site['path']}:{site['line']} in {site['function']}" if site else "no frame of your code"


def _times(count: int, word: str = "call") -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _op_line(op: dict, note: str = "") -> str:
    dtypes = ", ".join(op["dtypes"]) or "no tensor inputs"
    later = f"; runs on MPS from torch {op['first_supported']}" if op.get("first_supported") else ""
    return f"  {op['op']}  {_times(op['count'])}  [{dtypes}]  first from {_site(op['site'])}{later}{note}"


def trace_text(doc: dict) -> str:
    release = doc["target"]["release"]
    target = doc["target"]
    ran = doc["ran"]
    status = "" if ran.get("exit_code") is None else f"; it exited with status {ran['exit_code']}"
    if ran.get("error"):
        status += f" ({ran['error']})"
    lines: List[str] = [
        f"cudalint trace: ran {ran['command']}{status}.",
        *([f"It started {_times(ran['untraced_processes'], 'other process')} (DataLoader workers, multiprocessing, "
           "fork): the operators they ran were not traced; trace with num_workers=0 to include them."]
          if ran.get("untraced_processes") else []),
        f"torch installed: {doc['torch']['installed']}. The MPS coverage database answers for torch {release} "
        f"({target['source']} {target['requested']}).",
        doc["scope"],
        "",
        f"Would raise NotImplementedError on MPS with torch {release} "
        "(unless PYTORCH_ENABLE_MPS_FALLBACK=1, which runs them on the CPU):",
    ]
    lines += [_op_line(op) for op in doc["would_raise"]] or ["  none"]
    lines.append(f"Fall back to the CPU on MPS with torch {release} (always, with a warning; slow):")
    lines += [_op_line(op) for op in doc["cpu_fallbacks"]] or ["  none"]
    not_judged = [op for op in doc["ops"] if op["mps"] in NOT_JUDGED]
    if not_judged:
        lines.append("Not judged:")
        lines += [_op_line(op, f"; {NOT_JUDGED[op['mps']]}") for op in not_judged]
    lines.append("float64/complex128 tensors created (MPS has neither):")
    lines += [f"  {c['dtype']}  {_times(c['count'], 'tensor')} from {c['op']} at {_site(c['site'])}"
              for c in doc["created"]] or ["  none"]
    lines.append("CUDA-only APIs called by your code:")
    lines += [f"  {call['api']}  {_times(call['count'])}  first from {_site(call['site'])}"
              for call in doc["cuda_apis"]] or ["  none"]
    if doc["cuda_tensor_ops"]:
        lines.append(f"  {_times(doc['cuda_tensor_ops'], 'operator call')} ran on CUDA tensors")
    summary = doc["summary"]
    lines.append("")
    lines.append(f"Operators: {summary['operators']} distinct, {_times(summary['calls'])}; "
                 f"{summary[RUNS]} run on MPS with torch {release}.")
    raising = summary[RAISES]
    lines.append(
        f"Result: {_times(raising, 'operator')} this run reached would raise on MPS with torch {release}."
        if raising else f"Result: no operator this run reached would raise on MPS with torch {release}."
    )
    return "\n".join(lines) + "\n"
