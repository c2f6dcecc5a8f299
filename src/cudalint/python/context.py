"""Per-file state shared by the checks during the single pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from cudalint.catalog import Rule
from cudalint.python.fixplan import FixPlan
from cudalint.python.names import ImportMap


@dataclass
class Hit:
    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[FixPlan] = None


class FileContext:
    def __init__(self, rules: Dict[str, Rule], torch_version: Tuple[int, ...]):
        self.rules = rules
        self.torch_version = torch_version
        self.imports = ImportMap()
        self.stack: List[cst.CSTNode] = []
        self.hits: List[Hit] = []
        self.handled: Set[int] = set()
        # Depth counters maintained by the visitor.
        self.guard_depth = 0  # inside a branch that only runs on CUDA
        self.test_depth = 0  # inside the test of an if/while/ternary
        self.optional_import_depth = 0  # inside `try:` whose handler catches ImportError
        self.import_depth = 0  # inside an import statement
        # name -> string literal nodes bound to a CUDA device string, per scope (flow-insensitive)
        self.cuda_bindings: Dict[Tuple[int, str], List[cst.CSTNode]] = {}
        self.device_name_uses: List[Tuple[int, str]] = []
        self.scopes: List[int] = [0]
        self.check_state: Dict[str, object] = {}  # per-file state of a custom check, keyed by its name

    @property
    def parent(self) -> Optional[cst.CSTNode]:
        return self.stack[-2] if len(self.stack) >= 2 else None

    def report(self, code: str, node: cst.CSTNode, message: str, fix: Optional[FixPlan] = None) -> None:
        if code not in self.rules:
            return
        if self.guard_depth and not code.startswith("CDL6"):
            return  # code that runs only on CUDA hosts is not a portability problem
        if id(node) in self.handled:
            return
        self.handled.add(id(node))
        self.hits.append(Hit(code, node, message, fix))
