"""Install commands written in shell: `pip install`, `uv pip install`, `conda install`, ...

Wherever a project writes how it is installed (a Dockerfile RUN, a shell script, a
Makefile recipe, a CI `run:` step, a tox/hatch/pdm script, a README code block), the
arguments of its install commands are requirements like any other: each goes through
the same requirement parser and the same rules, positioned at its own characters.

The shell is read, never run: quotes and escapes are undone, `&&`, `;`, `|` and
newlines separate commands, comments are dropped, and a word whose value depends on
a variable or a command substitution (`$TORCH_SPEC`, `$(cat reqs)`) is skipped as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import List, Optional, Sequence, Union

from cudalint.manifests import conda
from cudalint.manifests.base import LineIndex, Parsed, Span, make_dependency
from cudalint.manifests.requirements import read_requirement_item

MAX_NESTING = 3  # `bash -c "pip install ..."` inside `sh -c` ...

_SEPARATORS = {"\n", ";", ";;", "&&", "||", "|", "&", "(", ")"}
_PIP = re.compile(r"^pip(\d+(\.\d+)?)?$")
_PYTHON = re.compile(r"^(python(\d+(\.\d+)?)?|py)$")
_VARIABLE = re.compile(r"^\$[({]?([A-Za-z_][A-Za-z0-9_]*)[)}]?$")
_PREFIXES = {"sudo", "env", "time", "exec", "nohup", "command", "then", "do", "else", "!", "{"}
_PROMPTS = {"$", "%", ">", ">>>", "#"}
_CONDA = {"conda", "mamba", "micromamba"}

# pip options that take a value, and the ones whose value is an index
_PIP_VALUE_OPTIONS = {
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version",
    "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--log", "--cache-dir",
    "--trusted-host", "-C", "--config-settings", "--global-option", "--no-binary", "--only-binary", "--python",
    "-p", "--proxy", "--retries", "--timeout", "--exists-action", "--cert", "--client-cert", "--report",
    "--root-user-action", "--keyring-provider", "--use-feature", "--use-deprecated", "--group", "--extra",
    "--index", "--default-index", "--index-strategy", "--torch-backend", "--resolution", "--prerelease",
    "--python-platform", "--build-constraint", "--override", "--overrides", "--constraints",
}
_PIP_INDEXES = {"-i": "index-url", "--index-url": "index-url", "--extra-index-url": "index-url",
                "--index": "index-url", "--default-index": "index-url",
                "-f": "find-links", "--find-links": "find-links"}
_PIP_SKIPPED_VALUES = {"-r", "--requirement", "-c", "--constraint", "--build-constraint", "--override",
                       "--overrides", "--constraints"}
_CONDA_VALUE_OPTIONS = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--solver",
                        "--repodata-fn", "--experimental", "--platform", "--subdir", "-e", "--environment"}


@dataclass
class Word:
    value: str
    offsets: List[int] = field(default_factory=list)  # file offset of each character of value
    dynamic: bool = False  # contains `$...` or a backquote: the value is not known statically

    @property
    def plain(self) -> str:
        return "" if self.dynamic else self.value


Token = Union[Word, str]


def tokens(text: str, offsets: Sequence[int]) -> List[Token]:
    """Words and separators of shell text; offsets[i] is where text[i] sits in the file."""
    result: List[Token] = []
    word: Optional[Word] = None
    i, n = 0, len(text)

    def add(char: str, at: int) -> None:
        nonlocal word
        if word is None:
            word = Word("")
        word.value += char
        word.offsets.append(offsets[at])

    def end() -> None:
        nonlocal word
        if word is not None:
            result.append(word)
            word = None

    while i < n:
        char = text[i]
        if char in " \t\r\f\v":
            end()
            i += 1
        elif char == "\\":
            if text.startswith("\n", i + 1) or text.startswith("\r\n", i + 1):
                i += 2 if text[i + 1] == "\n" else 3
            elif i + 1 < n:
                add(text[i + 1], i + 1)
                i += 2
            else:
                i += 1
        elif char == "#" and word is None:
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        elif char == "\n":
            end()
            result.append("\n")
            i += 1
        elif char in ";&|()":
            end()
            operator = text[i : i + 2] if text[i : i + 2] in ("&&", "||", ";;") else char
            result.append(operator)
            i += len(operator)
        elif char in "<>" and not (word is not None and text.startswith("=", i + 1)):
            end()
            while i < n and text[i] in "<>&":
                i += 1
            result.append(">")
        elif char == "'":
            close = text.find("'", i + 1)
            close = n if close < 0 else close
            if word is None:
                word = Word("")
            for at in range(i + 1, close):
                add(text[at], at)
            i = close + 1
        elif char == '"':
            if word is None:
                word = Word("")
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
                    add(text[i + 1], i + 1)
                    i += 2
                    continue
                if text[i] in "$`":
                    word.dynamic = True
                add(text[i], i)
                i += 1
            i += 1
        elif char in "$`":
            if word is None:
                word = Word("")
            word.dynamic = True
            closing = {"$(": ")", "${": "}"}.get(text[i : i + 2])
            stop = text.find(closing, i + 2) if closing else -1
            stop = stop + 1 if stop >= 0 else i + 1
            for at in range(i, min(stop, n)):
                add(text[at], at)
            i = stop
        else:
            add(char, i)
            i += 1
    end()
    return result


def commands(items: Sequence[Token]) -> List[List[Word]]:
    """Simple commands: the words between separators, redirection targets left out."""
    found: List[List[Word]] = [[]]
    redirect = False
    for item in items:
        if isinstance(item, str):
            if item == ">":
                redirect = True
            elif item in _SEPARATORS:
                found.append([])
                redirect = False
            continue
        if redirect:
            redirect = False
            continue
        found[-1].append(item)
    return [command for command in found if command]


class Scanner:
    """Reads install commands out of shell text into Dependency records of one file."""

    def __init__(self, path: str, index: LineIndex, section: str, parsed: Parsed, off_mac: bool = False):
        self.path = path
        self.index = index
        self.section = section
        self.parsed = parsed
        self.off_mac = off_mac

    def scan(self, text: str, offsets: Sequence[int], depth: int = 0) -> None:
        for command in commands(tokens(text, offsets)):
            self.command(command, depth)

    def span(self, word: Word) -> Span:
        return self.index.span(word.offsets[0], word.offsets[-1] + 1)

    def command(self, words: List[Word], depth: int) -> None:
        position = 0
        while position < len(words):
            raw = words[position].value
            value = words[position].plain.lstrip("@+-") if position == 0 else words[position].plain
            if value in _PREFIXES or raw in _PROMPTS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", raw):
                position += 1
            elif value.startswith("-") and position and words[position - 1].plain in ("sudo", "env"):
                position += 1
            else:
                break
        rest = words[position:]
        if not rest:
            return
        first = rest[0]
        program = _program(first)
        after = [word.plain for word in rest[1:4]]
        if program in ("bash", "sh", "zsh") and len(rest) > 2 and rest[1].plain == "-c" and depth < MAX_NESTING:
            inner = rest[2]
            if not inner.dynamic:
                self.scan(inner.value, inner.offsets, depth + 1)
            return
        if _PIP.match(program) or program == "pipx":
            self.pip(_after_command(rest[1:], "install"))
        elif _PYTHON.match(program) and after[:2] == ["-m", "pip"]:
            self.pip(_after_command(rest[3:], "install"))
        elif program == "uv" and after[:1] == ["pip"]:
            self.pip(_after_command(rest[2:], "install"))
        elif program in ("uv", "poetry") and after[:1] == ["add"]:
            self.pip(rest[2:])
        elif program in _CONDA:
            arguments = _after_command(rest[1:], "install")
            if arguments is None:
                arguments = _after_command(rest[1:], "create")
            self.conda(arguments)
        elif program == "pixi" and after[:1] == ["add"]:
            self.conda(rest[2:])

    def add(self, word: Word, kind: str) -> None:
        self.parsed.dependencies.append(
            make_dependency(self.path, self.span(word), name="", specifier="", extras=(), marker=None, raw=word.value,
                            section=self.section, kind=kind, url=word.value, off_mac=self.off_mac, command=True)
        )

    def pip(self, words: Optional[List[Word]]) -> None:
        if words is None:
            return
        position, only_requirements = 0, False
        while position < len(words):
            word = words[position]
            position += 1
            if word.dynamic or not word.value:
                continue
            if word.value == "--" and not only_requirements:
                only_requirements = True
                continue
            if word.value.startswith("-") and not only_requirements:
                name, equals, value = word.value.partition("=")
                attached = None
                if equals:
                    attached = Word(value, word.offsets[len(name) + 1 :])
                elif not name.startswith("--") and len(name) > 2 and name[:2] in _PIP_VALUE_OPTIONS:
                    name, attached = name[:2], Word(name[2:], word.offsets[2:])
                if name not in _PIP_VALUE_OPTIONS:
                    continue
                if attached is None:
                    if position >= len(words):
                        return
                    attached = words[position]
                    position += 1
                if attached.dynamic or not attached.value or name in _PIP_SKIPPED_VALUES:
                    continue
                if name in _PIP_INDEXES:
                    self.add(attached, _PIP_INDEXES[name])
                elif name in ("-e", "--editable"):
                    self.requirement(attached)
                continue
            self.requirement(word)

    def requirement(self, word: Word) -> None:
        found = read_requirement_item(self.path, word.value, self.span(word), self.section)
        self.parsed.dependencies += [replace(dep, command=True, off_mac=dep.off_mac or self.off_mac)
                                     for dep in found.dependencies]
        self.parsed.problems += found.problems

    def conda(self, words: Optional[List[Word]]) -> None:
        if words is None:
            return
        position = 0
        while position < len(words):
            word = words[position]
            position += 1
            if word.dynamic or not word.value:
                continue
            if word.value.startswith("-"):
                name, equals, value = word.value.partition("=")
                if name not in _CONDA_VALUE_OPTIONS:
                    continue
                attached = Word(value, word.offsets[len(name) + 1 :]) if equals else None
                if attached is None:
                    if position >= len(words):
                        return
                    attached = words[position]
                    position += 1
                if name in ("-c", "--channel") and attached.value and not attached.dynamic:
                    self.parsed.dependencies.append(conda.channel(
                        self.path, self.span(attached), attached.value, self.section, off_mac=self.off_mac, command=True))
                continue
            dependency = conda.package(self.path, self.span(word), word.value, self.section, off_mac=self.off_mac,
                                       command=True)
            if dependency is not None:
                self.parsed.dependencies.append(dependency)


def _program(word: Word) -> str:
    """`pip3`, `/usr/bin/python3.11`, `$(PIP)` -> 'pip3', 'python3.11', 'pip'."""
    variable = _VARIABLE.match(word.value.lstrip("@+-"))
    if variable:
        name = variable.group(1).lower()
        return "pip" if name.startswith("pip") else "python" if name.startswith("python") else ""
    if word.dynamic:
        return ""
    return word.value.lstrip("@+-").rsplit("/", 1)[-1].lower()


def _after_command(words: Sequence[Word], subcommand: str) -> Optional[List[Word]]:
    """The words after `subcommand` when it is the first word that is not an option; else None."""
    for position, word in enumerate(words):
        if word.plain == subcommand:
            return list(words[position + 1 :])
        if not word.plain.startswith("-"):
            return None
    return None


def scan_text(path: str, text: str, section: str, parsed: Parsed, *, index: Optional[LineIndex] = None,
              offsets: Optional[Sequence[int]] = None, off_mac: bool = False) -> None:
    """Install commands in shell text; `offsets` maps each character to the file (default: the text is the file)."""
    index = index or LineIndex(text)
    Scanner(path, index, section, parsed, off_mac).scan(text, offsets if offsets is not None else range(len(text)))
