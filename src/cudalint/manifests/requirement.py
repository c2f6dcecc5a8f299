"""One PEP 508 requirement string: `name[extras] specifier ; marker` or `name @ url`.

Also reads the name out of a bare URL (`git+https://...#egg=name`, a wheel file
name), the way pip does for lines of a requirements file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple
from urllib.parse import SplitResult, unquote, urlsplit

from cudalint.manifests.base import normalize_name
from cudalint.manifests.markers import MarkerError, parse_marker

NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_EXTRAS = re.compile(r"\[\s*([^\]]*)\]")
_CLAUSE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([^\s=<>!~]\S*?)\s*$")
_VERSION = re.compile(
    r"^v?\d+(?:\.\d+)*(?:\.\*|[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|post|rev|r|dev)[-_.]?\d*)*"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    re.IGNORECASE,
)
_VCS = re.compile(r"^(git|hg|svn|bzr)\+", re.IGNORECASE)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^file:")
_WHEEL = re.compile(r"^([A-Za-z0-9_.]+?)-([^-]+)-.*\.whl$")
_SDIST = re.compile(r"^([A-Za-z0-9_.-]+?)-(\d[^-]*?)\.(?:tar\.gz|zip|tar\.bz2)$")


class RequirementError(ValueError):
    pass


def split_url(url: str) -> Optional[SplitResult]:
    """The parts of a URL, or None when it cannot be one (`https://[x`, a bad port)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return None
    return parts


def url_problem(url: str) -> Optional[str]:
    """Why a URL written in a manifest is not a URL; None when it is one."""
    if looks_like_url(url) and split_url(_VCS.sub("", url)) is None:
        return f"invalid URL {url!r}"
    return None


def _split_marker(text: str):
    """A URL and its marker: pip takes '; ' (or ' ;') as the separator, since ';' may be part of a URL."""
    return re.split(r"\s+;|;\s+", text.strip(), maxsplit=1)


@dataclass(frozen=True)
class Requirement:
    name: str
    extras: Tuple[str, ...] = ()
    specifier: str = ""
    marker: Optional[str] = None
    url: Optional[str] = None

    @property
    def kind(self) -> str:
        if self.url is None:
            return "package"
        return "vcs" if _VCS.match(self.url) else "url"


def _check_marker(marker: str) -> str:
    try:
        parse_marker(marker)
    except MarkerError as error:
        raise RequirementError(str(error)) from None
    return marker.strip()


def _check_specifier(text: str) -> str:
    spec = text.strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    if not spec:
        return ""
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if not match:
            raise RequirementError(f"invalid version specifier {clause.strip()!r}")
        op, version = match.groups()
        if op != "===" and not _VERSION.match(version):
            raise RequirementError(f"invalid version {version!r} in {clause.strip()!r}")
    return re.sub(r"\s+", "", spec)


def parse_requirement(text: str) -> Requirement:
    """A PEP 508 requirement; RequirementError says what is wrong."""
    text = text.strip()
    match = NAME.match(text)
    if not match:
        raise RequirementError(f"expected a package name at {text[:30]!r}")
    name = normalize_name(match.group(0))
    rest = text[match.end():].lstrip()
    extras: Tuple[str, ...] = ()
    if rest.startswith("["):
        extras_match = _EXTRAS.match(rest)
        if not extras_match:
            raise RequirementError("unclosed '[' in extras")
        parts = [part.strip() for part in extras_match.group(1).split(",") if part.strip()]
        for part in parts:
            if not NAME.fullmatch(part):
                raise RequirementError(f"invalid extra name {part!r}")
        extras = tuple(normalize_name(part) for part in parts)
        rest = rest[extras_match.end():].lstrip()
    if rest.startswith("@"):
        url_and_marker = _split_marker(rest[1:])
        url = url_and_marker[0].strip()
        if not url:
            raise RequirementError("missing URL after '@'")
        if url_problem(url):
            raise RequirementError(url_problem(url))
        marker = _check_marker(url_and_marker[1]) if len(url_and_marker) > 1 else None
        version = name_from_url(url)[1]
        return Requirement(name, extras, f"=={version}" if version else "", marker, url)
    spec_text, semicolon, marker_text = rest.partition(";")
    marker = _check_marker(marker_text) if semicolon else None
    return Requirement(name, extras, _check_specifier(spec_text), marker)


def looks_like_url(text: str) -> bool:
    return bool(_URL.match(text) or _VCS.match(text))


def looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.startswith((".", "~")) or text.endswith((".whl", ".zip", ".tar.gz"))


def name_from_url(url: str) -> Tuple[str, str]:
    """(normalised name, version) read from #egg=, a wheel or sdist file name; '' when unknown."""
    parts = split_url(url)
    if parts is None:
        return "", ""
    egg = re.search(r"(?:^|&)egg=([^&]+)", parts.fragment)
    if egg:
        return normalize_name(re.split(r"[=<>!~\[]", egg.group(1))[0]), ""
    filename = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
    for pattern in (_WHEEL, _SDIST):
        match = pattern.match(filename)
        if match:
            return normalize_name(match.group(1)), match.group(2)
    return "", ""


def repository_name(url: str) -> str:
    """The last path segment of a VCS URL without '.git' or '@ref': 'flash-attention'."""
    parts = split_url(_VCS.sub("", url))
    path = parts.path if parts is not None else ""
    segment = path.split("@", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return segment[:-4] if segment.endswith(".git") else segment


def parse_url_requirement(text: str) -> Requirement:
    """A bare URL line (pip's `git+https://...#egg=x ; marker`), name taken from the URL."""
    url_and_marker = _split_marker(text)
    url = url_and_marker[0].strip()
    if url_problem(url):
        raise RequirementError(url_problem(url))
    marker = _check_marker(url_and_marker[1]) if len(url_and_marker) > 1 else None
    name, version = name_from_url(url)
    return Requirement(name, (), f"=={version}" if version else "", marker, url)
