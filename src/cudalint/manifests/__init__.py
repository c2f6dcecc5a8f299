"""Dependency manifests, build files and install commands: what they ask for that needs NVIDIA CUDA.

    manifest_kind(path)                 which reader handles a file, by its name; None if none
    sniff_kind(path)                    the same for a file named on the command line, by its content too
    check_manifest(path, text)          findings (CDL5xx dependencies, CDL45x build files, CDL000)
    dependencies(path, text)            the entries, for reports
    torch_version_from(deps)            the torch release a project pins or lower-bounds

Nothing here runs the project's code: setup.py is read with CPython's parser, shell is read as text.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable
from pathlib import PurePath

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms of every start)

from cudalint.findings import Finding  # noqa: E402 - after the TYPE_CHECKING stand-in

if TYPE_CHECKING:  # pragma: no cover - annotations only: the records are imported on first use
    from cudalint.manifests.base import Dependency, Parsed

# The records, the checks, the include reader and the version arithmetic are imported when a manifest
# is read: a run over Python files only (a pre-commit batch, one clean file) never loads them.

__all__ = ["Dependency", "check_manifest", "dependencies", "manifest_kind", "sniff_kind", "torch_requirement", "torch_version_from"]

# (kind, globs on the lower-cased file name, `*` their only wildcard); the first match wins
_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("requirements", ("*requirements*.txt", "*requirements*.in", "constraints*.txt")),
    ("pyproject", ("pyproject.toml",)),
    ("setup_py", ("setup.py",)),
    ("setup_cfg", ("setup.cfg",)),
    ("conda", ("environment*.yml", "environment*.yaml")),
    ("yaml", ("*.yml", "*.yaml")),
    ("pipfile", ("pipfile",)),
    ("poetry_lock", ("poetry.lock",)),
    ("uv_lock", ("uv.lock",)),
    ("pixi", ("pixi.toml",)),
    ("cmake", ("cmakelists.txt", "*.cmake")),
    ("cuda_source", ("*.cu", "*.cuh")),
    ("dockerfile", ("dockerfile", "dockerfile.*", "*.dockerfile", "containerfile")),
    ("devcontainer", ("devcontainer.json", ".devcontainer.json")),
    ("shell", ("*.sh", "*.bash", "*.zsh")),
    ("makefile", ("makefile", "gnumakefile", "*.mk")),
    ("tox", ("tox.ini",)),
)
# How deep below a requirements*/ folder a .txt/.in file is still a requirements list.
REQUIREMENTS_FOLDER_DEPTH = 3
# Read only when asked (`--include-docs`): install commands in code blocks.
DOCS = ("*.md", "*.markdown", "*.rst")

# Each kind's reader as (module, function): a reader module is imported when a file of its kind is read.
_READERS: dict[str, tuple[str, str]] = {
    "pyproject": ("pyproject", "read"),
    "setup_py": ("setup_py", "read"),
    "setup_cfg": ("setup_cfg", "read"),
    "conda": ("conda", "read"),
    "pipfile": ("pipfile", "read"),
    "poetry_lock": ("poetry_lock", "read"),
    "uv_lock": ("uv_lock", "read"),
    "pixi": ("pixi", "read"),
    "metadata": ("metadata", "read"),
    "shell": ("scripts", "read_shell"),
    "makefile": ("scripts", "read_makefile"),
    "tox": ("scripts", "read_tox"),
    "docs": ("scripts", "read_docs"),
}
# Readers that also report findings of their own (CDL45x), besides the dependencies they find.
_BUILD_FILES: dict[str, tuple[str, str]] = {
    "cmake": ("cmake", "check"),
    "cuda_source": ("cuda_sources", "check"),
    "dockerfile": ("dockerfile", "check"),
    "devcontainer": ("devcontainer", "check"),
    "yaml": ("yaml_files", "read"),
}


def __getattr__(name: str):
    if name in ("Dependency", "Parsed"):
        from cudalint.manifests import base

        return getattr(base, name)
    raise AttributeError(f"module 'cudalint.manifests' has no attribute {name!r}")


def _reader(where: tuple[str, str]) -> Callable:
    module, function = where
    return getattr(importlib.import_module(f"cudalint.manifests.{module}"), function)


_TORCH_NAMES = ("torch", "pytorch")


def _glob(name: str, pattern: str) -> bool:
    """fnmatchcase for a pattern whose only wildcard is `*`, without compiling a regular expression:
    every start looks at the top of the project, and compiling these globs cost more than the look."""
    if "*" not in pattern:
        return name == pattern
    first, *middle, last = pattern.split("*")
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def manifest_kind(path: str, include_docs: bool = False) -> str | None:
    """The reader for a file, chosen by its name (and a requirements*/ folder above it); None if none."""
    pure = PurePath(path)
    name = pure.name.lower()
    if in_requirements_folder(path):
        return "requirements"
    if name == "metadata" and pure.parent.name.lower().endswith(".dist-info"):
        return "metadata"  # a wheel's core metadata (an sdist's PKG-INFO repeats its own manifests)
    for kind, patterns in _NAMES:
        if any(_glob(name, pattern) for pattern in patterns):
            return None if kind == "cmake" and _installed_cmake(pure) else kind
    if include_docs and any(_glob(name, pattern) for pattern in DOCS):
        return "docs"
    return None


def _installed_cmake(pure: PurePath) -> bool:
    """A CMake file a package installs for projects that build against it (`lib/cmake/<pkg>/*.cmake`,
    `share/cmake/...`, the layout of an install tree and of the native libraries a wheel bundles): their
    build reads it, not this project's."""
    folders = [part.lower() for part in pure.parts[:-1]]
    return any(folder == "cmake" and index > 0 and folders[index - 1] in ("lib", "lib64", "share")
               for index, folder in enumerate(folders))


def in_requirements_folder(path: str) -> bool:
    """A .txt/.in file at most REQUIREMENTS_FOLDER_DEPTH folders below one named requirements*
    (`requirements/base.txt`, `requirements/pytorch/extra.txt`, `requirements-ci/gpu/test.in`)."""
    pure = PurePath(path)
    if not pure.name.lower().endswith((".txt", ".in")):
        return False
    folders = list(pure.parents)[:REQUIREMENTS_FOLDER_DEPTH]
    return any(folder.name.lower().startswith("requirements") for folder in folders)


def _parse(path: str, text: str, kind: str) -> tuple[Parsed, ...]:
    """A file's records. A requirements file is read anew each time (what it includes may have
    changed); any other file is read once per text, though the target release and the checks both
    ask for it."""
    return tuple(_read(path, text, kind)) if kind == "requirements" else _read_once(path, text, kind)


@functools.lru_cache(maxsize=4)
def _read_once(path: str, text: str, kind: str) -> tuple[Parsed, ...]:
    return tuple(_read(path, text, kind))


def _read(path: str, text: str, kind: str) -> list[Parsed]:
    if kind == "requirements":
        from cudalint.manifests import conda_lists
        from cudalint.manifests.includes import requirements_tree

        if conda_lists.is_package_list(text):  # conda's own list under a pip name (`conda list --export`)
            return [conda_lists.read_package_list(path, text)]
        return requirements_tree(path, text, lambda target: manifest_kind(target) is not None)
    if kind in _READERS:
        return [_reader(_READERS[kind])(path, text)]
    if kind in _BUILD_FILES:
        return [_reader(_BUILD_FILES[kind])(path, text)[1]]
    return []


def dependencies(path: str, text: str, kind: str | None = None) -> list[Dependency]:
    """Every entry of a dependency manifest (and of the requirement files it includes)."""
    kind = kind or manifest_kind(path)
    return [dep for parsed in _parse(path, text, kind) for dep in parsed.dependencies] if kind else []


def check_manifest(
    path: str, text: str, *, torch_version: str | None = None, kind: str | None = None
) -> list[Finding]:
    """Findings for one manifest, build file or install script (its kind from its name unless given);
    bad input gives CDL000 findings, never an exception."""
    from cudalint.manifests.checks import check_dependencies, problem_findings

    kind = kind or manifest_kind(path, include_docs=True)
    findings: list[Finding] = []
    if kind in _BUILD_FILES:
        findings, part = _reader(_BUILD_FILES[kind])(path, text)
        parsed: Iterable[Parsed] = [part]
    else:
        parsed = _parse(path, text, kind) if kind else []
    deps = [dep for part in parsed for dep in part.dependencies]
    findings = findings + check_dependencies(deps, torch_version or torch_version_from(deps))
    findings += problem_findings(problem for part in parsed for problem in part.problems)
    return sorted(findings, key=lambda f: f.sort_key)


_SNIFF_BYTES = 64 * 1024
_SHEBANG_SHELL = re.compile(r"^#!.*\b(ba|z|da|k)?sh\b")


def sniff_kind(path: str) -> str:
    """What a file named on the command line is, when its name does not say: by its content (a
    shell shebang, a conda environment, a Dockerfile, a requirements list), else Python."""
    kind = manifest_kind(path, include_docs=True)
    if kind is not None:
        return kind
    from cudalint.manifests.includes import read_limited

    text, _ = read_limited(path, _SNIFF_BYTES)
    if text is None:
        return "python"  # the Python reader reports what is wrong with the file
    first = text.split("\n", 1)[0]
    if _SHEBANG_SHELL.match(first):
        return "shell"
    if first.startswith("#!"):
        return "python"
    from cudalint.manifests import conda, dockerfile

    if conda.is_environment(_yaml_root(path, text)):
        return "yaml"
    toml_kind = _toml_kind(text)
    if toml_kind:
        return toml_kind
    if dockerfile.looks_like_dockerfile(text):
        return "dockerfile"
    from cudalint.manifests.conda_lists import is_package_list

    if is_package_list(text) or _looks_like_requirements(path, text):
        return "requirements"
    return "python"


def _yaml_root(path: str, text: str):
    from cudalint.manifests.yaml_nodes import compose

    document = compose(path, text) if re.search(r"^dependencies\s*:", text, re.MULTILINE) else None
    return document.root if document is not None else None


def _toml_kind(text: str) -> str | None:
    """A pixi manifest (a workspace, or conda channels and dependency tables), or a pyproject.toml."""
    from cudalint.manifests.toml_nodes import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, MemoryError):
        return None
    project = data.get("project")
    if "workspace" in data or (isinstance(project, dict) and "channels" in project) or "pypi-dependencies" in data:
        return "pixi"
    if any(key in data for key in ("project", "build-system", "tool", "dependency-groups")):
        return "pyproject"
    return None


def _looks_like_requirements(path: str, text: str) -> bool:
    """Every line is a requirement or a pip option, and there is at least one."""
    from cudalint.manifests.requirements import read_requirements

    parsed, includes = read_requirements(path, text)
    return bool(parsed.dependencies or includes) and not parsed.problems


def torch_requirement(deps: Iterable[Dependency]) -> Dependency | None:
    """The first entry that requires torch with a version: its specifier says which releases are allowed
    (a lower bound, a pin, or only an upper bound: `torch<2.0`). Not one that builds the documentation
    (checks.for_docs: `docs/requirements.txt`, a `docs` extra), which the dependency rules skip too: the
    docs' builder is not where the project runs."""
    from cudalint.manifests.checks import for_docs
    from cudalint.manifests.versions import lower_bound, upper_bound

    for dep in deps:
        if (dep.kind in ("package", "url", "vcs") and dep.name in _TORCH_NAMES and not dep.command
                and (lower_bound(dep.specifier) or upper_bound(dep.specifier)) and not for_docs(dep)):
            return dep
    return None


def torch_version_from(deps: Iterable[Dependency]) -> str | None:
    """The torch release the entries pin or lower-bound: 'torch>=2.1,<3' -> '2.1'; None when none does."""
    from cudalint.manifests.versions import lower_bound

    dep = torch_requirement(deps)
    return lower_bound(dep.specifier) if dep is not None else None
