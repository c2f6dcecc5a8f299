"""Where a device comes from when it crosses modules: what a project function returns, what a call passes.

A training script often picks its device in one module and uses it in others:

    # dist.py
    def init_device(rank):
        if torch.cuda.is_available():
            device = f"cuda:{rank}"
        else:
            device = "cpu"
        return torch.device(device)

    # main.py
    device = init_device(rank)
    train_one_epoch(model, loader, device=device)

    # engine.py
    def train_one_epoch(model, loader, device):
        for x in loader:
            x = x.to(device, non_blocking=True)

On a Mac that device is the CPU: the copy is a plain host copy, float64 exists there, every operator has
its CPU kernel. The selection that forgets MPS is reported where it is written (CDL104); what the device
means further on is what the code does on a Mac today. The file being checked cannot see this: the
selection and the callers are in other modules. The project index reads, in its one pass over each
module's CPython tree,

- what each module-level function returns, as device atoms (below), where every return is one;
- for each call that passes a device (a keyword named like a device parameter, a positional name or
  attribute named like one, a device string, `torch.device(...)`), what it passes, under the name called.

An atom is one of
    ["cpu"]      the CPU;
    ["never"]    a value taken only where the host is no Mac (an arm of `if torch.cuda.is_available():`),
                 or a CUDA device, which a Mac never has (a move there raises, and is reported where the
                 device is written);
    ["ret", Q]   what the project's function Q returns (the index works it out from Q's module's facts);
    ["param", F, P, position, kind]   parameter P of the caller's own function, whose calls go by the
                 name F, handed on: what those calls pass for it (kind: how they pass it, below);
    ["?"]        anything else.

ProjectIndex.cpu_on_mac_return and ProjectIndex.cpu_on_mac_argument join them: a device every atom of
which comes to the CPU or to "never", with the CPU among them, is the CPU wherever the host is a Mac
(placement.cpu_on_a_mac asks). Calls are matched by the name they call, as default_calls.py matches
them: a call of another function of the same name counts, and errs towards keeping a finding; a call
through a name imported from another library does not. A call that passes the device positionally
under a name that says nothing of a device is not seen: the project's calls that are seen decide.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from cudalint.project.default_calls import lines_of
from cudalint.project.device_params import DEVICE_NAME_RE, is_cuda_device

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.project.facts import _Reader

CPU = ["cpu"]
NEVER = ["never"]
UNKNOWN = ["?"]
MAX_DEPTH = 6
# A module whose text names no device parameter, keyword or device string passes no device and picks none.
DEVICE_TEXT_RE = re.compile(rb"device|gpu|map_location|\bdev\b|cpu")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
# How a function's calls pass its parameters: a function's as written; a method's, called on an object
# (`trainer.fit(loader, device)`), after the object; a class's `__init__`, called by the class's name, after
# the instance made; a nested function is called by whatever holds it, not followed.
FUNCTION, METHOD, INIT, NESTED = 0, 1, 2, 3


class DeviceFlow:
    """Reads one module's device returns and device-passing calls, with its reader's guards and imports."""

    def __init__(self, reader: "_Reader", tree: ast.Module, text: bytes = b""):
        self.reader = reader
        self.tree = tree
        # the lines (from 1, in order) whose text names a device, its parameter or its string; None: every line
        self.lines: Optional[List[int]] = lines_of(DEVICE_TEXT_RE, text) if text else None
        self.pending: set = set()  # ids of the assigned values being worked out (`device = torch.device(device)`)
        self._locals: Dict[int, Dict[str, Tuple[List[ast.AST], int]]] = {}  # scope -> NAME -> (values, stores)
        self.functions: Dict[int, Tuple[str, int]] = {}  # function -> (the name its calls go by, its kind)

    # -- what the module's functions return and its calls pass ---------------------------------------
    def read(self) -> Tuple[Dict[str, list], Dict[str, list]]:
        returns: Dict[str, list] = {}
        calls: Dict[str, list] = {}
        lines = self.lines
        # (node, the function it is in, the class whose body it is in)
        pending: List[Tuple[ast.AST, Optional[ast.AST], Optional[str]]] = [(self.tree, None, None)]
        while pending:
            node, function, klass = pending.pop()
            for child in ast.iter_child_nodes(node):
                first = getattr(child, "lineno", None)
                if first is not None and lines is not None:
                    at = bisect.bisect_left(lines, first)
                    if at == len(lines) or lines[at] > (child.end_lineno or first):
                        continue  # no line of it names a device: it passes none and returns none
                if isinstance(child, _SCOPES):
                    self.functions[id(child)] = _called_as(child, klass, function is not None)
                    if node is self.tree:
                        atoms = self.returns(child)
                        if atoms is not None:
                            returns[child.name] = atoms
                    pending.append((child, child, None))
                elif isinstance(child, ast.ClassDef):
                    pending.append((child, function, child.name))
                elif not isinstance(child, ast.Lambda):  # a lambda's parameters are nobody's device
                    if type(child) is ast.Call:
                        self._call(child, function, calls)
                    pending.append((child, function, None))
        return returns, calls

    def returns(self, function: ast.AST) -> Optional[list]:
        """The atoms of every value the function returns; None unless all are known and one is a device."""
        from cudalint.project.facts import _returns_under

        found: List[list] = []
        for statement, conditions in _returns_under(function):
            if self._off_mac(conditions, function):
                _add(found, NEVER)
                continue
            for atom in self.atoms(statement.value, function):
                _add(found, atom)
        if not found or UNKNOWN in found or found == [NEVER]:
            return None
        return found

    def _call(self, call: ast.Call, function: Optional[ast.AST], calls: Dict[str, list]) -> None:
        func = call.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        if name is None:
            return
        qualified = self.qualified(func) or ""
        if qualified.partition(".")[0] == "torch":
            return  # torch's own API: `torch.zeros(n, device=device)`, `torch.device(device)`
        passed: Dict[str, list] = {}
        spread = False
        for position, arg in enumerate(call.args):
            if type(arg) is ast.Starred:
                spread = True
                break
            if _device_like(arg):
                passed[f"#{position}"] = self.atoms(arg, function)
        for keyword in call.keywords:
            if keyword.arg is None:
                spread = True
            elif DEVICE_NAME_RE.search(keyword.arg):
                passed[keyword.arg] = self.atoms(keyword.value, function)
        if passed:
            calls.setdefault(name, []).append([qualified, type(func) is ast.Attribute, passed, spread])

    # -- one expression --------------------------------------------------------------------------
    def atoms(self, node: ast.AST, function: Optional[ast.AST], depth: int = 0) -> List[list]:
        if depth > MAX_DEPTH:
            return [UNKNOWN]
        if type(node) is ast.Constant:
            if node.value == "cpu":
                return [CPU]
            return [NEVER] if is_cuda_device(node.value) else [UNKNOWN]
        if type(node) is ast.JoinedStr:  # f"cuda:{rank}"
            first = node.values[0] if node.values else None
            return [NEVER] if type(first) is ast.Constant and str(first.value).startswith("cuda:") else [UNKNOWN]
        if type(node) is ast.BinOp and type(node.op) in (ast.Add, ast.Mod):  # "cuda:" + str(rank), "cuda:%d" % rank
            left = node.left
            return [NEVER] if type(left) is ast.Constant and str(left.value).startswith("cuda:") else [UNKNOWN]
        if type(node) is ast.IfExp:
            true, false = self.reader._guard(node.test, function, 1)
            body = [NEVER] if true else self.atoms(node.body, function, depth + 1)
            other = [NEVER] if false else self.atoms(node.orelse, function, depth + 1)
            return body + other
        if type(node) is ast.Call:
            qualified = self.qualified(node.func)
            if qualified == "torch.device":
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "type"), None)
                if first is None or len(node.args) > 1 or type(first) is ast.Starred:
                    return [UNKNOWN]  # torch.device("cuda", index) is CUDA, but keep to the plain forms
                return self.atoms(first, function, depth + 1)
            if qualified is not None and qualified.partition(".")[0] != "torch":
                return [["ret", qualified]]
            return [UNKNOWN]
        if type(node) is ast.Name:
            return self._name(node.id, function, depth)
        return [UNKNOWN]

    def _name(self, name: str, function: Optional[ast.AST], depth: int) -> List[list]:
        scope = function if function is not None else self.tree
        while True:
            if scope is not self.tree:
                param = _parameter(scope, name)
                if param is not None:
                    values, stores = self._bound(scope).get(name, ([], 0))
                    if stores:
                        return [UNKNOWN]  # rebound in the body: `device = device or "cuda"`
                    position, keyword_only = param
                    if keyword_only is None:
                        return [UNKNOWN]  # *args, **kwargs
                    called, kind = self.functions.get(id(scope), ("", NESTED))
                    if kind == NESTED:
                        return [UNKNOWN]  # a nested function is called by whoever holds it, not by its name
                    return [["param", called, name, -1 if keyword_only else position, kind]]
            values, stores = self._bound(scope).get(name, ([], 0))
            if values:
                if stores != len(values):
                    return [UNKNOWN]  # also bound by a loop, a `with`, an unpacking
                found: List[list] = []
                for value in values:
                    if id(value) in self.pending:
                        continue  # `device = torch.device(device)`: what the name held before
                    if self.reader._bound_off_mac(value, scope):
                        _add(found, NEVER)
                        continue
                    self.pending.add(id(value))
                    try:
                        for atom in self.atoms(value, scope, depth + 1):
                            _add(found, atom)
                    finally:
                        self.pending.discard(id(value))
                return found or [UNKNOWN]
            if stores or scope is self.tree:
                return [UNKNOWN]
            if self.functions.get(id(scope), ("", NESTED))[1] == NESTED:
                return [UNKNOWN]  # a nested function's free name: the enclosing function's local
            scope = self.tree

    def _bound(self, scope: ast.AST) -> Dict[str, Tuple[List[ast.AST], int]]:
        """NAME -> (the values the scope's own assignments give it, how many times the scope stores it)."""
        from cudalint.project.facts import _own_nodes

        found = self._locals.get(id(scope))
        if found is not None:
            return found
        values: Dict[str, List[ast.AST]] = {}
        stores: Dict[str, int] = {}
        for statement in scope.body:
            if isinstance(statement, (*_SCOPES, ast.ClassDef)):
                stores[statement.name] = stores.get(statement.name, 0) + 1  # its own name only, not its body's
                continue
            for node in _own_nodes(statement):
                if type(node) is ast.Assign:
                    for target in node.targets:
                        if type(target) is ast.Name:
                            values.setdefault(target.id, []).append(node.value)
                elif type(node) is ast.AnnAssign and type(node.target) is ast.Name and node.value is not None:
                    values.setdefault(node.target.id, []).append(node.value)
                elif type(node) is ast.Name and type(node.ctx) is not ast.Load:
                    stores[node.id] = stores.get(node.id, 0) + 1
                elif type(node) in (ast.Global, ast.Nonlocal) and scope is not self.tree:
                    for declared in node.names:
                        stores[declared] = stores.get(declared, 0) + 1000  # another scope's name: not followed
        found = self._locals[id(scope)] = {name: (values.get(name, []), stores.get(name, 0))
                                           for name in {*values, *stores}}
        return found

    def qualified(self, func: ast.AST) -> Optional[str]:
        qualified = self.reader.resolve(func)
        if qualified is None and type(func) is ast.Name and func.id in self.reader.functions:
            qualified = f"{self.reader.module}.{func.id}"
        return qualified

    def _off_mac(self, conditions, function) -> bool:
        for test, polarity in conditions:
            found = self.reader._guard(test, function, 1)
            if found[0 if polarity else 1]:
                return True
        return False


def _add(found: List[list], atom: list) -> None:
    if atom not in found:
        found.append(atom)


def _device_like(node: ast.AST) -> bool:
    """A positional argument that says it is a device: a name or attribute named like one, a device string,
    a call of a function named like one (`torch.device(...)`, `init_device(rank)`)."""
    if type(node) is ast.Name:
        return bool(DEVICE_NAME_RE.search(node.id))
    if type(node) is ast.Attribute:
        return bool(DEVICE_NAME_RE.search(node.attr))
    if type(node) is ast.Constant:
        return node.value == "cpu" or is_cuda_device(node.value)
    if type(node) is ast.Call:  # `torch.device("cpu")`, `init_device(rank)`, `self.get_device()`
        func = node.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else ""
        return bool(DEVICE_NAME_RE.search(name))
    return False


def _called_as(function: ast.AST, klass: Optional[str], nested: bool) -> Tuple[str, int]:
    if nested:
        return function.name, NESTED
    if klass is None:
        return function.name, FUNCTION
    if function.name == "__init__":
        return klass, INIT
    return function.name, FUNCTION if _static(function) else METHOD


def _static(function: ast.AST) -> bool:
    return any(type(d) is ast.Name and d.id == "staticmethod" for d in function.decorator_list)


def _parameter(function: ast.AST, name: str) -> Optional[Tuple[int, Optional[bool]]]:
    """(position among the positional parameters, keyword only) of parameter `name`; keyword only None for
    `*args`/`**kwargs`; None where the function has no such parameter."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    for position, arg in enumerate(positional):
        if arg.arg == name:
            return position, False
    if any(arg.arg == name for arg in args.kwonlyargs):
        return -1, True
    if any(arg is not None and arg.arg == name for arg in (args.vararg, args.kwarg)):
        return -1, None
    return None
