"""What the project's own saves write, by file name: whether a `torch.save` can put device tensors in it.

`torch.load(path)` without a map_location fails on a Mac only when the file holds CUDA storages (CDL109).
A file the project itself writes is in the format its save gives it, whatever machine made it: where that
save only ever writes host values (`{k: v.cpu() for ...}`, `self.t`, a counter, `np.load(...)` arrays,
`torch.from_numpy(...)`), a load of the same file finds no storage to map. The same file is the same
file name, as the last string literal of the path expression gives it (`os.path.join(d, "t.pt")` and
`f"{model_id}_random_text.pt"` name `t.pt` and `_random_text.pt`), through a local name assigned once
in the function (`path = os.path.join(root, "meta.pt")`). A name that is only an extension (`name +
".pth"`) names no file. A save in a test module writes the suite's own data, made on the machine that
runs the suite: it counts as host data for the loads of test modules (only).

Each module's facts hold `saver|key -> [host only, in a test module]` (project/facts.py: `saves`); the
index answers for the whole project (ProjectIndex.saved_on_host).
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, Iterable, Iterator, List, Optional

# a whole file name (`t.pt`), or the tail of a built one with a stem of its own (`_random_text.pt`)
_FILE_NAME = re.compile(r"^(?:[A-Za-z0-9][\w\-.]*|[_\-.][\w\-.]*[A-Za-z0-9]{3}[\w\-.]*)\.[A-Za-z0-9]{1,8}$")
MAX_DEPTH = 4
HOST_METHODS = frozenset({"cpu", "numpy", "tolist", "item"})
# methods whose result lives where their receiver does (casts, views, copies)
SAME_DEVICE_METHODS = frozenset({
    "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "contiguous", "clone",
    "detach", "reshape", "view", "squeeze", "unsqueeze", "permute", "transpose", "flatten", "t", "type",
})
_LOADERS = frozenset({"load"})  # `torch.load(...)`, `torch.jit.load(...)`: what the file holds
# factories that make a CPU tensor unless given a device (torch.tensor/as_tensor follow their data's device)
CPU_FACTORIES = frozenset({
    "torch.from_numpy", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.arange", "torch.linspace",
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.eye",
})


def file_key(fragments: Iterable[str]) -> Optional[str]:
    """The file name the last string fragment of a path expression gives it, or None."""
    last = None
    for fragment in fragments:
        last = fragment
    if not last:
        return None
    name = last.replace("\\", "/").rsplit("/", 1)[-1]
    return name if _FILE_NAME.match(name) else None


def saves(tree: ast.Module, resolve: Callable[[ast.AST], Optional[str]], savers: Iterable[str], testing: bool) -> Dict[str, list]:
    """`saver|key` -> [every save of that file in the module writes host values only, in a test module]."""
    savers = frozenset(savers)
    found: Dict[str, list] = {}
    for function, klass, call in _calls(tree):
        saver = resolve(call.func)
        if saver not in savers:
            continue
        positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        target = next((kw.value for kw in call.keywords if kw.arg == "f"), positional[1] if len(positional) > 1 else None)
        value = next((kw.value for kw in call.keywords if kw.arg == "obj"), positional[0] if positional else None)
        if target is None or value is None:
            continue
        local = _Locals(function, klass, tree)
        key = file_key(_fragments(target, local, 0))
        if key is None:
            continue
        host = _host(value, local, resolve, 0)
        entry = found.setdefault(f"{saver}|{key}", [1, int(testing)])
        entry[0] = min(entry[0], int(host))
    return found


def _calls(tree: ast.Module) -> Iterator[tuple]:
    """(the innermost function around it or None, the class that function is a method of or None, call)
    for every call of the module."""
    pending: List[tuple] = [(tree, None, None)]
    while pending:
        node, function, klass = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                pending.append((child, child, node if isinstance(node, ast.ClassDef) else None))
                continue
            if isinstance(child, ast.Call):
                yield function, klass, child
            pending.append((child, function, klass))


class _Locals:
    """A function's local names (or a script's module-level ones): the values assigned to each, and the
    values stored into its items (`d["muK"] = self.muK.cpu()`); the class around a method, for `self.NAME`."""

    def __init__(self, function, klass=None, module=None):
        self.function = function
        self.klass = klass
        self.scope = function if function is not None else module
        self._values: Optional[Dict[str, List[ast.AST]]] = None
        self._items: Dict[str, List[ast.AST]] = {}
        self.pending: set = set()  # names whose values are being judged now (`idx = idx[::-1]`)
        self.params = set()
        if function is not None:
            args = function.args
            self.params = {arg.arg for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if arg}

    def values(self, name: str) -> Optional[List[ast.AST]]:
        """What every binding of the name assigns, None when some binding is not an assignment."""
        if self.scope is None or name in self.params:
            return None
        if self._values is None:
            self._values, other = {}, set()
            for node in _own_nodes(self.scope):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self._values.setdefault(target.id, []).append(node.value)
                        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                            self._items.setdefault(target.value.id, []).append(node.value)
                        else:
                            other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
                elif isinstance(node, ast.With) and all(_opened(item) is not None for item in node.items if item.optional_vars):
                    for item in node.items:  # `with open(path, "wb") as f:`: the file `f` stands for is `path`
                        if isinstance(item.optional_vars, ast.Name):
                            self._values.setdefault(item.optional_vars.id, []).append(_opened(item))
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
                    targets = [node.target] if not isinstance(node, ast.With) else [i.optional_vars for i in node.items if i.optional_vars]
                    other.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
            for name_ in other:
                self._values[name_] = None  # type: ignore[assignment]
        return self._values.get(name)

    def items(self, name: str) -> List[ast.AST]:
        self.values(name)
        return self._items.get(name, [])


def _opened(item: ast.withitem) -> Optional[ast.AST]:
    """The path of `open(path, ...)` bound by a with-item to a name, else None."""
    call = item.context_expr
    if (isinstance(item.optional_vars, ast.Name) and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "open" and call.args):
        return call.args[0]
    return None


def _own_nodes(function) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes inside it."""
    pending = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                pending.append(child)


def _fragments(node: ast.AST, local: _Locals, depth: int) -> List[str]:
    """The string pieces of an expression in source order (through a local name assigned once)."""
    if depth > MAX_DEPTH:
        return []
    if isinstance(node, ast.Name):
        values = local.values(node.id)
        return _fragments(values[0], local, depth + 1) if values and len(values) == 1 else []
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    found: List[str] = []
    for child in ast.iter_child_nodes(node):
        found += _fragments(child, local, depth + 1) if not isinstance(child, ast.Constant) or isinstance(child.value, str) else []
    return found


def _host(node: ast.AST, local: _Locals, resolve, depth: int) -> bool:
    """The value holds no device tensor: numbers and strings, `.cpu()`/`.numpy()`/`.tolist()`/`.item()`
    results, `.to("cpu")`, CPU factories without a device, NumPy's results, containers and
    comprehensions of such values, and names (or the instance's attributes) only ever bound to them."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_host(element, local, resolve, depth + 1) for element in node.elts)
    if isinstance(node, ast.Dict):
        return all(value is not None and _host(value, local, resolve, depth + 1) for value in node.values)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _host(node.elt, local, resolve, depth + 1)
    if isinstance(node, ast.DictComp):
        return _host(node.value, local, resolve, depth + 1)
    if isinstance(node, ast.BinOp):
        return _host(node.left, local, resolve, depth + 1) and _host(node.right, local, resolve, depth + 1)
    if isinstance(node, ast.UnaryOp):
        return _host(node.operand, local, resolve, depth + 1)
    if isinstance(node, ast.Call):
        return _host_call(node, local, resolve, depth)
    if isinstance(node, ast.Subscript):
        return _host(node.value, local, resolve, depth + 1)  # an item or a slice of host values
    if isinstance(node, ast.Name):
        if node.id in local.pending:
            return True  # `idx = idx[::-1]`: the name's other bindings decide
        values = local.values(node.id)
        local.pending.add(node.id)
        try:
            return bool(values) and all(_host(value, local, resolve, depth + 1) for value in [*values, *local.items(node.id)])
        finally:
            local.pending.discard(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and local.function is not None:
        stores = _attribute_values(local, node.value.id, node.attr)
        return bool(stores) and all(_host(value, _Locals(method, local.klass), resolve, depth + 1) for method, value in stores)
    return False


def _host_call(call: ast.Call, local: _Locals, resolve, depth: int) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in HOST_METHODS and not call.args:
        return True
    if isinstance(func, ast.Attribute) and func.attr in SAME_DEVICE_METHODS:
        return _host(func.value, local, resolve, depth + 1)  # `torch.from_numpy(x).float()`
    if isinstance(func, ast.Attribute) and func.attr == "to":
        device = next((kw.value for kw in call.keywords if kw.arg == "device"), call.args[0] if call.args else None)
        if isinstance(device, ast.Call) and resolve(device.func) == "torch.device" and device.args:
            device = device.args[0]
        return isinstance(device, ast.Constant) and device.value == "cpu"
    if isinstance(func, ast.Name) and func.id in ("dict", "list", "tuple", "set") and not call.args and not call.keywords:
        return True  # an empty container, filled by item stores (`stats["mean"] = ...`)
    qualified = resolve(func) or ""
    if qualified in CPU_FACTORIES:
        return not any(kw.arg == "device" for kw in call.keywords)
    return qualified.startswith("numpy.")


def _attribute_values(local: _Locals, owner: str, attribute: str) -> Optional[List[tuple]]:
    """(method, value) of each store the methods of the class around the function make in
    `self.<attribute>`, when `owner` is the method's first parameter; a store of what a loader returns
    (`self.t = torch.load(...)`) reads the file back, and holds what the saves put there."""
    function = local.function
    args = function.args
    first = (args.posonlyargs or args.args)[:1]
    klass = local.klass
    if not first or first[0].arg != owner or klass is None:
        return None
    values: List[tuple] = []
    for method in klass.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in _own_nodes(method):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == attribute and isinstance(target.value, ast.Name):
                    if isinstance(node, ast.AnnAssign) and node.value is None:
                        continue
                    if isinstance(node.value, ast.Call) and getattr(node.value.func, "attr", None) in _LOADERS:
                        continue
                    values.append((method, node.value))
    return values
