"""Positions of the nodes a file's findings name, without a code generation pass over the module.

libcst's PositionProvider regenerates the whole module to learn where every node is; a
finding needs only its own nodes. Here positions come from generating only the innermost
statement that holds a node: the statement's line comes from an outline of CPython's tree
(the gates built that tree anyway; the outline keeps only its statements, so the tree can be
freed before libcst parses) and its indentation from the enclosing blocks, so the ranges are
the ones PositionProvider gives. A node no recorded statement holds falls back to one
whole-module pass, so the answer never differs from libcst's.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from cudalint.python.children import path_to
from cudalint.python.outline import Statement

STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
# A node outside the statements recorded for it is looked for from the module down this many times a
# file; past that, one whole-module pass places the rest at once.
MAX_SEARCHES = 8


class Positions:
    """`positions[node]` and `node in positions`, as PositionProvider's mapping answers them.

    `anchor(node, chain)` says which statements (outermost first, as the walk's stack held
    them) a node lies in; lookups try them innermost first."""

    def __init__(self, module: cst.Module, statements: Optional[List[Statement]]):
        self.module = module
        self.statements = statements
        self.chains: Dict[cst.CSTNode, Tuple[cst.CSTNode, ...]] = {}
        self.done: Dict[cst.CSTNode, Optional[Tuple[Ranges, int]]] = {}
        self.whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self.top = {statement: index for index, statement in enumerate(module.body)}
        self.searches = 0  # nodes looked for from the module down, their recorded statements not holding them

    def anchor(self, node: cst.CSTNode, chain: Sequence[cst.CSTNode]) -> None:
        self.chains.setdefault(node, tuple(chain))

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._find(node)
        if found is None:
            raise KeyError(node)
        return found

    def __contains__(self, node: object) -> bool:
        return self._find(node) is not None

    def get(self, node: cst.CSTNode, default=None):
        found = self._find(node)
        return default if found is None else found

    def _find(self, node) -> Optional[CodeRange]:
        if self.whole is None and self.statements is not None:
            chain = self.chains.get(node, ())
            if node in self.top:
                chain = (node,)
            found = self._in_chain(node, chain)
            if found is None and self.searches < MAX_SEARCHES:  # a related place in another statement
                self.searches += 1
                path = path_to(self.module, node)
                found = self._in_chain(node, statement_chain(path)) if path else None
            if found is not None:
                return found
        return self._whole().get(node)

    def _in_chain(self, node, chain: Sequence[cst.CSTNode]) -> Optional[CodeRange]:
        for statement in reversed(self._mapped(chain)):
            computed = self._statement(statement)
            if computed is not None and node in computed[0]:
                where, delta = computed[0][node], computed[1]
                if not delta:
                    return where
                start, end = where.start, where.end
                return CodeRange(CodePosition(start.line + delta, start.column), CodePosition(end.line + delta, end.column))
        return None

    def _mapped(self, chain: Sequence[cst.CSTNode]) -> List[Tuple[cst.CSTNode, Statement, Tuple[str, ...]]]:
        """The statements of a chain that lie in blocks CPython's tree mirrors, each with its
        CPython statement and the indentation of its block, outermost first."""
        mapped = []
        body: Sequence[cst.CSTNode] = self.module.body
        nodes: Sequence[Statement] = self.statements
        indents: Tuple[str, ...] = ()
        for statement in chain:
            match = _counterpart(statement, body, nodes)
            if match is None:
                break
            mapped.append((statement, match, indents))
            block = getattr(statement, "body", None)
            inner = match.body
            if not isinstance(block, cst.IndentedBlock) or inner is None:
                break
            body, nodes = block.body, inner
            indents += (self.module.default_indent if block.indent is None else block.indent,)
        return mapped

    def _statement(self, entry) -> Optional[Tuple["Ranges", int]]:
        statement, counterpart, indents = entry
        if statement in self.done:
            return self.done[statement]
        state = _State(default_indent=self.module.default_indent, default_newline=self.module.default_newline, provider=None)
        state.indent_tokens = list(indents)
        state.line = counterpart.lineno - len(statement.leading_lines)
        statement._codegen(state)
        ranges = Ranges(state.ranges)
        start = ranges[statement].start
        # CPython's offset is in bytes, libcst's in characters: equal for a statement's indentation.
        result = None
        if start.column == counterpart.col_offset:
            result = (ranges, counterpart.lineno - start.line)
        self.done[statement] = result
        return result

    def _whole(self) -> Mapping[cst.CSTNode, CodeRange]:
        if self.whole is None:
            self.whole = whole_module(self.module)
        return self.whole


def _counterpart(statement: cst.CSTNode, body: Sequence[cst.CSTNode], nodes: Sequence[Statement]) -> Optional[Statement]:
    """The CPython statement where `statement` of a libcst block starts: a simple statement line
    holds one CPython statement per small statement. None when the blocks do not line up."""
    index = 0
    found = None
    for candidate in body:
        if candidate is statement:
            found = index
        index += len(candidate.body) if isinstance(candidate, cst.SimpleStatementLine) else 1
    if found is None or index != len(nodes):
        return None
    return nodes[found]


def whole_module(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Every node's range from one code generation pass.

    MetadataWrapper.resolve(PositionProvider) also runs a full rebuilding traversal first;
    calling the provider's code generation directly does only what it needs.
    """
    try:
        state = _State(default_indent=module.default_indent, default_newline=module.default_newline, provider=None)
        module._codegen(state)
        return Ranges(state.ranges)
    except AttributeError:  # a libcst without these internals: the public, slower way
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


class Ranges(Mapping):
    """Node -> CodeRange, as PositionProvider's mapping answers it; a range is made when it is looked up
    (a code generation pass meets every node, a file's findings and fixes ask for a few)."""

    __slots__ = ("found",)

    def __init__(self, found: Dict[int, tuple]):
        self.found = found  # id(node) -> (node, start line, start column, end line, end column)

    def __getitem__(self, node) -> CodeRange:
        entry = self.found.get(id(node))
        if entry is None or entry[0] is not node:
            raise KeyError(node)
        return CodeRange(CodePosition(entry[1], entry[2]), CodePosition(entry[3], entry[4]))

    def __contains__(self, node) -> bool:
        entry = self.found.get(id(node))
        return entry is not None and entry[0] is node

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (entry[0] for entry in self.found.values())

    def __len__(self) -> int:
        return len(self.found)


class _State(PositionProvidingCodegenState):
    """PositionProvider's code generation state with the same answers at less cost: ranges kept as
    plain tuples by node identity (made into CodeRanges only when looked up, see Ranges), a class
    for the context manager that records a node's syntactic range (not a generator per node), and
    no newline search for a token without a line break."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ranges: Dict[int, tuple] = {}

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            super()._update_position(value)
        else:
            self.column += len(value)

    def _update_position(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            super()._update_position(value)
        else:
            self.column += len(value)

    def before_codegen(self, node) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node) -> None:
        line, column = self._stack.pop()
        if id(node) not in self.ranges:  # a syntactic range recorded while generating the node stays
            self.ranges[id(node)] = (node, line, column, self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _State, node, start_node, end_node):
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc) -> bool:
        state = self.state
        ranges = state.ranges
        start = ranges[id(self.start_node)][1:3] if self.start_node is not None else self.start
        end = ranges[id(self.end_node)][3:5] if self.end_node is not None else (state.line, state.column)
        ranges[id(self.node)] = (self.node, *start, *end)
        return False


def statement_chain(stack: Sequence[cst.CSTNode]) -> Tuple[cst.CSTNode, ...]:
    """The statements on a walk's node stack, outermost first."""
    return tuple(node for node in stack if isinstance(node, STATEMENTS))
