"""requirements.txt / constraints.txt: pip's line format.

Continuation lines (a trailing backslash) are joined and comments dropped the
way pip does it, while every character keeps its place in the file, so an entry
spread over several lines is reported where it stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from cudalint.manifests.base import LineIndex, Parsed, Problem, Span, make_dependency
from cudalint.manifests.requirement import (
    Requirement,
    RequirementError,
    looks_like_path,
    looks_like_url,
    name_from_url,
    parse_requirement,
    parse_url_requirement,
)

_COMMENT = re.compile(r"(^|\s+)#.*$")
_OPTION_START = re.compile(r"\s--?[A-Za-z]")

# Options pip accepts on a line of their own, and whether they take a value.
_LINE_OPTIONS = {
    "-r": True, "--requirement": True, "-c": True, "--constraint": True,
    "-i": True, "--index-url": True, "--extra-index-url": True, "--no-index": False,
    "-f": True, "--find-links": True, "-e": True, "--editable": True,
    "--no-binary": True, "--only-binary": True, "--prefer-binary": False,
    "--require-hashes": False, "--pre": False, "--trusted-host": True, "--use-feature": True,
}
# Options that apply to a requirement written before them on the same line.
_REQUIREMENT_OPTIONS = {"--hash": True, "--global-option": True, "--config-settings": True, "--install-option": True}
# What pip accepts after a requirement: every option its requirements-file parser knows, the line
# options included (`torch --extra-index-url URL`); those it ignores there (pip's req_file.handle_line
# applies only a requirement's own options to a requirement line), and so does cudalint.
_AFTER_REQUIREMENT = {**_LINE_OPTIONS, **_REQUIREMENT_OPTIONS}
_INDEX_KINDS = {"-i": "index-url", "--index-url": "index-url", "--extra-index-url": "index-url",
                "-f": "find-links", "--find-links": "find-links"}
_INCLUDES = {"-r", "--requirement", "-c", "--constraint"}


@dataclass(frozen=True)
class Include:
    """A -r/-c line: the file it names, as written, and where the line is."""

    target: str
    span: Span


@dataclass
class _Logical:
    """One logical line: its text (comments dropped) and each character's offset in the file."""

    text: str
    offsets: List[int]

    def span(self, index: LineIndex, start: int, end: int) -> Span:
        return index.span(self.offsets[start], self.offsets[end - 1] + 1)


def _logical_lines(text: str, index: LineIndex) -> Iterator[_Logical]:
    chars: List[str] = []
    offsets: List[int] = []
    for number, start in enumerate(index.starts):
        end = index.starts[number + 1] if number + 1 < len(index.starts) else len(text)
        line = text[start:end].rstrip("\r\n")
        continued = line.endswith("\\") and not _COMMENT.match(line)
        kept = line[:-1] if continued else line
        if not (chars and _COMMENT.match(line)):
            chars.extend(kept)
            offsets.extend(range(start, start + len(kept)))
        if not continued:
            joined = "".join(chars)
            comment = _COMMENT.search(joined)
            cut = comment.start() if comment else len(joined)
            yield _Logical(joined[:cut], offsets[:cut])
            chars, offsets = [], []
    if chars:
        yield _Logical("".join(chars), offsets)


_TOKEN = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s"']|["'])+""")
_QUOTED = re.compile(r""""([^"]*)"|'([^']*)'""")


def _tokens(text: str, start: int) -> List[Tuple[str, int, int]]:
    """The words of an option line as pip splits them (shlex): a quoted part is one word without its
    quotes (`--editable ".[dev, docs]"`), with the span it has in the text."""
    return [(_QUOTED.sub(lambda quoted: quoted.group(1) if quoted.group(1) is not None else quoted.group(2), m.group(0)),
             start + m.start(), start + m.end()) for m in _TOKEN.finditer(text)]


class _FileReader:
    def __init__(self, path: str, text: str, section: str, ecosystem: str, at: Optional[Span] = None):
        self.path = path
        self.at = at  # where the text sits when it is one item inside another format
        self.index = LineIndex(text)
        self.text = text
        self.section = section
        self.ecosystem = ecosystem
        self.parsed = Parsed()
        self.includes: List[Include] = []

    def span(self, logical: _Logical, start: int, end: int) -> Span:
        return self.at or logical.span(self.index, start, end)

    def problem(self, span: Span, message: str) -> None:
        self.parsed.problems.append(Problem(self.path, span, f"line {span.line}: {message}"))

    def read(self) -> None:
        for logical in _logical_lines(self.text, self.index):
            body = logical.text.rstrip()
            start = len(body) - len(body.lstrip())
            if start == len(body):
                continue
            if body[start] == "-":
                self.option_line(logical, start, len(body))
            else:
                self.requirement_line(logical, start, len(body))

    def options(self, logical: _Logical, tokens, allowed) -> Optional[List[Tuple[str, str]]]:
        """(option, value) pairs; None after reporting a problem."""
        result = []
        position = 0
        while position < len(tokens):
            token, start, end = tokens[position]
            position += 1
            name, value = token, None
            if token.startswith("--") and "=" in token:
                name, value = token.split("=", 1)
            elif not token.startswith("--") and len(token) > 2:
                name, value = token[:2], token[2:]
            span = self.span(logical, start, end)
            if name not in allowed or not name.startswith("-"):
                self.problem(span, f"unknown or misplaced option {token!r}")
                return None
            if allowed[name] and value is None:
                if position >= len(tokens):
                    self.problem(span, f"option {name} needs a value")
                    return None
                value = tokens[position][0]
                position += 1
            result.append((name, value or ""))
        return result

    def option_line(self, logical: _Logical, start: int, end: int) -> None:
        body = logical.text[start:end]
        pairs = self.options(logical, _tokens(body, start), _LINE_OPTIONS)
        span = self.span(logical, start, end)
        for name, value in pairs or ():
            if name in _INCLUDES:
                self.includes.append(Include(value, span))
            elif name in _INDEX_KINDS:
                self.add(span, body, name="", specifier="", extras=(), marker=None, kind=_INDEX_KINDS[name], url=value)
            elif name in ("-e", "--editable"):
                self.add_requirement(_url_or_path(value), span, body)

    def requirement_line(self, logical: _Logical, start: int, end: int) -> None:
        body = logical.text[start:end]
        options = _OPTION_START.search(body)
        stop = start + options.start() if options else end
        if options and self.options(logical, _tokens(logical.text[stop:end], stop), _AFTER_REQUIREMENT) is None:
            return
        text = logical.text[start:stop].rstrip()
        span = self.span(logical, start, start + len(text))
        try:
            if looks_like_url(text):
                requirement = parse_url_requirement(text)
            elif looks_like_path(text) and not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*@", text):
                requirement = _url_or_path(text)
            else:
                requirement = parse_requirement(text)
        except RequirementError as error:
            self.problem(span, f"invalid requirement {text!r}: {error}")
            return
        self.add_requirement(requirement, span, text)

    def add_requirement(self, requirement: Requirement, span: Span, raw: str) -> None:
        self.add(
            span,
            raw,
            name=requirement.name,
            specifier=requirement.specifier,
            extras=requirement.extras,
            marker=requirement.marker,
            kind=requirement.kind,
            url=requirement.url,
        )

    def add(self, span: Span, raw: str, **fields) -> None:
        self.parsed.dependencies.append(
            make_dependency(self.path, span, raw=raw, section=self.section, ecosystem=self.ecosystem, **fields)
        )


def _url_or_path(text: str) -> Requirement:
    if looks_like_url(text):
        return parse_url_requirement(text)
    name, version = name_from_url(text)
    return Requirement(name, (), f"=={version}" if version else "", None, text)


def read_requirements(
    path: str, text: str, *, section: str = "requirements", ecosystem: str = "pypi"
) -> Tuple[Parsed, List[Include]]:
    """The entries of one requirements file, and the files it includes with -r/-c."""
    reader = _FileReader(path, text, section, ecosystem)
    reader.read()
    return reader.parsed, reader.includes


def read_requirement_item(path: str, text: str, at: Span, section: str) -> Parsed:
    """One requirement line written inside another format (a `pip:` list item, a setup.py string)."""
    reader = _FileReader(path, text, section, "pypi", at)
    reader.read()
    return reader.parsed
