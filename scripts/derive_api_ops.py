#!/usr/bin/env python3
"""Derive rules/api_ops.json: public torch APIs -> the ATen operators they reach.

Runs the sample inputs of pytorch's OpInfo database (at most --samples per
OpInfo) on CPU under a TorchDispatchMode and records every ``aten::`` operator
dispatched. Needs torch, numpy and expecttest. Where samples of one API reach
different operators, the input's ndim and the string/bool keyword arguments
that tell them apart are kept as cases.

    python scripts/derive_api_ops.py                 # write rules/api_ops.json
    python scripts/derive_api_ops.py --check-modules # verify rules/module_ops.toml against this torch
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from cudalint.coverage.api_cases import split_cases  # noqa: E402
from cudalint.coverage.dispatch_trace import record_ops  # noqa: E402
from cudalint.coverage.module_check import check_module_table  # noqa: E402
from cudalint.coverage.names import qualified  # noqa: E402
from cudalint.coverage.native_functions import installed_torch, read_native_functions  # noqa: E402
from cudalint.coverage.release_facts import KIND_MISSING_BACKEND  # noqa: E402

OUTPUT = REPO / "rules" / "api_ops.json"
SAMPLE_SECONDS = 10
CANDIDATES = 64  # sample inputs generated per OpInfo, to pick the traced ones from
PREFERRED_DTYPES = ("float32", "int64", "bool", "complex64")


class SampleTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise SampleTimeout()


def resolve_attribute(root, dotted: str):
    value = root
    for part in dotted.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def api_names(torch, opinfo) -> List[str]:
    """Public qualified names through which users call this OpInfo's operator."""
    names = []
    for name in [opinfo.name] + [alias.name for alias in getattr(opinfo, "aliases", ())]:
        name = name[len("torch."):] if name.startswith("torch.") else name  # `torch.special.gammainc`: named in full
        if name.startswith("_"):
            continue
        if not name.startswith("__") and resolve_attribute(torch, name) is not None:
            names.append("torch." + name)
        if "." not in name and opinfo.method_variant is not None and hasattr(torch.Tensor, name):
            names.append("torch.Tensor." + name)
    return names


def sample_dtype(torch, opinfo):
    supported = {str(d).replace("torch.", ""): d for d in opinfo.supported_dtypes("cpu")}
    for name in PREFERRED_DTYPES:
        if name in supported:
            return supported[name]
    return supported[sorted(supported)[0]] if supported else None


def features(torch, sample) -> Dict[str, object]:
    """What cheaply tells samples apart: the input's ndim and str/bool keyword arguments."""
    found: Dict[str, object] = {}
    first = sample.input[0] if isinstance(sample.input, (list, tuple)) and sample.input else sample.input
    if isinstance(first, torch.Tensor):
        found["ndim"] = first.dim()
    for key, value in sample.kwargs.items():
        if isinstance(value, (str, bool)):
            found[key] = value
    return found


def pick_samples(torch, candidates: list, limit: int) -> list:
    """Up to ``limit`` samples, those with features not seen yet first (e.g. a 5-D input after 4-D ones)."""
    chosen, seen, rest = [], set(), []
    for sample in candidates:
        key = tuple(sorted((k, repr(v)) for k, v in features(torch, sample).items()))
        (rest if key in seen else chosen).append(sample)
        seen.add(key)
    return (chosen + rest)[:limit]


def trace_opinfo(torch, opinfo, samples: int) -> List[Tuple[Dict[str, object], List[str]]]:
    dtype = sample_dtype(torch, opinfo)
    if dtype is None:
        return []
    traced = []
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.alarm(SAMPLE_SECONDS)
        candidates = list(islice(opinfo.sample_inputs("cpu", dtype, requires_grad=False), CANDIDATES))
        for sample in pick_samples(torch, candidates, samples):
            signal.alarm(SAMPLE_SECONDS)
            try:
                ops = record_ops(opinfo.op, sample.input, *sample.args, **sample.kwargs)
            except SampleTimeout:
                raise
            except Exception:  # a sample meant to fail, or one this build cannot run
                continue
            if ops:
                traced.append((features(torch, sample), sorted(ops)))
    except SampleTimeout:
        print(f"  {opinfo.name}: sample timed out", file=sys.stderr)
    except Exception as error:
        print(f"  {opinfo.name}: no samples ({type(error).__name__})", file=sys.stderr)
    finally:
        signal.alarm(0)
    return traced


def entry_op(qualname: str, ops: List[str], yaml_ops) -> Optional[str]:
    """When the CPU run took a kernel that only one other backend has, name the API's own ATen op.

    On MPS the API branches elsewhere; the composite with the API's name then speaks for MPS.
    """
    backend_only = [op for op in ops if getattr(yaml_ops.get(op[len("aten::"):]), "kind", "") == KIND_MISSING_BACKEND]
    if not backend_only:
        return None
    candidate = qualname.rsplit(".", 1)[-1]
    if candidate in yaml_ops:
        return qualified(candidate)
    return None


def extra_samples(torch):
    """Inputs the OpInfo samples lack: (qualname, features, callable, args)."""
    import torch.nn.functional as F

    volume = torch.randn(1, 2, 3, 4, 4)
    grid3d = torch.rand(1, 2, 2, 2, 3) * 2 - 1
    return [
        ("torch.nn.functional.grid_sample", {"ndim": 5, "mode": "bilinear"}, F.grid_sample,
         (volume, grid3d), {"mode": "bilinear", "align_corners": False}),
        ("torch.nn.functional.grid_sample", {"ndim": 5, "mode": "nearest"}, F.grid_sample,
         (volume, grid3d), {"mode": "nearest", "align_corners": False}),
        ("torch.nn.functional.interpolate", {"ndim": 5, "mode": "nearest"}, F.interpolate,
         (volume,), {"scale_factor": 2, "mode": "nearest"}),
        ("torch.nn.functional.interpolate", {"ndim": 5, "mode": "area"}, F.interpolate,
         (volume,), {"size": (2, 2, 2), "mode": "area"}),
    ]


def derive(samples: int) -> dict:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    torch_info = installed_torch()
    yaml_ops = read_native_functions(torch_info["yaml"])  # type: ignore[arg-type]
    per_api: Dict[str, Dict[str, object]] = {}
    started = time.time()
    for opinfo in op_db:
        names = api_names(torch, opinfo)
        if not names:
            continue
        traced = trace_opinfo(torch, opinfo, samples)
        if not traced:
            continue
        key = opinfo.name + opinfo.variant_test_name
        for name in names:
            record = per_api.setdefault(name, {"samples": [], "opinfo": set()})
            record["samples"].extend(traced)  # type: ignore[union-attr]
            record["opinfo"].add(key)  # type: ignore[union-attr]
    for name, feats, fn, fn_args, fn_kwargs in extra_samples(torch):
        ops = sorted(record_ops(fn, *fn_args, **fn_kwargs))
        per_api[name]["samples"].append((dict(feats, **{k: v for k, v in fn_kwargs.items()  # type: ignore
                                                          if isinstance(v, (str, bool))}), ops))
    apis = {}
    for name in sorted(per_api):
        record = per_api[name]
        samples_seen = record["samples"]
        ops = sorted({op for _, traced_ops in samples_seen for op in traced_ops})  # type: ignore[union-attr]
        entry: Dict[str, object] = {"ops": ops, "opinfo": sorted(record["opinfo"])}  # type: ignore[arg-type]
        cases = split_cases(samples_seen)  # type: ignore[arg-type]
        if cases:
            entry["cases"] = cases
        top = entry_op(name, ops, yaml_ops)
        if top:
            entry["entry"] = top
        apis[name] = entry
    print(f"traced {len(apis)} APIs in {time.time() - started:.0f} s", file=sys.stderr)
    return {
        "format_version": 1,
        "torch": torch_info["version"],
        "git_version": torch_info["git_version"],
        "derived_by": (f"scripts/derive_api_ops.py: OpInfo sample inputs (at most {samples} per OpInfo, "
                       "float32 where supported) run on CPU under a TorchDispatchMode"),
        "apis": apis,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--samples", type=int, default=6, help="sample inputs traced per OpInfo")
    parser.add_argument("--check-modules", action="store_true", help="only verify rules/module_ops.toml")
    args = parser.parse_args(argv)
    if args.check_modules:
        problems = check_module_table()
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problem(s)")
        return 1 if problems else 0
    data = derive(args.samples)
    args.output.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
