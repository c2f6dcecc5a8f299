"""Dev container configurations (devcontainer.json): a container that asks Docker for NVIDIA GPUs (CDL455).

`"runArgs": ["--gpus", "all"]` (or `--gpus=all`, `--runtime=nvidia`) makes `docker run` ask for the
NVIDIA container runtime, which Docker on a Mac does not have: the container does not start, so the
whole development environment is closed to a Mac user. `"hostRequirements": {"gpu": true}` refuses
hosts without a GPU the same way (`"optional"` does not). The file is JSON with comments and trailing
commas (the format VS Code reads); it is parsed here with positions, never evaluated.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from cudalint.catalog import load_catalog
from cudalint.findings import Finding
from cudalint.manifests.base import LineIndex, Parsed, Problem, SyntaxAt

MAX_DEPTH = 64  # nesting a configuration never needs; deeper input is reported, not recursed into
_GPU_FLAG = re.compile(r"^--gpus(=.*)?$")
_NVIDIA_RUNTIME = re.compile(r"^--runtime(=nvidia)?$")


class Text(str):
    """A JSON string with the offsets of its quotes in the file (start at the opening quote, end after
    the closing one)."""

    start: int
    end: int


class _Parser:
    """JSON with `//` and `/* */` comments and trailing commas, every string a Text."""

    _NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
    _STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
    _WORDS = {"true": True, "false": False, "null": None}

    def __init__(self, text: str):
        self.text = text
        self.at = 0

    def document(self):
        value = self.value(0)
        self.space()
        if self.at < len(self.text):
            raise SyntaxAt(self.at, "unexpected text after the configuration")
        return value

    def space(self) -> None:
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in " \t\r\n\ufeff":
                self.at += 1
            elif text.startswith("//", self.at):
                end = text.find("\n", self.at)
                self.at = len(text) if end < 0 else end
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                if end < 0:
                    raise SyntaxAt(self.at, "comment without its end")
                self.at = end + 2
            else:
                return

    def value(self, depth: int):
        if depth > MAX_DEPTH:
            raise SyntaxAt(self.at, "nested too deeply to read")
        self.space()
        if self.at >= len(self.text):
            raise SyntaxAt(self.at, "the configuration ends early")
        char = self.text[self.at]
        if char == "{":
            return self.members(depth)
        if char == "[":
            return self.elements(depth)
        if char == '"':
            return self.string()
        for word, value in self._WORDS.items():
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return value
        number = self._NUMBER.match(self.text, self.at)
        if number is None:
            raise SyntaxAt(self.at, f"unexpected {char!r}")
        self.at = number.end()
        return float(number.group(0)) if number.group(1) or number.group(2) else int(number.group(0))

    def string(self) -> Text:
        found = self._STRING.match(self.text, self.at)
        if found is None:
            raise SyntaxAt(self.at, "string without its closing quote")
        body = found.group(1)
        if "\\" in body:
            body = re.sub(r'\\(u[0-9a-fA-F]{4}|.)', _unescape, body)
        text = Text(body)
        text.start, text.end = found.start(), found.end()
        self.at = found.end()
        return text

    def members(self, depth: int) -> dict:
        found: dict = {}

        def member() -> None:
            if not self.text.startswith('"', self.at):
                raise SyntaxAt(self.at, "expected a quoted key")
            key = self.string()
            self.space()
            if not self.text.startswith(":", self.at):
                raise SyntaxAt(self.at, "expected ':' after a key")
            self.at += 1
            found[key] = self.value(depth + 1)

        self.items("}", member)
        return found

    def elements(self, depth: int) -> list:
        found: list = []
        self.items("]", lambda: found.append(self.value(depth + 1)))
        return found

    def items(self, closer: str, item) -> None:
        """The items of an object or array after its opening bracket, each read by `item()`, up to
        `closer` (a comma before it is allowed)."""
        self.at += 1
        while True:
            self.space()
            if self.text.startswith(closer, self.at):
                self.at += 1
                return
            item()
            self.space()
            if self.text.startswith(",", self.at):
                self.at += 1
            elif self.at >= len(self.text):
                raise SyntaxAt(self.at, "the configuration ends early")
            elif not self.text.startswith(closer, self.at):
                raise SyntaxAt(self.at, f"expected ',' or '{closer}'")


def _unescape(match: "re.Match[str]") -> str:
    code = match.group(1)
    if code.startswith("u"):
        return chr(int(code[1:], 16))
    return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}.get(code, code)


def parse(text: str) -> Tuple[object, Optional[Tuple[int, str]]]:
    """The configuration, or None and (offset, what is wrong)."""
    try:
        return _Parser(text).document(), None
    except SyntaxAt as error:
        return None, (error.offset, str(error))


def check(path: str, text: str) -> Tuple[List[Finding], Parsed]:
    parsed = Parsed()
    index = LineIndex(text)
    root, error = parse(text)
    if error is not None:
        offset, message = error
        line, _ = index.position(offset)
        parsed.problems.append(Problem(path, index.line_span(line), f"line {line}: not a dev container configuration: {message}"))
        return [], parsed
    if not isinstance(root, dict):
        return [], parsed
    rule = load_catalog()["CDL455"]
    findings = []
    for node, what in _gpu_requests(root):
        span = index.span(node.start, node.end)
        findings.append(Finding(
            rule.code, path, span.line, span.column, span.end_line, span.end_column,
            f"{what}: Docker on a Mac has no NVIDIA runtime, so this container does not start there. Keep the"
            " GPU request in a second configuration for GPU hosts (.devcontainer/gpu/devcontainer.json), or"
            ' use "hostRequirements": {"gpu": "optional"}', rule.severity,
        ))
    return findings, parsed


def _gpu_requests(root: dict) -> List[Tuple[Text, str]]:
    found = []
    arguments = root.get("runArgs")
    if isinstance(arguments, list):
        for position, argument in enumerate(arguments):
            if not isinstance(argument, Text):
                continue
            following = arguments[position + 1] if position + 1 < len(arguments) else None
            if _GPU_FLAG.match(argument):
                shown = argument if "=" in argument or not isinstance(following, str) else f"{argument} {following}"
                found.append((argument, f"runArgs asks Docker for NVIDIA GPUs (`{shown}`)"))
            elif _NVIDIA_RUNTIME.match(argument) and (argument.endswith("=nvidia") or following == "nvidia"):
                found.append((argument, "runArgs runs the container on the NVIDIA runtime"))
    requirements = root.get("hostRequirements")
    if isinstance(requirements, dict):
        gpu = requirements.get("gpu")
        if gpu is True or isinstance(gpu, dict):
            node = _key_node(requirements, "gpu")
            if node is not None:
                found.append((node, "hostRequirements requires a GPU host"))
    return found


def _key_node(table: dict, key: str) -> Optional[Text]:
    """Where to report a boolean or table value: the value itself has no offsets, so its key does."""
    for name in table:
        if name == key and isinstance(name, Text):
            return name
    return None
