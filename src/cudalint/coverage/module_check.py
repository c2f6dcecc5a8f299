"""Verify rules/module_ops.toml against the installed torch (needs torch).

Each case's module is built and run on CPU under a dispatch mode. A case is
right when (1) every listed op is dispatched, (2) every ``entry`` op exists in
this torch's native_functions.yaml, and (3) every dispatched op that lacks a
working MPS path in some covered release (per the coverage database) is listed,
unless it is structural (a view or allocation) or only one other backend has
a kernel for it (a CPU-only branch).
"""

from __future__ import annotations

from typing import List

from .db import CoverageDB
from .dispatch_trace import record_ops
from .module_table import ModuleCase, load_module_table
from .names import base_name
from .native_functions import installed_torch, read_native_functions
from .resolve import STRUCTURAL_OPS
from .status import CODE_ABSENT, CODE_MISSING_BACKEND, RUNS_ON_MPS


def make_inputs(torch, case: ModuleCase) -> list:
    tensors = []
    generator = torch.Generator().manual_seed(0)
    for spec in case.inputs:
        dtype = getattr(torch, spec.get("dtype", "float32"))
        if "values" in spec:
            tensors.append(torch.tensor(spec["values"], dtype=dtype))
        elif dtype.is_floating_point:
            tensors.append(torch.randn(spec["shape"], dtype=dtype, generator=generator))
        else:
            tensors.append(torch.randint(spec.get("low", 0), spec["high"], spec["shape"], dtype=dtype,
                                         generator=generator))
    return tensors


def build_module(torch, case: ModuleCase):
    cls = torch.nn
    for part in case.name.split(".")[2:]:
        cls = getattr(cls, part)
    module = cls(*case.args, **case.init)
    return module.train(case.train)


def coverage_relevant(db: CoverageDB, op: str) -> bool:
    """The op does work (not a view or allocation) and lacks a working MPS path in some covered release."""
    if base_name(op) in STRUCTURAL_OPS:
        return False
    codes = db.codes(op)
    return any(code not in RUNS_ON_MPS and code not in (CODE_ABSENT, CODE_MISSING_BACKEND) for code in codes)


def check_case(torch, db: CoverageDB, yaml_ops, case: ModuleCase) -> List[str]:
    problems = []
    module = build_module(torch, case)
    reached = record_ops(module, *make_inputs(torch, case))
    label = f"{case.name} {case.when or ''}".strip()
    for op in case.ops:
        if op not in reached:
            problems.append(f"{label}: listed {op} is not dispatched (reached: {sorted(reached)})")
    for op in case.entry:
        if op[len("aten::"):] not in yaml_ops:
            problems.append(f"{label}: entry {op} is not an operator of this torch")
    for op in sorted(reached - set(case.ops)):
        if coverage_relevant(db, op):
            problems.append(f"{label}: dispatches {op}, which lacks MPS in some release, but does not list it")
    return problems


def check_module_table(path=None) -> List[str]:
    import torch

    db = CoverageDB.load()
    yaml_ops = read_native_functions(installed_torch()["yaml"])  # type: ignore[arg-type]
    problems: List[str] = []
    for case in load_module_table(path):
        try:
            problems.extend(check_case(torch, db, yaml_ops, case))
        except Exception as error:
            problems.append(f"{case.name} {case.when}: could not run ({type(error).__name__}: {error})")
    return problems
