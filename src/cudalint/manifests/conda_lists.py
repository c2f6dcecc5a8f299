"""Conda package lists: the text conda writes and reads back, often saved as requirements.txt.

`conda list --export` and `conda create --file` write one `name=version=build` per line under a
comment that names the platform; `conda list --explicit` writes `@EXPLICIT`, then one package URL per
line. pip cannot read either, so such a file is read as what it is. An entry whose build is `pypi_0`
was installed by pip into the environment: it is a PyPI package. A list is for the platform it was
made on (`# platform: linux-64`, the platform folder of each URL): entries of a list made for another
platform than macOS are kept off the Mac, as a lock file's Linux resolutions are.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from cudalint.manifests.base import Dependency, Parsed, Problem, Span, make_dependency, split_lines
from cudalint.manifests.pixi import channel_name, runs_on_mac

# The comment conda writes at the top of an exported list, and the line that starts an explicit one.
_LIST_HEADER = re.compile(r"#\s*(?:platform:\s*\S|\$\s*conda\s+create\b)")
_PLATFORM = re.compile(r"#\s*platform:\s*(?P<platform>\S+)")
_EXPLICIT = "@EXPLICIT"
# name=version=build: a line pip refuses (`=` is no version operator of pip's) and conda writes
_EXPORT_ENTRY = re.compile(r"(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)=(?P<version>[^=\s]+)=(?P<build>[^=\s]+)")
# the file a package URL of an explicit list names: name-version-build.tar.bz2 | .conda
_PACKAGE_SUFFIXES = (".tar.bz2", ".conda")
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
PIP_BUILD = "pypi_0"  # the build conda records for a package pip installed into the environment


def is_package_list(text: str) -> bool:
    """A conda package list: conda's header comment or `@EXPLICIT` before the first entry, or every
    entry in conda's `name=version=build` form (at least one)."""
    entries = 0
    for line in split_lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if entries == 0 and _LIST_HEADER.match(stripped):
                return True
            continue
        if stripped == _EXPLICIT and entries == 0:
            return True
        if not _EXPORT_ENTRY.fullmatch(stripped):
            return False
        entries += 1
    return entries > 0


def read_package_list(path: str, text: str) -> Parsed:
    """The packages of a conda package list (is_package_list), with the place of each line."""
    parsed = Parsed()
    explicit = False
    platform: Optional[str] = None  # the platform the list says it was made on
    for number, line in enumerate(split_lines(text), start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            named = _PLATFORM.match(stripped)
            platform = named["platform"] if named else platform
            continue
        if not stripped:
            continue
        start = len(line) - len(line.lstrip()) + 1
        span = Span(number, start, number, start + len(stripped))
        if stripped == _EXPLICIT:
            explicit = True
            continue
        if explicit:
            dependency = _package_file(path, span, stripped)
        else:
            entry = _EXPORT_ENTRY.fullmatch(stripped)
            dependency = _exported(path, span, stripped, entry) if entry else _spec(path, span, stripped)
        if dependency is None:
            parsed.problems.append(Problem(path, span, f"line {number}: not a conda package spec: {stripped[:80]!r}"))
        else:
            parsed.dependencies.append(replace(dependency, off_mac=not runs_on_mac(platform)) if platform else dependency)
    return parsed


def _spec(path: str, span: Span, text: str) -> Optional[Dependency]:
    """Any other match spec a list may hold (`conda create --file` reads `numpy>=1.24` too)."""
    from cudalint.manifests.conda import package

    return package(path, span, text, "packages")


def _exported(path: str, span: Span, text: str, entry: "re.Match[str]") -> Dependency:
    if entry["build"] == PIP_BUILD:
        return make_dependency(path, span, name=entry["name"].lower(), specifier=f"=={entry['version']}", extras=(),
                               marker=None, raw=text, section="packages", kind="package", ecosystem="pypi")
    return make_dependency(path, span, name=entry["name"].lower(), specifier=f"={entry['version']}={entry['build']}",
                           extras=(), marker=None, raw=text, section="packages", kind="package", ecosystem="conda")


def _package_file(path: str, span: Span, url: str) -> Optional[Dependency]:
    """One URL of an explicit list: the package its file name says, from the channel and for the platform
    its path names (`CHANNEL/PLATFORM/FILE`; `noarch` runs everywhere). The list's header, where it has
    one, says the platform instead (read_package_list)."""
    address = url.split("#", 1)[0]
    parts = address.rsplit("/", 2)
    suffix = next((suffix for suffix in _PACKAGE_SUFFIXES if parts[-1].endswith(suffix)), None)
    pieces = parts[-1][: -len(suffix)].rsplit("-", 2) if suffix else []  # split by string, never by backtracking
    if len(pieces) != 3 or not all(pieces) or not _PACKAGE_NAME.fullmatch(pieces[0]):
        return None
    name, version, build = pieces
    folder = parts[1] if len(parts) == 3 else "noarch"
    dependency = make_dependency(
        path, span, name=name.lower(), specifier=f"={version}={build}", extras=(),
        marker=None, raw=url, section="packages", kind="package", ecosystem="conda", url=address,
        channel=channel_name(parts[0]) if len(parts) == 3 and "://" in parts[0] else None,
    )
    return replace(dependency, off_mac=True) if folder != "noarch" and "-" in folder and not runs_on_mac(folder) else dependency
