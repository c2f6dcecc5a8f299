"""The dependency rules (CDL5xx): Dependency records in, findings out."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple
from urllib.parse import unquote

from cudalint.catalog import load_catalog
from cudalint.findings import Finding
from cudalint.manifests import REQUIREMENTS_FOLDER_DEPTH, manifest_kind
from cudalint.manifests.base import Dependency, Problem
from cudalint.manifests.markers import excludes_macos, names_only_extras
from cudalint.manifests.packages import PackageGroup, load_packages
from cudalint.manifests.requirement import repository_name, split_url, url_problem
from cudalint.manifests.versions import admits_at_least, cuda_local_tag, release

# Words in a section, extra, group or file name that say its entries are for CUDA machines, or for
# other hardware or systems a Mac is not (`[project.optional-dependencies] cuda`, `rocm = [...]`,
# requirements-gpu.txt, a pixi `target.linux-64` table).
_PLATFORM_WORDS = {"cuda", "gpu", "gpus", "nvidia", "linux", "win", "windows", "tensorrt", "trt",
                   "rocm", "xpu", "npu", "hpu", "tpu", "xla", "ascend", "habana", "gaudi", "ipex"}
_CUDA_VERSION_WORD = re.compile(r"^(cu\d{2,3}|cuda\d{1,3}x?)$")  # cu121; cuda112, cuda12x (spaCy's extras)

_TEMPLATES = {
    "CDL501": "`{name}` runs only on NVIDIA GPUs; it cannot be installed or used on macOS or CPU-only machines."
    " Use {alternative} instead",
    "CDL502": "`{name}` is the CUDA build of a package that also comes in a portable build; use {alternative}"
    " instead",
    "CDL503": "`{name}` is an NVIDIA CUDA library with no macOS build; remove it: {alternative}",
    "CDL504": "`{name}` installs without CUDA, but its kernels need an NVIDIA GPU; consider {alternative}",
    "CDL508": "conda package `{name}` is an NVIDIA CUDA component or CUDA build with no macOS build; {alternative}",
}


def platform_named(name: str) -> bool:
    """Does a section or file name mark its entries as meant for CUDA/Linux/Windows machines?"""
    words = re.split(r"[^a-z0-9]+", name.lower())
    return any(word in _PLATFORM_WORDS or _CUDA_VERSION_WORD.match(word) for word in words)


def file_named_off_mac(path: str) -> bool:
    """A file named for other machines, read whole: `requirements-cu121.txt`, `Dockerfile.cuda`."""
    return platform_named(PurePath(path).name)


# Words in a section, extra, group, file or folder name that say its entries build the documentation
# (requirements/readthedocs.txt, docs/requirements.txt, a `docs` extra): installed where the docs are
# built, imported there to read docstrings, never run on a device.
_DOCS_WORDS = {"doc", "docs", "documentation", "readthedocs", "rtd", "sphinx", "mkdocs"}


def for_docs(dep: Dependency) -> bool:
    """Is the entry part of what builds the project's documentation: by its section (a `docs` extra or
    group), or, in a requirements list, by the list's file or folder name? (An install command in a page
    of the docs, read with --include-docs, is what a user runs: not this.)"""
    kind = manifest_kind(dep.path, include_docs=True)
    if kind == "docs":
        return False
    names = [dep.section]
    if kind == "requirements":
        pure = PurePath(dep.path)
        names += [pure.stem, *(folder.name for folder in list(pure.parents)[:REQUIREMENTS_FOLDER_DEPTH])]
    return any(word in _DOCS_WORDS for name in names if name for word in re.split(r"[^a-z0-9]+", name.lower()))


def is_off_mac(dep: Dependency) -> bool:
    """A Mac never installs the entry: its marker is false there, or it sits in a section, a file, a CI
    job or a lock resolution meant for other machines (named for CUDA, Linux, Windows, other hardware)."""
    return (dep.off_mac or excludes_macos(dep.marker) or platform_named(dep.section)
            or file_named_off_mac(dep.path))


def cuda_index_url(url: str) -> bool:
    """Does the URL lead to CUDA builds: a path naming one (`.../whl/cu121`, `.../cu121torch2.4/`,
    `.../torch-2.1.0+cu118.html`), or a host of NVIDIA's own (its package index, its wheel downloads)?"""
    match = load_catalog()["CDL507"].match
    parts = split_url(url)
    if parts is None:
        return False
    labels = (parts.hostname or "").lower().split(".")
    if any(label in match["host_labels"] for label in labels):
        return True
    return bool(re.search(match["url_pattern"], unquote(parts.path), re.IGNORECASE))


def _display(dep: Dependency) -> str:
    return dep.name + (f"[{','.join(dep.extras)}]" if dep.extras else "")


def _with_version(dep: Dependency, specifier: str) -> str:
    """'torch==2.1.0', or 'torch ^2.1' for Poetry and conda specifiers that start without an operator."""
    return dep.name + (specifier if specifier[:1] in ("<", ">", "=", "!", "~", "") else f" {specifier}")


def _torch_note(group: PackageGroup, torch_version: Optional[str]) -> str:
    if not (group.alternative_torch and torch_version):
        return ""
    target, needed = release(torch_version), release(group.alternative_torch)
    if target is None or needed is None or target >= needed:
        return ""
    return f" (that needs torch {group.alternative_torch} or later; this project targets torch {torch_version})"


def _before_portable(dep: Dependency, group: PackageGroup) -> Optional[str]:
    if not dep.specifier or admits_at_least(dep.specifier, group.portable_since):
        return None
    history = ", ".join(f"{backend} from {since}" for backend, since in group.backends)
    return (
        f"`{_with_version(dep, dep.specifier)}` allows only releases before {group.portable_since}, which have no"
        f" {_backend_name(group)} backend ({history}); require `{dep.name}>={group.portable_since}`"
    )


def _before_compiled(dep: Dependency, group: PackageGroup) -> bool:
    """The entry's range allows only releases before its name's first one with compiled kernels."""
    since = dict(group.compiled_since).get(dep.name)
    return bool(since and dep.specifier) and not admits_at_least(dep.specifier, since)


def _backend_name(group: PackageGroup) -> str:
    return next(backend for backend, since in group.backends if since == group.portable_since)


def _group_for(dep: Dependency) -> Optional[PackageGroup]:
    packages = load_packages()
    if dep.ecosystem == "conda":
        return packages.match_conda(dep.name) or packages.match(dep.name, dep.extras)
    group = packages.match(dep.name, dep.extras) if dep.name else None
    if group is None and dep.kind == "vcs" and dep.url:
        group = packages.match_repository(repository_name(dep.url))
    return group


def conda_build(spec: str) -> str:
    """The build string of a conda spec: '=2.1=*cuda*', '2.1 *cuda*', '[build=*cuda*]' -> '*cuda*'."""
    bracket = re.search(r"build\s*=\s*['\"]?([^,'\"\]]+)", spec)
    if bracket:
        return bracket.group(1)
    words = spec.split()
    if len(words) >= 2:
        return words[1]
    pinned = re.fullmatch(r"\s*(?:==?)?([^=<>!~]+)=([^=]+)", spec)
    return pinned.group(2) if pinned else ""


def _package_problems(dep: Dependency, torch_version: Optional[str]) -> List[Tuple[str, str]]:
    group = _group_for(dep)
    if group is not None and group.rule == "CDL505":
        message = _before_portable(dep, group)
        if message:
            return [("CDL505", message)]
        group = None  # a release range with a Mac backend: the build it asks for is judged below
    if group is not None and _before_compiled(dep, group):
        return []  # only releases of a pure-Python build (`mmcv<2`, the lite one): no kernels to miss
    if group is not None:
        name = _display(dep) if dep.name else group.names[0]
        message = (group.message or _TEMPLATES[group.rule]).format(name=name, alternative=group.alternative)
        return [(group.rule, message + _torch_note(group, torch_version))]
    if dep.ecosystem == "conda" and "cuda" in conda_build(dep.specifier).lower():
        return [("CDL508", f"`{dep.raw.strip()}` selects a CUDA build through its build string; leave the"
                 " build unconstrained so conda-forge picks one per machine")]
    if dep.channel in load_packages().cuda_channels:
        return [("CDL509", f"`{dep.name}` comes from the `{dep.channel}` conda channel, which serves NVIDIA"
                 " CUDA builds; take it from conda-forge")]
    tag = cuda_local_tag(dep.specifier)
    if tag:
        plain = dep.specifier.split("+", 1)[0]
        return [("CDL506", f"`{_with_version(dep, dep.specifier)}` asks for the CUDA build `{tag}`, which has no"
                 f" macOS wheel; drop the local label (`{_with_version(dep, plain)}`) or limit the line to Linux with"
                 " `; sys_platform == \"linux\"`")]
    return []


def _problems(dep: Dependency, torch_version: Optional[str]) -> List[Tuple[str, str]]:
    if dep.kind in ("index-url", "find-links"):
        if dep.url and cuda_index_url(dep.url):
            return [("CDL507", f"`{dep.url}` is a CUDA wheel index; on a Mac it has no builds (or only CUDA"
                     " ones). Keep it in a Linux-only requirements file, or attach it to torch with a Linux"
                     " marker")]
        return []
    if dep.kind == "conda-channel":
        if dep.name in load_packages().cuda_channels:
            return [("CDL509", f"conda channel `{dep.name}` serves NVIDIA CUDA builds; use conda-forge")]
        return []
    return _package_problems(dep, torch_version)


# The sections that hold a package's optional extras (setup.py, setup.cfg, pyproject.toml, a wheel's METADATA).
_EXTRA_SECTIONS = ("project.optional-dependencies.", "setup.extras_require.", "options.extras_require.", "extra.")
# The package table's rules whose remedy is an extra for CUDA machines: nothing of the package installs or runs
# without an NVIDIA GPU (CDL501), an NVIDIA runtime wheel (CDL503).
_CUDA_MACHINE_RULES = frozenset({"CDL501", "CDL503"})


def cuda_extras(deps: Sequence[Dependency]) -> Set[Tuple[str, int, int]]:
    """The places (path, line, column) of the entries of each optional extra that is the CUDA machines' extra
    CDL501's remedy asks for, named after what it installs (`flash4 = ["flash-attn-4"]`): every entry it writes
    is a package that needs an NVIDIA GPU to install or run and that the extra's name names, with no marker of
    its own (a marker says for which platforms, and is judged as such), and every other extra that pulls it in
    (`all = ["pkg[flash4]"]`, whose entries are those of the extra, each where it is written) is named for other
    machines or is such an extra itself. A Mac user asks for none of them."""
    packages = load_packages()
    written: Dict[Tuple[str, int, int], str] = {}  # an entry's place -> the section that writes it (its first)
    for dep in deps:
        written.setdefault((dep.path, dep.line, dep.column), dep.section)
    verdicts: Dict[Tuple[str, str], bool] = {}
    pulled: Dict[Tuple[str, str], Set[str]] = {}  # an extra -> the sections that pull it in
    for dep in deps:
        home = written[(dep.path, dep.line, dep.column)]
        if not home.startswith(_EXTRA_SECTIONS):
            continue
        key = (dep.path, home)
        if home != dep.section:
            pulled.setdefault(key, set()).add(dep.section)
            continue
        group = packages.match(dep.name, dep.extras) if not dep.url and names_only_extras(dep.marker) else None
        verdicts[key] = (verdicts.get(key, True) and group is not None and group.rule in _CUDA_MACHINE_RULES
                         and _names_package(home.rpartition(".")[2], dep.name))
    found = {key for key, cuda in verdicts.items() if cuda}
    extras = {key for key in found
              if all(platform_named(section) or (key[0], section) in found for section in pulled.get(key, ()))}
    return {place for place, home in written.items() if (place[0], home) in extras}


def _names_package(extra: str, package: str) -> bool:
    """The extra's name names the package (`flash4` for flash-attn-4, `deepspeed` for deepspeed): who asks for
    the extra asks for that package by name. A name of its own (`extra`, `train`, `cpu`) is a feature a Mac
    user may choose."""
    squeezed = re.sub(r"[^a-z0-9]", "", extra.lower())
    words = [word for word in re.split(r"[^a-z0-9]+", package.lower()) if word]
    whole = "".join(words)
    return bool(squeezed and words) and (whole.startswith(squeezed) or squeezed.startswith(whole)
                                         or (len(words[0]) >= 4 and squeezed.startswith(words[0])))


def check_dependencies(deps: Iterable[Dependency], torch_version: Optional[str] = None) -> List[Finding]:
    catalog = load_catalog()
    findings = []
    seen = set()  # one entry read twice (setup.py's list in two extras: `full = cv_requires + [...]`) is one finding
    deps = list(deps)
    for_cuda = cuda_extras(deps)
    for dep in deps:
        invalid = url_problem(dep.url) if dep.url else None
        if invalid:
            findings.append(Finding("CDL000", dep.path, dep.line, dep.column, dep.end_line, dep.end_column,
                                    f"line {dep.line}: {invalid}", catalog["CDL000"].severity))
            continue
        if is_off_mac(dep) or (dep.path, dep.line, dep.column) in for_cuda:
            continue  # a section, file, job or lock resolution for other machines: nothing a Mac installs
        if for_docs(dep):
            continue  # the documentation build's: nothing of it runs on a device
        if (dep.path, dep.line, dep.column) in seen:
            continue
        seen.add((dep.path, dep.line, dep.column))
        for code, message in _problems(dep, torch_version):
            findings.append(
                Finding(
                    code=code,
                    path=dep.path,
                    line=dep.line,
                    column=dep.column,
                    end_line=dep.end_line,
                    end_column=dep.end_column,
                    message=message,
                    severity=catalog[code].severity,
                )
            )
    return findings


def problem_findings(problems: Iterable[Problem]) -> List[Finding]:
    severity = load_catalog()["CDL000"].severity
    return [
        Finding("CDL000", p.path, p.span.line, p.span.column, p.span.end_line, p.span.end_column, p.message, severity)
        for p in problems
    ]
