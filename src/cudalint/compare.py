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
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

from cudalint.config import ConfigError, Maybe, read_json_input, shape_ok

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


def flatten(obj) -> Dict[str, object]:
    """Tensors (and Python numbers) by key path: dict keys joined with ".", list/tuple items as "[i]"
    ("model.layer.weight", "outputs[0]"). Where two leaves would share a path ({"a": {"b": x}, "a.b": y},
    {1: t, "1": u}) each of them is named by its exact path instead (`['a']['b']`, `['a.b']`, `[1]`,
    `['1']`), so no tensor is dropped. Walked without recursion: nesting depth is the file's to choose."""
    torch = _torch()
    leaves: List[tuple] = []  # (readable path, exact path, tensor)
    stack = [("", "", obj)]
    while stack:
        path, exact, value = stack.pop()
        if isinstance(value, torch.Tensor):
            leaves.append((path, exact, value))
        elif isinstance(value, (bool, int, float, complex)):
            leaves.append((path, exact, torch.as_tensor(value)))
        elif isinstance(value, dict):
            stack.extend(reversed([(f"{path}.{key}" if path else str(key), f"{exact}[{key!r}]", item)
                                   for key, item in value.items()]))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed([(f"{path}[{index}]", f"{exact}[{index}]", item) for index, item in enumerate(value)]))
    shared = Counter(path for path, _, _ in leaves)
    return {(path if shared[path] == 1 else exact) or ROOT_KEY: tensor for path, exact, tensor in leaves}


def _comparable(t):
    """A dense, real-valued CPU tensor holding the same numbers (sparse made dense, quantized dequantized);
    ValueError for a tensor with no data to compare (meta)."""
    t = t.detach()
    if t.is_meta:
        raise ValueError("a meta tensor holds no data")
    if t.is_quantized:
        t = t.dequantize()
    if t.layout != _torch().strided:
        t = t.to_dense()
    return t.cpu()


def compare_tensors(key: str, a, b, rtol: float, atol: float) -> dict:
    row = {"key": key, "shape_a": list(a.shape), "shape_b": list(b.shape), "dtype_a": str(a.dtype).replace("torch.", ""),
           "dtype_b": str(b.dtype).replace("torch.", ""), "max_abs": None, "max_rel": None, "within": False}
    if a.shape != b.shape:
        return row
    try:
        return _measure(row, _comparable(a), _comparable(b), rtol, atol)
    except (ValueError, RuntimeError, TypeError) as exc:  # a layout or dtype torch cannot compute on
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        row.update(max_abs=None, max_rel=None, within=False, error=f"cannot compare: {first}")
        return row


def _measure(row: dict, a, b, rtol: float, atol: float) -> dict:
    torch = _torch()
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
        try:
            row["within"] = bool(torch.allclose(a, b, rtol=rtol, atol=atol))
        except (RuntimeError, TypeError):  # no allclose kernel for this dtype (float8): the same test, widened
            row["within"] = bool(torch.allclose(a64, b64, rtol=rtol, atol=atol))
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
        if row.get("error"):
            status = "ERROR"
        elif row["shape_a"] != row["shape_b"] or row["dtype_a"] != row["dtype_b"]:
            status = "MISMATCH"
        else:
            status = "ok" if row["within"] else "DRIFT"
        shape = (str(tuple(row["shape_a"])) if row["shape_a"] == row["shape_b"]
                 else f"{tuple(row['shape_a'])} vs {tuple(row['shape_b'])}")
        dtype = row["dtype_a"] if row["dtype_a"] == row["dtype_b"] else f"{row['dtype_a']} vs {row['dtype_b']}"
        lines.append(f"{status:<8} {row['key']}  shape {shape}  dtype {dtype}  max_abs {_num(row['max_abs'])}  "
                     f"max_rel {_num(row['max_rel'])}" + (f"  {row['error']}" if row.get("error") else ""))
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


NUMBER = (int, float)
SHAPE = {
    "a": str, "b": str, "rtol": NUMBER, "atol": NUMBER, "missing_in_a": [str], "missing_in_b": [str], "verdict": str,
    "tensors": [{"key": str, "shape_a": [int], "shape_b": [int], "dtype_a": str, "dtype_b": str,
                 "max_abs": Maybe((int, float, str)), "max_rel": Maybe((int, float, str)), "within": bool}],
}


def read_compare(path: Path) -> dict:
    """A JSON written by `cudalint compare --format json --output FILE`, for `cudalint report --compare`."""
    return read_json_input(
        path,
        "--compare",
        lambda doc: shape_ok(doc, SHAPE) and doc["verdict"] in ("pass", "fail"),
        "a comparison written by `cudalint compare --format json --output`",
    )


def compare_command(a: Path, b: Path, rtol: float, atol: float, fmt: str, output: Optional[Path]) -> int:
    """Exit 0 when every tensor is within tolerance, 1 otherwise; usage errors raise ConfigError (exit 2)."""
    if rtol < 0 or atol < 0:
        raise ConfigError("--rtol and --atol must not be negative")
    if output:
        _check_writable(output)
    doc = compare(a, b, rtol, atol)
    text = render_json(doc) if fmt == "json" else render_text(doc)
    if output:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--output {output}: {exc.strerror or exc}") from None
        print(f"cudalint compare: wrote {output}; {summary(doc)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0 if doc["verdict"] == "pass" else 1


def _check_writable(output: Path) -> None:
    from cudalint.fileio import writable_output

    problem = writable_output(output)
    if problem:
        raise ConfigError(f"--output {output}: {problem}")


__all__ = ["compare", "compare_command", "read_compare", "render_json", "render_text", "summary"]
