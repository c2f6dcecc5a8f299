"""Fixes as planned during the pass, turned into text edits once positions are known.

A check describes a fix by the nodes it replaces and their new text. The text may
hold two markers filled in per file at the end: TORCH (the local name of the
torch module, importing it when the file has none) and DEVICE (the device
expression: inlined when used once, a module-level `DEVICE = ...` after the
imports when used more often, or the project's own `device-expression`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from cudalint.findings import Edit, Fix, Safety

# Placeholders are valid identifiers, so fixes can be built as libcst nodes and rendered.
TORCH = "__cudalint_torch__"
DEVICE = "__cudalint_device__"  # the device, without a runtime check (a bare "cuda")
DEVICE_TYPE = "__cudalint_device_type__"  # the same as a string, for code that compares strings
CHECKED_TYPE = "__cudalint_checked_type__"  # device type after a runtime availability check
_CODEGEN = cst.Module(body=[])


Target = Union[cst.CSTNode, Tuple[cst.CSTNode, cst.CSTNode]]  # a node, or from one node's start to another's end


@dataclass
class FixPlan:
    safety: Safety
    description: str
    replacements: List[Tuple[Target, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(new for _, new in self.replacements)


def render(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def device_expression(version: Tuple[int, ...], checked: bool = False) -> str:
    """The portable "the accelerator in use, else CPU" for a target torch release.

    Unchecked (for a bare "cuda"), torch >= 2.7 asks which accelerator torch was built
    for without initialising a driver; checked (for `"cuda" if is_available() else
    "cpu"`) keeps the runtime availability test the original had.
    """
    if version >= (2, 7):
        argument = "check_available=True" if checked else ""
        return f'{TORCH}.accelerator.current_accelerator({argument}) or {TORCH}.device("cpu")'
    if version >= (2, 6):
        return (
            f"{TORCH}.accelerator.current_accelerator() if {TORCH}.accelerator.is_available() "
            f'else {TORCH}.device("cpu")'
        )
    return f"{TORCH}.device({_device_type_chain()})"


def _device_type_chain() -> str:
    """Before torch.accelerator (2.6): CUDA, then MPS (torch >= 1.12), then CPU, as a string."""
    return f'"cuda" if {TORCH}.cuda.is_available() else "mps" if {TORCH}.backends.mps.is_available() else "cpu"'


def device_type_expression(version: Tuple[int, ...], checked: bool = False, device: Optional[str] = None) -> str:
    """The device type as a string, for code that compares or stores strings."""
    if device is None and version < (2, 6):
        return _device_type_chain()
    return _attribute(device or device_expression(version, checked), "type")


@dataclass(frozen=True)
class DeviceSetting:
    """`device-expression` and `device-import` from the configuration, if set."""

    expression: Optional[str] = None
    import_line: Optional[str] = None


class FileFixer:
    """Per-file choices shared by all fixes: torch alias, import point, device form."""

    def __init__(self, module: cst.Module, positions, imports, version: Tuple[int, ...], setting: DeviceSetting, text: str):
        self.positions = positions
        self.version = version
        self.setting = setting
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.torch_alias = next((local for local, full in imports.module_aliases.items() if full == "torch"), None)
        self.insert_line = _import_point(module, positions)
        self.names = _module_names(module)
        alias = self.torch_alias or "torch"
        own_definition = "DEVICE = " + device_expression(version).replace(TORCH, alias)
        self.has_device_variable = own_definition in self.names  # a DEVICE an earlier fix round defined
        self.use_device_variable = False

    def decide(self, plans: Sequence[FixPlan]) -> None:
        uses = sum(plan.text.count(DEVICE) + plan.text.count(DEVICE_TYPE) for plan in plans)
        self.use_device_variable = self.setting.expression is None and (
            self.has_device_variable or (uses > 1 and "DEVICE" not in self.names)
        )

    def _device(self) -> str:
        if self.setting.expression is not None:
            return self.setting.expression
        return "DEVICE" if self.use_device_variable else device_expression(self.version)

    def build(self, plan: FixPlan) -> Fix:
        edits: List[Edit] = []
        needs_torch = False
        needs_device_line = False
        for target, new in plan.replacements:
            if DEVICE in new or DEVICE_TYPE in new:
                device = self._device()
                needs_device_line = needs_device_line or (device == "DEVICE" and not self.has_device_variable)
                named = device if device != device_expression(self.version) else None
                new = new.replace(DEVICE_TYPE, device_type_expression(self.version, device=named)).replace(DEVICE, device)
            if CHECKED_TYPE in new:
                new = new.replace(CHECKED_TYPE, device_type_expression(self.version, checked=True))
            if TORCH in new:
                needs_torch = needs_torch or self.torch_alias is None
                new = new.replace(TORCH, self.torch_alias or "torch")
            first, last = target if isinstance(target, tuple) else (target, target)
            start, end = self.positions[first].start, self.positions[last].end
            edits.append(Edit(start.line, start.column + 1, end.line, end.column + 1, new.replace("\n", self.newline)))
        preamble = []
        if (DEVICE in plan.text or DEVICE_TYPE in plan.text) and self.setting.import_line and self.setting.import_line not in self.names:
            preamble.append(self.setting.import_line)
        if needs_torch or (needs_device_line and self.torch_alias is None):
            preamble.append("import torch")
        for line in preamble:
            edits.append(Edit(self.insert_line, 1, self.insert_line, 1, line + self.newline))
        if needs_device_line:
            definition = "DEVICE = " + device_expression(self.version).replace(TORCH, self.torch_alias or "torch")
            edits.append(Edit(self.insert_line, 1, self.insert_line, 1, self.newline + definition + self.newline))
        return Fix(plan.safety, plan.description, tuple(edits))


def _import_point(module: cst.Module, positions) -> int:
    """The line after the last top-level import (else after the docstring), where new lines go."""
    line = 1
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
            continue
        first = statement.body[0]
        is_import = isinstance(first, (cst.Import, cst.ImportFrom))
        is_docstring = index == 0 and isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString)
        if is_import or is_docstring:
            line = positions[statement].end.line + 1
    return line


def _module_names(module: cst.Module) -> set:
    """Names bound or imported at module level (to avoid clobbering an existing DEVICE), and import lines."""
    names = set()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
                    names.add(render(small).strip())
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
                elif isinstance(small, (cst.Import, cst.ImportFrom)):
                    names.add(render(small).strip())
                    aliases = small.names if not isinstance(small.names, cst.ImportStar) else []
                    for alias in aliases:
                        bound = alias.asname.name if alias.asname else alias.name
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
    return names


def template(text: str) -> str:
    """Catalog fix text -> placeholders: `torch.` is the file's torch alias, DEVICE the device."""
    text = re.sub(r"\btorch\.", TORCH + ".", text)
    text = re.sub(r"\bDEVICE\.type\b", DEVICE_TYPE, text)
    return re.sub(r"\bDEVICE\b", DEVICE, text)


def _attribute(expression: str, name: str) -> str:
    simple = re.match(r"^[A-Za-z_][\w.]*(\(\))?$", expression)
    return f"{expression}.{name}" if simple else f"({expression}).{name}"
