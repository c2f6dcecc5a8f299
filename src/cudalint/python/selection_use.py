"""Where a `"cuda" if <available> else "cpu"` selection is no porting problem (CDL104).

- It is not a device: part of a longer string (`f"{'cuda' if on_gpu else 'cpu'}_time_total"`, a
  profiler sort key), where a device string would end there or go on with `:<index>`.
- A later binding of the same name adds the Mac's device (`device = "mps" if mps_ok else device`):
  the selection as a whole ends at mps/cuda/cpu.
- It picks the variant a test exercises: in test code, keyed on a parameter of the enclosing
  function (`def test_fit(self, cuda=False): device = torch.device("cuda") if cuda else
  torch.device("cpu")`), which the runner and the test's callers set, not the host.
- It follows the communication backend (`"cpu" if backend == "gloo" else "cuda"`, or an `if` statement
  testing the backend's name): gloo, the only backend a Mac has, takes CPU tensors.
- It is the device of distributed training: the function starts a process group whenever it runs
  (`init_process_group(...)` as a statement of its own body), and a Mac's distributed training runs on
  the CPU, the only device gloo serves there.
- It places the tensors of a collective: the function calls a torch.distributed tensor collective
  (`all_reduce`, `all_gather`, ...), or the file's own function that hands a parameter straight to one,
  and the name the selection is bound to is read only to make the
  tensors it hands them (or in the call itself). On a Mac the only backend is gloo, which takes CPU
  tensors, so the CPU is the right fallback there (torch/distributed docs, "Backends": gloo supports CPU
  tensors; MPS tensors no backend takes). A training script's `main` that places its model on that device
  and averages a metric with `all_reduce` is no such function.
- It only says where `torch.load` (or `torch.hub.load_state_dict_from_url`) puts what it reads
  (`map_location=`, as it is or as `torch.device(...)`), directly or through a name every use of which
  is that, also when an `if` statement chooses it: loading onto the CPU of a Mac is right, the code that
  moves the tensors on picks the device.
- It fills a device parameter a call left out (`self.device = sel if device is None else device`,
  `if device is None: device = sel`, `device = device or sel`) and every call of the function in the
  project passes that parameter (the project index: project/default_calls.py): the fallback never
  runs, as a "cuda" default every call overrides is never used (CDL108). A function nothing in the
  project calls is an entry point for users: its fallback counts.
- It is never used: a function's local name the selection is bound to and that nothing in the
  function reads (nor a function, class or lambda inside it; no `locals()`, `vars()`, `eval` or
  `exec` there), or, for an `if` statement's selection, a private attribute of the instance
  (`self._device`) that nothing in the module reads, nor (by the project index) any module holding a class
  derived from its class: changing it changes nothing. So is a module-level name nothing in its module reads,
  of a program, or of a module the project imports whose name no module imports or reads.
"""

from __future__ import annotations

import functools
from typing import Dict, FrozenSet, List, Optional

import libcst as cst

from cudalint.discover import is_notebook
from cudalint.python.children import arm_statements, assignments_in, code_children, enclosing_block, find_argument, nodes_in, path_to, positional_params, reads_name
from cudalint.python.context import FileContext
from cudalint.python.names import mentions_mac_path, source_of, string_value


@functools.lru_cache(maxsize=1)
def loaders() -> Dict[str, str]:
    """Each loader that takes a map_location -> the saver whose files it reads back (CDL109's catalog
    entry, whichever rules are selected: CDL104 reads it too)."""
    from cudalint.catalog import load_catalog

    catalog = load_catalog()
    return dict(catalog["CDL109"].match.get("loaders", {})) if "CDL109" in catalog else {}


@functools.lru_cache(maxsize=1)
def downloaders() -> FrozenSet[str]:
    """The loaders of weights downloaded by URL, which take a map_location as their third argument (CDL109's
    catalog entry)."""
    from cudalint.catalog import load_catalog

    catalog = load_catalog()
    return frozenset(catalog["CDL109"].match.get("downloaders", ())) if "CDL109" in catalog else frozenset()


COLLECTIVES = frozenset(f"torch.distributed.{name}" for name in (
    "all_reduce", "all_gather", "all_gather_into_tensor", "reduce", "broadcast", "gather", "scatter",
    "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
))
PROCESS_GROUP_START = "torch.distributed.init_process_group"
PROCESS_GROUP_QUERY = "torch.distributed.is_initialized"
MAX_NODES = 20000  # the largest function body scanned for the uses of a name
DEFINITIONS = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})  # their bodies run at another time


def is_not_a_porting_problem(node: cst.IfExp, ctx: FileContext) -> bool:
    return (_inside_longer_string(ctx) or _loads_only(node, ctx) or _overridden_for_mac(node, ctx) or _returns_mac_elsewhere(ctx)
            or _test_variant(node, ctx) or keyed_on_backend(node.test, ctx) or paired_with_backend(node.test, ctx)
            or serves_collectives(ctx) or _never_read(ctx)
            or fallback_never_runs(ctx) or _only_a_key(ctx))


def fallback_never_runs(ctx: FileContext) -> bool:
    """The node on top of the stack fills a parameter that defaults to None when a call leaves it out, and
    every call of its function in the project passes it (see the module's doc)."""
    stack = ctx.stack
    for depth in range(len(stack) - 2, -1, -1):
        holder, inner = stack[depth], stack[depth + 1]
        if isinstance(holder, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            return False
        name = None
        if isinstance(holder, cst.IfExp):
            name = _none_tested(holder.test, inner is holder.body)
        elif isinstance(holder, cst.If) and inner is holder.body:
            name = _none_tested(holder.test, True)
        elif isinstance(holder, cst.BooleanOperation) and isinstance(holder.operator, cst.Or) and inner is holder.right:
            name = holder.left.value if type(holder.left) is cst.Name else None
        if name is not None:
            binding = next((found for found in ctx.model.lookup(name) if isinstance(found.node, cst.Param)), None)
            return binding is not None and ctx.model.call_sites.default_never_used(binding)
    return False


def _none_tested(test: cst.BaseExpression, in_body: bool) -> Optional[str]:
    """The name `test` compares with None, where the arm it guards runs when the name is None."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.left) is not cst.Name:
        return None
    target = test.comparisons[0]
    if not (type(target.comparator) is cst.Name and target.comparator.value == "None"):
        return None
    if type(target.operator) is cst.Is:
        return test.left.value if in_body else None
    if type(target.operator) is cst.IsNot:
        return None if in_body else test.left.value
    return None


def keyed_on_backend(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """`torch.device("cpu" if backend == "gloo" else "cuda")`, `if backend == "nccl": return cuda_device()`
    / `else: return torch.device("cpu")`: the device follows the communication backend, and gloo, the only
    one a Mac has, takes CPU tensors (detectron2's comm.py and its copies, torchx's init_pg)."""
    facts = ctx.model.guards.facts
    backends = facts.mac_backends | facts.off_mac_backends
    return type(test) is cst.Comparison and len(test.comparisons) == 1 and any(
        string_value(side) in backends for side in (test.left, test.comparisons[0].comparator))


def paired_with_backend(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """The function around the selection picks the communication backend by the same test (`backend="nccl"
    if use_cuda else "gloo"`, then `torch.device("cuda") if use_cuda else torch.device("cpu")`): the device
    goes with the process group, and gloo, the only backend a Mac has, takes CPU tensors (torchrun set-up)."""
    function = ctx.model.scope.node
    if ctx.model.scope.kind != "function":
        return False
    facts = ctx.model.guards.facts
    backends = facts.mac_backends | facts.off_mac_backends
    wanted = source_of(test)
    return any(type(node) is cst.IfExp and string_value(node.body) in backends and string_value(node.orelse) in backends
               and source_of(node.test) == wanted for node in nodes_in(function.body))


def serves_collectives(ctx: FileContext, names=None) -> bool:
    """The function around the selection starts a process group, as a statement of its own body that runs
    whenever it does (`init_process_group(backend="nccl" if cuda else "gloo")`): it sets up distributed
    training, whose device on a Mac is the CPU that gloo serves. Or it calls a torch.distributed tensor
    collective and, where the selection is bound to a name (`names`: those an `if` statement's choice binds;
    else the name the expression is assigned to), every statement that reads the name makes a tensor the
    collectives are handed, or calls one: a training script's `main` that also averages a metric with
    `all_reduce` puts its model on that device too, and its selection is reported."""
    function = ctx.model.scope.node
    if ctx.model.scope.kind != "function":
        return False
    if _starts_process_group(function, ctx):
        return True
    calls = _calls_in(function.body)
    calls = [call for call in calls or () if ctx.model.resolve(call.func) in COLLECTIVES or _wraps_collective(call.func, ctx)]
    if not calls:
        return False
    if names is None:
        bound = _bound_name(ctx, _unwrapped(ctx))
        names = {bound} if bound is not None else set()
    if not names or None in names:
        return True
    handed = _copied_into({value.value for call in calls for value in _arguments(call) if type(value) is cst.Name}, function.body)
    return all(_read_only_for(function.body, name, handed, calls) for name in names)


def _starts_process_group(function: cst.FunctionDef, ctx: FileContext) -> bool:
    """A statement of the function's own body calls torch.distributed.init_process_group, not under an `if`
    other than one asking whether a group already exists (`if not dist.is_initialized():`): after it the
    function runs in a process group, whichever way; one that gloo may serve (a backend written as "nccl"
    alone starts no group on a Mac: CDL701 says so, and the device choice after it is still one)."""
    pending = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    while pending:
        statement = pending.pop()
        if type(statement) is cst.SimpleStatementLine:
            if any(type(small) is cst.Expr and type(small.value) is cst.Call
                   and ctx.model.resolve(small.value.func) == PROCESS_GROUP_START and not _nccl_only(small.value, ctx)
                   for small in statement.body):
                return True
        elif type(statement) is cst.If and isinstance(statement.body, cst.IndentedBlock):
            test = statement.test
            if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test = test.expression
            if type(test) is cst.Call and ctx.model.resolve(test.func) == PROCESS_GROUP_QUERY:
                pending.extend(statement.body.body)
    return False


def _nccl_only(call: cst.Call, ctx: FileContext) -> bool:
    """The call's backend (`backend=` or its first argument) is "nccl" whatever value reaches it."""
    arg = find_argument(call, "backend", 0)
    values = ctx.model.values(arg.value) if arg is not None else ()
    return bool(values) and all(value.kind == "str" and str(value.data).lower() == "nccl" for value in values)


def _wraps_collective(func: cst.BaseExpression, ctx: FileContext) -> bool:
    """`all_reduce(tensor)` of the file's own function that hands a parameter of its own straight to a
    torch.distributed collective (`def all_reduce(tensor, op=SUM): if is_distributed(): return
    torch.distributed.all_reduce(tensor, op)`): a collective too."""
    if type(func) is not cst.Name:
        return False
    bindings = ctx.model.lookup(func.value)
    if len(bindings) != 1 or bindings[0].kind != "def" or type(bindings[0].node) is not cst.FunctionDef:
        return False
    definition = bindings[0].node
    params = set(positional_params(definition))
    inner = ctx.model.scopes.get(id(definition))
    return any(ctx.model.resolve(call.func, inner) in COLLECTIVES
               and any(type(value) is cst.Name and value.value in params for value in _arguments(call))
               for call in _calls_in(definition.body) or ())


def _calls_in(body: cst.CSTNode) -> Optional[List[cst.Call]]:
    """The calls of a body, not of the functions and classes it defines; None past MAX_NODES nodes."""
    calls, stack, seen = [], [body], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return None
        if type(node) in DEFINITIONS:
            continue
        if isinstance(node, cst.Call):
            calls.append(node)
        stack.extend(node.children)
    return calls


def _copied_into(handed: set, body: cst.CSTNode) -> set:
    """`handed` with the names whose tensors are copied into one of them (`buf[: len(t)] = t`, `buf = t`)."""
    copies = []  # (the name stored into, the name stored)
    for statement in assignments_in(body):
        if type(statement.value) is cst.Name:
            for target in statement.targets:
                base = target.target
                while type(base) in (cst.Subscript, cst.Attribute):
                    base = base.value
                if type(base) is cst.Name:
                    copies.append((base.value, statement.value.value))
    found, grown = set(handed), True
    while grown:
        grown = False
        for into, copied in copies:
            if into in found and copied not in found:
                found.add(copied)
                grown = True
    return found


def _arguments(call: cst.Call) -> list:
    """The expressions a call is handed, the items of a list or tuple argument among them (`all_gather(out, t)`)."""
    found = []
    for arg in call.args:
        value = arg.value
        if type(value) in (cst.List, cst.Tuple):
            found.extend(element.value for element in value.elements)
        else:
            found.append(value)
    return found


def _read_only_for(body: cst.CSTNode, name: str, handed: set, calls: list) -> bool:
    """Every statement of `body` that reads `name` binds only names in `handed`, or holds one of `calls`."""
    for statement in _simple_statements(body):
        if not reads_name(statement, name, MAX_NODES):
            continue
        if type(statement) is cst.Assign and all(type(target.target) is cst.Name and target.target.value in handed
                                                  for target in statement.targets):
            continue
        if any(path_to(statement, call) is not None for call in calls):
            continue
        return False
    return True


def _simple_statements(body: cst.CSTNode):
    """The small statements of a block at any depth, with the headers of its compound statements (an if's test, a
    loop's target and iterable, a with's items) and the definitions inside it, each whole."""
    for statement in body.body if isinstance(body, (cst.IndentedBlock, cst.Module)) else [body]:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif type(statement) in DEFINITIONS:
            yield statement
        else:
            yield from _compound(statement)


def _compound(statement: cst.CSTNode):
    for child in statement.children:
        if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            yield from (_simple_statements(child) if isinstance(child, cst.IndentedBlock) else child.body)
        elif isinstance(child, (cst.Else, cst.If, cst.ExceptHandler, cst.Finally)):
            yield from _compound(child)
        else:
            yield child  # a header part: the test of an if, a loop's target and iterable, a with item


def _test_variant(node: cst.IfExp, ctx: FileContext) -> bool:
    if not _in_test_function(ctx):
        return False
    link: cst.BaseExpression = node
    while isinstance(link, cst.IfExp):
        if not _own_parameter(link.test, ctx):
            return False
        link = link.orelse
    return True


def _in_test_function(ctx: FileContext) -> bool:
    """The walk is in a function of a test module, or in a function named as a test."""
    model = ctx.model
    return model.scope.kind == "function" and (
        model.in_tests or model.scope.node.name.value.startswith("test"))


def _own_parameter(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name every binding of which is a parameter of the function the walk is in."""
    model = ctx.model
    bindings = model.lookup(test.value) if isinstance(test, cst.Name) else []
    return bool(bindings) and all(binding.kind == "param" and binding.scope is model.scope for binding in bindings)


def in_test_variant(ctx: FileContext) -> bool:
    """The node on top of the stack runs in the branch of a test that a parameter of the test picks
    (`@pytest.mark.parametrize("cuda", [False, True])`, `if cuda:` around a CUDA move): the runner and the
    test's callers choose that variant, not the host."""
    if not _in_test_function(ctx):
        return False
    stack, function = ctx.stack, ctx.model.scope.node
    for depth in range(len(stack) - 2, -1, -1):
        holder = stack[depth]
        if holder is function:
            return False
        if type(holder) is cst.If and stack[depth + 1] is holder.body and _own_parameter(holder.test, ctx):
            return True
    return False


def _inside_longer_string(ctx: FileContext) -> bool:
    stack = ctx.stack
    if len(stack) < 3:
        return False
    holder, outer = stack[-2], stack[-3]
    if isinstance(holder, cst.FormattedStringExpression) and isinstance(outer, cst.FormattedString):
        parts = list(outer.parts)
        at = next(index for index, part in enumerate(parts) if part is holder)
        before = parts[:at]
        after = parts[at + 1 :]
        if before:
            return True
        following = after[0] if after else None
        return isinstance(following, cst.FormattedStringText) and not following.value.startswith(":")
    if isinstance(holder, cst.BinaryOperation) and isinstance(holder.operator, cst.Add):
        other = holder.right if holder.left is stack[-1] else holder.left
        text = string_value(other)
        return text is not None and not (holder.left is stack[-1] and text.startswith(":"))
    return False


def _bound_name(ctx: FileContext, stack=None) -> Optional[str]:
    """The local name the node on top of `stack` (the context's by default) is assigned to."""
    stack = ctx.stack if stack is None else stack
    holder = stack[-2] if len(stack) >= 2 else None
    if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
        return holder.targets[0].target.value
    if isinstance(holder, cst.AnnAssign) and isinstance(holder.target, cst.Name):
        return holder.target.value
    return None


def _overridden_for_mac(node: cst.IfExp, ctx: FileContext) -> bool:
    """Another binding of the name (or of the instance's attribute: `self.device = torch.device("cuda" if
    ... else "cpu")` then `if torch.backends.mps.is_available(): self.device = torch.device("mps")`) the
    selection is bound to gives a Mac's device."""
    stack = _unwrapped(ctx)
    holder = stack[-2] if len(stack) >= 2 else None
    if isinstance(holder, cst.Assign) and len(holder.targets) == 1:
        target, value = holder.targets[0].target, holder.value
    elif isinstance(holder, cst.AnnAssign):
        target, value = holder.target, holder.value
    else:
        return False
    if isinstance(target, cst.Name):
        return any(
            binding.kind == "assign" and binding.value is not None and binding.value is not value
            and mentions_mac_path(binding.value)
            for binding in ctx.model.lookup(target.value)
        )
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
        return _attribute_overridden(target, stack, len(stack) - 2)
    return False


def _returns_mac_elsewhere(ctx: FileContext) -> bool:
    """The selection is returned by a function that has another return of a Mac's device."""
    stack = _unwrapped(ctx)
    holder = stack[-2] if len(stack) >= 2 else None
    return isinstance(holder, cst.Return) and returns_mac_elsewhere(ctx, holder)


def returns_mac_elsewhere(ctx: FileContext, selection: cst.CSTNode) -> bool:
    """The function the walk is in has a return of a Mac's device outside `selection` (`if
    torch.backends.mps.is_available(): return torch.device("mps")`, under a version test or not, before
    `return torch.device("cuda" if ... else "cpu")`): the function's answer already has the Mac's arm."""
    function = ctx.model.scope.node
    if not isinstance(function, cst.FunctionDef):
        return False
    pending: list = [function.body]
    seen = 0
    while pending and seen < MAX_NODES:
        node = pending.pop()
        seen += 1
        kind = type(node)
        if node is selection or kind in DEFINITIONS:
            continue
        if kind is cst.Return and node.value is not None and mentions_mac_path(node.value):
            return True
        pending.extend(code_children(node))
    return False


def _attribute_overridden(target: cst.Attribute, stack, depth: int) -> bool:
    """A later statement of the selection's block (or an `if` there) binds the same attribute of the same
    name to a Mac's device: `if torch.backends.mps.is_available(): self.device = torch.device("mps")`."""
    found = enclosing_block(stack, depth)
    if found is None:
        return False
    body, at = found
    pending = body[at + 1:]
    while pending:
        statement = pending.pop()
        if isinstance(statement, cst.If):
            pending.extend(arm_statements(statement))
            continue
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and mentions_mac_path(small.value) and any(
                    isinstance(t.target, cst.Attribute) and t.target.attr.value == target.attr.value
                    and isinstance(t.target.value, cst.Name) and t.target.value.value == target.value.value
                    for t in small.targets):
                return True
    return False


def _loads_only(node: cst.IfExp, ctx: FileContext) -> bool:
    stack = _unwrapped(ctx)  # `map_location=torch.device("cuda" if ... else "cpu")` too
    if len(stack) >= 3 and _is_map_location(stack[-2], stack[-3], ctx):
        return True
    name = _bound_name(ctx, stack)  # `device = torch.device("cuda:0" if ... else "cpu")` too
    if name is None:
        return False
    uses = _uses(ctx.model.scope.node, name, stack[-2])
    return bool(uses) and all(_maps_location(use, ctx) for use in uses)


def _maps_location(use: tuple, ctx: FileContext) -> bool:
    """A read of a name (as _uses gives it) that is a load's `map_location=`, as it is or as `torch.device(name)`."""
    _, arg, call, outer_arg, outer_call = use
    if _device_of(arg, call, ctx):
        arg, call = outer_arg, outer_call  # `map_location=torch.device(device)`
    return _is_map_location(arg, call, ctx)


def _unwrapped(ctx: FileContext) -> list:
    """The context's stack, ending at `torch.device(<the selection>)` where the selection is its argument."""
    stack = ctx.stack
    if len(stack) >= 5 and _device_of(stack[-2], stack[-3], ctx):
        return stack[:-2]
    return stack


def _device_of(arg, call, ctx: FileContext) -> bool:
    """The selection is the one argument of `torch.device(...)`."""
    return (isinstance(arg, cst.Arg) and arg.keyword is None and isinstance(call, cst.Call) and len(call.args) == 1
            and ctx.model.resolve(call.func) == "torch.device")


def _is_map_location(arg, call, ctx: FileContext) -> bool:
    if not (isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value == "map_location"
            and isinstance(call, cst.Call)):
        return False
    callee = ctx.model.resolve(call.func)
    return callee in loaders() or callee in downloaders()


def loads_only_after(node: cst.If, names, ctx: FileContext) -> bool:
    """`if torch.cuda.is_available(): map_location = torch.device("cuda")` / `else: ... "cpu"`, and every
    later read of each name the `if` chooses is a load's `map_location=` (torchsr's `load_pretrained`, which
    hands the state dict on to `load_state_dict`): where the tensors stay is the model's business."""
    if not names or None in names:
        return False
    for name in names:
        uses = _uses(ctx.model.scope.node, name, node)
        if not uses or not all(_maps_location(use, ctx) for use in uses):
            return False
    return True


def _never_read(ctx: FileContext) -> bool:
    """The selection (or `torch.device` of it) is bound to a local name of a function that nothing in the
    function reads, or to a module-level name that nothing in the module reads, of a program (a notebook, a
    script no other module of the project imports) or of a module no other module reads it from."""
    name = _bound_name(ctx, _unwrapped(ctx))
    model = ctx.model
    if name is None:
        return False
    if model.scope.kind == "function":
        return _local_unread(name, ctx)
    return model.scope.kind == "module" and _global_unread(name, ctx)


def _global_unread(name: str, ctx: FileContext) -> bool:
    """A module-level name nothing in its module reads, of a program, or of a module the project's own code
    imports whose importers, and every other module, never read the name, nor its `__all__` lists (the project
    index): dead code in the project's own module (dive-into-graphs' model files). A module nothing of the project
    imports (`pkg/config.py`) is there for its users, whose reads no index sees."""
    module = ctx.model.scope.node
    if reads_name(module, name, MAX_NODES):
        return False
    if _program(ctx):
        return True
    project, module_name = ctx.model.project, ctx.model.module_name
    return (project is not None and bool(module_name) and project.is_imported(module_name)
            and not project.read_elsewhere(f"{module_name}.{name}"))


def _local_unread(name: str, ctx: FileContext) -> bool:
    """A local name of the function the walk is in (not one it declares global or nonlocal) that nothing in
    the function reads."""
    function = ctx.model.scope.node
    return name not in _declared(function) and not reads_name(function.body, name, MAX_NODES)


def names_never_read(names, ctx: FileContext) -> bool:
    """Every name an `if` statement's selection binds is never read: a local name of the function nothing in
    it reads (as _never_read), a private attribute of the instance (`self._device`) that no code of the
    module reads, nor any module holding a class derived from its class (the project index), or a module-level
    name as _global_unread says."""
    model = ctx.model
    if names and model.scope.kind == "module":  # `if torch.cuda.is_available(): DEVICE = "cuda"` at a module's top
        return all(name is not None and name.isidentifier() and _global_unread(name, ctx) for name in names)
    if not names or model.scope.kind != "function":
        return False
    for name in names:
        if name is None:
            return False  # a return: the caller has it
        if "[" in name:
            return False  # `params["device"] = ...`: stored in a mapping, which whoever holds it reads
        head, _, attribute = name.partition(".")
        if not (_private_attribute_unread(head, attribute, ctx) if attribute else _local_unread(name, ctx)):
            return False
    return True


def _private_attribute_unread(head: str, attribute: str, ctx: FileContext) -> bool:
    """`self._device` in a method of a module-level class: no code of the module reads `._device`, and no
    module holding a class derived from this one reads it (the project index)."""
    model = ctx.model
    owner = model.scope.parent
    if (head != model.scope.self_name or "." in attribute or not attribute.startswith("_") or model.project is None
            or not model.module_name or owner is None or owner.kind != "class" or owner.parent is not model.module_scope):
        return False
    if _reads_attribute(model.module, attribute):
        return False
    return not model.project.derived_reads_private(f"{model.module_name}.{owner.node.name.value}", attribute)


def _reads_attribute(module: cst.Module, attribute: str) -> bool:
    """Some code of the module reads `<anything>.<attribute>` (a store, `x.attribute = ...`, is no read)."""
    stack: List[cst.CSTNode] = [module]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES * 10:
            return True
        if type(node) is cst.AssignTarget:
            target = node.target
            if type(target) is cst.Attribute:
                stack.append(target.value)  # `self._device = ...` stores it; `a.b._device = ...` reads `a.b`
                continue
        if type(node) is cst.Attribute and node.attr.value == attribute:
            return True
        stack.extend(code_children(node))
    return False


def _only_a_key(ctx: FileContext) -> bool:
    """The selection is bound to a local name that its function reads only as the index of a subscript
    (`key = "cpu" if not t.is_cuda else f"cuda:{t.get_device()}"`, then `tracked[key] = t`): a label for
    the device a value is on, built the same way where it is looked up; no device is chosen by it."""
    name = _bound_name(ctx, _unwrapped(ctx))
    model = ctx.model
    if name is None or model.scope.kind != "function" or name in _declared(model.scope.node):
        return False
    reads, stack, seen = 0, [(model.scope.node.body, None, None)], 0
    while stack:
        node, parent, grand = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return False
        if type(node) is cst.Name and node.value == name:
            if type(parent) is cst.AssignTarget:
                continue  # a binding of the name, not a read
            if not (type(parent) is cst.Index and type(grand) is cst.SubscriptElement):
                return False
            reads += 1
            continue
        if type(node) in DEFINITIONS:
            continue
        children = [node.value] if type(node) in (cst.Attribute, cst.Arg) else node.children
        stack.extend((child, node, parent) for child in children)
    return reads > 0


def _program(ctx: FileContext) -> bool:
    """The file is a program: a notebook, or a module that runs as one (`if __name__ == "__main__":`)
    and that no other module of the project imports (a library module's names are its users' too)."""
    if is_notebook(ctx.path):
        return True
    project, module = ctx.model.project, ctx.model.module_name
    return project is not None and bool(module) and project.is_program_only(module)


def _declared(function: cst.FunctionDef) -> set:
    """Names a function declares global or nonlocal: a binding of one is not the function's own."""
    found = set()
    stack = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            found.update(item.name.value for item in node.names)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(node.children)
    return found


def _uses(scope_node: cst.CSTNode, name: str, after: cst.CSTNode) -> List[tuple]:
    """(name node, parent, grandparent, and the two holders above) of each read of `name` that comes after
    the statement `after` in a function or module body, not in the functions, classes and lambdas inside
    it; assignment targets, attribute names and keywords are not reads."""
    body = scope_node.body if isinstance(scope_node, (cst.FunctionDef, cst.Module)) else None
    if body is None:
        return [(None, None, None, None, None)]  # unknown: a use we cannot see
    found = []
    children = body.children if isinstance(body, cst.CSTNode) else list(body)
    stack = [(child, None, None, None, None) for child in reversed(children)]
    seen, reached = 0, False
    while stack:
        node, parent, grand, great, greater = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return [(None, None, None, None, None)]
        if node is after:
            reached = True
            continue
        if isinstance(node, cst.Name) and node.value == name:
            if reached:
                found.append((node, parent, grand, great, greater))
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.AssignTarget)):
            continue
        if isinstance(node, cst.Attribute):
            children = [node.value]  # `x.device`: the attribute's name is no read
        elif isinstance(node, cst.Arg):
            children = [node.value]  # `f(device=x)`: nor is a keyword
        else:
            children = node.children
        stack.extend((child, node, parent, grand, great) for child in reversed(children))
    return found
