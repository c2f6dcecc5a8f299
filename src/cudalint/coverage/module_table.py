"""The reviewed table of nn.Module classes -> ATen operators (rules/module_ops.toml)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from .db import rules_dir

MODULE_TABLE_FILE = "module_ops.toml"


@dataclass(frozen=True)
class ModuleCase:
    name: str                       # "torch.nn.Conv2d"
    ops: Tuple[str, ...]            # operators the forward pass dispatches (checked against torch)
    entry: Tuple[str, ...]          # composite-implicit operators it calls first (not visible to dispatch modes)
    when: Dict[str, object]         # constructor keywords / input ndim this case stands for
    init: Dict[str, object]         # how the check builds the module
    args: Tuple[object, ...]
    inputs: Tuple[dict, ...]        # tensor specs for the forward call
    train: bool
    note: str


def _case(raw: dict) -> ModuleCase:
    return ModuleCase(
        name=raw["name"],
        ops=tuple(raw.get("ops", ())),
        entry=tuple(raw.get("entry", ())),
        when=dict(raw.get("when", {})),
        init=dict(raw.get("init", {})),
        args=tuple(raw.get("args", ())),
        inputs=tuple(raw.get("inputs", ())),
        train=bool(raw.get("train", False)),
        note=raw.get("note", ""),
    )


@functools.lru_cache(maxsize=4)
def load_module_table(path: Optional[str] = None) -> Tuple[ModuleCase, ...]:
    file = Path(path) if path else rules_dir() / MODULE_TABLE_FILE
    with open(file, "rb") as handle:
        return tuple(_case(raw) for raw in tomllib.load(handle)["module"])


def module_cases(name: str) -> List[ModuleCase]:
    return [case for case in load_module_table() if case.name == name]
