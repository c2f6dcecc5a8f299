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

A switch is read from the file's bindings: one whose value is `A if T else B` (or a call of it,
`torch.device(A if T else B)`), or bindings of one name under `if T:` / its `else:` (a host
device bound unconditionally beside a CUDA one under `if T:` counts as the other arm). `T` is
a name (matched by what it is bound to) or a dotted attribute (`args.cpu`, `self.opt.gpu`,
matched by its spelling anywhere in the file, which is how one option object is read). A test
the file uses both ways is no switch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Hashable, Optional, Set

import libcst as cst

from cudalint.python.names import dotted, string_value
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
        cuda = [value.is_cuda_device() or (ordinal and value.kind == "int") for value in values]
        if any(cuda) and all(found or value.kind == UNKNOWN_KIND for found, value in zip(cuda, values)):
            return "cuda"  # a CUDA device or ordinal, unless a caller or the command line says otherwise
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
