"""Returns a Mac never reaches: those of a `try:` body at or after a statement that raises there, and
those after an early return that every Mac takes.

`try: out = subprocess.check_output(["nvidia-smi", ...]); return int(out) except ...: return 0`
counts NVIDIA GPUs; on a Mac nvidia-smi cannot start, so only the handler's 0 comes back. Which
calls raise on a Mac is the catalog's (rules/guards.toml: cuda_only_results, off_mac_programs and
the subprocess calls that start them); the project index reads the same facts on CPython's tree.

`if device.type in ("cpu", "mps"): return False` at the top of a helper (yolov5's `check_amp`) is
taken on every Mac, whose only device types those are: the returns after it (and in its `else`) never
run there, so on a Mac the helper gives what that early return gives. Nor do the returns of a branch
no Mac takes (`if device.type not in ("cpu", "mps"): return True`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Set

import libcst as cst

from cudalint.python.children import code_children
from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

SIMPLE = (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return)
NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
SKIPPED = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def dead_returns(model: "SemanticModel", function: cst.CSTNode, scope: "Scope", depth: int = 0) -> Set[int]:
    """The ids of the returned expressions of the function that never run on a Mac."""
    dead: Set[int] = set()
    body = getattr(function, "body", None)
    for returned, conditions in scope.returns:  # under a test no Mac passes, or after an exit every Mac takes
        if model.guards.conditions_off_mac(conditions, scope, depth):
            dead.add(id(returned))
    stack: List[cst.CSTNode] = list(body.body) if isinstance(body, cst.IndentedBlock) else []
    while stack:
        statement = stack.pop()
        if isinstance(statement, NESTED):
            continue
        if isinstance(statement, (cst.Try, cst.TryStar)):
            failed = False
            tried = [*statement.body.body, *(statement.orelse.body.body if statement.orelse is not None else ())]
            for inner in tried:
                failed = failed or fails_on_mac(model, inner, scope)
                if failed:
                    dead.update(_returned(inner))
        stack.extend(child for child in code_children(statement) if not isinstance(child, cst.BaseExpression))
    return dead


def falsy_constant(node: cst.BaseExpression) -> bool:
    """0, 0.0, False, None, "": a literal that is false as a test."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value == 0
    if isinstance(node, cst.Name):
        return node.value in ("False", "None")
    return string_value(node) == ""


def _returned(statement: cst.CSTNode) -> Set[int]:
    found: Set[int] = set()
    stack = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return) and node.value is not None:
            found.add(id(node.value))
        if node is statement or not isinstance(node, NESTED):
            stack.extend(code_children(node))
    return found


def fails_on_mac(model: "SemanticModel", statement: cst.CSTNode, scope: "Scope") -> bool:
    """A statement line (or a `with` line) that surely makes a call that raises on a Mac: not one in a
    branch of a conditional expression, after a short-circuit, or in a lambda or comprehension."""
    if isinstance(statement, cst.With):
        parts: List[cst.CSTNode] = [item.item for item in statement.items]
    elif isinstance(statement, cst.SimpleStatementLine):
        parts = [small.value for small in statement.body if isinstance(small, SIMPLE) and small.value is not None]
    else:
        return False
    while parts:
        node = parts.pop()
        if isinstance(node, cst.Call) and _call_fails_on_mac(model, node, scope):
            return True
        if isinstance(node, cst.IfExp):
            parts.append(node.test)
        elif isinstance(node, cst.BooleanOperation):
            parts.append(node.left)
        elif not isinstance(node, SKIPPED):
            parts.extend(code_children(node))
    return False


def _call_fails_on_mac(model: "SemanticModel", call: cst.Call, scope: "Scope") -> bool:
    facts = model.guards.facts
    qualified = model.resolve(call.func, scope)
    if qualified is None:
        return False
    return facts.fails_on_mac(qualified) or missing_program(model, call, scope, qualified) is not None


def _command(command: cst.BaseExpression, model: "SemanticModel", scope: "Scope"):
    """What a command starts with, as written: its text (a string, the first element of a list or tuple, a
    string split into words: `"nvidia-smi -L".split()`, `shlex.split(cmd)`), else the name that holds it
    (`gpu_cmd` in `run(gpu_cmd.split())`, `run([nvcc, "-V"])`), else None."""
    if isinstance(command, cst.Call) and len(command.args) <= 1 and not any(arg.keyword or arg.star for arg in command.args):
        func = command.func
        if isinstance(func, cst.Attribute) and func.attr.value == "split" and not command.args:
            command = func.value  # str.split() on whitespace: the first word is the program
        elif len(command.args) == 1 and model.resolve(func, scope) == "shlex.split":
            command = command.args[0].value
        else:
            return None
    if isinstance(command, (cst.List, cst.Tuple)) and command.elements:
        command = command.elements[0].value
    text = string_value(command)
    return text if text is not None or not isinstance(command, cst.Name) else command


def _named_program(model: "SemanticModel", name: cst.Name, scope: "Scope"):
    """The program a name holds: the first word of every string it is bound to where the host may be a Mac
    (`"nvcc" if cuda_dir is None else cuda_dir + "/bin/nvcc"` with CUDA_HOME: "nvcc"), where all agree."""
    words = {value.text.split(" ", 1)[0] if value.kind == "str" and value.text else None
             for value in model.values(name, scope) if not value.off_mac}
    return next(iter(words)) if len(words) == 1 else None


def missing_program(model: "SemanticModel", call: cst.Call, scope: "Scope", qualified=None):
    """The program no Mac has (rules/guards.toml off_mac_programs) that the call starts in a way that raises
    where it is missing (`subprocess.check_output(["nvidia-smi", ...])`); None for any other call. The command
    is read before the callee is resolved: this runs for every call of a file that names such a program."""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    command = positional[0] if positional else next(
        (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "args"), None
    )
    program = _command(command, model, scope) if command is not None else None
    facts = model.guards.facts
    if program is None or (isinstance(program, str) and program.split(" ", 1)[0] not in facts.off_mac_programs):
        return None
    qualified = qualified if qualified is not None else model.resolve(call.func, scope)
    if isinstance(program, cst.Name):  # the name's values only for a call that starts programs
        program = _named_program(model, program, scope) if qualified in facts.program_runners else None
    return program.split(" ", 1)[0] if facts.run_fails_on_mac(qualified, program, through_shell(call)) else None


def through_shell(call: cst.Call) -> bool:
    """The call passes `shell=` something other than False or None: the program starts through a shell."""
    return any(arg.keyword is not None and arg.keyword.value == "shell"
               and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None")) for arg in call.args)
