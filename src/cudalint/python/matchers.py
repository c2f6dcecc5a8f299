"""The catalog-driven checks: what a rule's `[rule.match]` table asks for.

Kinds of match, each a list of entries in the rule's TOML:

    refs        a qualified name (or `prefix.*`) referenced anywhere: call, decorator,
                attribute read or write, `except` clause (not a type annotation); with the
                rule's `at_import`, also the from-import that binds a reported name
    imports     a module imported outside `try/except ImportError`
    methods     `.name(...)` called on a value that is not a module (inside a class's own method
                of that name, which forwards the call, rules/overrides.toml silences it)
    attributes  `.name` read on a value that is not a module, outside if-tests
    arguments   an argument value at a keyword and/or position of a call (with
                `unless_same_device`, not on a copy between places the code shows are one device;
                with `unless_synchronized`, a list of APIs, not on a copy the next statement waits for
                with one of them, or whose source is held until the function reads a value back on the host:
                placement.synchronized_after, placement.held_until_waited; with `unless_cpu_gets`, a backend,
                not on a choice that gives the CPU that backend: backend_choice.py; with `absent`, the
                call leaves the argument out, so the API's own CUDA default applies (with `off_when_false`, a
                keyword, not on a call that passes it a false literal: `GradScaler(enabled=False)`); with `unless_methods`,
                not on a call of one of those methods, whose own rule speaks for the call:
                `x.cuda(non_blocking=True)` raises on a Mac, or never runs there; with `unless_host_on_a_mac`,
                not on `x.to(device, ...)` to a device that is the CPU wherever the host is a Mac; with
                `with_keyword` (`without_keyword`), only on a call that passes (leaves out) that keyword too;
                with `unless_callees`, not on a call of one of those APIs, which handles the argument itself)
    env         an environment variable name used with os.environ / os.getenv

A ref entry with `unless_with` (a list of APIs) is not reported where an unconditional call of one of
them runs earlier in its function or later in its own block; with `unless_beside`, not where another statement of its own block (or the
arms of an `if` there) calls one; with `unless_alternative`, not in one arm of a choice (a conditional expression, an `if`/`else`)
whose other arm names one. An entry with `entered` names a context manager whose finding is about entering it: not reported
where the `with` drops it (FileContext.never_entered). Every entry may carry `use` (the portable replacement) and `since`/`until` (torch
releases that bound when the entry applies), which the message template can name.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Tuple

import libcst as cst

from cudalint.catalog import Rule
from cudalint.python.children import arm_statements, code_children, earlier_statements, enclosing_block, find_argument, nodes_in
from cudalint.python.context import FileContext
from cudalint.findings import Safety
from cudalint.python.backend_choice import cpu_gets
from cudalint.python.compiled_calls import calls_compiled
from cudalint.python.fixplan import BREAK, FixPlan, render, template
from cudalint.python import op_coverage
from cudalint.python.autocast_regions import turned_off_without_effect
from cudalint.python.names import conjuncts, disjuncts, dotted, is_cuda_device_string, is_none, mentions_mac_path, source_of, string_value
from cudalint.python.mac_failures import falsy_constant
from cudalint.python.mps_fallback import moved_off_mps
from cudalint.python.placement import (
    asks_device, builds_on_default_device, copies_uninitialized, default_arm, cpu_on_a_mac, held_until_waited, in_module_method, kept_by_its_object, made_on_host,
    names_host, on_host, read_back_in_place, same_device_copy, synchronized_after,
)
from cudalint.python.semantic import Value
from cudalint.python.semantic.values import MAX_VALUES
from cudalint.python.visitor import Registry, ends_flow, statement_flow
from cudalint.versions import parse_version

ENV_READERS = {"os.getenv", "os.putenv", "os.environ.get", "os.environ.setdefault", "os.environ.pop", "os.unsetenv"}


@dataclass(frozen=True)
class Entry:
    rule: Rule
    spec: Mapping

    def message(self, found: str) -> str:
        template = self.spec.get("message") or self.rule.match.get("message", "{found}: " + self.rule.summary)
        fields = {"found": found, "use": "", "since": "", "until": "", "note": ""}
        fields.update({key: str(value) for key, value in self.spec.items()})
        return template.format(**fields)

    def applies(self, ctx: FileContext) -> bool:
        until = self.spec.get("until")
        return not (until and ctx.torch_version >= parse_version(until))


# -- value predicates for `arguments` entries ---------------------------------
NUMPY_FLOAT64 = {"numpy.float64", "numpy.double", "numpy.complex128", "numpy.cdouble"}
TORCH_FLOAT64 = {"torch.float64", "torch.double", "torch.complex128", "torch.cdouble"}

VALUE_TESTS: Dict[str, Callable[[Value], bool]] = {
    "true": lambda value: value.kind == "bool" and value.data is True,
    "cuda": Value.is_cuda_device,
    "numpy-float64": lambda value: value.kind == "ref" and value.data in NUMPY_FLOAT64,
    "torch-float64": lambda value: value.kind == "ref" and value.data in TORCH_FLOAT64,
    # a legacy CUDA tensor type, or its name as a string: torch.cuda.FloatTensor, "torch.cuda.FloatTensor"
    "cuda-tensor-type": lambda value: value.kind in ("str", "ref") and value.data.startswith("torch.cuda."),
    # a list (or tuple) of devices with at least one in it: `device_ids=[local_rank]`
    "device-list": lambda value: type(value.origin) in (cst.List, cst.Tuple) and bool(value.origin.elements),
    # a count or list of GPUs that asks for at least one: not 0, "0" or "" (-1: all of them)
    "some-gpus": lambda value: (value.kind == "int" and value.data != 0) or (value.kind == "str" and value.data.strip() not in ("", "0")),
}


def matching_values(spec: Mapping, node: cst.BaseExpression, ctx: FileContext) -> List[Value]:
    """The values an argument can take that the entry looks for — through names, attributes,
    options and config literals as surely as a literal — skipping values only taken off a Mac."""
    if spec.get("value", "any") == "any" and "values" not in spec:
        return [Value("unknown", None, node)]
    return _wanted(spec, ctx.model.values(node))


def _wanted(spec: Mapping, values) -> List[Value]:
    if "values" in spec:
        wanted = spec["values"]
        test = lambda value: value.kind == "str" and value.data in wanted  # noqa: E731
    else:
        test = VALUE_TESTS[spec["value"]]
    return [value for value in values if not value.off_mac and test(value)]


# Conditions that read the argument's own expression or the call's place: a keyword spread from a dict
# (`f(**options)`) is not judged where an entry has one of them.
SPREAD_UNREAD = frozenset({"unless_empty", "unless_none", "unless_same_device", "unless_synchronized", "unless_host_on_a_mac",
                           "unless_cpu_gets", "unless_uncast_region", "entered", "absent"})


def _report_spread(entry: Entry, call: cst.Call, names, ctx: FileContext) -> None:
    """A keyword the call receives from a dict spread into it (`from_pretrained(**config["model"])` with
    `"attn_implementation": "flash_attention_2"` in that dict): reported where the entry is written."""
    spec = entry.spec
    if spec.get("value", "any") == "any" and "values" not in spec or SPREAD_UNREAD & spec.keys():
        return
    if "unless_callees" in spec:
        names = names if names is not None else _callee_names(call.func, ctx)
        if any(_callee_matches(callee, call.func, ctx, names) for callee in spec["unless_callees"]):
            return
    for arg in call.args:
        if arg.star != "**":
            continue
        spread = f"{source_of(call.func)}(**{source_of(arg.value)})"
        for value in _wanted(spec, ctx.model.entry_values(arg.value, spec["keyword"])):
            if value.where is None and isinstance(value.origin, cst.CSTNode) and not _read_where_written(entry, value.origin, ctx):
                _report_at_origin(entry, value, spread, arg, f"{spread} as {spec['keyword']}=", ctx)


def _read_where_written(entry: Entry, origin: cst.CSTNode, ctx: FileContext) -> bool:
    """The value is written as the entry's own keyword of a call the entry reads directly (`dict(pin_memory=True)`
    with a `callee = "*"` entry, spread into a call later): reported there, once."""
    path = ctx.model.module_scope.path_to(origin) or []
    arg, call = (path[-2], path[-3]) if len(path) >= 3 else (None, None)
    if type(arg) is not cst.Arg or arg.keyword is None or arg.keyword.value != entry.spec["keyword"] or type(call) is not cst.Call:
        return False
    names = _callee_names(call.func, ctx)
    return _callee_matches(entry.spec.get("callee", "*"), call.func, ctx, names) and not any(
        _callee_matches(callee, call.func, ctx, names) for callee in entry.spec.get("unless_callees", ()))


def _report_at_origin(entry: Entry, value: Value, reaching: str, used: cst.CSTNode, use: str, ctx: FileContext) -> None:
    """A value written elsewhere in the file: reported where a person would change it, the use as related."""
    written = source_of(value.origin)
    ctx.report(entry.rule.code, value.origin, entry.message(f"{written} (reaching {reaching})"),
               related=((used, f"{written} reaches {use} here"),))


class MatchIndex:
    """All match entries of the selected rules, indexed for constant-time lookups."""

    def __init__(self, rules: Iterable[Rule], check_roots: Mapping[str, Tuple[FrozenSet[str], bool]] = {}):
        self.refs: Dict[str, Entry] = {}
        self.ref_prefixes: Dict[str, Entry] = {}
        self.imports: Dict[str, Entry] = {}
        self.methods: Dict[str, List[Entry]] = {}
        self.attributes: Dict[str, List[Entry]] = {}
        self.arguments: List[Entry] = []
        self.env: Dict[str, Entry] = {}
        self.env_prefixes: List[Tuple[str, Entry]] = []
        self.words: set = set()  # names, attributes, keywords or imports a file must mention
        self.called: set = set()  # method names a check reads only as the callee of a call (`x.cuda()`)
        # Words that matter only in a file importing one of some modules (word -> those modules): the
        # words of a call whose callee is a qualified name (`torch.*` with dtype=np.float64).
        self.rooted: Dict[str, set] = {}
        # Words that matter only as part of a name that resolves under one of some modules (a ref's, a
        # named callee's: word -> those modules); see analyze._mentions.
        self.resolved: Dict[str, set] = {}
        # Words a check reads as a string's value (a device, an environment variable's name, an argument's
        # value): such a string begins with one (`"cuda:0"`, `"NCCL_DEBUG"`, `f"cuda:{rank}"`'s first part).
        self.string_words: set = {"cuda"}
        self.text_words: set = set()  # words a check searches for anywhere in a string (a message, a command line)
        self.keyword_words: set = set()  # keyword-argument names a check reads (`pin_memory=`)
        # The last part of each module an import check reads -> the libraries' top-level names: they count
        # only as part of an import of one (or a name under one), and never for a project's own package.
        self.import_words: Dict[str, set] = {}
        self.ref_words: set = set()  # last components of ref entries
        # Words that count only in a file also holding one of some others (a rule's `words_with`): word ->
        # those companions, for the words no other entry reads alone.
        self.companions: Dict[str, FrozenSet[str]] = {}
        needing: Dict[str, set] = {}
        self._alone: set = set()  # the words some entry reads without a companion
        self.prefix_words: set = set()  # last components of `prefix.*` ref entries
        for rule in rules:
            match = rule.match
            for spec in match.get("refs", ()):
                name = spec["name"]
                if name.endswith(".*"):
                    self.ref_prefixes[name[:-2]] = Entry(rule, spec)
                    self.prefix_words.add(name[:-2].rsplit(".", 1)[-1])
                else:
                    self.refs[name] = Entry(rule, spec)
                    self.ref_words.add(name.rsplit(".", 1)[-1])
                self._under(_reference_word(name), _root(name), self.resolved)
            for spec in match.get("imports", ()):
                self.imports[spec["module"]] = Entry(rule, spec)
                word = spec["module"].rsplit(".", 1)[-1]
                self.import_words.setdefault(word, set()).add(spec["module"].split(".", 1)[0])
            for spec in match.get("methods", ()):
                self.methods.setdefault(spec["name"], []).append(Entry(rule, spec))
                self.called.add(spec["name"])  # _check_call reads a method only where it is called
            for spec in match.get("attributes", ()):
                self.attributes.setdefault(spec["name"], []).append(Entry(rule, spec))
                self._under(spec["name"], spec.get("root"), self.rooted)  # `root`: only in a file importing it
            for spec in match.get("arguments", ()):
                self.arguments.append(Entry(rule, spec))
                self.string_words.update(spec.get("values", ()))
                root = _root(spec["callee"])  # a named callee is a qualified name: its words need its module
                if spec.get("words"):
                    for word in spec["words"]:
                        self._under(word, root, self.rooted)
                elif "*" in spec["callee"].rsplit(".", 1)[-1]:
                    self.keyword_words.add(spec["keyword"])  # any callee: only the keyword tells
                else:
                    self._under(_argument_word(spec), root, self.resolved)
            for spec in match.get("env", ()):
                name = spec["name"]
                if name.endswith("*"):
                    self.env_prefixes.append((name[:-1], Entry(rule, spec)))
                    self.string_words.add(name[:-1])
                else:
                    self.env[name] = Entry(rule, spec)
                    self.string_words.add(name)
            # a custom check's modules: whether its words are parts of the names it resolves
            roots, names = check_roots.get(match.get("check"), (frozenset(), False))
            with_ = match.get("words_with", ())
            own = match.get("word_companions", {})  # a word's own companions, in place of words_with
            for word in match.get("words", ()):
                if not word.isidentifier():
                    self.text_words.add(word)
                else:
                    companions = own.get(word, with_)
                    for root in roots or (None,):
                        self._under(word, root, self.resolved if names else self.rooted, alone=not companions)
                    if companions:
                        needing.setdefault(word, set()).update(companions)
            self.string_words.update(match.get("values", ()))  # strings a check compares values with
            self.text_words.update(match.get("texts", ()))  # words a check reads inside strings, identifiers too
        self.words.discard("")
        read_alone = self._alone | self.called | self.keyword_words | self.string_words | self.text_words | set(self.import_words)
        self.companions = {word: frozenset(wanted) for word, wanted in needing.items() if word not in read_alone}
        self.called -= self.words  # a word some check reads anywhere counts anywhere
        self.import_words.pop("", None)
        self.rooted = {word: roots for word, roots in self.rooted.items() if word and word not in self.words}
        self.resolved = {word: roots for word, roots in self.resolved.items()
                         if word and word not in self.words and word not in self.rooted}

    def _under(self, word: str, root: Optional[str], table: Dict[str, set], alone: bool = True) -> None:
        """A word that counts only as `table` says, for module `root` (anywhere, when root is None);
        `alone`: read without a companion."""
        if alone:
            self._alone.add(word)
        if root is None:
            self.words.add(word)
        else:
            table.setdefault(word, set()).add(root)

    def may_be_ref(self, node: cst.CSTNode, imported: Mapping[str, str]) -> bool:
        """A cheap test before resolving: the last name must be one a ref entry ends with (or the
        one before it a `prefix.*` entry's), and a bare name must be imported somewhere in the file."""
        if type(node) is cst.Name:
            return node.value in imported
        last = node.attr.value
        if last in self.ref_words:
            return True
        before = node.value
        name = before.value if isinstance(before, cst.Name) else before.attr.value if isinstance(before, cst.Attribute) else None
        if name in self.prefix_words:
            return True
        # `import torch.cuda.nvtx as nv; nv.range_push()`: the alias hides the prefix's last part
        target = imported.get(name) if isinstance(before, cst.Name) else None
        return target is not None and target.rsplit(".", 1)[-1] in self.prefix_words

    def ref(self, qualified: str) -> Optional[Entry]:
        entry = self.refs.get(qualified)
        if entry is not None:
            return entry
        head = qualified
        while "." in head:
            head = head.rsplit(".", 1)[0]
            if head in self.ref_prefixes:
                return self.ref_prefixes[head]
            if head in self.refs:
                return None  # a known API's attribute (`torch.cuda.Event().record`) is reported at the API
        return None

    def env_entry(self, name: str) -> Optional[Entry]:
        entry = self.env.get(name)
        if entry is not None:
            return entry
        for prefix, candidate in self.env_prefixes:
            if name.startswith(prefix):
                return candidate
        return None


def _reference_word(name: str) -> str:
    """A word every file using a qualified name contains (each part shows in its import or its use),
    chosen to be rare: `cuda` or `cudnn` when the name has it, else the last part."""
    parts = name.rstrip(".*").split(".")
    for rare in ("cuda", "cudnn"):
        if rare in parts:
            return rare
    return parts[-1]


def _root(name: str) -> Optional[str]:
    """The module a qualified name (or callee pattern) must be imported from: its first part; None for a
    pattern that matches any callee (`*`, `.method`, a wildcard first part)."""
    first = name.split(".", 1)[0]
    return first if first.isidentifier() else None


def _argument_word(spec: Mapping) -> str:
    """A word any call to a named callee contains: the callee's own name."""
    return spec["callee"].rsplit(".", 1)[-1]


def register(index: MatchIndex, registry: Registry) -> None:
    if index.refs or index.ref_prefixes:
        registry.on(cst.Attribute, lambda node, ctx: _check_ref(index, node, ctx))
        registry.on(cst.Name, lambda node, ctx: _check_ref(index, node, ctx))
    if index.imports:
        registry.on(cst.Import, lambda node, ctx: _check_import(index, node, ctx))
        registry.on(cst.ImportFrom, lambda node, ctx: _check_import_from(index, node, ctx))
    if index.methods or index.arguments:
        registry.on(cst.Call, lambda node, ctx: _check_call(index, node, ctx))
    if index.attributes:
        registry.on(cst.Attribute, lambda node, ctx: _check_attribute(index, node, ctx))
    if index.env or index.env_prefixes:
        registry.on(cst.SimpleString, lambda node, ctx: _check_env(index, node, ctx))


def _is_reference(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    """A Name/Attribute that is a whole expression, not part of a longer chain or a binding."""
    if isinstance(parent, cst.Attribute):
        return False  # either the `.attr` Name or the `.value` of a longer chain
    if isinstance(node, cst.Name):
        if isinstance(parent, (cst.Arg, cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)):
            return isinstance(parent, cst.Arg) and parent.value is node
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)):
            return False
    return True


def _check_ref(index: MatchIndex, node: cst.CSTNode, ctx: FileContext) -> None:
    if not index.may_be_ref(node, ctx.model.file_imports):
        return
    if ctx.import_depth or not _is_reference(node, ctx.parent):
        return
    qualified = ctx.imports.resolve(node)
    if qualified is None:
        return
    entry = index.ref(qualified)
    if entry is None or not entry.applies(ctx):
        return
    if ctx.test_depth and entry.rule.silenced_in_tests:
        return  # a query inside an if-test decides, it does not move data
    if entry.rule.match.get("called") and not (isinstance(ctx.parent, cst.Call) and ctx.parent.func is node):
        return  # named, not called: an isinstance tuple, a saved original, a monkeypatch target
    if (isinstance(ctx.parent, (cst.AssignTarget, cst.AnnAssign)) and ctx.parent.target is node
            and not entry.rule.match.get("assigned")):
        return  # `torch.cuda.empty_cache = torch.xpu.empty_cache`: a monkeypatch binds the API, it uses nothing
    if "enabled_by" in entry.spec and _disabled_on_mac(node, entry.spec["enabled_by"], ctx):
        return  # `GradScaler(enabled=torch.cuda.is_available() and fp16)`: off on a Mac, it does nothing there
    if entry.spec.get("entered") and isinstance(ctx.parent, cst.Call) and ctx.never_entered(len(ctx.stack) - 2):
        return  # `with torch.cuda.amp.autocast() and torch.no_grad():` enters only no_grad
    where = entry.spec.get("unless_uncast_region")
    if (where and isinstance(ctx.parent, cst.Call) and ctx.parent.func is node and turned_off_without_effect(
            find_argument(ctx.parent, where.get("keyword"), where.get("position")), len(ctx.stack) - 2, ctx)):
        return  # CUDA autocast kept out of a region MPS autocast would cast nothing in
    where = entry.spec.get("unless_none_on_mac")
    if (where and isinstance(ctx.parent, cst.Call) and ctx.parent.func is node
            and _none_on_mac(find_argument(ctx.parent, where.get("keyword"), where.get("position")), ctx)):
        return  # `torch.cuda.stream(s if device.type == "cuda" else None)`: given None it does nothing
    related = ()
    if entry.rule.match.get("reaches_device"):
        sink = _default_made_on_device(node, ctx)
        if sink is None and not _dtype_reaches_device(node, ctx):
            return  # a float64 tensor made and kept on the CPU (a schedule, NumPy interop) is fine
        if sink is not None:  # `def f(y0, dtype=torch.float64): torch.as_tensor(t, dtype=dtype, device=y0.device)`
            related = ((sink, f"{source_of(sink.func)}(...) makes a tensor of the default's dtype on a device here"),)
    if _argued_by_rule(node, entry.rule, ctx):
        return  # `torch.set_default_dtype(torch.float64)`: the rule's argument entry reports it, names too
    if "unless_with" in entry.spec and _made_unconditionally(entry.spec["unless_with"], ctx):
        return  # `torch.manual_seed(s)` just before already seeded every device
    if "unless_beside" in entry.spec and _beside_call(entry.spec["unless_beside"], ctx):
        return  # `torch.mps.empty_cache()` in the same block: the code already does it for MPS
    if "unless_caught_with" in entry.spec and _caught_with(entry.spec["unless_caught_with"], ctx):
        return  # `except (RuntimeError, torch.cuda.OutOfMemoryError):` catches a Mac's error by its base class
    if "unless_alternative" in entry.spec and _alternative_arm(entry.spec["unless_alternative"], ctx):
        return  # `CppExtension if suffix == "cpu" else CUDAExtension`: the fallback is built where the other arm is taken
    if any(isinstance(holder, cst.Annotation) for holder in ctx.stack):
        return  # a type annotation names the API; it makes nothing and runs nothing
    if _alias_called_off_mac(node, ctx):
        return  # `get_reserved = torch.cuda.memory_reserved`, called only where CUDA is
    depth = len(ctx.stack) - 1
    if _cuda_table_entry(node, ctx) or _in_assert(ctx, "msg") or ctx.compared(depth) or ctx.names_class(depth):
        return
    if entry.rule.match.get("unless_listed") and _listed(ctx):
        return  # `TENSOR_TYPES = [torch.FloatTensor, torch.cuda.FloatTensor]`: types named in a table, made nowhere
    before = len(ctx.hits)
    ctx.report(entry.rule.code, node, entry.message(qualified), _reference_fix(entry, node, ctx), related)
    if entry.rule.match.get("at_import") and isinstance(node, cst.Name) and len(ctx.hits) > before:
        _report_import_of(node, entry, qualified, ctx)


def _alias_called_off_mac(node: cst.CSTNode, ctx: FileContext) -> bool:
    """The reference is bound to a module-level name (`get_reserved = torch.cuda.memory_reserved`, an arm of a
    version test) that the project calls only where the host is not a Mac (the index's reachability, as for
    a function the module defines)."""
    model, holder = ctx.model, ctx.parent
    if (type(holder) is not cst.Assign or holder.value is not node or len(holder.targets) != 1
            or type(holder.targets[0].target) is not cst.Name or model.scope is not model.module_scope):
        return False
    project = model.project
    return project is not None and bool(model.module_name) and project.is_cuda_only(f"{model.module_name}.{holder.targets[0].target.value}")


def _own_method(func: cst.Attribute, ctx: FileContext) -> bool:
    """`self.NAME(...)` where the enclosing class (or a base of it in the file) defines NAME."""
    if type(func.value) is not cst.Name:
        return False
    owner = ctx.model.self_class(func.value.value, ctx.model.scope)
    return owner is not None and ctx.model.class_attributes.defines_method(owner, func.attr.value)


def _argued_by_rule(node: cst.CSTNode, rule: Rule, ctx: FileContext) -> bool:
    """The reference is an argument of a call one of the rule's own `arguments` entries is about."""
    holder = ctx.parent
    if not (isinstance(holder, cst.Arg) and holder.value is node and len(ctx.stack) >= 3):
        return False
    call = ctx.stack[-3]
    callees = [spec["callee"] for spec in rule.match.get("arguments", ()) if "." in spec["callee"] and not spec["callee"].startswith(".")]
    return isinstance(call, cst.Call) and bool(callees) and ctx.model.resolve(call.func) in callees


def _none_on_mac(arg: Optional[cst.Arg], ctx: FileContext) -> bool:
    """The argument is None wherever the call runs on a Mac: None itself, a conditional expression whose
    other arm is taken only off a Mac (`torch.cuda.Stream() if device.type == "cuda" else None`), or a name
    that holds None and otherwise only values bound off a Mac. A value made under a user's option (`torch.cuda.
    Stream() if use_streams else None`) or unconditionally is no None: ported, it would reach the call."""
    if arg is None or arg.star:
        return False
    value, model = arg.value, ctx.model
    if is_none(value):
        return True
    if type(value) is cst.IfExp and (is_none(value.body) or is_none(value.orelse)):
        guard = model.guard(value.test)
        return guard.when_false if is_none(value.body) else guard.when_true
    if type(value) not in (cst.Name, cst.Attribute):
        return False
    values = model.values(value, model.scope, 1)
    return (0 < len(values) < MAX_VALUES and any(held.kind == "none" for held in values)
            and all(held.kind == "none" or held.off_mac for held in values))


def _disabled_on_mac(node: cst.CSTNode, where: Mapping[str, object], ctx: FileContext) -> bool:
    """The call of `node` is given an `enabled` argument that is false on every Mac: the guard evaluator
    says so, or the code before turned it off there (`if not torch.cuda.is_available(): amp = False`)."""
    call = ctx.parent
    if not (isinstance(call, cst.Call) and call.func is node):
        return False
    arg = find_argument(call, where.get("keyword"), where.get("position"))
    return arg is not None and ctx.false_wherever_mac(arg.value)


def _cuda_table_entry(node: cst.CSTNode, ctx: FileContext) -> bool:
    """`{"cpu": ..., "cuda": torch.profiler.ProfilerActivity.CUDA}`: named, not called, as the entry a
    dispatch table keeps for the "cuda" device type, it is picked only when the device is CUDA. A key a table
    is written with (`{torch.cuda.Event: reduce_event}`, `dispatch_table[torch.cuda.Event] = reduce_event`) is
    named too: a type registered for the objects of it, which exist only where CUDA does. (A lookup with it,
    `table[torch.cuda.Stream]`, is a use: tests/test_type_positions.py.)"""
    holder = ctx.parent
    if isinstance(holder, cst.DictElement):
        return (holder.value is node and string_value(holder.key) == "cuda") or holder.key is node
    stack = ctx.stack  # `dispatch_table[torch.cuda.Event] = reduce_event`: a key registered, by what it names
    return (len(stack) >= 5 and type(holder) is cst.Index and type(stack[-3]) is cst.SubscriptElement
            and type(stack[-4]) is cst.Subscript and len(stack[-4].slice) == 1
            and type(stack[-5]) is cst.AssignTarget and stack[-5].target is stack[-4])


def _listed(ctx: FileContext) -> bool:
    """The node is an element of a list, tuple or set written as the value a name (or attribute) is bound
    to: a table of the types code compares with (`type(x) in TENSOR_TYPES`), which names them, not a call
    that makes one."""
    stack = ctx.stack
    return (len(stack) >= 4 and type(stack[-2]) is cst.Element and type(stack[-3]) in (cst.List, cst.Tuple, cst.Set)
            and type(stack[-4]) in (cst.Assign, cst.AnnAssign) and stack[-4].value is stack[-3])


def _in_assert(ctx: FileContext, part: str) -> bool:
    """Inside the `part` ("test" or "msg") of an `assert` around the node: its message runs only when
    the assertion already failed."""
    stack = ctx.stack
    for depth in range(len(stack) - 2, -1, -1):
        holder = stack[depth]
        if isinstance(holder, cst.Assert):
            return getattr(holder, part) is stack[depth + 1]
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseSuite)):
            return False
    return False


def _report_import_of(node: cst.Name, entry: Entry, qualified: str, ctx: FileContext) -> None:
    """`from torch.cuda.amp import custom_fwd` then `@custom_fwd`: for a rule about a namespace
    (`at_import`), the import is where a port names the portable one, so it is reported too, once per
    statement, when a use of what it binds is reported."""
    for binding in ctx.model.lookup(node.value):
        if binding.kind == "import" and isinstance(binding.node, cst.ImportFrom):
            if ctx.model.canonical(binding.qualified or "") == qualified:
                ctx.report(entry.rule.code, binding.node, entry.message(f"the import of {qualified}"))


def _oldest_allowed(ctx: FileContext) -> Tuple[int, ...]:
    """A fix must work on every release the project allows: the oldest one decides `fix_since`."""
    return getattr(ctx.torch_version, "floor", None) or ctx.torch_version


def _reference_fix(entry: Entry, node: cst.CSTNode, ctx: FileContext) -> Optional[FixPlan]:
    """A ref entry's `fix`: the portable name, from the release `fix_since`, optionally
    with a first argument (`torch.cuda.amp.autocast(...)` -> `torch.autocast("cuda", ...)`)
    or as a guarded statement (`if torch.accelerator.is_available():` then the call).
    `fix_params` names the original's parameters in order and `fix_positional` how many of
    them the replacement takes by position: the call's arguments are rewritten to land on
    the same parameters (`autocast(True)` -> `autocast("cuda", enabled=True)`); a call
    that cannot be mapped, or a reference that is not called, gets no fix."""
    spec = entry.spec
    target = spec.get("fix")
    since = parse_version(spec.get("fix_since", "0"))
    if not target or _oldest_allowed(ctx) < since:
        return None
    unless = spec.get("fix_unless_attribute")
    if unless and unless in _attribute_names(ctx):
        return None  # `.cuda_stream` read somewhere: the replacement (a torch.Stream) has no such attribute
    safety = Safety(spec.get("fix_safety", entry.rule.fix if entry.rule.fix != "none" else "unsafe"))
    new_name = template(target)
    description = f"use {target}"
    parent = ctx.parent
    call = parent if isinstance(parent, cst.Call) and parent.func is node else None
    args = list(call.args) if call is not None else []
    if "fix_params" in spec:
        mapped = _mapped_arguments(call, spec["fix_params"], spec.get("fix_positional", 0)) if call is not None else None
        if mapped is None:
            return None
        args = mapped
    rest = "".join(render(arg) for arg in args)
    if "fix_first_arg" in spec:
        if call is None:
            return None
        first = template(spec["fix_first_arg"])
        opened = render(call.whitespace_before_args)
        text = f"{new_name}({opened}{first}{', ' if args else ''}{rest})"
        return FixPlan(safety, f"use {target}({spec['fix_first_arg']}, ...)", [(call, text)], since)
    if "fix_guard" in spec:
        if call is None:
            return None
        guard = template(spec["fix_guard"])
        statement = ctx.stack[-4] if len(ctx.stack) >= 4 else None
        expression = ctx.stack[-3] if len(ctx.stack) >= 3 else None
        described = f"{description}, guarded by {spec['fix_guard']}"
        if isinstance(expression, cst.Expr) and isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            return FixPlan(safety, described, [(expression, f"if {guard}:{BREAK}{new_name}({rest})")], since)
        if "fix_default" in spec:  # a value: the guarded call, else what a host without an accelerator has
            return FixPlan(safety, described, [(call, f"({new_name}({rest}) if {guard} else {spec['fix_default']})")], since)
        return None
    if "fix_params" in spec:
        text = f"{new_name}{render(call.whitespace_after_func)}({render(call.whitespace_before_args)}{rest})"
        return FixPlan(safety, description, [(call, text)], since)
    return FixPlan(safety, description, [(node, new_name)], since)


def _attribute_names(ctx: FileContext) -> set:
    """Every `.name` the file reads, collected once per file."""
    names = ctx.check_state.get("fix-attribute-names")
    if names is None:
        names = set()
        stack = [ctx.stack[0]]  # read-only, without libcst's rebuilding traversal
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                names.add(node.attr.value)
            stack.extend(code_children(node))
        ctx.check_state["fix-attribute-names"] = names
    return names


def _mapped_arguments(call: cst.Call, params: List[str], positional: int) -> Optional[List[cst.Arg]]:
    """The call's arguments for the replacement: each lands on the parameter it had, by position
    for the first `positional` parameters, else by keyword; None when one cannot be placed."""
    by_position: Dict[int, cst.Arg] = {}
    keywords: List[cst.Arg] = []
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
        if arg.keyword is None:
            index += 1
        if name not in params:
            return None
        place = params.index(name)
        bare = arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if place < positional:
            by_position[place] = bare.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
        else:
            keywords.append(bare.with_changes(keyword=cst.Name(name), equal=_EQUAL))
    if sorted(by_position) != list(range(len(by_position))):
        return None  # a later positional parameter given without an earlier one
    ordered = [by_position[place] for place in sorted(by_position)] + keywords
    return [arg.with_changes(comma=_COMMA) for arg in ordered[:-1]] + ordered[-1:]


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


HOST_SIDE = {"cpu", "numpy", "item", "tolist", "float", "half", "bfloat16", "int", "long"}
# Calls that answer a question about a dtype and make no tensor (torch docs: torch.finfo, torch.iinfo,
# torch.promote_types, torch.can_cast).
DTYPE_QUERIES = frozenset({"torch.finfo", "torch.iinfo", "torch.promote_types", "torch.can_cast"})


def _dtype_reaches_device(node: cst.CSTNode, ctx: FileContext) -> bool:
    """A dtype handed to a call can reach the device unless the code shows the tensor stays on the
    host: made with `device="cpu"` (or moved with `.to("cpu", dtype)`), or narrowed or turned into
    NumPy/Python at once (`torch.linspace(..., dtype=torch.float64).float()`, `.numpy()`, `.item()`). A dtype outside a
    call (a comparison, an annotation) makes no tensor. `x.cpu().to(torch.float64)` is host-side too. An arm of a
    choice by a test that does not ask for the device (`.to(torch.int64 if exact else torch.float64)`) is handed
    to the call as the choice is."""
    stack = ctx.stack
    while len(stack) >= 3 and type(stack[-2]) is cst.IfExp and stack[-2].test is not stack[-1] and not asks_device(stack[-2].test):
        taken = default_arm(stack[-2], ctx.model, ctx.model.scope)
        if taken is not None and taken is not stack[-1]:
            return False  # `torch.float64 if output_f64 else torch.float32` with `output_f64=False`: a caller's opt-in
        node, stack = stack[-2], stack[:-1]
    holder = stack[-2] if len(stack) >= 2 else None
    if isinstance(holder, cst.Call) and holder.func is node:  # torch.DoubleTensor(...)
        depth = len(stack) - 2
    elif isinstance(holder, cst.Arg) and len(stack) >= 3 and isinstance(stack[-3], cst.Call):
        depth = len(stack) - 3
    else:
        return False
    call = stack[depth]
    func = call.func
    converts = isinstance(func, cst.Attribute) and func.attr.value in ("to", "type") and not ctx.model.is_module_ref(func.value)
    if converts:  # `x.to(torch.float64)`: a conversion of a tensor that exists
        if on_host(ctx.model, func.value, ctx.model.scope) and find_argument(call, "device", None) is None:
            return False  # `x.cpu().detach().to(torch.float64)`: cast where the tensor is, the CPU
        first = next((arg.value for arg in call.args if arg.keyword is None and not arg.star), None) if func.attr.value == "to" else None
        if first is not None and first is not node and names_host(ctx.model, first):
            return False  # `trial.to("cpu", torch.float64)`: the device comes first, and it is the host
    if ctx.model.resolve(call.func) in DTYPE_QUERIES:
        return False  # torch.finfo(torch.float64).eps: a question about the dtype makes no tensor
    if _mps_aware_function(call, ctx):
        return False  # lerobot's `get_safe_dtype(torch.float64, device.type)`: the function picks float32 on MPS
    if isinstance(func, cst.Attribute) and func.attr.value.startswith("assert") and isinstance(func.value, cst.Name):
        return False  # `self.assertEqual(q.dtype, torch.complex128)`: a test's comparison makes no tensor
    if made_on_host(ctx.model, call, stack[:depth]) and not _kept_on_device(call, depth, ctx):
        return False  # on the CPU; moved later it is CDL608's (a float64 tensor seen moving)
    device = find_argument(call, "device", None)
    if device is not None and (names_host(ctx.model, device.value) or cpu_on_a_mac(ctx.model, device.value)):
        return False  # the CPU, or a name that is the CPU wherever the host is a Mac
    if device is None and any(arg.keyword is None and not arg.star and _names_host_device(arg.value, ctx) for arg in call.args):
        return False  # `occnumber(a, 3, torch.double, torch.device("cpu"))`: told the host by position
    if device is None and builds_on_default_device(ctx.model, call):
        return False  # the file's own `def f(..., dtype=None, device=None)`, given no device: built on the CPU
    after = stack[-4] if len(stack) >= 4 and stack[-3] is call else None
    if isinstance(after, cst.Attribute) and after.value is call and after.attr.value in HOST_SIDE and not converts:
        return False  # a factory's float64 tensor, made on the host, narrowed or turned into NumPy at once
    if isinstance(after, cst.Arg) and after.value is call and len(stack) >= 5 and isinstance(stack[-5], cst.Call) \
            and (ctx.model.resolve(stack[-5].func) or "").partition(".")[0] == "numpy":
        return False  # `np.asarray(torch.as_tensor(m, dtype=torch.float64))`: turned into NumPy at once, on the host
    mover = stack[-5] if isinstance(after, cst.Attribute) and after.value is call and after.attr.value == "to" and len(stack) >= 5 else None
    if isinstance(mover, cst.Call) and mover.func is after:
        target = find_argument(mover, "device", 0)
        if target is not None and (names_host(ctx.model, target.value) or cpu_on_a_mac(ctx.model, target.value)):
            return False  # `.to(torch.float64).to(device)` with a device that is the CPU wherever the host is a Mac
    return True


def _default_made_on_device(node: cst.CSTNode, ctx: FileContext) -> Optional[cst.Call]:
    """The node is a parameter's default (`def f(y0, dtype=torch.float64)`) and the function's body, which never
    binds the parameter again, hands the parameter as `dtype=` to a torch call that makes a tensor on a device
    it names (`torch.as_tensor(rtol, dtype=dtype, device=y0.device)`), not the CPU there: every call that leaves the
    dtype out makes that tensor of the default's dtype on the device. That call, else None. The same for a module
    constant (`DEFAULT_DTYPE = torch.float64`) that is such a parameter's default (`dtype=DEFAULT_DTYPE`)."""
    stack = ctx.stack
    param = stack[-2] if len(stack) >= 4 else None
    if type(param) is cst.Param and param.default is node and type(stack[-4]) is cst.FunctionDef:
        return _param_made_on_device(stack[-4], param.name.value, ctx)
    holder = stack[-2] if len(stack) >= 4 else None
    if type(holder) is cst.Assign and holder.value is node and len(holder.targets) == 1 and type(holder.targets[0].target) is cst.Name \
            and type(stack[-4]) is cst.Module:  # `DEFAULT_DTYPE = torch.float64`, the default of parameters of the module
        constant = holder.targets[0].target.value
        for function in _module_functions(stack[-4]):
            for default in _params_of(function):
                if type(default.default) is cst.Name and default.default.value == constant:
                    found = _param_made_on_device(function, default.name.value, ctx)
                    if found is not None:
                        return found
    return None


def _module_functions(module: cst.Module):
    """The functions at the module's top and the methods of its top-level classes."""
    for statement in module.body:
        if type(statement) is cst.FunctionDef:
            yield statement
        elif type(statement) is cst.ClassDef and type(statement.body) is cst.IndentedBlock:
            yield from (item for item in statement.body.body if type(item) is cst.FunctionDef)


def _params_of(function: cst.FunctionDef):
    params = function.params
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def _param_made_on_device(function: cst.FunctionDef, name: str, ctx: FileContext) -> Optional[cst.Call]:
    scope = ctx.model.scopes.get(id(function))
    if scope is None or len(scope.bindings.get(name, ())) != 1:
        return None  # `dtype = dtype or torch.float32`: the body decides
    found = _made_on_device(function.body, scope, lambda value: type(value) is cst.Name and value.value == name, ctx)
    if found is not None:
        return found
    # `self.dtype = dtype` in `__init__`, then `torch.zeros(n, device=self.device, dtype=self.dtype)` in a method
    owner = scope.parent
    stored = _kept_on_self(function, name, scope.self_name) if function.name.value == "__init__" and owner is not None and owner.kind == "class" else None
    if stored is None or len(ctx.model.class_attributes.bindings(owner, stored) or ()) != 1:
        return None
    for statement in owner.node.body.body:
        inner = ctx.model.scopes.get(id(statement)) if type(statement) is cst.FunctionDef else None
        if inner is not None:
            found = _made_on_device(statement.body, inner, lambda value: _self_attribute(value, inner.self_name) == stored, ctx)
            if found is not None:
                return found
    return None


def _made_on_device(body, scope, is_dtype, ctx: FileContext) -> Optional[cst.Call]:
    """The first torch call (or `.to(...)`) of the body that is handed a dtype `is_dtype` accepts and a device
    that is not the CPU (on a Mac or anywhere)."""
    for current in nodes_in(body):
        if type(current) is cst.Call:
            dtype, device = find_argument(current, "dtype", None), find_argument(current, "device", None)
            if dtype is None or device is None or not is_dtype(dtype.value):
                continue
            func = current.func
            if not ((ctx.model.resolve(func, scope) or "").startswith("torch.")
                    or (type(func) is cst.Attribute and func.attr.value == "to" and not ctx.model.is_module_ref(func.value))):
                continue
            if not names_host(ctx.model, device.value, scope) and not cpu_on_a_mac(ctx.model, device.value, scope):
                return current
    return None


def _kept_on_self(function: cst.FunctionDef, name: str, self_name: Optional[str]) -> Optional[str]:
    """The attribute a statement of the method's own body stores the parameter in: `self.dtype = dtype`."""
    for statement in function.body.body:
        for small in statement.body if type(statement) is cst.SimpleStatementLine else ():
            if (type(small) is cst.Assign and len(small.targets) == 1 and type(small.value) is cst.Name and small.value.value == name):
                attribute = _self_attribute(small.targets[0].target, self_name)
                if attribute is not None:
                    return attribute
    return None


def _self_attribute(node: cst.CSTNode, self_name: Optional[str]) -> Optional[str]:
    """`self.<name>` of a method whose instance goes by `self_name` (the scope's own first parameter): the name."""
    if self_name is None or type(node) is not cst.Attribute or type(node.value) is not cst.Name:
        return None
    return node.attr.value if node.value.value == self_name else None


def _moves_to_host_on_a_mac(call: cst.Call, ctx: FileContext) -> bool:
    """`x.to(device, ...)` with a device that is the CPU wherever the host is a Mac (placement.cpu_on_a_mac:
    "cpu", and CUDA devices that raise there, reported where they are written)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "to":
        return False
    target = find_argument(call, "device", 0)
    return target is not None and cpu_on_a_mac(ctx.model, target.value)


def _then_moved_to_host(call: cst.Call, ctx: FileContext) -> bool:
    """The call on top of the stack is moved at once to a device that is the CPU wherever the host is a Mac
    (`.double().to(device)` with `device = "cuda" if torch.cuda.is_available() else "cpu"`)."""
    stack = ctx.stack
    after = stack[-2] if len(stack) >= 3 else None
    mover = stack[-3] if len(stack) >= 3 else None
    return (type(after) is cst.Attribute and after.value is call and type(mover) is cst.Call and mover.func is after
            and _moves_to_host_on_a_mac(mover, ctx))


def _mps_aware_function(call: cst.Call, ctx: FileContext) -> bool:
    """A function of the file, handed the dtype, that itself tests for MPS (compares with "mps" or reads
    `.is_mps`) and returns something: a dtype or tensor chooser that knows MPS lacks float64, so what it
    gives for MPS is its own decision, made where it is written."""
    defined = ctx.model.defined_function(call.func)
    if defined is None or not defined[1].returns:
        return False
    for node in nodes_in(defined[0].body):
        if type(node) is cst.Attribute and node.attr.value == "is_mps":
            return True
        if type(node) is cst.Comparison and any(
                string_value(side) is not None and string_value(side).split(":")[0] == "mps"
                for side in (node.left, *(target.comparator for target in node.comparisons))):
            return True
    return False


def _names_host_device(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A positional argument that is a device naming the host: `torch.device("cpu")`, or a name bound
    only to one (a bare "cpu" string in another position may be anything else)."""
    if isinstance(node, cst.Name):
        values = ctx.model.assigned(node)
        return bool(values) and all(type(value) is not cst.Name and _names_host_device(value, ctx) for value, _ in values)
    return isinstance(node, cst.Call) and ctx.model.resolve(node.func) == "torch.device" and names_host(ctx.model, node)


def _kept_on_device(call: cst.Call, depth: int, ctx: FileContext) -> bool:
    """The tensor a call (at `stack[depth]`) makes is moved at once by the call around it, as CDL608
    reads moves (op_coverage.moved_value: `.to(device)`, `.cuda()`, a module's state method,
    `nn.Parameter`)."""
    stack = ctx.stack
    outer = stack[depth - 2] if depth >= 2 else None
    return isinstance(outer, cst.Call) and op_coverage.moved_value(outer, ctx) is call


def _made_unconditionally(api, ctx: FileContext) -> bool:
    """A call of `api` (a name or a list of names) runs unconditionally in the current node's function
    or module body, before it or after it: an earlier statement of the node's own block, or of any block
    around it up to the function, or a later statement of its own block, is that call. A call inside an
    `if`/`for` is not."""
    apis = {api} if isinstance(api, str) else set(api)
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    later = found[0][found[1] + 1:] if found is not None else ()
    return any(ctx.model.resolve(call.func) in apis  # not beyond the function: its caller's code is not "before"
               for statement in (*earlier_statements(ctx.stack), *later) for call in _statement_calls(statement))


def _beside_call(apis, ctx: FileContext) -> bool:
    """Another statement of the current node's own block calls one of `apis` (a list of names), itself
    or in the arms of an `if` there (`if torch.backends.mps.is_available(): torch.mps.empty_cache()`
    after `torch.cuda.empty_cache()`): the code makes the MPS counterpart of its CUDA call."""
    found = enclosing_block(ctx.stack, len(ctx.stack) - 1)
    if found is None:
        return False
    body, at = found
    others = [statement for index, statement in enumerate(body) if index != at]
    statements = [inner for other in others for inner in (arm_statements(other) if isinstance(other, cst.If) else (other,))]
    return any(ctx.model.resolve(call.func) in apis for statement in statements for call in _statement_calls(statement))


def _caught_with(bases, ctx: FileContext) -> bool:
    """The node is one of the exceptions an `except (...)` tuple names, beside one of `bases` (builtin
    exception names): the handler catches what the node names through its base class wherever it runs."""
    stack = ctx.stack
    if len(stack) < 4 or type(stack[-2]) is not cst.Element or type(stack[-3]) is not cst.Tuple:
        return False
    handler = stack[-4]
    if type(handler) not in (cst.ExceptHandler, cst.ExceptStarHandler) or handler.type is not stack[-3]:
        return False
    return any(type(element.value) is cst.Name and element.value.value in bases
               and ctx.model.resolve(element.value) in (None, element.value.value, f"builtins.{element.value.value}")
               for element in stack[-3].elements)


def _alternative_arm(apis, ctx: FileContext) -> bool:
    """The node is in one arm of a choice whose other arm names one of `apis`: a conditional expression
    (`CppExtension if suffix == "cpu" else CUDAExtension`), an `if`/`else` statement (`if with_cuda: ext =
    CUDAExtension(...)` / `else: ext = CppExtension(...)`), an entry of a table of builds whose other entry
    does (`{"cpu": [CppExtension, ...], "gpu": [CUDAExtension, ...]}`), or the value of a name a later
    assignment binds to one (`Extension = CUDAExtension`, then `if CPU_ONLY: Extension = CppExtension`), up to
    the enclosing function. Whatever decides the choice, the code builds the alternative where it is taken."""
    stack = ctx.stack
    for depth in range(len(stack) - 2, -1, -1):
        holder, inner = stack[depth], stack[depth + 1]
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if isinstance(holder, cst.IfExp) and inner is not holder.test:
            other = holder.orelse if inner is holder.body else holder.body
        elif isinstance(holder, cst.If) and holder.orelse is not None and inner in (holder.body, holder.orelse):
            other = holder.orelse if inner is holder.body else holder.body
        elif isinstance(holder, cst.Else):  # `else:` of an `if`: the arm above it is the other one
            owner = stack[depth - 1] if depth else None
            other = owner.body if isinstance(owner, cst.If) and owner.orelse is holder else None
        elif isinstance(holder, cst.DictElement) and inner is holder.value and depth and isinstance(stack[depth - 1], cst.Dict):
            # `{"cpu": [CppExtension, ...], "gpu": [CUDAExtension, ...]}`: a table of builds, keyed by target
            if any(element is not holder and isinstance(element, cst.DictElement) and _names_any(element.value, apis, ctx)
                   for element in stack[depth - 1].elements):
                return True
            continue
        elif isinstance(holder, cst.Assign) and inner is holder.value:
            # `Extension = CUDAExtension`, then `if CPU_ONLY: Extension = CppExtension` (a later binding: one
            # before it is what this one overrides)
            if len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
                bindings = ctx.model.lookup(holder.targets[0].target.value)
                at = next((index for index, binding in enumerate(bindings) if binding.value is holder.value), None)
                if at is not None and any(
                        binding.value is not None and _names_any(binding.value, apis, ctx) for binding in bindings[at + 1:]):
                    return True
            continue
        else:
            continue
        if other is not None and _names_any(other, apis, ctx):
            return True
    return False


def _names_any(node: cst.CSTNode, apis, ctx: FileContext) -> bool:
    """A name or attribute under `node` resolves to one of `apis` (nested functions and classes aside)."""
    return any(type(current) in (cst.Name, cst.Attribute) and ctx.model.resolve(current) in apis for current in nodes_in(node))


def _statement_calls(statement: cst.CSTNode, depth: int = 0) -> Iterator[cst.Call]:
    """The calls a statement makes as whole expression statements whenever it runs: its own, or those
    of the body of a `try:` or `with` (`try: torch.manual_seed(s)` / `except NameError: pass` seeds as
    the bare call does, unless it raises); not those of an `if`, a loop or a handler."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        for small in statement.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                yield small.value
    elif isinstance(statement, (cst.Try, cst.With)) and depth < 4:
        body = statement.body
        for inner in body.body if isinstance(body, cst.IndentedBlock) else (body,):
            yield from _statement_calls(inner, depth + 1)


def _imported_entry(index: MatchIndex, module: str) -> Optional[Entry]:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        entry = index.imports.get(".".join(parts[:end]))
        if entry is not None:
            return entry
    return None


def _own(module: str, ctx: FileContext) -> bool:
    """The project's own packages are never CUDA-only libraries (a project named like one, say), nor is a
    library's own package, imported by its own modules where the project vendors it."""
    project = ctx.model.project
    return project is not None and (project.is_own(module) or project.library_own(ctx.model.path, module.split(".")[0]))


def _optional_module(ctx: FileContext) -> bool:
    """The file is a module its package imports only under a test or a `try:` (ProjectIndex.
    imported_only_conditionally): its imports run only where that import is wanted."""
    project = ctx.model.project
    return project is not None and bool(ctx.model.module_name) and project.imported_only_conditionally(ctx.model.module_name)


def _check_import(index: MatchIndex, node: cst.Import, ctx: FileContext) -> None:
    if _optional_module(ctx):
        return
    for alias in node.names:
        module = dotted(alias.name) or ""
        if (ctx.optional_import_depth and ctx.optional_import(module)) or _own(module, ctx):
            continue
        entry = _imported_entry(index, module)
        if entry is not None:
            ctx.report(entry.rule.code, node, entry.message(module))
            return


def _check_import_from(index: MatchIndex, node: cst.ImportFrom, ctx: FileContext) -> None:
    if node.relative or node.module is None or _optional_module(ctx):
        return
    base = dotted(node.module) or ""
    if ctx.optional_import_depth and ctx.optional_import(base):
        return
    names = [] if isinstance(node.names, cst.ImportStar) else [dotted(alias.name) or "" for alias in node.names]
    if _own(base, ctx):
        return
    for module in [base] + [f"{base}.{name}" for name in names]:
        entry = _imported_entry(index, module)
        if entry is not None:
            ctx.report(entry.rule.code, node, entry.message(module))
            return


def _callee_matches(pattern: str, func: cst.BaseExpression, ctx: FileContext, names=None) -> bool:
    if pattern == "*":
        return True
    if pattern.startswith("."):
        return isinstance(func, cst.Attribute) and func.attr.value == pattern[1:] and not ctx.imports.is_module_ref(
            func.value
        )
    names = _callee_names(func, ctx) if names is None else names
    return any(fnmatch.fnmatchcase(qualified, pattern) for qualified in names)


def _callee_names(func: cst.BaseExpression, ctx: FileContext):
    """What a callee may be: its qualified name, or for a bare local name every API it is bound to
    (`scope = autocast if amp else nullcontext`). Attributes of unknown objects are not followed."""
    qualified = ctx.model.resolve(func)
    if qualified is not None:
        return (qualified,)
    if isinstance(func, cst.Name):
        return tuple(ctx.model.resolve_all(func))
    return ()


def fits(spec: Mapping, call: cst.Call) -> bool:
    """Whether a call can be torch's API of an entry, judged by its arguments alone: no more arguments
    than `max_args`, and arguments that bind to `params` (the parameters of torch's function or method
    in order, "*" before the keyword-only ones): not too many positional ones, no keyword torch's
    signature lacks, none given twice. `x.cuda(t, meta=m)` is another library's method (HQQ's
    quantizer), not Tensor.cuda. `*args` may fill any positional parameter (and `**kwargs` any
    keyword): what they hide is taken to fit."""
    args = call.args
    if "max_args" in spec and len(args) > spec["max_args"]:
        return False
    params = spec.get("params")
    if params is None:
        return True
    unpacked = any(arg.star == "*" for arg in args)
    given = [arg for arg in args if arg.keyword is None and not arg.star]
    if len(given) > (params.index("*") if "*" in params else len(params)):
        return False
    filled = set() if unpacked else set(params[: len(given)])
    for arg in args:
        if arg.keyword is not None:
            name = arg.keyword.value
            if name not in params or name == "*" or name in filled:
                return False
            filled.add(name)
    return True


def _check_call(index: MatchIndex, node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    if isinstance(func, cst.Attribute):
        for entry in index.methods.get(func.attr.value, ()):
            if ctx.imports.is_module_ref(func.value) or not entry.applies(ctx):
                continue
            if not fits(entry.spec, node):
                continue
            if entry.spec.get("unless_on_host") and (on_host(ctx.model, func.value, ctx.model.scope)
                                                     or moved_off_mps(ctx.model, ctx.stack, func.value)):
                continue  # `x.cpu().double()`, or x moved off MPS before: converted where no device is involved
            if entry.spec.get("unless_on_host") and _then_moved_to_host(node, ctx):
                continue  # `m.double().to(device)`, the device the CPU wherever the host is a Mac: CDL608 judges the move
            if entry.spec.get("makes_tensor") and ctx.truth_tested(len(ctx.stack) - 1):
                continue  # `if ev.double():` tests another object's answer; a tensor is not used so
            if _own_method(func, ctx):
                continue  # `self.cuda(device)` in a class that defines `cuda`: the project's method
            ctx.report(entry.rule.code, func.attr, entry.message(f".{func.attr.value}()"), _method_fix(entry, node, ctx))
    names = None
    for entry in index.arguments:
        spec = entry.spec
        if spec["callee"] == "*" or spec["callee"].startswith("."):
            matched = _callee_matches(spec["callee"], func, ctx)
        else:
            if names is None:
                names = _callee_names(func, ctx)
            matched = _callee_matches(spec["callee"], func, ctx, names)
        if not matched or not entry.applies(ctx):
            continue
        if "unless" in spec and any(arg.keyword and arg.keyword.value == spec["unless"] for arg in node.args):
            continue
        if not fits(spec, node):
            continue
        if spec.get("entered") and ctx.never_entered(len(ctx.stack) - 1):
            continue  # `with torch.autocast("cuda") and torch.no_grad():` enters only no_grad
        where = spec.get("unless_uncast_region")
        if where and turned_off_without_effect(find_argument(node, where.get("keyword"), where.get("position")),
                                               len(ctx.stack) - 1, ctx):
            continue  # CUDA autocast kept out of a region MPS autocast would cast nothing in
        if "keyword" not in spec and "position" not in spec:
            ctx.report(entry.rule.code, node, entry.message(source_of(func) + "(...)"))
            continue
        if spec.get("absent"):
            switch = find_argument(node, spec["off_when_false"], None) if "off_when_false" in spec else None
            if switch is not None and falsy_constant(switch.value):
                continue  # `GradScaler(enabled=False)`: turned off everywhere, it does nothing
            if find_argument(node, spec.get("keyword"), spec.get("position")) is None and not any(arg.star for arg in node.args):
                ctx.report(entry.rule.code, node, entry.message(source_of(func) + "(...)"))
            continue  # `torch.amp.GradScaler()`: the device left to its default, "cuda"
        arg = find_argument(node, spec.get("keyword"), spec.get("position"))
        if arg is None:
            if "keyword" in spec and any(a.star == "**" for a in node.args) and not any(
                    a.keyword is not None and a.keyword.value == spec["keyword"] for a in node.args):
                _report_spread(entry, node, names, ctx)  # `f(**options)` may pass it
            continue
        if "with_keyword" in spec and find_argument(node, spec["with_keyword"], None) is None and not any(a.star for a in node.args):
            continue  # `custom_fwd(device_type="cuda")` without `cast_inputs`: not this entry's case
        if "without_keyword" in spec and (find_argument(node, spec["without_keyword"], None) is not None or any(a.star for a in node.args)):
            continue
        if "unless_callees" in spec and any(_callee_matches(callee, func, ctx, names if names is not None else _callee_names(func, ctx))
                                            for callee in spec["unless_callees"]):
            continue  # `torch.autograd.graph.save_on_cpu(pin_memory=True)` pins only where CUDA is available
        if "unless_methods" in spec and type(func) is cst.Attribute and func.attr.value in spec["unless_methods"]:
            continue  # `x.cuda(non_blocking=True)`: a copy to CUDA only, which its own rule reports
        if spec.get("unless_empty") and _always_empty(arg.value, ctx):
            continue  # `fork_rng(devices=[])`: no device at all, on purpose
        if spec.get("unless_none") and (any(value.kind == "none" for value in ctx.model.values(arg.value))
                                        or _other_arm_omits(node, spec, ctx)):
            continue  # `None if device.type == "cpu" else [device.index]`, or an `if` whose CPU arm passes none
        if spec.get("unless_same_device") and same_device_copy(ctx.model, node, ctx.model.scope):
            continue  # `dst.copy_(src)` with both where the code proves one device: no host memory involved
        if "unless_synchronized" in spec and synchronized_after(ctx.model, ctx.stack, spec["unless_synchronized"]):
            continue  # the copy has landed before the next statement runs
        if "unless_synchronized" in spec and held_until_waited(ctx.model, ctx.stack, node, spec["unless_synchronized"]):
            continue  # its source is held until the function waits for the device
        if "unless_synchronized" in spec and read_back_in_place(ctx.model, ctx.stack, node):
            continue  # the same expression reads the result back on the host, waiting for the copy
        if "unless_synchronized" in spec and kept_by_its_object(ctx.model, ctx.stack, node):
            continue  # its source is an object's own tensor, kept after the copy is queued
        if "unless_synchronized" in spec and copies_uninitialized(ctx.model, node):
            continue  # `torch.empty(...).to(device, non_blocking=True)`: garbage by design, overwritten
        if "unless_synchronized" in spec and in_module_method(ctx.model, ctx.stack, node):
            continue  # a module moves its own state or an input its caller placed
        if spec.get("unless_host_on_a_mac") and _moves_to_host_on_a_mac(node, ctx):
            continue  # `x.to(self.device, non_blocking=True)`, the device "cuda:N" or "cpu": no MPS copy on a Mac
        if "unless_cpu_gets" in spec and cpu_gets(arg.value, spec["unless_cpu_gets"], ctx.model):
            continue  # `"gloo" if device == "cpu" else "nccl"`: the CPU, a Mac's only device for collectives, gets gloo
        found = (f"{arg.keyword.value}=" if arg.keyword else "") + source_of(arg.value)
        for value in _innermost(matching_values(spec, arg.value, ctx)):
            if value.where is not None:  # a constant of another module of the project
                path, line, _ = value.where
                ctx.report(
                    entry.rule.code,
                    arg,
                    entry.message(f"{found} (= {value.data!r}, set in {path}:{line})"),
                    related=((value.where, f"{value.data!r} is set here"),),
                )
            elif value.origin is arg.value:  # written right here
                ctx.report(entry.rule.code, arg, entry.message(found), _argument_fix(entry, node, arg, ctx))
            else:
                _report_at_origin(entry, value, found, arg, f"{source_of(func)}({found})", ctx)


def _innermost(values: List[Value]) -> List[Value]:
    """The values without one whose written place holds another's: an option (`add_argument("--gpus",
    type=int, default=4)`, any int the command line gives) whose default matches too is reported once, at
    the default."""
    origins = [value.origin for value in values if isinstance(value.origin, cst.CSTNode)]
    return [value for value in values if not any(
        other is not value.origin and _holds(value.origin, other) for other in origins)]


def _holds(outer, inner: cst.CSTNode) -> bool:
    if not isinstance(outer, cst.Call):
        return False  # only an option's call holds the values it declares
    return any(arg.value is inner for arg in outer.args)


def _other_arm_omits(call: cst.Call, spec: Mapping, ctx: FileContext) -> bool:
    """The call sits in one arm of an `if` whose other arm makes a call of the same callee without the
    argument (`if index == CPU_INDEX: DDP(model)` / `else: DDP(model, device_ids=[index])`): a choice made
    per device."""
    stack = ctx.stack
    callee = ctx.model.resolve(call.func)
    for depth in range(len(stack) - 2, 0, -1):
        holder, child = stack[depth], stack[depth + 1]
        if isinstance(holder, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if not isinstance(holder, cst.If):
            continue
        other = holder.orelse if child is holder.body else holder.body if child is holder.orelse else None
        for node in nodes_in(other) if other is not None else ():
            if (type(node) is cst.Call and node is not call and ctx.model.resolve(node.func) == callee
                    and find_argument(node, spec.get("keyword"), spec.get("position")) is None
                    and not any(arg.star for arg in node.args)):
                return True
    return False


def _always_empty(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """Every value the argument can take is an empty list or tuple literal."""
    values = ctx.model.values(node)
    return bool(values) and all(type(value.origin) in (cst.List, cst.Tuple) and not value.origin.elements for value in values)


def _method_fix(entry: Entry, call: cst.Call, ctx: FileContext) -> Optional[FixPlan]:
    """`.cuda()` / `.cuda(non_blocking=True)` -> `.to(DEVICE, ...)`; a positional device index has no fix."""
    spec = entry.spec
    if "fix_method" not in spec or any(arg.keyword is None for arg in call.args):
        return None
    safety = Safety(spec.get("fix_safety", entry.rule.fix if entry.rule.fix != "none" else "unsafe"))
    keywords = "".join(", " + render(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for arg in call.args)
    text = f"{spec['fix_method']}({template(spec.get('fix_argument', 'DEVICE'))}{keywords})"
    return FixPlan(safety, f"use .{spec['fix_method']}(device)", [((call.func.attr, call), text)])


def _argument_fix(entry: Entry, call: cst.Call, arg: cst.Arg, ctx: FileContext) -> Optional[FixPlan]:
    """An `arguments` entry's fix: a new value (`fix_value`) or dropping the argument (`fix_drop`)."""
    spec = entry.spec
    since = parse_version(spec.get("fix_since", "0"))
    if _oldest_allowed(ctx) < since:
        return None
    safety = Safety(spec.get("fix_safety", entry.rule.fix if entry.rule.fix != "none" else "unsafe"))
    if "fix_value" in spec:
        return FixPlan(safety, f"use {spec['fix_value']}", [(arg.value, template(spec["fix_value"]))], since)
    if spec.get("fix_drop"):
        args = [other for other in call.args if other is not arg]
        if args and call.args[-1] is arg:  # the last one goes: its successor ends the list as it did
            args[-1] = args[-1].with_changes(comma=arg.comma)
        return FixPlan(safety, "drop the argument", [(call, render(call.with_changes(args=args)))], since)
    return None


def _check_attribute(index: MatchIndex, node: cst.Attribute, ctx: FileContext) -> None:
    entries = index.attributes.get(node.attr.value)
    if not entries or (isinstance(ctx.parent, cst.Call) and ctx.parent.func is node):
        return
    entries = [entry for entry in entries if _imports_root(entry.spec.get("root"), ctx)]
    if not entries:
        return  # `device.is_cuda` in a module that imports no torch: another library's device (NVIDIA Warp's)
    if _compared_with_its_like(node, ctx):
        return  # `assert features.is_cuda == coordinates.is_cuda`: both on one kind of device, whichever
    if ctx.test_depth:
        if _raises_when_false(node, ctx):
            why = "; the branch where it is False raises"
        elif _decides_placement(node, ctx):
            why = "; the branch where it is True moves values to CUDA, so beside an MPS tensor they stay on the CPU"
        elif _records_device(node, ctx):
            why = ("; only the branch where it is True keeps the tensor's device, so beside an MPS tensor what is made"
                   " on the device kept is made on the CPU")
        elif _numpy_when_false(node, ctx):
            why = "; the branch where it is False calls .numpy() on it, which raises for an MPS tensor"
        else:
            return
        for entry in entries:
            if not ctx.imports.is_module_ref(node.value):
                ctx.report(entry.rule.code, node, entry.message(f".{node.attr.value}") + why)
        return
    if isinstance(ctx.parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and ctx.parent.target is node:
        return  # `self.is_cuda = ...` stores the program's own flag; it reads no tensor's attribute
    if _under_caller_option(ctx):
        return  # `if capturable: assert p.is_cuda`: a demand only when the caller asks for a CUDA-only mode
    if _kept_for_tests(node, ctx):
        return  # `is_cuda = q.is_cuda` ... `cuda_config if is_cuda else cpu_config`: a guard kept in a name
    if _asserted_false(node, ctx):
        return  # `assert not y.is_cuda`: holds for every tensor a Mac has
    if _in_assert(ctx, "test") and _before_compiled_code(ctx):
        return  # `assert src.is_cuda` before `C.ncclAllReduce(...)`: the compiled kernels' precondition
    if _speed_flag(ctx.parent, ctx):
        return  # `non_blocking=x.is_cuda`, `fused=x.is_cuda`: a CUDA fast path only, safe elsewhere
    if _or_mps(node, ctx):
        return  # `t.is_cuda or t.device.type == "mps"`: "on an accelerator", MPS included
    for entry in entries:
        if not ctx.imports.is_module_ref(node.value):
            ctx.report(entry.rule.code, node, entry.message(f".{node.attr.value}"))


def _compared_with_its_like(node: cst.Attribute, ctx: FileContext) -> bool:
    """The attribute is compared for (in)equality with the same attribute of another value: a test that
    two tensors sit on the same kind of device, which holds or fails alike on every host."""
    holder = ctx.parent
    if type(holder) is cst.ComparisonTarget:
        comparison = ctx.stack[-3] if len(ctx.stack) >= 3 else None
    elif type(holder) is cst.Comparison:
        comparison = holder
    else:
        return False
    if type(comparison) is not cst.Comparison or len(comparison.comparisons) != 1:
        return False
    target = comparison.comparisons[0]
    if type(target.operator) not in (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot):
        return False
    other = target.comparator if comparison.left is node else comparison.left
    return type(other) is cst.Attribute and other.attr.value == node.attr.value and other is not node


def _imports_root(root: Optional[str], ctx: FileContext) -> bool:
    """An entry's `root` (a top-level module) is imported somewhere in the file; any file for an entry without one."""
    return root is None or ctx.model.imports_under(root)


def _asserted_false(node: cst.Attribute, ctx: FileContext) -> bool:
    """The attribute is asserted False: `assert not x.is_cuda` or `assert x.is_cuda is False` (alone, or one
    part of an `and`), or the argument of a test's `assertFalse(...)`."""
    stack = ctx.stack
    if len(stack) < 3:
        return False
    parent, depth = stack[-2], len(stack) - 2
    if isinstance(parent, cst.Arg):
        call = stack[-3]
        return (isinstance(call, cst.Call) and call.args[0] is parent and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "assertFalse")
    if (type(parent) is cst.Comparison and parent.left is node and len(parent.comparisons) == 1
            and type(parent.comparisons[0].operator) in (cst.Is, cst.Equal)
            and type(parent.comparisons[0].comparator) is cst.Name and parent.comparisons[0].comparator.value == "False"):
        pass  # `assert x.is_cuda is False`, `== False`: the same assertion
    elif not (isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)):
        return False
    while depth >= 1 and isinstance(stack[depth - 1], cst.BooleanOperation) and isinstance(stack[depth - 1].operator, cst.And):
        depth -= 1
    holder = stack[depth - 1] if depth >= 1 else None
    return isinstance(holder, cst.Assert) and holder.test is stack[depth]


def _before_compiled_code(ctx: FileContext) -> bool:
    """The enclosing function calls compiled kernels (compiled_calls.py): an assertion of `is_cuda` there
    states their precondition. (`if not x.is_cuda: raise NotImplementedError` before them is still
    reported: it tells the user the device is not implemented, a gap a port fills.)"""
    function = next((holder for holder in reversed(ctx.stack) if isinstance(holder, (cst.FunctionDef, cst.Lambda))), None)
    return isinstance(function, cst.FunctionDef) and calls_compiled(ctx.model, function, ctx.model.compiled_calls)


def _under_caller_option(ctx: FileContext) -> bool:
    """The innermost `if` around the node (in its function) tests a parameter of that function, bare:
    what runs there is the mode a caller opted into, not what every call does."""
    stack = ctx.stack
    for depth in range(len(stack) - 2, 0, -1):
        holder = stack[depth]
        if isinstance(holder, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(holder, cst.If) and stack[depth + 1] is holder.body:
            test = holder.test
            return isinstance(test, cst.Name) and any(b.kind == "param" for b in ctx.model.lookup(test.value))
    return False


def _kept_for_tests(node: cst.Attribute, ctx: FileContext) -> bool:
    """The attribute is stored in a local name (`flag = x.is_cuda`, or one name of a tuple assignment)
    that the function reads only as the test of an `if`, a conditional expression or a `while` (under
    `not`, `and`, `or`), none of whose False branches raises: a guard with working other branches, kept
    in a name as it would be written in the test itself."""
    name = _stored_in(node, ctx)
    return name is not None and _only_tested(name, ctx, 0, unread=True)


def _only_tested(name: str, ctx: FileContext, depth: int, scope: Optional[cst.CSTNode] = None, unread: bool = False) -> bool:
    """The local name of the function around the node (or of `scope`, a function) is read, at least once, only
    as _read_as_guard says; with `unread`, or a function's local never read at all (`_, heads, is_cuda = *q.shape, q.is_cuda`
    unpacked and left: nothing depends on it)."""
    if scope is None:
        scope = next((holder for holder in reversed(ctx.stack) if isinstance(holder, (cst.FunctionDef, cst.Module))), None)
    if scope is None:
        return False
    reads = 0
    stack: List[Tuple[cst.CSTNode, Tuple[cst.CSTNode, ...]]] = [(scope.body if isinstance(scope, cst.FunctionDef) else scope, ())]
    while stack:
        current, chain = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            holder = chain[-1] if chain else None
            if isinstance(holder, cst.AssignTarget) or (isinstance(holder, (cst.Element, cst.Tuple, cst.List)) and
                                                        any(isinstance(h, cst.AssignTarget) for h in chain)):
                continue  # where the name is bound
            if len(chain) >= 2 and _accumulator(chain[-2], chain[-1]) == name:
                continue  # `on_cuda = on_cuda or t.is_cuda`: the name's own earlier value, carried on
            if not _read_as_guard(current, chain, ctx, depth):
                return False
            reads += 1
            continue
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and chain:
            continue  # another scope's names
        if isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append((current.value, chain + (current,)))  # `x.flag`, `f(flag=...)`: not reads of the name
            continue
        stack.extend((child, chain + (current,)) for child in code_children(current))
    return reads > 0 or (unread and isinstance(scope, cst.FunctionDef))  # a module-level name others may import


def _stored_in(node: cst.Attribute, ctx: FileContext) -> Optional[str]:
    """The local name an assignment stores the node in: `f = node`, `f = a and node and b` (the name is
    true only where the node is), `f = any([t.is_cuda for t in ts])` (or `all`), or the matching name of
    `a, f, b = x, node, y` (elements after a starred one are matched from the end)."""
    stack = ctx.stack
    if (len(stack) >= 5 and type(stack[-2]) in (cst.ListComp, cst.GeneratorExp, cst.SetComp) and stack[-2].elt is node
            and type(stack[-3]) is cst.Arg and type(stack[-4]) is cst.Call and len(stack[-4].args) == 1
            and type(stack[-4].func) is cst.Name and stack[-4].func.value in ("any", "all")
            and type(stack[-5]) is cst.Assign and stack[-5].value is stack[-4] and len(stack[-5].targets) == 1
            and type(stack[-5].targets[0].target) is cst.Name):
        return stack[-5].targets[0].target.value  # `any_cuda = any([t.is_cuda for t in (q, k, v)])`
    accumulated = _accumulator(stack[-3], stack[-2]) if len(stack) >= 3 else None
    if accumulated is not None:
        return accumulated  # `on_cuda = on_cuda or t.is_cuda`: true once one was
    depth = len(stack) - 1
    while depth >= 1 and isinstance(stack[depth - 1], cst.BooleanOperation) and isinstance(stack[depth - 1].operator, cst.And):
        depth -= 1  # `ok = flag and x.is_cuda and n % 8 == 0`
    holder = stack[depth - 1] if depth >= 1 else None
    if isinstance(holder, cst.Assign) and holder.value is stack[depth] and len(holder.targets) == 1:
        target = holder.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if depth != len(stack) - 1:
        return None
    assign = stack[-4] if len(stack) >= 4 else None
    if not (isinstance(holder, cst.Element) and isinstance(stack[-3], cst.Tuple) and isinstance(assign, cst.Assign)
            and assign.value is stack[-3] and len(assign.targets) == 1):
        return None
    values, targets = list(stack[-3].elements), assign.targets[0].target
    if not isinstance(targets, (cst.Tuple, cst.List)) or any(isinstance(t, cst.StarredElement) for t in targets.elements):
        return None
    index = values.index(holder)
    starred = [i for i, v in enumerate(values) if isinstance(v, cst.StarredElement)]
    if starred and (len(starred) > 1 or index < starred[0]):
        return None
    position = index - len(values) if starred else index
    if not starred and len(values) != len(targets.elements):
        return None
    target = targets.elements[position].value
    return target.value if isinstance(target, cst.Name) else None


def _accumulator(assign: cst.CSTNode, value: cst.CSTNode) -> Optional[str]:
    """NAME of `NAME = NAME or <value>` (either way round), an accumulating flag, where `value` is that Or."""
    if not (type(assign) is cst.Assign and assign.value is value and len(assign.targets) == 1
            and type(assign.targets[0].target) is cst.Name and type(value) is cst.BooleanOperation
            and type(value.operator) is cst.Or):
        return None
    name = assign.targets[0].target.value
    return name if any(type(side) is cst.Name and side.value == name for side in (value.left, value.right)) else None


def _read_as_guard(name: cst.Name, chain: Tuple[cst.CSTNode, ...], ctx: FileContext, depth: int = 0) -> bool:
    """The name is (part of) the test of an if / conditional expression / while, under not, and, or, whose
    branch taken when the name is False does not raise; or it is bound, alone or in an `and`, to another
    local name read only so (`use_flex = self.flex and input_is_cuda`, then `if use_flex:`)."""
    inner: cst.CSTNode = name
    if chain and _speed_flag(chain[-1], ctx):
        return True
    if len(chain) >= 2 and type(chain[-1]) is cst.Arg and type(chain[-2]) is cst.Call and depth < 2:
        param = _parameter_taking(chain[-2], chain[-1], ctx)  # `dispatch(x, is_cuda=is_cuda)`
        return param is not None and _only_tested(param[1], ctx, depth + 1, param[0])
    for holder in reversed(chain):
        if isinstance(holder, (cst.BooleanOperation, cst.UnaryOperation)) and not (
            isinstance(holder, cst.UnaryOperation) and not isinstance(holder.operator, cst.Not)
        ):
            inner = holder
            continue
        if isinstance(holder, (cst.IfExp, cst.While)) and holder.test is inner:
            return True
        if (isinstance(holder, cst.Assign) and holder.value is inner and depth < 2 and len(holder.targets) == 1
                and isinstance(holder.targets[0].target, cst.Name) and _conjunction_of(inner, name)):
            return _only_tested(holder.targets[0].target.value, ctx, depth + 1)
        if isinstance(holder, cst.If) and holder.test is inner:
            negated = isinstance(inner, cst.UnaryOperation) and inner.expression is name
            if negated:
                return ends_flow(holder.body, ctx.model) != "raise"
            if _moved_to_cuda(holder.body, ctx) or _device_kept(holder, ()):
                return False  # `if use_cuda: batch = batch.cuda()`: "is on the accelerator", which MPS is too
            return not (isinstance(holder.orelse, cst.Else) and ends_flow(holder.orelse.body, ctx.model) == "raise")
        return False
    return False


def _parameter_taking(call: cst.Call, arg: cst.Arg, ctx: FileContext) -> Optional[Tuple[cst.FunctionDef, str]]:
    """(the file's function, its parameter) that an argument of a call of that function binds: by keyword,
    or by position before any `*` spread."""
    defined = ctx.model.defined_function(call.func)
    if defined is None:
        return None
    function = defined[0]
    params = function.params
    if arg.keyword is not None:
        named = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
        return (function, arg.keyword.value) if arg.keyword.value in named else None
    before = call.args[:call.args.index(arg)]
    ordered = [*params.posonly_params, *params.params]
    if arg.star or any(item.star or item.keyword is not None for item in before) or len(before) >= len(ordered):
        return None
    return function, ordered[len(before)].name.value


def _conjunction_of(value: cst.BaseExpression, name: cst.Name) -> bool:
    """`value` is the name itself or an `and` of operands one of which is it: true only where the name is."""
    return value is name or (type(value) is cst.BooleanOperation and type(value.operator) is cst.And and (
        _conjunction_of(value.left, name) or _conjunction_of(value.right, name)))


def _or_mps(node: cst.Attribute, ctx: FileContext) -> bool:
    """The attribute is one operand of an `or` another operand of which tests for MPS (pylate's
    `t.is_cuda or t.device.type == "mps"`): the whole asks whether the tensor is on an accelerator."""
    top = None
    for holder in reversed(ctx.stack[:-1]):
        if type(holder) is cst.BooleanOperation and type(holder.operator) is cst.Or:
            top = holder
        elif type(holder) is not cst.BooleanOperation:
            break
    return top is not None and any(mentions_mac_path(part) for part in disjuncts(top))


def _speed_flag(holder: cst.CSTNode, ctx: FileContext) -> bool:
    """`x.to("cpu", non_blocking=boxes.is_cuda)`, `torch.empty(n, pin_memory=t.is_cuda)`, `AdamW(ps, fused=fused)`:
    the attribute only chooses a CUDA fast path (CDL103's `speed_flags`: a copy made asynchronous, host memory
    pinned for copies to CUDA, an optimizer's fused kernels); elsewhere (MPS too) False is the safe way."""
    return (type(holder) is cst.Arg and holder.keyword is not None
            and holder.keyword.value in ctx.rules["CDL103"].match["speed_flags"])


def _decides_placement(node: cst.Attribute, ctx: FileContext) -> bool:
    """`if model.is_cuda: inputs = inputs.cuda()`: the attribute is the test of an `if` (or one part of an
    `and` there) whose branch moves values to CUDA, or of a conditional expression whose value where it
    holds does (`out = out.cuda() if h.is_cuda else out`): it stands for "is on the accelerator", and where
    the tensor is on MPS the values stay on the CPU beside it."""
    stack = ctx.stack
    inner: cst.CSTNode = node
    for depth in range(len(stack) - 2, 0, -1):
        holder = stack[depth]
        if type(holder) is cst.BooleanOperation and type(holder.operator) is cst.And:
            inner = holder
            continue
        if type(holder) not in (cst.If, cst.IfExp) or holder.test is not inner:
            return False
        # `if y.is_cuda and y.get_device() != b.get_device(): y = y.cuda(b.get_device())`: a tensor the
        # test already finds on CUDA moves between CUDA devices, no placement from the host
        tested = [part.value for part in conjuncts(inner) if type(part) is cst.Attribute and part.attr.value == "is_cuda"]
        moved = _moved_to_cuda(holder.body, ctx)
        if not moved or any(value.deep_equals(owner) for value in moved for owner in tested):
            return False
        return not (type(holder) is cst.If and _placed_beside_after(moved, tested, stack, depth))
    return False


def _records_device(node: cst.Attribute, ctx: FileContext) -> bool:
    """`if output.is_cuda: device = output.get_device()` with no `else` (the YOLO ports' grids, made with
    `device=device` after it): the attribute is the test of an `if` whose branch keeps the tested tensor's
    device in a name, left as it was (None: the CPU) for a tensor on MPS."""
    holder = ctx.parent
    return type(holder) is cst.If and holder.test is node and _device_kept(holder, (node.value,))


def _device_kept(node: cst.If, tested) -> bool:
    """The `if`, with no `else`, assigns a name the device of a tensor (of one of `tested`, where given):
    `device = x.get_device()`, `device = x.device`."""
    if node.orelse is not None:
        return False
    for statement in node.body.body:
        for small in statement.body if type(statement) is cst.SimpleStatementLine else ():
            if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
                continue
            value = small.value
            if type(value) is cst.Call and not value.args and type(value.func) is cst.Attribute and value.func.attr.value == "get_device":
                owner = value.func.value
            elif type(value) is cst.Attribute and value.attr.value == "device":
                owner = value.value
            else:
                continue
            if not tested or any(owner.deep_equals(one) for one in tested):
                return True
    return False


def _placed_beside_after(moved, tested, stack, depth: int) -> bool:
    """Each value the branch moves is put beside the tested tensor by a later statement of the block
    anyway: `window = window.type_as(img1)` (type_as converts device too), `window = window.to(img1.device)`
    (pytorch-ssim's `if img1.is_cuda: window = window.cuda(...)`, then that): the branch is redundant."""
    found = enclosing_block(stack, depth)
    if found is None:
        return False
    body, index = found
    placed = []
    for statement in body[index + 1:]:
        small = statement.body[0] if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 else None
        call = small.value if type(small) is cst.Assign else None
        if not (type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value in ("type_as", "to") and call.args):
            continue
        target = call.args[0].value
        if type(target) is cst.Attribute and target.attr.value == "device":
            target = target.value
        if any(target.deep_equals(owner) for owner in tested):
            placed.append(call.func.value)
    return all(any(value.deep_equals(done) for done in placed) for value in moved)


KEEPS_TENSOR = frozenset({"detach", "clone", "contiguous", "float", "squeeze"})  # before `.numpy()`, where it is


def _numpy_when_false(node: cst.Attribute, ctx: FileContext) -> bool:
    """`x.cpu().numpy() if x.is_cuda else x.numpy()`, `if x.is_cuda: ... else: return x.detach().numpy()`
    (robomimic's to_numpy): the way taken when the attribute is False reads the same tensor into NumPy
    where it is, which raises for an MPS tensor."""
    found = _false_way(node, ctx)
    if found is None:
        return False
    way = found[1]
    pending: List[cst.CSTNode] = list(way) if isinstance(way, list) else [way]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            continue
        if kind is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value == "numpy":
            receiver = current.func.value
            while True:
                if type(receiver) is cst.Call and type(receiver.func) is cst.Attribute and receiver.func.attr.value in KEEPS_TENSOR:
                    receiver = receiver.func.value
                elif type(receiver) is cst.Attribute and receiver.attr.value == "data":
                    receiver = receiver.value
                else:
                    break
            if receiver.deep_equals(node.value):
                return True
        pending.extend(code_children(current))
    return False


def _moved_to_cuda(block: cst.BaseSuite, ctx: FileContext) -> List[cst.BaseExpression]:
    """What the block (not a function or class it defines) moves to CUDA: the receivers of `.cuda()` and of
    `.to()` with a CUDA device string, and the first argument of a call that scatters it over CUDA devices
    (`scatter(data, [device])`: rules/guards.toml cuda_scatters)."""
    found: List[cst.BaseExpression] = []
    pending: List[cst.CSTNode] = [block]
    scatters = ctx.model.guards.facts.cuda_scatters
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            continue
        if kind is cst.Call and type(node.func) is cst.Attribute and not ctx.imports.is_module_ref(node.func.value):
            method = node.func.attr.value
            if method == "cuda" or (method == "to" and node.args and is_cuda_device_string(node.args[0].value)):
                found.append(node.func.value)
        elif kind is cst.Call and node.args and node.args[0].keyword is None and ctx.model.resolve(node.func) in scatters:
            found.append(node.args[0].value)
        pending.extend(code_children(node))
    return found


def _raises_when_false(node: cst.Attribute, ctx: FileContext) -> bool:
    """`if not x.is_cuda: raise ...`, `if x.is_cuda: ... else: raise ...`, or `if x.is_cuda: return ...`
    followed by a raise: the attribute is the whole test (or its negation) and the way taken when it is
    False ends in a raise, so it is a demand, not a guard with a working other branch."""
    found = _false_way(node, ctx)
    if found is None or type(found[0]) is not cst.If:
        return False
    branch, way = found
    if isinstance(way, list):
        raises = bool(way) and statement_flow(way[0], ctx.model) == "raise"
    else:
        raises = ends_flow(way, ctx.model) == "raise"
    # where the way taken when it is True raises too, the test only picks the error's message
    true_way = branch.body if way is not branch.body else branch.orelse.body if isinstance(branch.orelse, cst.Else) else None
    return raises and (true_way is None or ends_flow(true_way, ctx.model) != "raise")


def _false_way(node: cst.Attribute, ctx: FileContext):
    """(the `if` or conditional expression whose whole test is the attribute, or its negation; what runs
    where the attribute is False): its branch, or, after an `if` with no `else` whose body leaves, the
    statements that follow it in its block (a list). None where the attribute is no such test."""
    stack = ctx.stack
    holder = stack[-2] if len(stack) >= 2 else None
    negated = isinstance(holder, cst.UnaryOperation) and isinstance(holder.operator, cst.Not)
    test = holder if negated else node
    at = -3 if negated else -2
    branch = stack[at] if len(stack) >= -at else None
    if type(branch) not in (cst.If, cst.IfExp) or branch.test is not test:
        return None
    if negated:
        return branch, branch.body
    if type(branch) is cst.IfExp:
        return branch, branch.orelse
    if isinstance(branch.orelse, cst.Else):
        return branch, branch.orelse.body
    if branch.orelse is not None or ends_flow(branch.body, ctx.model) is None or len(stack) < 1 - at:
        return None
    block = stack[at - 1]  # the If's own block: what runs next when the test is False
    statements = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    after = next((index + 1 for index, statement in enumerate(statements) if statement is branch), len(statements))
    return branch, statements[after:]


def _check_env(index: MatchIndex, node: cst.SimpleString, ctx: FileContext) -> None:
    name = string_value(node)
    if not name or not _env_position(node, ctx):
        return
    entry = index.env_entry(name)
    if entry is not None:
        ctx.report(entry.rule.code, node, entry.message(name))


def _env_position(node: cst.SimpleString, ctx: FileContext) -> bool:
    """The string names an environment variable: os.environ[...], os.getenv(...), `in os.environ`, env dict key."""
    stack = ctx.stack
    parent = stack[-2] if len(stack) >= 2 else None
    grand = stack[-3] if len(stack) >= 3 else None
    if isinstance(parent, cst.Index) and isinstance(grand, cst.SubscriptElement):
        subscript = stack[-4] if len(stack) >= 4 else None
        return isinstance(subscript, cst.Subscript) and ctx.imports.resolve(subscript.value) == "os.environ"
    if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and grand.args and grand.args[0] is parent:
        return ctx.imports.resolve(grand.func) in ENV_READERS
    if isinstance(parent, cst.Comparison):
        return any(ctx.imports.resolve(target.comparator) == "os.environ" for target in parent.comparisons)
    if isinstance(parent, cst.DictElement) and parent.key is node:
        return True
    return False
