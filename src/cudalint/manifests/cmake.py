"""CMake files: the CUDA language and CUDA toolkit lookups (CDL451, CDL452).

A command inside an `if()` whose condition mentions CUDA (`if(CMAKE_CUDA_COMPILER)`,
`if(USE_CUDA)`) is an optional CUDA build and is not reported; neither is a
`find_package(CUDAToolkit)` without REQUIRED when the file tests whether it was found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from cudalint.catalog import load_catalog
from cudalint.findings import Finding
from cudalint.manifests.base import LineIndex, Parsed, Problem, Span, SyntaxAt

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_UNQUOTED = re.compile(r'(?:[^\s()#"\\]|\\.)+')


@dataclass
class Argument:
    text: str
    start: int
    end: int


@dataclass
class Command:
    name: str  # lower case
    arguments: List[Argument]
    start: int
    end: int


class CMakeError(SyntaxAt):
    pass


def _skip_bracket(text: str, pos: int, what: str) -> int:
    opening = _BRACKET_OPEN.match(text, pos)
    closing = "]" + opening.group(1) + "]"
    end = text.find(closing, opening.end())
    if end < 0:
        raise CMakeError(pos, f"unterminated bracket {what}")
    return end + len(closing)


def _skip_comment(text: str, pos: int) -> int:
    if _BRACKET_OPEN.match(text, pos + 1):
        return _skip_bracket(text, pos + 1, "comment")
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def _arguments(text: str, pos: int) -> Tuple[List[Argument], int]:
    """Arguments from just after '(' to the matching ')'; returns them and the offset after ')'."""
    arguments, depth = [], 1
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char == "#":
            pos = _skip_comment(text, pos)
        elif char == "(":
            depth, pos = depth + 1, pos + 1
        elif char == ")":
            depth, pos = depth - 1, pos + 1
            if depth == 0:
                return arguments, pos
        elif char == '"':
            match = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL).match(text, pos)
            if not match:
                raise CMakeError(pos, "unterminated quoted argument")
            arguments.append(Argument(match.group(0)[1:-1], pos, match.end()))
            pos = match.end()
        elif _BRACKET_OPEN.match(text, pos):
            end = _skip_bracket(text, pos, "argument")
            arguments.append(Argument(text[pos:end], pos, end))
            pos = end
        else:
            match = _UNQUOTED.match(text, pos)
            if not match:
                raise CMakeError(pos, f"unexpected {char!r}")
            arguments.append(Argument(match.group(0), pos, match.end()))
            pos = match.end()
    raise CMakeError(pos, "missing ')'")


def commands(text: str) -> Tuple[List[Command], Optional[CMakeError]]:
    """The command invocations of a CMake file, up to the first malformed one, and its error."""
    result, pos = [], 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char == "#":
            try:
                pos = _skip_comment(text, pos)
            except CMakeError as error:
                return result, error
        else:
            name = _IDENTIFIER.match(text, pos)
            if not name:
                return result, CMakeError(pos, f"expected a command name, found {char!r}")
            after = re.compile(r"[ \t]*\(").match(text, name.end())
            if not after:
                return result, CMakeError(pos, f"expected '(' after {name.group(0)}")
            try:
                arguments, end = _arguments(text, after.end())
            except CMakeError as error:
                return result, CMakeError(pos, f"{name.group(0)}(): {error}")
            result.append(Command(name.group(0).lower(), arguments, pos, end))
            pos = end
    return result, None


def check(path: str, text: str) -> Tuple[List[Finding], Parsed]:
    index = LineIndex(text)
    found, error = commands(text)
    problems = []
    if error is not None:
        line, _ = index.position(error.offset)
        problems.append(Problem(path, index.line_span(line), f"line {line}: cannot read CMake: {error}"))
    catalog = load_catalog()
    language_rule, package_rule = catalog["CDL451"], catalog["CDL452"]
    languages = set(language_rule.match["languages"])
    packages = set(package_rule.match["packages"])
    conditions = " ".join(a.text for c in found if c.name in ("if", "elseif") for a in c.arguments)
    findings: List[Finding] = []

    def report(rule, span: Span, message: str) -> None:
        findings.append(
            Finding(rule.code, path, span.line, span.column, span.end_line, span.end_column, message, rule.severity)
        )

    guards: List[bool] = []  # per open if(): does its condition mention CUDA?
    for command in found:
        words = [a.text for a in command.arguments]
        if command.name == "if":
            guards.append("cuda" in " ".join(words).lower())
            continue
        if command.name == "elseif" and guards:
            guards[-1] = guards[-1] or "cuda" in " ".join(words).lower()
            continue
        if command.name == "endif" and guards:
            guards.pop()
            continue
        if any(guards):
            continue
        span = index.span(command.start, command.end)
        if command.name == "project":
            for argument in command.arguments[1:]:
                if argument.text in languages:
                    report(language_rule, index.span(argument.start, argument.end),
                           f"project() enables the {argument.text} language, so configuring fails without"
                           " nvcc; enable it only when found: include(CheckLanguage), check_language(CUDA),"
                           " if(CMAKE_CUDA_COMPILER) enable_language(CUDA)")
        elif command.name == "enable_language" and languages & set(words):
            report(language_rule, span, "enable_language(CUDA) fails on a machine without nvcc; guard it with"
                   " check_language(CUDA) and if(CMAKE_CUDA_COMPILER)")
        elif command.name == "find_package" and words and words[0] in packages:
            checked = re.search(rf"\b{re.escape(words[0])}_FOUND\b", conditions, re.IGNORECASE)
            if "REQUIRED" in words or not checked:
                report(package_rule, span, f"find_package({words[0]}) needs the NVIDIA CUDA toolkit, which a Mac"
                       f" does not have; drop REQUIRED and build the CUDA parts only if({words[0]}_FOUND)")
    return findings, Parsed(problems=problems)
