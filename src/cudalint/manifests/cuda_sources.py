"""CUDA C++ sources (.cu, .cuh): one finding per file (CDL453), because only nvcc builds them."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import List, Tuple

from cudalint.catalog import load_catalog
from cudalint.findings import Finding
from cudalint.manifests.base import Parsed, split_lines

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def check(path: str, text: str) -> Tuple[List[Finding], Parsed]:
    """A file with no code left once comments are removed has nothing to compile and is not reported."""
    if not _COMMENTS.sub("", text).strip():
        return [], Parsed()
    rule = load_catalog()["CDL453"]
    first_line = split_lines(text)[0] if text else ""
    message = (
        f"{PurePath(path).name} is CUDA C++ and compiles only with nvcc for NVIDIA GPUs; give the operation"
        " a CPU (and MPS) implementation, or write it with torch operations"
    )
    return [Finding(rule.code, path, 1, 1, 1, len(first_line) + 1, message, rule.severity)], Parsed()
