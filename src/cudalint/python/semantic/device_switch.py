"""Tests the code itself uses to choose between a CUDA device and the CPU.

    device = torch.device("cpu") if args.cpu else torch.device(rank)
    ...
    if not args.cpu:
        torch.cuda.synchronize(rank)

`args.cpu` is a device switch: the file picks the CPU where it is true and a CUDA device
(a "cuda" string; an int ordinal before torch 2.5) where it is false, so, as the code is written, a branch
under `not args.cpu` runs only where the device is CUDA. The porting problem is the
selection, which names no Mac device (CDL101/CDL104 report it there), not each call of the
CUDA mode behind the same test. Once the selection offers the Mac's device
(`"cpu" if args.cpu else "mps" if mps else "cuda"`) the test no longer picks CUDA alone, it
is no switch, and the calls behind it are reported again.

An index switch is the other way of writing it: an int device option whose "no device" value is
negative (`cuda_device: int = -1`, `--gpu` with `default=-1`), tested for an index (`if cuda_device >= 0:`,
`!= -1`, `> -1`) and used as a CUDA ordinal in the file (`model.cuda(cuda_device)`,
`torch.cuda.set_device(gpu)`, `torch.device("cuda", gpu)`, `f"cuda:{gpu}"`): where nobody picked a GPU
the test is false and the code takes its CPU path, on a Mac as anywhere. An option the file gives a
GPU's index by default (`gpu=0`) picks CUDA unless someone says otherwise, and is no switch; nor is a
test whose "no index" arm names CUDA itself (`if device == -1: device = torch.device("cuda")`: there
-1 means the current GPU), nor one whose other arm may pick the Mac's device with the index
(`elif device < 0: cpu ... elif mps_available: f"mps:{device}"`).

A switch is read from the file's bindings: one whose value is `A if T else B` (or a call of it,
`torch.device(A if T else B)`), or bindings of one name under `if T:` / its `else:` (a host
device bound unconditionally beside a CUDA one under `if T:` counts as the other arm). `T` is
a name (matched by what it is bound to) or a dotted attribute (`args.cpu`, `self.opt.gpu`,
matched by its spelling anywhere in the file, which is how one option object is read). A test
the file uses both ways is no switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Hashable, Optional, Set, Tuple

import libcst as cst

from cudalint.python.children import code_children
from cudalint.python.names import dotted, int_literal, is_cuda_string, mentions_mac_path, string_value
from cudalint.python.placement import names_host
from cudalint.python.semantic.values import UNKNOWN_KIND
from cudalint.versions import INT_DEVICE_ACCELERATOR

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

# What a device arm can be written as; anything else is not read (a cheap filter before the value model).
_ARM_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Call, cst.Name, cst.Attribute)
CONFLICT = object()  # a test the file uses both ways


class DeviceSwitches:
    def __init__(self, model: "SemanticModel"):
        self.model = model
        self._switches: Optional[Dict[Hashable, object]] = None  # key of a test -> True: true picks CUDA
        self._building = False
        self._selecting: Set[int] = set()  # ids of the tests the selections themselves are written with
        self._read: Dict[int, Tuple[Set[str], Dict[int, cst.If]]] = {}  # index switches: id of a scope -> what it holds

    def cuda_when(self, test: cst.BaseExpression, scope: "Scope") -> Optional[bool]:
        """True when the test being true picks the CUDA device of a selection in this file, False when
        its being false does, None when the test is no switch."""
        if not isinstance(test, (cst.Name, cst.Attribute)) or self._building:
            return None
        if self._switches is None:
            self._building = True
            try:
                self._switches = self._collect()
            finally:
                self._building = False
        if not self._switches or id(test) in self._selecting:
            return None  # the selection's own test: what it picks is the finding
        found = self._switches.get(self._key(test, scope))
        return None if found is None or found is CONFLICT else found

    def index_when(self, test: cst.Comparison, scope: "Scope") -> Optional[bool]:
        """True when the comparison holds exactly where an index switch picked a device, False when it
        holds exactly where none was picked, None when it is no index switch."""
        if len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        op, left, right = type(target.operator), test.left, target.comparator
        number = int_literal(right)
        if number is None:
            number, left, op = int_literal(left), right, _FLIPPED.get(op, op)
        picked = _PICKED.get((op, number))
        if picked is None or type(left) not in (cst.Name, cst.Attribute):
            return None
        spelling = dotted(left)
        ordinals, tests = self._read_function(scope)
        statement = tests.get(id(test))
        if spelling is None or spelling not in ordinals or statement is None:
            return None  # not handed to CUDA as an index here, or part of a larger test
        chosen, unpicked = (statement.body, statement.orelse) if picked else (statement.orelse, statement.body)
        if unpicked is not None and _names_cuda(unpicked):
            return None  # `if device == -1: device = torch.device("cuda")`: -1 means the current GPU
        if chosen is not None and mentions_mac_path(chosen):
            return None  # the index may pick the Mac's device too (`elif mps_available: f"mps:{device}"`)
        values = self.model.values(left, scope)
        if any(value.kind == "int" and isinstance(value.data, int) and value.data >= 0 and not value.off_mac for value in values):
            return None  # `gpu=0`: a GPU is picked unless someone says otherwise, on a Mac too
        return picked

    def _read_function(self, scope: "Scope") -> Tuple[Set[str], Dict[int, cst.If]]:
        """The spellings a function (or the module's own statements) hands to CUDA as a device index,
        and its `if` statements by the id of their test; read once per scope, nested definitions apart."""
        found = self._read.get(id(scope))
        if found is not None:
            return found
        ordinals: Set[str] = set()
        tests: Dict[int, cst.If] = {}
        owner = scope.node
        pending: list = list(owner.body) if type(owner) is cst.Module else [owner.body] if type(owner) is cst.FunctionDef else []
        resolve = self.model.resolve
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind in _DEFINITIONS:
                continue
            if kind is cst.If:
                tests[id(node.test)] = node
            elif kind is cst.Call:
                index = _cuda_index(node, resolve)
                if type(index) is cst.Call and type(index.func) is cst.Name and index.func.value == "int" and len(index.args) == 1:
                    index = index.args[0].value  # `torch.cuda.set_device(int(gpu_id))`
                spelling = dotted(index) if index is not None else None
                if spelling is not None:
                    ordinals.add(spelling)
            pending.extend(code_children(node))
        self._read[id(scope)] = found = (ordinals, tests)
        return found

    # -- reading the file ---------------------------------------------------------------
    def _key(self, test: cst.BaseExpression, scope: "Scope") -> Optional[Hashable]:
        name = self.model.resolve(test, scope)  # a flag imported from a module, under any import form
        if name is None and isinstance(test, cst.Name):
            bindings = self.model.lookup(test.value, scope)
            return ("name", frozenset(id(binding) for binding in bindings)) if bindings else None
        name = name or dotted(test)
        if name is None or name.partition(".")[0] == "torch":
            return None  # torch's own flags (`torch.version.cuda`) are the guard table's, not a switch
        return ("attribute", name)

    def _collect(self) -> Dict[Hashable, object]:
        switches: Dict[Hashable, object] = {}
        for scope in list(self.model.scopes.values()):
            for bindings in (*scope.bindings.values(), *scope.attributes.values()):
                self._read_name(bindings, switches)
        return switches

    def _read_name(self, bindings, switches) -> None:
        arms = []  # (binding, what it binds), then (binding, its arm: "cuda" | "host")
        for binding in bindings:
            value = binding.value if binding.kind == "assign" else None
            conditional = _conditional(value)
            if conditional is not None:
                self._read_conditional(conditional, binding.context, switches)
            arms.append((binding, value))
        if not any(binding.conditions for binding, _ in arms) or not any(_host_literal(value) for _, value in arms):
            return  # cheap: an if-statement switch binds a name under a test, and writes "cpu" somewhere
        arms = [(binding, self._arm(value, binding.context)) for binding, value in arms]
        if any(arm is None for _, arm in arms):
            return  # another device (or something else) is bound to the name too: no if-statement switch
        host_default = any(arm == "host" and not binding.conditions for binding, arm in arms)
        for binding, arm in arms:
            if not binding.conditions:
                continue
            test, polarity = binding.conditions[-1]
            other = "host" if arm == "cuda" else "cuda"
            if any(a == other and b.conditions and b.conditions[-1][0] is test for b, a in arms) or (arm == "cuda" and host_default):
                self._selecting.add(id(test))
                _record(switches, self._key(test, binding.context), polarity if arm == "cuda" else not polarity)

    def _read_conditional(self, value: cst.IfExp, scope: "Scope", switches) -> None:
        if not (_host_literal(value.body) or _host_literal(value.orelse)):
            return
        body, orelse = self._arm(value.body, scope), self._arm(value.orelse, scope)
        if {body, orelse} == {"cuda", "host"}:
            self._selecting.add(id(value.test))
            _record(switches, self._key(value.test, scope), body == "cuda")

    def _arm(self, node: Optional[cst.BaseExpression], scope: "Scope") -> Optional[str]:
        """"host" or "cuda" for a device expression (`torch.device(x)` is x, through the value model)."""
        if not isinstance(node, _ARM_NODES):
            return None
        if names_host(self.model, node, scope):
            return "host"
        values = self.model.values(node, scope)
        version = self.model.torch_version
        ordinal = version is not None and version < INT_DEVICE_ACCELERATOR  # before 2.5 an index means cuda:N
        cuda = [value.is_cuda_device() or (ordinal and value.may_be_index()) for value in values]
        if any(cuda) and all(found or value.kind == UNKNOWN_KIND for found, value in zip(cuda, values)):
            return "cuda"  # a CUDA device or ordinal, unless a caller or the command line says otherwise
        return None


# (comparison, number) -> True when it holds where an index was picked (`>= 0`), False where none was (`== -1`).
_PICKED = {
    (cst.GreaterThanEqual, 0): True, (cst.GreaterThan, -1): True, (cst.NotEqual, -1): True,
    (cst.LessThan, 0): False, (cst.LessThanEqual, -1): False, (cst.Equal, -1): False,
}
_FLIPPED = {cst.LessThan: cst.GreaterThan, cst.GreaterThan: cst.LessThan,
            cst.LessThanEqual: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.LessThanEqual}
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)  # their bodies are other scopes
# Calls whose one argument is a CUDA device index.
_CUDA_INDEX_CALLS = frozenset({"torch.cuda.set_device", "torch.cuda.device"})


def _names_cuda(arm: cst.CSTNode) -> bool:
    """The arm names CUDA itself: a "cuda..." string or a `.cuda()` call."""
    pending = [arm]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.SimpleString and is_cuda_string(node):
            return True
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "cuda":
            return True
        pending.extend(code_children(node))
    return False


def _cuda_index(call: cst.Call, resolve) -> Optional[cst.BaseExpression]:
    """The device index a call hands to CUDA: `x.cuda(i)`, `torch.cuda.set_device(i)`,
    `torch.device("cuda", i)`, `x.to(f"cuda:{i}")`."""
    args = call.args
    if not args or args[0].star or args[0].keyword is not None and args[0].keyword.value != "device":
        return None
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "cuda" and len(args) == 1:
        return args[0].value
    name = resolve(func)
    if name in _CUDA_INDEX_CALLS and len(args) == 1:
        return args[0].value
    if name == "torch.device" and len(args) == 2 and string_value(args[0].value) == "cuda":
        return args[1].value
    value = args[0].value
    if len(args) == 1 and type(value) is cst.FormattedString and len(value.parts) == 2:
        head, index = value.parts
        if type(head) is cst.FormattedStringText and head.value == "cuda:" and type(index) is cst.FormattedStringExpression:
            return index.expression
    return None


def _conditional(node: Optional[cst.BaseExpression]) -> Optional[cst.IfExp]:
    """`A if T else B` bound as it is or handed to a call of one argument (`torch.device(...)`,
    `x.to(...)`): written only, the arms say whether it selects a device."""
    if type(node) is cst.Call and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        node = node.args[0].value
    return node if type(node) is cst.IfExp else None


def _host_literal(node) -> bool:
    """"cpu" as written, or `torch.device("cpu")`: the cheap test before the value model is asked."""
    if isinstance(node, cst.Call) and node.args:
        node = node.args[0].value
    return node is not None and string_value(node) == "cpu"


def _record(switches: Dict[Hashable, object], key: Optional[Hashable], cuda_when: bool) -> None:
    if key is None:
        return
    known = switches.get(key)
    switches[key] = cuda_when if known is None or known == cuda_when else CONFLICT

