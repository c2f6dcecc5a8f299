"""Dependency manifests and build files: what they ask for that needs NVIDIA CUDA.

    manifest_kind(path)                 which reader handles a file, or None
    check_manifest(path, text)          findings (CDL5xx dependencies, CDL45x build files, CDL000)
    dependencies(path, text)            the entries, for reports
    torch_version_from(deps)            the torch release a project pins or lower-bounds

Nothing here runs the project's code: setup.py is read with libcst.
"""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from pathlib import PurePath
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from cudalint.findings import Finding
from cudalint.manifests import (
    cmake,
    conda,
    cuda_sources,
    dockerfile,
    pipfile,
    pixi,
    poetry_lock,
    pyproject,
    setup_cfg,
    setup_py,
    uv_lock,
)
from cudalint.manifests.base import Dependency, Parsed, Problem
from cudalint.manifests.checks import check_dependencies, problem_findings
from cudalint.manifests.requirement import looks_like_url
from cudalint.manifests.requirements import read_requirements
from cudalint.manifests.versions import lower_bound

__all__ = ["Dependency", "check_manifest", "dependencies", "manifest_kind", "torch_requirement", "torch_version_from"]

# (kind, globs on the lower-cased file name)
_NAMES: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("requirements", ("requirements*.txt", "requirements*.in", "constraints*.txt")),
    ("pyproject", ("pyproject.toml",)),
    ("setup_py", ("setup.py",)),
    ("setup_cfg", ("setup.cfg",)),
    ("conda", ("environment*.yml", "environment*.yaml")),
    ("pipfile", ("pipfile",)),
    ("poetry_lock", ("poetry.lock",)),
    ("uv_lock", ("uv.lock",)),
    ("pixi", ("pixi.toml",)),
    ("cmake", ("cmakelists.txt", "*.cmake")),
    ("cuda_source", ("*.cu", "*.cuh")),
    ("dockerfile", ("dockerfile", "dockerfile.*", "*.dockerfile")),
)

_READERS: Dict[str, Callable[[str, str], Parsed]] = {
    "pyproject": pyproject.read,
    "setup_py": setup_py.read,
    "setup_cfg": setup_cfg.read,
    "conda": conda.read,
    "pipfile": pipfile.read,
    "poetry_lock": poetry_lock.read,
    "uv_lock": uv_lock.read,
    "pixi": pixi.read,
}
_BUILD_FILES: Dict[str, Callable[[str, str], Tuple[List[Finding], List[Problem]]]] = {
    "cmake": cmake.check,
    "cuda_source": cuda_sources.check,
    "dockerfile": dockerfile.check,
}
_TORCH_NAMES = ("torch", "pytorch")


def manifest_kind(path: str) -> Optional[str]:
    """The reader for a file, chosen by its name (and a requirements/ parent folder); None if none."""
    pure = PurePath(path)
    name = pure.name.lower()
    if pure.parent.name.lower() == "requirements" and re.search(r"\.(txt|in)$", name):
        return "requirements"
    for kind, patterns in _NAMES:
        if any(fnmatchcase(name, pattern) for pattern in patterns):
            return kind
    return None


def _requirements_tree(path: str, text: str, seen: set) -> List[Parsed]:
    """A requirements file and, recursively, the -r/-c files the engine would not lint on its own."""
    seen.add(os.path.normcase(os.path.abspath(path)))
    parsed, includes = read_requirements(path, text)
    results = [parsed]
    for include in includes:
        if looks_like_url(include.target) or "$" in include.target:
            continue
        target = os.path.normpath(os.path.join(os.path.dirname(path), include.target))
        if not os.path.isfile(target):
            parsed.problems.append(
                Problem(path, include.span, f"line {include.span.line}: included file {include.target!r} not found")
            )
            continue
        if manifest_kind(target) is not None or os.path.normcase(os.path.abspath(target)) in seen:
            continue
        try:
            with open(target, encoding="utf-8-sig") as handle:
                included = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            parsed.problems.append(
                Problem(path, include.span, f"line {include.span.line}: cannot read {include.target!r}: {error}")
            )
            continue
        results += _requirements_tree(target, included, seen)
    return results


def _parse(path: str, text: str) -> List[Parsed]:
    kind = manifest_kind(path)
    if kind == "requirements":
        return _requirements_tree(path, text, set())
    if kind in _READERS:
        return [_READERS[kind](path, text)]
    return []


def dependencies(path: str, text: str) -> List[Dependency]:
    """Every entry of a dependency manifest (and of the requirement files it includes)."""
    return [dep for parsed in _parse(path, text) for dep in parsed.dependencies]


def check_manifest(path: str, text: str, *, torch_version: Optional[str] = None) -> List[Finding]:
    """Findings for one manifest or build file; bad input gives CDL000 findings, never an exception."""
    kind = manifest_kind(path)
    if kind in _BUILD_FILES:
        findings, problems = _BUILD_FILES[kind](path, text)
        return sorted(findings + problem_findings(problems), key=lambda f: f.sort_key)
    parsed = _parse(path, text)
    deps = [dep for part in parsed for dep in part.dependencies]
    findings = check_dependencies(deps, torch_version or torch_version_from(deps))
    findings += problem_findings(problem for part in parsed for problem in part.problems)
    return sorted(findings, key=lambda f: f.sort_key)


def torch_requirement(deps: Iterable[Dependency]) -> Optional[Dependency]:
    """The first entry that requires torch with a version: its specifier says which releases are allowed."""
    for dep in deps:
        if dep.kind in ("package", "url", "vcs") and dep.name in _TORCH_NAMES and lower_bound(dep.specifier):
            return dep
    return None


def torch_version_from(deps: Iterable[Dependency]) -> Optional[str]:
    """The torch release the entries pin or lower-bound: 'torch>=2.1,<3' -> '2.1'; None when none does."""
    dep = torch_requirement(deps)
    return lower_bound(dep.specifier) if dep is not None else None
