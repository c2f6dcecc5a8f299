"""Files that install a project by running commands: shell scripts, Makefiles, tox.ini, docs.

Each hands its shell text, with every character's place in the file, to the install
command scanner (commands.py).
"""

from __future__ import annotations

import re
from typing import List, Tuple

from cudalint.manifests.base import LineIndex, Parsed, Span
from cudalint.manifests.commands import scan_text
from cudalint.manifests.requirements import read_requirement_item

_FENCE = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\r\n]*)$")
_SHELL_INFOS = {"", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession", "text",
                "dockerfile", "docker", "powershell", "bat", "cmd", "terminal"}
_RST_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. (?:code-block|code|sourcecode)::[ \t]*(?P<info>\S*)[ \t]*$")


def _lines(text: str) -> List[Tuple[int, str]]:
    """(offset, line without its break) for every line."""
    index = LineIndex(text)
    starts = index.starts
    found = []
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        found.append((start, text[start:end].rstrip("\r\n")))
    return found


def _shell_of(lines: List[Tuple[int, str]], strip: int = 0) -> Tuple[str, List[int]]:
    """Lines joined with newlines, `strip` leading characters dropped from each, with offsets."""
    chars: List[str] = []
    offsets: List[int] = []
    for number, (start, line) in enumerate(lines):
        if number:
            chars.append("\n")
            offsets.append(start - 1)
        body = line[strip:] if line[:strip].strip() == "" else line.lstrip()
        skip = len(line) - len(body)
        chars.extend(body)
        offsets.extend(range(start + skip, start + skip + len(body)))
    return "".join(chars), offsets


def read_shell(path: str, text: str) -> Parsed:
    parsed = Parsed()
    scan_text(path, text, "script", parsed)
    return parsed


def read_makefile(path: str, text: str) -> Parsed:
    """Recipe lines (those starting with a tab, and their continuations)."""
    parsed = Parsed()
    index = LineIndex(text)
    recipe: List[Tuple[int, str]] = []
    continued = False
    for start, line in _lines(text):
        if line.startswith("\t") or continued:
            recipe.append((start, line))
            continued = line.endswith("\\")
        else:
            recipe.append((start, ""))
    shell, offsets = _shell_of(recipe, strip=1)
    scan_text(path, shell, "Makefile recipe", parsed, index=index, offsets=offsets)
    return parsed


def read_tox(path: str, text: str) -> Parsed:
    """tox.ini: `deps` are requirement lines, `commands*` and `install_command` are shell commands."""
    parsed = Parsed()
    index = LineIndex(text)
    section, key = "", None
    for start, line in _lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            continue
        value_start = None
        if line[0] in " \t" and key is not None:
            value_start = len(line) - len(line.lstrip())
        elif stripped.startswith("["):
            section, key = stripped.strip("[]").strip(), None
            continue
        else:
            match = re.match(r"^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$", line)
            key = match.group(1).strip() if match and section.startswith("testenv") else None
            value_start = match.start(2) if match else None
        if key is None or value_start is None:
            continue
        value = line[value_start:].rstrip()
        if not value:
            continue
        name = f"{section}.{key}"
        if key == "deps":
            skipped, value = _tox_dependency(value)
            value_start += skipped
            span = Span(index.position(start)[0], value_start + 1, index.position(start)[0], value_start + len(value) + 1)
            found = read_requirement_item(path, re.sub(r"\s+#.*$", "", value), span, name)
            parsed.dependencies += found.dependencies
            parsed.problems += found.problems
        elif key.startswith("commands") or key == "install_command":
            scan_text(path, value, name, parsed, index=index, offsets=range(start + value_start, start + len(line)))
    return parsed


# tox's factor conditions (`py311,!docs: pytest`, `build: build[virtualenv]`): the dependency after the colon
# applies to the environments named; a URL's `scheme://` is no condition.
_TOX_FACTORS = re.compile(r"^!?[A-Za-z0-9_.]+(?:\s*[-,]\s*!?[A-Za-z0-9_.]+)*\s*:(?!//)\s*")
# pip install's short options that take no value, written before another in one word (`-Ur{toxinidir}/...`)
_TOX_FLAGS = re.compile(r"^-[UqvIE]+(?=[rce])")


def _tox_dependency(value: str):
    """A `deps` line as a requirement line: its factor condition dropped, and pip's value-less short options
    combined before `-r`/`-c`/`-e` (`-Ur file`, tox passes the line to `pip install`) left out; with how many
    characters were dropped from its start."""
    skipped = 0
    factors = _TOX_FACTORS.match(value)
    if factors and value[factors.end():]:
        skipped, value = factors.end(), value[factors.end():]
    flags = _TOX_FLAGS.match(value)
    if flags:
        skipped, value = skipped + flags.end() - 1, "-" + value[flags.end():]
    return skipped, value


def read_docs(path: str, text: str) -> Parsed:
    """Code blocks of a Markdown or reStructuredText file that hold shell (or no language)."""
    parsed = Parsed()
    index = LineIndex(text)
    lines = _lines(text)
    number = 0
    while number < len(lines):
        _, line = lines[number]
        fence = _FENCE.match(line)
        directive = _RST_DIRECTIVE.match(line) if not fence else None
        if fence:
            marker, info = fence.group("fence"), fence.group("info").strip().split(" ")[0].lower().strip("{}.")
            end = number + 1
            while end < len(lines) and not lines[end][1].strip().startswith(marker):
                end += 1
            body = lines[number + 1 : end]
            number = end + 1
            if info in _SHELL_INFOS:
                shell, offsets = _shell_of(body)
                scan_text(path, shell, "docs", parsed, index=index, offsets=offsets)
        elif directive:
            indent = len(directive.group("indent"))
            end = number + 1
            while end < len(lines) and (not lines[end][1].strip() or len(lines[end][1]) - len(lines[end][1].lstrip()) > indent):
                end += 1
            body = lines[number + 1 : end]
            number = end
            if directive.group("info").lower() in _SHELL_INFOS:
                shell, offsets = _shell_of(body)
                scan_text(path, shell, "docs", parsed, index=index, offsets=offsets)
        else:
            number += 1
    return parsed
