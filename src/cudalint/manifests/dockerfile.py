"""Dockerfiles: base images built on NVIDIA CUDA (CDL454), and the install commands of RUN lines.

Lines are joined at the escape character like Docker does, comment lines inside a
continuation are dropped, heredoc bodies are skipped, and `ARG` defaults declared
before the first FROM are substituted into the image name.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Dict, Iterator, List, Optional, Set, Tuple

from cudalint.catalog import load_catalog
from cudalint.findings import Finding
from cudalint.manifests.base import LineIndex, Parsed, Problem, split_lines
from cudalint.manifests.checks import file_named_off_mac
from cudalint.manifests.commands import Scanner, Word, scan_text

INSTRUCTIONS = {
    "from", "run", "cmd", "label", "maintainer", "expose", "env", "add", "copy", "entrypoint",
    "volume", "user", "workdir", "arg", "onbuild", "stopsignal", "healthcheck", "shell",
}
_DIRECTIVE = re.compile(r"^#\s*escape\s*=\s*(\S)\s*$", re.IGNORECASE)
_HEREDOC = re.compile(r"<<-?\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _instructions(text: str, index: LineIndex) -> Iterator[Tuple[str, int, List[int]]]:
    """(joined instruction text, first line, offset in the file of each character)."""
    lines = split_lines(text)
    escape = "\\"
    for line in lines[:5]:
        directive = _DIRECTIVE.match(line)
        if directive:
            escape = directive.group(1)
            break
        if not line.startswith("#"):
            break
    chars: List[str] = []
    offsets: List[int] = []
    first = 0
    heredoc: Optional[str] = None
    for number, line in enumerate(lines, start=1):
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        stripped = line.strip()
        if stripped.startswith("#") or (not stripped and not chars):
            continue
        start = index.starts[number - 1]
        continued = line.rstrip().endswith(escape)
        kept = line.rstrip()[:-1] if continued else line
        if not chars:
            first = number
        chars.extend(kept)
        offsets.extend(range(start, start + len(kept)))
        if not continued:
            joined = "".join(chars)
            yield joined, first, offsets
            marker = _HEREDOC.search(joined)
            heredoc = marker.group(1) if marker else None
            chars, offsets = [], []
    if chars:
        yield "".join(chars), first, offsets


def _substitute(image: str, variables: Dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        return variables.get(name, match.group(2) or "")

    return _VARIABLE.sub(value, image)


def _is_cuda_image(image: str, rule) -> bool:
    name = re.sub(r"^(docker\.io/)?(library/)?", "", image.lower())
    name = name.partition("@")[0]
    repository, tag = name, ""
    if ":" in name.rsplit("/", 1)[-1]:
        repository, tag = name.rsplit(":", 1)
    if any(fnmatchcase(repository, pattern) for pattern in rule.match["images"]):
        return True
    return any(fnmatchcase(repository, pattern) for pattern in rule.match["cuda_tag_images"]) and "cuda" in tag


def looks_like_dockerfile(text: str) -> bool:
    """The first instruction is FROM (or an ARG before it), and a FROM line follows."""
    for line in split_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            keyword = stripped.split()[0].lower()
            return keyword in ("from", "arg") and bool(re.search(r"^\s*FROM\s+\S", text, re.MULTILINE | re.IGNORECASE))
    return False


_EXEC_WORD = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _run(path: str, index: LineIndex, instruction: str, offsets: List[int], words, parsed: Parsed) -> None:
    """The shell (or exec-form) command of a RUN instruction, after its --mount/--network flags."""
    body = next((word for word in words[1:] if not word[0].startswith("--")), None)
    if body is None:
        return
    start = body[1]
    if instruction[start:].lstrip().startswith("["):
        found = [Word(m.group(1), offsets[m.start(1) : m.end(1)]) for m in _EXEC_WORD.finditer(instruction, start)]
        if found and "\\" not in "".join(word.value for word in found):
            Scanner(path, index, "Dockerfile RUN", parsed).command(found, 0)
        return
    scan_text(path, instruction[start:], "Dockerfile RUN", parsed, index=index, offsets=offsets[start:])


_FROM_STAGE = re.compile(r"(?:^--from=|[=,]from=)([^,\s]+)", re.IGNORECASE)  # `--from=build`, `--mount=type=bind,from=0`


def check(path: str, text: str) -> Tuple[List[Finding], Parsed]:
    rule = load_catalog()["CDL454"]
    # `Dockerfile.cuda`, `gpu.Dockerfile`: the CUDA variant of a choice of images, named for it like a
    # requirements-cuda.txt; a Mac user builds the other one
    variant = file_named_off_mac(path)
    index = LineIndex(text)
    findings: List[Finding] = []
    parsed = Parsed()
    problems = parsed.problems
    variables: Dict[str, str] = {}
    stages = set()
    seen_from = False
    number = -1  # the stage each FROM starts, counted from 0 as `COPY --from=0` counts them
    unnamed: Dict[int, int] = {}  # an unnamed stage on a CUDA image -> its finding's place in `findings`
    referenced: Set[str] = set()  # stages later instructions read: `--from=NAME|N`, `FROM name`
    for instruction, line, offsets in _instructions(text, index):
        words = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", instruction)]
        if not words:
            continue
        keyword = words[0][0].lower()
        if keyword not in INSTRUCTIONS:
            problems.append(Problem(path, index.line_span(line), f"line {line}: unknown instruction {words[0][0]!r}"))
            continue
        if keyword == "arg" and not seen_from:
            for word, _, _ in words[1:]:
                name, _, default = word.partition("=")
                variables[name] = default.strip("\"'")
            continue
        if keyword == "run":
            _run(path, index, instruction, offsets, words, parsed)
        if keyword in ("copy", "add", "run"):
            for word, _, _ in words[1:]:
                found = _FROM_STAGE.search(word)
                if found is not None and word.startswith("--"):
                    referenced.add(found.group(1).lower())
        if keyword != "from":
            continue
        seen_from = True
        number += 1
        arguments = [word for word in words[1:] if not word[0].startswith("--")]
        if not arguments:
            problems.append(Problem(path, index.line_span(line), f"line {line}: FROM needs an image"))
            continue
        image_text, start, end = arguments[0]
        named = len(arguments) >= 3 and arguments[1][0].lower() == "as"
        if named:
            stages.add(arguments[2][0].lower())
        image = _substitute(image_text, variables)
        if image.lower() in stages:
            referenced.add(image.lower())
            continue
        if not _is_cuda_image(image, rule) or variant:
            continue
        span = index.span(offsets[start], offsets[end - 1] + 1)
        if not named:
            unnamed[number] = len(findings)
        findings.append(
            Finding(
                rule.code, path, span.line, span.column, span.end_line, span.end_column,
                f"base image `{image}` is an NVIDIA CUDA image; on a Mac (and on CPU-only hosts) the container"
                " has no GPU to use. Build from a plain Python or Linux image, or take the base image from a"
                " build argument",
                rule.severity,
            )
        )
    # An unnamed stage that is not the last one and that no later instruction reads (`COPY --from=0`)
    # is built by nobody: `docker build` builds the last stage and what it needs, and `--target` takes
    # only names (scvi-tools' leftover `FROM nvidia/cuda:...` above `FROM python:3.12 AS base`).
    dead = {at for stage, at in unnamed.items() if stage < number and str(stage) not in referenced}
    return [finding for at, finding in enumerate(findings) if at not in dead], parsed
