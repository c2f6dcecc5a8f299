"""What an expression can be: a small, bounded constant propagation.

`values(expr)` answers with the values an expression may take — strings, string prefixes
(`f"cuda:{rank}"`), ints, bools, None, references to APIs, results of API calls, dict
literals, local functions and classes — each with the node where the value is written (`origin`), so a finding is
reported where a person would change it. Names are followed through every binding in
scope (flow-insensitive), `self.x` through the class's methods and attributes, `args.x`
through argparse/click options, `cfg["k"]` and `cfg.get("k", d)` through dict literals,
calls of local functions through their returns, conditional expressions through both
arms. Depth and fan-out are bounded; anything else is `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Tuple

import libcst as cst

from cudalint.project.facts import ENVIRONMENT_READERS, TEXT_METHODS
from cudalint.python.children import code_children, reads_name, replaces_none, unused_default
from cudalint.python.names import dotted, is_none, string_value
from cudalint.python.semantic.parametrize import parametrized

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

MAX_DEPTH = 8
MAX_VALUES = 16


@dataclass(frozen=True)
class Value:
    kind: str  # str, prefix, int, float, bool, none, ref, result (of an API call), dict, func, class, instance, unknown
    data: object
    origin: cst.CSTNode
    off_mac: bool = False  # taken only where the guard evaluator proves the host is not a Mac
    where: Optional[Tuple[str, int, int]] = None  # written in another file of the project: (path, line, column)

    def __repr__(self) -> str:
        return f"Value({self.kind}, {self.data!r}{', off_mac' if self.off_mac else ''})" if self.kind not in (
            "dict", "func", "class", "instance") else f"Value({self.kind})"

    @property
    def text(self) -> Optional[str]:
        return self.data if self.kind in ("str", "prefix") and isinstance(self.data, str) else None

    def may_be_index(self) -> bool:
        """An int that may be a device index: not a negative one (`device=-1` is the CPU in pipelines)."""
        return self.kind == "int" and (self.data is None or self.data >= 0)

    def is_cuda_device(self) -> bool:
        """"cuda", "cuda:0", or a prefix that already says "cuda:" / is "cuda" followed by more."""
        text = self.text
        if text is None:
            return False
        if self.kind == "str":
            return text == "cuda" or (text.startswith("cuda:") and text[5:].isdigit())
        return text.startswith("cuda:") or text == "cuda"


UNKNOWN_KIND = "unknown"
MAX_ROWS = 64  # rows of a table of configurations read for a key that is not known
CYCLE = object()  # the data of an unknown value that stands for the expression being worked out (a cycle back to it)
COMMAND_LINE = object()  # the data of an unknown value an option takes from the command line: a value, never None
# argparse's own conversions of an option's text (a `type=` that is one of them gives no None)
OPTION_TYPES = frozenset({"str", "int", "float"})


class Evaluator:
    def __init__(self, model: "SemanticModel"):
        self.model = model
        self.memo = {}  # (id(node), id(scope)) -> (values, the depth they were worked out at)
        self.pending = set()  # the expressions being worked out now
        self.body_facts = {}  # (what, id(function), parameter) -> unused_default's or replaces_none's answer

    def values(self, node: cst.BaseExpression, scope: "Scope", depth: int = 0) -> Tuple[Value, ...]:
        key = (id(node), id(scope))
        cached = self.memo.get(key)
        if cached is not None and cached[1] <= depth:  # worked out with at least this much depth left
            return cached[0]
        guards = self.model.guards
        if depth > MAX_DEPTH:
            return (Value(UNKNOWN_KIND, None, node),)
        if key in self.pending:
            guards.cycles += 1
            return (Value(UNKNOWN_KIND, CYCLE, node),)  # a cycle
        self.pending.add(key)
        cycles = guards.cycles
        found = self._values(node, scope, depth)[:MAX_VALUES]
        self.pending.discard(key)
        if guards.cycles != cycles:
            # What the expression can be through itself (`self.device = torch.device(self.device)` beside
            # `self.device = "cpu"`) is what it can be otherwise: the cycle back to it adds nothing.
            found = tuple(value for value in found if value.data is not CYCLE or value.origin is not node) or (
                Value(UNKNOWN_KIND, None, node),)
        if guards.may_memoize(cycles):  # the guard evaluator keeps the count of cycles for both
            self.memo[key] = (found, depth)
        return found

    # -- one expression -----------------------------------------------------------
    def _values(self, node, scope, depth) -> Tuple[Value, ...]:
        literal = _literal(node)
        if literal is not None:
            return (literal,)
        if isinstance(node, cst.Name):
            return self._name(node, scope, depth)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, scope, depth)
        if isinstance(node, cst.IfExp):
            guard = self.model.guards.guard(node.test, scope, depth + 1)
            body = [_off_mac(v, guard.when_true) for v in self.values(node.body, scope, depth + 1)]
            other = [_off_mac(v, guard.when_false) for v in self.values(node.orelse, scope, depth + 1)]
            return tuple(body + other)
        if isinstance(node, cst.BooleanOperation):
            guard = self.model.guards.guard(node.left, scope, depth + 1)
            left = self.values(node.left, scope, depth + 1)
            shielded = guard.when_true if isinstance(node.operator, cst.And) else guard.when_false
            right = [_off_mac(v, shielded) for v in self.values(node.right, scope, depth + 1)]
            # `a or b` is never a false `a` (None, False, 0, ""), `a and b` never a true one
            kept = tuple(value for value in left if _truth(value) is not isinstance(node.operator, cst.And))
            return kept + tuple(right)
        if isinstance(node, cst.BinaryOperation):
            left = string_value(node.left)
            if left is not None and isinstance(node.operator, cst.Add):
                return (Value("prefix", left, node),)
            if left is not None and isinstance(node.operator, cst.Modulo):
                return (Value("prefix", left.split("%", 1)[0], node),)
            return (Value(UNKNOWN_KIND, None, node),)
        if isinstance(node, cst.Call):
            return self._call(node, scope, depth)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, scope, depth)
        if isinstance(node, cst.Dict):
            return (Value("dict", (node, scope), node),)
        if isinstance(node, cst.NamedExpr):
            return self.values(node.value, scope, depth + 1)
        if isinstance(node, cst.Comparison):
            return self._text_test(node, scope, depth)
        return (Value(UNKNOWN_KIND, None, node),)

    def unset_environment(self, node: cst.BaseExpression, scope: "Scope", depth: int = 0) -> Optional[object]:
        """What an expression that reads the environment is where the variables it reads are not set:
        `os.getenv("FORCE_CUDA", "0") == "1"` is False, `int(os.environ.get("N", 1))` is 1; None when
        the expression reads no variable, or its value there is not known."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(node, cst.Call):
            qualified = self.model.resolve(node.func, scope)
            positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
            if qualified in ENVIRONMENT_READERS and positional and len(positional) == len(node.args):
                if len(positional) == 1:
                    return UNSET
                default = _literal(positional[1])
                if default is not None and default.kind == "none":
                    return UNSET  # os.getenv("X", None): None where the variable is not set
                return default.data if default is not None and default.kind in ("str", "int", "bool") else None
            func = node.func
            if isinstance(func, cst.Name) and func.value in ("str", "int", "bool") and len(positional) == 1 == len(node.args):
                if self.model.lookup(func.value, scope):
                    return None
                inner = self.unset_environment(positional[0], scope, depth + 1)
                if inner is None:
                    return None
                inner = None if inner is UNSET else inner
                try:
                    return {"str": str, "int": int, "bool": bool}[func.value](inner)
                except (TypeError, ValueError):
                    return None
            if isinstance(func, cst.Attribute) and func.attr.value in TEXT_METHODS and not node.args:
                inner = self.unset_environment(func.value, scope, depth + 1)
                return TEXT_METHODS[func.attr.value](inner) if isinstance(inner, str) else None
            return None
        if isinstance(node, cst.Comparison):
            wanted = _compared_texts(node)
            inner = self.unset_environment(node.left, scope, depth + 1) if wanted is not None else None
            if inner is None:
                return None
            texts, equal = wanted
            return ((inner if inner is not UNSET else None) in texts) == equal
        binding = self.model.assigned_once(node, scope)
        if binding is not None:
            return self.unset_environment(binding.value, binding.context, depth + 1)
        return None

    def _text_test(self, node: cst.Comparison, scope, depth) -> Tuple[Value, ...]:
        """`str(os.getenv("PIN_MEMORY", True)).lower() == "true"`: a string compared with literals is a
        bool for each string it may be, written where that string is (the environment's default). The bool
        a CUDA device string gives (`args.device == "cuda"` with the option's default "cuda") is taken
        only where the device is CUDA, never on a Mac: `pin_memory=(args.device == "cuda")` pins for CUDA
        alone (the "cuda" default itself is CDL108's finding)."""
        wanted = _compared_texts(node)
        if wanted is None:
            return (Value(UNKNOWN_KIND, None, node),)
        texts, equal = wanted
        return tuple(
            replace(value, kind="bool", data=(value.data in texts) == equal,
                    off_mac=value.off_mac or value.is_cuda_device())
            if value.kind == "str" else Value(UNKNOWN_KIND, None, node)
            for value in self.values(node.left, scope, depth + 1)
        )

    def _bound(self, bindings, depth) -> Tuple[Value, ...]:
        found: List[Value] = []
        for binding in bindings:
            off_mac = self.model.guards.binding_off_mac(binding, depth + 1)
            for value in self._binding_values(binding, depth):
                found.append(_off_mac(value, off_mac))
        return tuple(found)

    def _binding_values(self, binding, depth) -> Tuple[Value, ...]:
        kind = binding.kind
        if kind == "import":
            return self._project_constant(binding.qualified, binding.node) or (
                Value("ref", self.model.canonical(binding.qualified), binding.node),
            )
        if kind == "def":
            return (Value("func", binding.node, binding.node),)
        if kind == "class":
            return (Value("class", binding.node, binding.node),)
        if kind == "assign" and binding.value is not None:
            return self.values(binding.value, binding.context, depth + 1)
        if kind == "loop":
            items = self._loop_items(binding)
            if items is not None:  # `for device in ["cpu", "cuda"]:`: each element, and only those
                return tuple(value for item in items for value in self.values(item, binding.context, depth + 1))
            return (Value(UNKNOWN_KIND, None, binding.node),)
        if kind == "param":
            function = binding.scope.node
            cases = parametrized(self.model, function, binding.name, binding.context) if isinstance(
                function, cst.FunctionDef) and isinstance(binding.node, cst.Param) else None
            if cases is not None:  # `@pytest.mark.parametrize("device", DEVICES)`: each element, and only those
                return tuple(_off_mac(value, off_mac) for case, where, off_mac in cases
                             for value in self.values(case, where, depth + 1))
            klass = self._annotated_class(binding.annotation, binding.context)
            # whatever a caller passes: an instance of a class of the file where the annotation names one
            found: List[Value] = [Value("instance", (None, klass, binding.context), binding.node) if klass is not None
                                  else Value(UNKNOWN_KIND, None, binding.node)]
            # the default, evaluated where the function is defined, unless every call in the project passes one
            if (binding.value is not None and not self.model.call_sites.default_never_used(binding)
                    and not (isinstance(function, cst.FunctionDef) and self._body_fact(unused_default, function, binding.name))):
                default = self.values(binding.value, binding.context, depth + 1)
                if any(value.kind == "none" for value in default) and isinstance(function, cst.FunctionDef) and self._body_fact(
                        replaces_none, function, binding.name):
                    default = tuple(value for value in default if value.kind != "none")  # `if device is None: device = ...`
                found[:0] = default
            if _names_int(binding.annotation):
                found.append(Value("int", None, binding.node))
            return tuple(found)
        return (Value(UNKNOWN_KIND, None, binding.node),)

    def _body_fact(self, read, function: cst.FunctionDef, name: str) -> bool:
        """`read(function, name)` (unused_default, replaces_none: a walk of the body), once per parameter."""
        key = (read, id(function), name)
        found = self.body_facts.get(key)
        if found is None:
            found = self.body_facts[key] = read(function, name)
        return found

    def _loop_items(self, binding) -> Optional[List[cst.BaseExpression]]:
        """The elements a `for` loop binds its name to, one by one: a list, tuple or set written out, or a
        name bound once to one; None for anything else, and for a loop whose body tests the name or leaves
        an iteration early (`if device == "cuda" and not torch.cuda.is_available(): continue`), where which
        element reaches which line is a matter of the path taken."""
        loop = binding.node
        if type(loop) is not cst.For or type(loop.target) is not cst.Name or loop.target.value != binding.name:
            return None
        iterable = loop.iter
        if type(iterable) is cst.Name:
            bound = self.model.assigned_once(iterable, binding.context)
            iterable = bound.value if bound is not None else iterable
        if type(iterable) not in (cst.List, cst.Tuple, cst.Set) or not iterable.elements:
            return None
        if any(type(element) is not cst.Element for element in iterable.elements):
            return None  # `*others`
        if _steers(loop.body, binding.name):
            return None
        return [element.value for element in iterable.elements]

    def _annotated_class(self, annotation, scope) -> Optional[cst.ClassDef]:
        """The class of this file a parameter's annotation names (`stats: PerfStats`, `Optional["PerfStats"]`,
        `PerfStats | None`), else None."""
        node = annotation
        if isinstance(node, cst.Subscript) and (dotted(node.value) or "").rpartition(".")[2] == "Optional" \
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            node = node.slice[0].slice.value
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr) and is_none(node.right):
            node = node.left
        text = string_value(node) if isinstance(node, cst.SimpleString) else None
        name = text if text is not None and text.isidentifier() else node.value if isinstance(node, cst.Name) else None
        if name is None:
            return None
        bindings = self.model.lookup(name, scope)
        if len(bindings) != 1 or bindings[0].kind != "class" or not isinstance(bindings[0].node, cst.ClassDef):
            return None
        return bindings[0].node

    def _name(self, node: cst.Name, scope, depth) -> Tuple[Value, ...]:
        if node.value in ("True", "False", "None"):
            return (_literal(node),)
        bindings = self.model.lookup(node.value, scope)
        if not bindings:
            imported = self.model.file_imports.get(node.value)
            if imported is not None:
                return (Value("ref", self.model.canonical(imported), node),)
            return (Value(UNKNOWN_KIND, None, node),)
        # `device = "cpu" if not use_cuda else device` before the read hides the parameter it rebinds
        bindings = self.model.guards.straight_line(bindings, node)
        return self._bound(bindings, depth) or (Value(UNKNOWN_KIND, None, node),)

    def _attribute(self, node: cst.Attribute, scope, depth) -> Tuple[Value, ...]:
        qualified = self.model.resolve(node, scope)
        if qualified is not None:  # `config.DEVICE` after `from pkg import config`: the constant, too
            return self._project_constant(qualified, node) or (Value("ref", qualified, node),)
        base, name = node.value, node.attr.value
        if isinstance(base, cst.Name):
            owner = self.model.self_class(base.value, scope)
            if owner is not None:
                bindings = self.model.class_attributes.bindings(owner, name) or ()
                found = self._bound(bindings, depth)
                if found and self.model.base_binding(owner, name) is not None:
                    return found + (Value(UNKNOWN_KIND, None, node),)  # a base of another module binds it too
                return found or (Value(UNKNOWN_KIND, None, node),)
            # `args.device = "cuda"` in this function (or at module level): what it stores; where every
            # store is made under some test, also what the attribute held otherwise
            stored, settled = self.model.stores(base.value, name, scope)
            found = list(self._bound(stored, depth)) if stored else []
            if settled:
                return tuple(found) or (Value(UNKNOWN_KIND, None, node),)
            options = self.model.options.get(name)
            if options and self.may_hold_options(base, scope, depth):
                return tuple(found) + tuple(self._option_values(options, node, depth))
            if found:
                return tuple(found) + (Value(UNKNOWN_KIND, None, node),)
            for value in self.values(base, scope, depth + 1):
                if value.kind == "instance":
                    return self._instance_field(value.data, name, node, depth)
                if value.kind == "class":  # `Dispatch.kernels`: what the class body binds to the name
                    return self._class_field(value.data, name, node, depth)
        elif isinstance(base, cst.Attribute):  # `self._stats.use_cuda_events`, the attribute holding only instances
            held = self.values(base, scope, depth + 1)
            if held and all(value.kind == "instance" for value in held):
                return tuple(field for value in held for field in self._instance_field(value.data, name, node, depth))
        return (Value(UNKNOWN_KIND, None, node),)

    def _project_constant(self, qualified: Optional[str], node) -> Tuple[Value, ...]:
        """A module constant of the project that a name imported (or an attribute of an imported module)
        names, as the project index read it; () when it is none."""
        project = self.model.project
        if project is None or not qualified or not project.is_own(qualified):
            return ()
        found = project.constant(qualified)
        if found is None:
            return ()
        path, (value_kind, data, line, column) = found
        return (Value(value_kind, data, node, where=(project.display(path), line, column)),)

    def may_hold_options(self, base: cst.Name, scope, depth) -> bool:
        """`args` is the result of parse_args(), or a parameter (a function handed the parsed options)."""
        for binding in self.model.lookup(base.value, scope):
            if binding.kind == "param":
                return True
            if binding.kind == "assign" and isinstance(binding.value, (cst.Call, cst.Subscript)):
                call = binding.value.value if isinstance(binding.value, cst.Subscript) else binding.value
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
                    if call.func.attr.value in ("parse_args", "parse_known_args", "parse_intermixed_args"):
                        return True
        return False

    def _option_values(self, options, node, depth) -> Tuple[Value, ...]:
        found: List[Value] = []
        for call, where in options:
            keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
            if "default" in keywords:
                found.extend(self.values(keywords["default"], where, depth + 1))
            elif string_value(keywords.get("action", cst.Name("x"))) == "store_true":
                found.append(Value("bool", False, call))
            else:
                found.append(Value("none", None, call))
            if isinstance(keywords.get("type"), cst.Name) and keywords["type"].value == "int":
                found.append(Value("int", None, call))
            # the command line may say otherwise: text (or its conversion), never None, for an option that takes one
            found.append(Value(UNKNOWN_KIND, COMMAND_LINE if _given_a_value(keywords) else None, node))
        return tuple(found)

    def _instance_field(self, data, name, node, depth) -> Tuple[Value, ...]:
        """A field of an instance of a class of the file: made by `call` (a keyword it passes), or one a
        parameter annotated with the class holds (`call` None)."""
        call, klass, where = data
        for arg in call.args if call is not None else ():
            if arg.keyword is not None and arg.keyword.value == name:
                return self.values(arg.value, where, depth + 1)
        return self._class_field(klass, name, node, depth)

    def _class_field(self, klass: cst.ClassDef, name: str, node, depth) -> Tuple[Value, ...]:
        """What a class of the file binds to a name in its body (`kernels = {...}`), read through the class."""
        inner = self.model.scopes.get(id(klass)) if klass is not None else None
        bindings = inner.bindings.get(name) if inner is not None else None
        return self._bound(bindings, depth) if bindings else (Value(UNKNOWN_KIND, None, node),)

    def _call(self, node: cst.Call, scope, depth) -> Tuple[Value, ...]:
        qualified = self.model.resolve(node.func, scope)
        positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
        if qualified == "torch.device" and positional:
            return self.values(positional[0], scope, depth + 1)
        if qualified in ENVIRONMENT_READERS:
            default = positional[1] if len(positional) > 1 else None
            found = [Value(UNKNOWN_KIND, None, node)]
            if default is not None:
                found[:0] = self.values(default, scope, depth + 1)
            return tuple(found)
        if isinstance(node.func, cst.Name) and not self.model.lookup(node.func.value, scope):
            builtin = node.func.value
            if builtin == "int":
                return (Value("int", None, node),)
            if builtin == "str" and positional:
                inner = [_as_text(v) for v in self.values(positional[0], scope, depth + 1)]
                return tuple(v for v in inner if v is not None) or (Value(UNKNOWN_KIND, None, node),)
            if builtin == "dict":
                return (Value("dict", (node, scope), node),)
            if builtin == "getattr" and len(positional) == 3:  # the default, else whatever the object holds
                return self.values(positional[2], scope, depth + 1) + (Value(UNKNOWN_KIND, None, node),)
        func = node.func
        if isinstance(func, cst.Attribute):
            template = string_value(func.value)
            if template is not None and func.attr.value == "format":
                return (Value("prefix", template.split("{", 1)[0], node),)
            if func.attr.value in TEXT_METHODS and not node.args:  # `.lower()` of what may be a string
                return tuple(_text_method(v, func.attr.value) for v in self.values(func.value, scope, depth + 1))
            if func.attr.value == "get" and positional:
                key = string_value(positional[0])
                found: List[Value] = list(self.entry(func.value, key, scope, depth)) if key is not None else []
                if len(positional) > 1:
                    found.extend(self.values(positional[1], scope, depth + 1))
                return tuple(found) or (Value(UNKNOWN_KIND, None, node),)
        found = []
        for callee in self.values(func, scope, depth + 1):
            if callee.kind == "func":
                inner = self.model.scopes.get(id(callee.data))
                if inner is not None:
                    for returned, conditions in inner.returns:
                        off_mac = self.model.guards.conditions_off_mac(conditions, inner, depth + 1)
                        found.extend(_off_mac(v, off_mac) for v in self.values(returned, inner, depth + 1))
            elif callee.kind == "class":
                found.append(Value("instance", (node, callee.data, scope), node))
        if not found and qualified is not None:
            return (Value("result", qualified, node),)  # what an API returns: a check may know it (0 off CUDA)
        return tuple(found) or (Value(UNKNOWN_KIND, None, node),)

    def _subscript(self, node: cst.Subscript, scope, depth) -> Tuple[Value, ...]:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return (Value(UNKNOWN_KIND, None, node),)
        return self.entry(node.value, string_value(node.slice[0].slice.value), scope, depth) or (Value(UNKNOWN_KIND, None, node),)

    def _rows(self, data, depth) -> Tuple[Value, ...]:
        """`MODELS[name]` with the key not known: any row of a table of configurations (a dict literal whose
        every entry is a dict literal), each a configuration whatever key chose it. A table of anything
        else is a choice among its keys (a device per device name: CDL119 judges those): not followed."""
        holder, where = data
        if not isinstance(holder, cst.Dict) or not holder.elements or len(holder.elements) > MAX_ROWS or not all(
                isinstance(element, cst.DictElement) and isinstance(element.value, cst.Dict) for element in holder.elements):
            return ()
        return tuple(Value("dict", (element.value, where), element.value) for element in holder.elements)

    def entry(self, node: cst.BaseExpression, key: Optional[str], scope, depth: int = 0) -> Tuple[Value, ...]:
        """The values of entry `key` of the dicts `node` may be (`node[key]`, `node.get(key)`, what `f(**node)`
        passes as `key=`); with the key not known, the rows of a table of configurations (_rows). A dict taken
        only off a Mac gives values taken only off a Mac."""
        found: List[Value] = []
        for holder in self.values(node, scope, depth + 1):
            if holder.kind == "dict":
                entries = self._dict_entry(holder.data, key, depth) if key is not None else self._rows(holder.data, depth)
                found.extend(_off_mac(v, holder.off_mac) for v in entries)
        return tuple(found)

    def _dict_entry(self, data, key, depth) -> Tuple[Value, ...]:
        holder, where = data
        if isinstance(holder, cst.Dict):
            for element in holder.elements:
                if isinstance(element, cst.DictElement) and string_value(element.key) == key:
                    return self.values(element.value, where, depth + 1)
        elif isinstance(holder, cst.Call):
            for arg in holder.args:
                if arg.keyword is not None and arg.keyword.value == key:
                    return self.values(arg.value, where, depth + 1)
        return ()


UNSET = object()  # an environment variable read without a default, where it is not set (None)


def _as_text(value: Value) -> Optional[Value]:
    """What `str()` makes of a value the model knows: itself for text, `"True"` for True, and so on."""
    if value.kind in ("str", "prefix"):
        return value
    if value.kind == "bool" or (value.kind == "int" and value.data is not None):
        return replace(value, kind="str", data=str(value.data))
    if value.kind == "none":
        return replace(value, kind="str", data="None")
    return None


def _text_method(value: Value, method: str) -> Value:
    # a prefix of the lowered text is the lowered prefix (not so for strip: the end is not known)
    if value.kind == "str" or (value.kind == "prefix" and method != "strip"):
        return replace(value, data=TEXT_METHODS[method](value.data))
    return Value(UNKNOWN_KIND, None, value.origin)


def _compared_texts(node: cst.Comparison):
    """(the literal strings, True for == / in, False for != / not in) of `x == "a"`, `x in ("a", "b")`."""
    if len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    op, right = target.operator, target.comparator
    if isinstance(op, (cst.Equal, cst.NotEqual)):
        text = string_value(right)
        return (frozenset({text}), isinstance(op, cst.Equal)) if text is not None else None
    if isinstance(op, (cst.In, cst.NotIn)) and isinstance(right, (cst.Tuple, cst.List, cst.Set)) and right.elements:
        texts = [string_value(element.value) for element in right.elements]
        return (frozenset(texts), isinstance(op, cst.In)) if None not in texts else None
    return None


def _steers(body: cst.CSTNode, name: str) -> bool:
    """The loop's body leaves an iteration early (`continue`, `break`) or tests the name in an `if`."""
    pending = [body]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Continue or kind is cst.Break:
            return True
        if (kind is cst.If or kind is cst.IfExp) and reads_name(node.test, name):
            return True
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            continue
        pending.extend(code_children(node))
    return False


def _off_mac(value: Value, off_mac: bool) -> Value:
    return replace(value, off_mac=True) if off_mac and not value.off_mac else value


def _truth(value: Value) -> Optional[bool]:
    """What `bool(value)` is, where the value says: None for anything not known."""
    if value.kind == "none":
        return False
    if value.kind in ("bool", "int", "str") and value.data is not None:
        return bool(value.data)
    return None


def _names_int(annotation) -> bool:
    return isinstance(annotation, cst.Name) and annotation.value == "int"


def _literal(node) -> Optional[Value]:
    kind = type(node)
    if kind is cst.SimpleString or kind is cst.ConcatenatedString:
        text = string_value(node)
        return Value("str", text, node) if text is not None else Value(UNKNOWN_KIND, None, node)
    if kind is cst.FormattedString:
        parts = node.parts
        if all(isinstance(part, cst.FormattedStringText) for part in parts):
            return Value("str", "".join(part.value for part in parts), node)
        head = parts[0].value if parts and isinstance(parts[0], cst.FormattedStringText) else ""
        return Value("prefix", head, node)
    if isinstance(node, cst.Integer):
        try:
            return Value("int", int(node.value.replace("_", ""), 0), node)
        except ValueError:
            return Value("int", None, node)
    if isinstance(node, cst.Float):
        return Value("float", None, node)
    if kind is cst.UnaryOperation and type(node.operator) is cst.Minus and isinstance(node.expression, cst.Integer):
        inner = _literal(node.expression)  # `-1`: an int written with a sign
        return Value("int", -inner.data if inner.data is not None else None, node)
    if isinstance(node, cst.Name):
        if node.value == "True":
            return Value("bool", True, node)
        if node.value == "False":
            return Value("bool", False, node)
        if node.value == "None":
            return Value("none", None, node)
    return None


def reads_environment(node: cst.BaseExpression, model: "SemanticModel", scope: "Scope",
                      names: Optional[FrozenSet[str]] = None) -> bool:
    """The test reads an environment variable (one of `names`, when given), in the forms unset_environment
    reads (`os.getenv(NAME, ...)` inside `str()`, `.strip()`, a comparison). The variable's name is looked
    at before the call is resolved: most tests read no environment at all."""
    for _ in range(MAX_DEPTH):
        if type(node) is cst.Comparison:
            node = node.left
        elif type(node) is cst.Call:
            args = node.args
            if args and type(args[0].value) is cst.SimpleString and (names is None or string_value(args[0].value) in names):
                return model.resolve(node.func, scope) in ENVIRONMENT_READERS
            if type(node.func) is cst.Attribute and not args:
                node = node.func.value  # `.strip()`, `.lower()`
            elif len(args) == 1:
                node = args[0].value  # `str(...)`, `int(...)`
            else:
                return False
        else:
            return False
    return False


def _given_a_value(keywords) -> bool:
    """An argparse option given on the command line holds its text, or what a builtin `type=` makes of it
    (argparse's docs: the default action stores the argument; `nargs="?"` stores `const`, None unless
    given, when the option comes without one): never None. Any other action or conversion may store None."""
    if "action" in keywords or "const" in keywords or string_value(keywords.get("nargs", cst.Name("x"))) == "?":
        return False
    kind = keywords.get("type")
    return kind is None or (isinstance(kind, cst.Name) and kind.value in OPTION_TYPES)
