"""`cudalint compare A.pt B.pt`: numerical agreement between two torch.save files, tensor by tensor.

Both files are loaded on the CPU with `weights_only=True`, walked in parallel by key path
("model.layer.weight", "outputs[0]") and each tensor pair is checked with `torch.allclose(a, b, rtol, atol)`.
Python numbers (a saved step count) are compared as tensors; other non-tensor leaves are skipped.
torch is imported only inside functions: importing cudalint never imports torch.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Dict, List, Optional

from cudalint.config import ConfigError, read_json_input

TORCH_MISSING = ("cudalint compare needs torch, which is not installed in this Python environment: "
                 "pip install cudalint[trace]")
ROOT_KEY = "(root)"


def _torch():
    try:
        import torch
    except ImportError:
        raise ConfigError(TORCH_MISSING) from None
    return torch


def load(path: Path):
    torch = _torch()
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        return torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - pickle, zip and weights-only errors all mean "cannot load"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{path}: cannot be loaded with torch.load(weights_only=True): {first}") from None


def flatten(obj, prefix: str = "") -> Dict[str, object]:
    """Tensors (and Python numbers) by key path: dict keys joined with ".", list/tuple items as "[i]"."""
    torch = _torch()
    out: Dict[str, object] = {}
    if isinstance(obj, torch.Tensor):
        out[prefix or ROOT_KEY] = obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(obj, (list, tuple)):
        for index, value in enumerate(obj):
            out.update(flatten(value, f"{prefix}[{index}]"))
    elif isinstance(obj, (bool, int, float, complex)):
        out[prefix or ROOT_KEY] = torch.as_tensor(obj)
    return out


def compare_tensors(key: str, a, b, rtol: float, atol: float) -> dict:
    torch = _torch()
    a, b = a.detach().cpu(), b.detach().cpu()
    row = {"key": key, "shape_a": list(a.shape), "shape_b": list(b.shape), "dtype_a": str(a.dtype).replace("torch.", ""),
           "dtype_b": str(b.dtype).replace("torch.", ""), "max_abs": None, "max_rel": None, "within": False}
    if a.shape != b.shape:
        return row
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    a64, b64 = a.to(wide), b.to(wide)
    if a.numel():
        diff = (a64 - b64).abs()
        diff = torch.where(a64 == b64, torch.zeros_like(diff), diff)  # inf == inf is no drift
        floating = a.dtype if (a.is_floating_point() or a.is_complex()) else b.dtype
        tiny = torch.finfo(floating).tiny if (floating.is_floating_point or floating.is_complex) else 1.0
        rel = diff / b64.abs().clamp(min=tiny)
        row["max_abs"], row["max_rel"] = float(diff.max()), float(rel.max())
    else:
        row["max_abs"] = row["max_rel"] = 0.0
    if a.dtype == b.dtype:
        row["within"] = bool(torch.allclose(a, b, rtol=rtol, atol=atol))
    return row


def _drift(row: dict) -> float:
    value = row["max_abs"]
    return math.inf if value is None or math.isnan(value) else value


def compare(a_path: Path, b_path: Path, rtol: float = 1e-5, atol: float = 1e-8) -> dict:
    flat_a, flat_b = flatten(load(a_path)), flatten(load(b_path))
    rows = [compare_tensors(key, flat_a[key], flat_b[key], rtol, atol) for key in flat_a if key in flat_b]
    rows.sort(key=lambda row: (row["within"], -_drift(row), row["key"]))  # worst first
    missing_in_a = [key for key in flat_b if key not in flat_a]
    missing_in_b = [key for key in flat_a if key not in flat_b]
    passed = all(row["within"] for row in rows) and not missing_in_a and not missing_in_b
    return {"a": str(a_path), "b": str(b_path), "rtol": rtol, "atol": atol, "tensors": rows,
            "missing_in_a": missing_in_a, "missing_in_b": missing_in_b, "verdict": "pass" if passed else "fail"}


def _num(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.1e}"


def summary(doc: dict) -> str:
    rows = doc["tensors"]
    beyond = sum(1 for row in rows if not row["within"])
    line = (f"{len(rows)} tensor{'' if len(rows) == 1 else 's'} compared, {beyond} beyond "
            f"rtol={doc['rtol']:g} atol={doc['atol']:g}")
    measured = [row for row in rows if row["max_abs"] is not None]
    if measured:
        worst = max(measured, key=_drift)
        line += f"; largest drift {_num(worst['max_abs'])} at {worst['key']}"
    if doc["missing_in_a"] or doc["missing_in_b"]:
        line += (f"; {len(doc['missing_in_b'])} only in {doc['a']}, {len(doc['missing_in_a'])} only in "
                 f"{doc['b']}")
    return line


def render_text(doc: dict) -> str:
    lines: List[str] = []
    for row in doc["tensors"]:
        if row["shape_a"] != row["shape_b"] or row["dtype_a"] != row["dtype_b"]:
            status = "MISMATCH"
        else:
            status = "ok" if row["within"] else "DRIFT"
        shape = (str(tuple(row["shape_a"])) if row["shape_a"] == row["shape_b"]
                 else f"{tuple(row['shape_a'])} vs {tuple(row['shape_b'])}")
        dtype = row["dtype_a"] if row["dtype_a"] == row["dtype_b"] else f"{row['dtype_a']} vs {row['dtype_b']}"
        lines.append(f"{status:<8} {row['key']}  shape {shape}  dtype {dtype}  max_abs {_num(row['max_abs'])}  "
                     f"max_rel {_num(row['max_rel'])}")
    lines += [f"MISSING  {key}  only in {doc['a']}" for key in doc["missing_in_b"]]
    lines += [f"MISSING  {key}  only in {doc['b']}" for key in doc["missing_in_a"]]
    lines.append(summary(doc))
    return "\n".join(lines) + "\n"


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf": strict JSON has neither
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def render_json(doc: dict) -> str:
    return json.dumps(_json_safe(doc), indent=2) + "\n"


REQUIRED_KEYS = ("a", "b", "rtol", "atol", "tensors", "missing_in_a", "missing_in_b", "verdict")


def read_compare(path: Path) -> dict:
    """A JSON written by `cudalint compare --format json --output FILE`, for `cudalint report --compare`."""
    return read_json_input(
        path,
        "--compare",
        lambda doc: all(key in doc for key in REQUIRED_KEYS),
        "a comparison written by `cudalint compare --format json --output`",
    )


def compare_command(a: Path, b: Path, rtol: float, atol: float, fmt: str, output: Optional[Path]) -> int:
    """Exit 0 when every tensor is within tolerance, 1 otherwise; usage errors raise ConfigError (exit 2)."""
    if rtol < 0 or atol < 0:
        raise ConfigError("--rtol and --atol must not be negative")
    doc = compare(a, b, rtol, atol)
    text = render_json(doc) if fmt == "json" else render_text(doc)
    if output:
        output.write_text(text, encoding="utf-8")
        print(f"cudalint compare: wrote {output}; {summary(doc)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0 if doc["verdict"] == "pass" else 1


__all__ = ["compare", "compare_command", "read_compare", "render_json", "render_text", "summary"]
