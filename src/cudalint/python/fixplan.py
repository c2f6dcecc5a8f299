"""Fixes as planned during the pass, turned into text edits once positions are known.

A check describes a fix by the nodes it replaces and their new text. The text may
hold markers filled in per file at the end:

    TORCH        the name torch has where the fix lands (a function's own `import torch`
                 counts; `import torch` is added at the top only when no scope has one)
    DEVICE       the device: the project's `device-expression`, else one the code already
                 has in reach (a `device` parameter or local, `self.device`: the fix is then
                 unsafe, since a caller may pass another device), else the accelerator
                 expression — inline when used once and short enough, else a name defined
                 once where torch is imported, bound before every use, never shadowing or
                 shadowed by a name the file already has
    DEVICE_TYPE  the same as a string, for code that compares or stores strings
    BREAK        a line break into a new block at the statement's indentation (no E701)

A plan also says the torch release its emitted APIs need (`since`); the fixer drops it
when the target, or the oldest release the project's manifests allow, is older, and
drops every plan inside an explicit `if torch_version < X:` branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from cudalint.findings import Edit, Fix, Safety
from cudalint.python.device_setting import DEFAULT_LINE_LENGTH, DeviceSetting  # noqa: F401 - re-exported

# Placeholders are valid identifiers, so fixes can be built as libcst nodes and rendered.
TORCH = "__cudalint_torch__"
DEVICE = "__cudalint_device__"
DEVICE_TYPE = "__cudalint_device_type__"
CHECKED_TYPE = DEVICE_TYPE  # the device expression checks availability at every release
BREAK = "__cudalint_break__"
_CODEGEN = cst.Module(body=[])
DEVICE_PARAM = re.compile(r"^(\w+_)?device$")  # `device`, `eval_device`: a name a person gives a device
MODULE_NAMES = ("DEVICE", "DEFAULT_DEVICE", "ACCELERATOR_DEVICE")
LOCAL_NAMES = ("device", "default_device", "accelerator_device")


Target = Union[cst.CSTNode, Tuple[cst.CSTNode, cst.CSTNode]]  # a node, or from one node's start to another's end


@dataclass
class FixPlan:
    safety: Safety
    description: str
    replacements: List[Tuple[Target, str]] = field(default_factory=list)
    since: Tuple[int, ...] = ()  # the torch release every API the fix writes exists from

    @property
    def text(self) -> str:
        return "".join(new for _, new in self.replacements)

    @property
    def uses_device(self) -> bool:
        return DEVICE in self.text or DEVICE_TYPE in self.text


def render(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def device_parts(version: Tuple[int, ...], torch: str = "torch") -> Tuple[str, List[str], str]:
    """"The accelerator in use, else CPU" for a release, as (opening, parts, closing): the parts
    join with spaces on one line, or go one per line inside the brackets when that is too long.
    Every form tests availability, so a CUDA build on a host without a GPU gets the CPU
    (`check_available` from torch 2.7, `torch.accelerator.is_available()` from 2.6)."""
    if version >= (2, 7):
        return "(", [f"{torch}.accelerator.current_accelerator(check_available=True)", f'or {torch}.device("cpu")'], ")"
    if version >= (2, 6):
        return "(", [f"{torch}.accelerator.current_accelerator()", f"if {torch}.accelerator.is_available()", f'else {torch}.device("cpu")'], ")"
    return f"{torch}.device(", _type_chain(torch), ")"


def _type_chain(torch: str) -> List[str]:
    """Before torch.accelerator (2.6): CUDA, then MPS (torch >= 1.12), then CPU, as a string."""
    return [f'"cuda" if {torch}.cuda.is_available()', f'else "mps" if {torch}.backends.mps.is_available()', 'else "cpu"']


def device_expression(version: Tuple[int, ...], torch: str = "torch") -> str:
    opening, parts, closing = device_parts(version, torch)
    inner = " ".join(parts)
    return inner if opening == "(" else f"{opening}{inner}{closing}"


def device_type_expression(version: Tuple[int, ...], torch: str = "torch") -> str:
    if version < (2, 6):
        return " ".join(_type_chain(torch))
    return f"({device_expression(version, torch)}).type"


@dataclass
class _Home:
    """Where a device name is defined for the fixes of one scope."""

    name: Optional[str] = None  # None: inline
    definition: Optional[Edit] = None  # a new definition to insert (None: inline, or one exists)


class FileFixer:
    """Per-file choices shared by all fixes: torch names, device form and where it is defined."""

    def __init__(self, module: cst.Module, positions, model, version: Tuple[int, ...], setting: DeviceSetting, text: str):
        self.module = module
        self.positions = positions
        self.model = model
        self.setting = setting
        self.version = min(version, setting.floor) if setting.floor else version
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.lines = re.split(r"\r\n|\r|\n", text)
        self.indent_unit = module.default_indent
        self.top_level = {id(small) for s in module.body if isinstance(s, cst.SimpleStatementLine) for small in s.body}
        self.bodies = sorted(
            ((positions[scope.node.body], scope) for scope in model.scopes.values() if scope.kind == "function"),
            key=lambda item: (item[0].start.line, item[0].start.column),
        )
        self.old_torch, self.fstrings, self.calls, self.words = _regions(module, positions)
        self.homes: Dict[int, _Home] = {}
        self.module_import_point = _import_point(module, positions, leading=True)  # where an added import goes

    # -- where a plan lands ------------------------------------------------------------
    def _start(self, plan: FixPlan):
        target = plan.replacements[0][0]
        first = target[0] if isinstance(target, tuple) else target
        return self.positions[first].start

    def _scope_at(self, plan: FixPlan):
        """The innermost function whose body holds the fix (decorators and defaults run at def time)."""
        start = self._start(plan)
        here = (start.line, start.column)
        found = self.model.module_scope
        for span, scope in self.bodies:
            if (span.start.line, span.start.column) <= here < (span.end.line, span.end.column):
                found = scope
        return found

    def _torch_binding(self, scope):
        """(scope, local name, binding) of the nearest `import torch` in reach, else None."""
        current = scope
        while current is not None:
            if current.kind != "class" or current is scope:
                found = [(name, b) for name, bs in current.bindings.items() for b in bs if b.kind == "import" and b.qualified == "torch"]
                if found:
                    found.sort(key=lambda item: item[0] != "torch")
                    return current, found[0][0], found[0][1]
            current = current.parent
        return None

    def _dropped(self, plan: FixPlan) -> bool:
        if plan.since and self.version < plan.since:
            return True
        line = self._start(plan).line
        return any(low <= line <= high for low, high in self.old_torch)

    # -- choosing the device form ----------------------------------------------------------
    def decide(self, plans: Sequence[FixPlan]) -> None:
        if self.setting.expression is not None:
            return
        groups: Dict[int, List[FixPlan]] = {}
        for plan in plans:
            if plan.uses_device and not self._dropped(plan) and self._existing_device(plan) is None:
                groups.setdefault(id(self._home_scope(plan)), []).append(plan)
        for key, members in groups.items():
            self.homes[key] = self._choose(members)

    def _home_scope(self, plan: FixPlan):
        """The scope a device name for this plan would be defined in: the one holding the nearest
        `import torch` (the module when none does: the import is added)."""
        found = self._torch_binding(self._scope_at(plan))
        return self.model.module_scope if found is None else found[0]

    def _choose(self, plans: List[FixPlan]) -> _Home:
        home = self._home_scope(plans[0])
        torch = self._torch_name(plans[0])
        expression = device_expression(self.version, torch)
        names = MODULE_NAMES if home.kind == "module" else LOCAL_NAMES
        for name in names:  # a definition an earlier round wrote
            if any(b.kind == "assign" and b.value is not None and _same(render(b.value), expression) for b in home.bindings.get(name, ())):
                return _Home(name)
        too_long = any(self._too_long(plan, None) for plan in plans)
        if len(plans) == 1 and not too_long:
            return _Home()
        free = next((name for name in names if name not in self.words), None)
        if free is None:
            return _Home()
        direct = [self._start(plan).line for plan in plans if self._scope_at(plan) is home]  # run where defined
        found = self._torch_binding(home)
        if found is None or (id(found[2].node) in self.top_level and not found[2].conditions):
            # after the module's imports (and before its first line that needs the device)
            point = _import_point(self.module, self.positions, min(direct) if direct else None)
            if found is not None and self.positions[found[2].node].start.line >= point:
                return _Home()
            indent, lead = "", self.newline
        else:
            # right after a function's own `import torch`, or one under `if __name__ == ...:` / `try:`
            binding = found[2]
            point = self.positions[binding.node].end.line + 1
            line = self.lines[point - 2]
            if not line.lstrip().startswith(("import ", "from ")) or any(use < point for use in direct):
                return _Home()
            indent, lead = line[: len(line) - len(line.lstrip())], ""
        text = lead + self._definition(free, torch, indent) + self.newline
        following = self.lines[point - 1] if point - 1 < len(self.lines) else ""
        if not indent and following.startswith(("def ", "async def ", "class ", "@")):
            text += self.newline * 2  # two blank lines before a top-level definition (E302)
        return _Home(free, Edit(point, 1, point, 1, text))

    def _definition(self, name: str, torch: str, indent: str) -> str:
        opening, parts, closing = device_parts(self.version, torch)
        one_line = f"{indent}{name} = {device_expression(self.version, torch)}"
        if len(one_line) <= self.setting.line_length:
            return one_line
        inner = indent + self.indent_unit
        body = self.newline.join(inner + part for part in parts)
        return f"{indent}{name} = {opening}{self.newline}{body}{self.newline}{indent}{closing}"

    def _existing_device(self, plan: FixPlan) -> Optional[str]:
        """A device the function already has, bound before the fix: a parameter or local named like a
        device (`device`, `eval_device`), else `self.device` set in the class."""
        scope = self._scope_at(plan)
        line = self._start(plan).line
        current = scope
        while current is not None and current.kind == "function":
            for name, bindings in sorted(current.bindings.items(), key=lambda item: (item[0] != "device", item[0])):
                if not DEVICE_PARAM.match(name) or self._defines(bindings, line):
                    continue
                for binding in bindings:
                    if binding.kind == "param" and binding.node.star not in ("*", "**"):
                        return name
                    if binding.kind == "assign" and not binding.conditions and self.positions[binding.node].end.line < line:
                        return name
            owner = current.enclosing_class
            if owner is not None and current.self_name and self._set_elsewhere(owner.attributes.get("device", ()), current, line):
                return f"{current.self_name}.device"
            current = current.parent
        return None

    def _defines(self, bindings, line: int) -> bool:
        """The fix sits in the value assigned to this very name (`if device is None: device = "cuda"`,
        `device = device or "cuda"`): the name is what is being defaulted, so it cannot be the device."""
        for binding in bindings:
            if binding.kind == "assign":
                span = self.positions[binding.node]
                if span.start.line <= line <= span.end.line:
                    return True
        return False

    def _set_elsewhere(self, bindings, method, line: int) -> bool:
        """`self.device` is set in another method (`__init__`), or earlier in this one, and the fix is
        not inside the assignment itself."""
        spans = [self.positions[b.node] for b in bindings]
        if any(span.start.line <= line <= span.end.line for span in spans):
            return False
        return any(b.where is not method or span.end.line < line for b, span in zip(bindings, spans))

    def _torch_name(self, plan: FixPlan) -> str:
        found = self._torch_binding(self._scope_at(plan))
        return found[1] if found is not None else "torch"

    # -- text --------------------------------------------------------------------------------
    def _edits(self, plan: FixPlan, device: Optional[str], kind: Optional[str], torch: str, wrap: bool = False) -> List[Edit]:
        """The plan's edits with `device`/`kind` (the device and its type; None: the inline expressions);
        with `wrap`, a call or conditional expression that makes its line too long goes on several lines."""
        scope = self._scope_at(plan)
        edits = []
        for target, new in plan.replacements:
            first, last = target if isinstance(target, tuple) else (target, target)
            start, end = self.positions[first].start, self.positions[last].end
            new = new.replace(DEVICE_TYPE, kind or device_type_expression(self.version, torch))
            new = new.replace(DEVICE, device or device_expression(self.version, torch))
            if BREAK in new:
                line = self.lines[start.line - 1]
                new = new.replace(BREAK, "\n" + line[: len(line) - len(line.lstrip())] + self.indent_unit)
            new = re.sub(re.escape(TORCH) + r"((?:\.\w+)+)", lambda m: self._qualified(m.group(1), scope, torch), new)
            inside = any(low <= (start.line, start.column) < high for low, high in self.fstrings)
            first_column, last_column = start.column, end.column
            if wrap and self._overflows(start.line, start.column, end.line, end.column, new):
                if inside:
                    return []  # an f-string's expression cannot go onto lines: no fix
                first_column, last_column, new = self._broken(start, end, new)
            edits.append(Edit(start.line, first_column + 1, end.line, last_column + 1, new.replace("\n", self.newline)))
        return edits

    def _broken(self, start, end, new: str) -> Tuple[int, int, str]:
        """A line made too long, broken as black would: the outermost call around the edit that then
        fits gets one argument a line; else the new expression itself is broken."""
        line = self.lines[start.line - 1]
        indent = line[: len(line) - len(line.lstrip())]
        if start.line == end.line:
            around = sorted(
                (first, last) for at, first, last in self.calls if at == start.line and first <= start.column and end.column <= last
            )
            for first, last in around:
                text = line[first : start.column] + new + line[end.column : last]
                broken = _wrapped(text, indent, self.indent_unit)
                if broken is not None:
                    written = line[:first] + broken + line[last:]
                    if all(len(part) <= self.setting.line_length for part in written.split("\n")):
                        return first, last, broken
        return start.column, end.column, _wrapped(new, indent, self.indent_unit) or new

    def _qualified(self, path: str, scope, torch: str) -> str:
        """`torch.distributed.x` as the file writes it: through `import torch.distributed as dist` -> `dist.x`."""
        parts = path[1:].split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = "torch." + ".".join(parts[:cut])
            current = scope
            while current is not None:
                for name, bindings in current.bindings.items():
                    if any(b.kind == "import" and b.qualified == module and isinstance(b.node, cst.Import) for b in bindings):
                        return ".".join([name, *parts[cut:]])
                current = current.parent
        return torch + path

    def _overflows(self, line: int, column: int, end_line: int, end_column: int, new: str) -> bool:
        """Writing `new` over the span makes a line longer than the limit, where none was."""
        limit = self.setting.line_length
        if any(len(text) > limit for text in self.lines[line - 1 : end_line]):
            return False
        written = self.lines[line - 1][:column] + new + self.lines[end_line - 1][end_column:]
        return any(len(text) > limit for text in written.split("\n"))

    def _too_long(self, plan: FixPlan, device: Optional[str]) -> bool:
        """Some line the inline fix writes is over the line length, where the original's lines were not."""
        for edit in self._edits(plan, device, None, self._torch_name(plan)):
            if self._overflows(edit.line, edit.column - 1, edit.end_line, edit.end_column - 1, edit.content.replace(self.newline, "\n")):
                return True
        return False

    def build(self, plan: FixPlan) -> Optional[Fix]:
        if self._dropped(plan):
            return None
        safety, description = plan.safety, plan.description
        torch = self._torch_name(plan)
        preamble: List[str] = []
        extra: List[Edit] = []
        device = kind = None
        if plan.uses_device:
            if self.setting.expression is not None:
                device = self.setting.expression
                kind = _attribute(device, "type")
                if self.setting.import_line and self.setting.import_line not in self.lines:
                    preamble.append(self.setting.import_line)
            else:
                existing = self._existing_device(plan)
                if existing is not None:
                    device, kind = existing, f"{torch}.device({existing}).type"  # a string or a device
                    safety, description = Safety.UNSAFE, f"{description} (the code's own {existing})"
                else:
                    home = self.homes.get(id(self._home_scope(plan)), _Home())
                    device = home.name
                    kind = f"{device}.type" if device else None
                    if home.definition is not None:
                        extra.append(home.definition)
        edits = self._edits(plan, device, kind, torch, wrap=True)
        if not edits:
            return None
        if TORCH in plan.text or (plan.uses_device and device is None) or extra:
            if self._torch_binding(self._scope_at(plan)) is None:
                preamble.append("import torch")
        point = self.module_import_point
        if extra and extra[0].line < point:
            point = extra[0].line
        for line in preamble:
            edits.append(Edit(point, 1, point, 1, line + self.newline))
        edits.extend(extra)
        return Fix(safety, description, tuple(edits))


def _import_point(module: cst.Module, positions, before: Optional[int] = None, leading: bool = False) -> int:
    """The line after the last top-level import (else after the docstring) that ends before line
    `before`, where new lines go. With `leading`, only the imports before the module's first other
    statement count: an import added there is at the top of the file (no E402), even where later
    imports follow code (`sys.path.insert(...)`, `sys.exit()`). Never above the first statement (a
    shebang, an encoding line or a licence header stays first)."""
    line = positions[module.body[0]].start.line if module.body else 1
    for index, statement in enumerate(module.body):
        if not isinstance(statement, cst.SimpleStatementLine) or not statement.body:
            if leading:
                break
            continue
        end = positions[statement].end.line
        if before is not None and end >= before:
            break
        first = statement.body[0]
        is_import = isinstance(first, (cst.Import, cst.ImportFrom))
        is_docstring = index == 0 and isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString)
        if is_import or is_docstring:
            line = end + 1
        elif leading:
            break
    return line


def _regions(module: cst.Module, positions) -> Tuple[List[Tuple[int, int]], list, list, set]:
    """Line ranges of the branches an explicit `if torch_version < X:` test keeps for older torch,
    the spans of f-strings (where an expression cannot be broken onto lines), and the calls that
    sit on one line (line, start column, end column), and the names the code uses."""
    older: List[Tuple[int, int]] = []
    strings: list = []
    calls: list = []
    names: set = set()  # every name the code binds or reads (not keyword-argument names or attributes)
    skip: set = set()

    from cudalint.python.children import code_children  # the walk's fields: `children` would rebuild every node

    stack: List[cst.CSTNode] = [module]  # read-only, without libcst's rebuilding traversal
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.If:
            branch = _older_branch(node)
            if branch is not None:
                span = positions[branch]
                older.append((span.start.line, span.end.line))
        elif kind is cst.FormattedString:
            span = positions[node]
            strings.append(((span.start.line, span.start.column), (span.end.line, span.end.column)))
        elif kind is cst.Arg and node.keyword is not None:
            skip.add(id(node.keyword))
        elif kind is cst.Attribute:
            skip.add(id(node.attr))
        elif isinstance(node, cst.Name) and id(node) not in skip:
            names.add(node.value)
        elif isinstance(node, cst.Call):
            span = positions[node]
            if span.start.line == span.end.line:
                calls.append((span.start.line, span.start.column, span.end.column))
        stack.extend(code_children(node))
    return older, strings, calls, names


def _older_branch(node: cst.If) -> Optional[cst.CSTNode]:
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    left, right = render(test.left), render(comparison.comparator)
    less = isinstance(comparison.operator, (cst.LessThan, cst.LessThanEqual))
    greater = isinstance(comparison.operator, (cst.GreaterThan, cst.GreaterThanEqual))
    if _names_version(right) and re.search(r"\d", left):
        less, greater = greater, less
    elif not (_names_version(left) and re.search(r"\d", right)):
        return None
    if less:
        return node.body
    if greater and isinstance(node.orelse, (cst.Else, cst.If)):
        return node.orelse
    return None


def _names_version(text: str) -> bool:
    return "version" in text.lower() and not re.search(r"\d", text)


def template(text: str) -> str:
    """Catalog fix text -> placeholders: `torch.` is the file's torch alias, DEVICE the device."""
    text = re.sub(r"\btorch\.", TORCH + ".", text)
    text = re.sub(r"\bDEVICE\.type\b", DEVICE_TYPE, text)
    return re.sub(r"\bDEVICE\b", DEVICE, text)


def _attribute(expression: str, name: str) -> str:
    simple = re.match(r"^[A-Za-z_][\w.]*(\(\))?$", expression)
    return f"{expression}.{name}" if simple else f"({expression}).{name}"


def _same(written: str, expression: str) -> bool:
    """The same expression, however it was wrapped onto lines."""
    compact = re.sub(r"\s+", "", written)
    bare = re.sub(r"\s+", "", expression)
    return compact in (bare, f"({bare})")


def _wrapped(text: str, indent: str, unit: str) -> Optional[str]:
    """A call with one argument a line (and a trailing comma), or a conditional / `or` expression
    with one part a line inside its brackets, as black writes them; None for anything else."""
    try:
        node = cst.parse_expression(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    inner = indent + unit
    if isinstance(node, cst.Call) and node.args and not node.lpar:
        args = [render(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip() for arg in node.args]
        body = "".join(f"\n{inner}{arg}," for arg in args)
        return f"{render(node.func)}({body}\n{indent})"
    bare = node.with_changes(lpar=[], rpar=[]) if node.lpar else node
    if isinstance(bare, cst.IfExp):
        parts = [render(bare.body).strip(), "if " + render(bare.test).strip(), "else " + render(bare.orelse).strip()]
    elif isinstance(bare, cst.BooleanOperation):
        parts = [render(bare.left).strip(), f"{render(bare.operator).strip()} {render(bare.right).strip()}"]
    else:
        return None
    body = "".join(f"\n{inner}{part}" for part in parts)
    return f"({body}\n{indent})"
