"""YAML read safely and with positions: conda environments, cog.yaml, CI workflows.

PyYAML's composer recurses once per nesting level and aliases let a small file
describe an exponential tree, so the loader here stops past MAX_DEPTH levels or
MAX_NODES nodes, and readers visit an aliased node once. Positions come from the
character offset of each mark, counted in lines the way every other reader counts
them (PyYAML also breaks lines at U+0085 and U+2028).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

import yaml

from cudalint.manifests.base import LineIndex, Parsed, Problem, Span

MAX_DEPTH = 64
MAX_NODES = 1_000_000


class _LimitedLoader(yaml.SafeLoader):
    """Composes at most MAX_NODES nodes; a value nested deeper than MAX_DEPTH is skipped (its events
    consumed without recursion) and becomes an empty scalar, its place remembered in `too_deep`."""

    def __init__(self, stream):
        super().__init__(stream)
        self.depth = 0
        self.count = 0
        self.too_deep: List[yaml.Mark] = []

    def compose_node(self, parent, index):
        self.count += 1
        if self.count > MAX_NODES:
            raise yaml.composer.ComposerError(None, None, f"more than {MAX_NODES} nodes", self.peek_event().start_mark)
        if self.depth >= MAX_DEPTH:
            return self._skip()
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def _skip(self) -> yaml.Node:
        first = self.get_event()
        self.too_deep.append(first.start_mark)
        open_ = 1 if isinstance(first, (yaml.SequenceStartEvent, yaml.MappingStartEvent)) else 0
        last = first
        while open_:
            last = self.get_event()
            if isinstance(last, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                open_ += 1
            elif isinstance(last, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                open_ -= 1
        return yaml.ScalarNode("tag:yaml.org,2002:null", "", first.start_mark, last.end_mark)


class Document:
    """A composed YAML document and the index that turns its marks into positions."""

    def __init__(self, path: str, text: str, root: yaml.Node):
        self.path = path
        self.text = text
        self.root = root
        self.index = LineIndex(text)

    def span(self, node: yaml.Node) -> Span:
        return self.index.span(node.start_mark.index, max(node.end_mark.index, node.start_mark.index))

    def problem(self, node: yaml.Node, message: str) -> Problem:
        span = self.span(node)
        return Problem(self.path, span, f"line {span.line}: {message}")


def compose(path: str, text: str, parsed: Optional[Parsed] = None) -> Optional[Document]:
    """The document, or None (after recording why in `parsed`, when given) when the text is not YAML.
    A value nested too deeply is recorded too, and the rest of the document is still returned."""
    index = LineIndex(text)
    try:
        loader = _LimitedLoader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = index.position(min(mark.index, len(text))) if mark else (1, 1)
        reason = error.problem or error.context or "not valid YAML"
        if parsed is not None:
            parsed.problems.append(Problem(path, Span(line, column, line, column + 1), f"invalid YAML at line {line}: {reason}"))
        return None
    except (yaml.YAMLError, RecursionError, MemoryError) as error:
        if parsed is not None:
            reason = "nested too deeply" if isinstance(error, RecursionError) else "not valid YAML"
            parsed.problems.append(Problem(path, Span(1, 1, 1, 1), f"invalid YAML at line 1: {reason}"))
        return None
    if parsed is not None:
        for mark in loader.too_deep:
            line, column = index.position(min(mark.index, len(text)))
            parsed.problems.append(Problem(path, Span(line, column, line, column + 1),
                                           f"line {line}: nested more than {MAX_DEPTH} levels deep; that value was not read"))
    return Document(path, text, root) if root is not None else None


def mapping(node: Optional[yaml.Node]) -> Iterator[Tuple[str, yaml.Node]]:
    """The (key, value) pairs of a mapping node with scalar keys; nothing for anything else."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield key.value, value


def get(node: Optional[yaml.Node], key: str) -> Optional[yaml.Node]:
    return next((value for name, value in mapping(node) if name == key), None)


def scalar(node: Optional[yaml.Node]) -> Optional[str]:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def sequence(node: Optional[yaml.Node]) -> List[yaml.Node]:
    """The items of a sequence node, each distinct node once (an alias repeats a node, not its text)."""
    if not isinstance(node, yaml.SequenceNode):
        return []
    seen, items = set(), []
    for item in node.value:
        if id(item) not in seen:
            seen.add(id(item))
            items.append(item)
    return items


def scalar_source(document: Document, node: yaml.ScalarNode) -> Tuple[str, List[int]]:
    """A scalar's text as written, with the file offset of each character: what a shell command in a
    `run:` step is, positioned exactly. Block scalars (`|`, `>`) lose their indentation; other
    scalars spanning several lines are joined with spaces, as YAML folds them."""
    text, start, end = document.text, node.start_mark.index, node.end_mark.index
    chars: List[str] = []
    offsets: List[int] = []
    if node.style in ("|", ">"):
        body_start = text.find("\n", start, end)
        if body_start < 0:
            return "", []
        lines = _lines(text, body_start + 1, end)
        indents = [len(line) - len(line.lstrip(" ")) for _, line in lines if line.strip()]
        indent = min(indents) if indents else 0
        for number, (offset, line) in enumerate(lines):
            if number:
                chars.append("\n" if node.style == "|" or not line.strip() else " ")
                offsets.append(offset - 1)
            body = line[indent:]
            chars.extend(body)
            offsets.extend(range(offset + indent, offset + indent + len(body)))
        return "".join(chars).rstrip(), offsets
    quote = 1 if node.style in ("'", '"') else 0
    for number, (offset, line) in enumerate(_lines(text, start + quote, end - quote)):
        body = line.strip() if number else line.rstrip()
        skip = line.index(body) if body else 0
        if number:
            chars.append(" ")
            offsets.append(offset)
        chars.extend(body)
        offsets.extend(range(offset + skip, offset + skip + len(body)))
    return "".join(chars), offsets


def _lines(text: str, start: int, end: int) -> List[Tuple[int, str]]:
    """(offset, line) for each line of text[start:end], without line breaks."""
    found = []
    position = start
    while position <= end:
        stop = text.find("\n", position, end)
        stop = end if stop < 0 else stop
        found.append((position, text[position:stop].rstrip("\r")))
        position = stop + 1
    return found
