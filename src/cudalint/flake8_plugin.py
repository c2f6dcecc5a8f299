"""flake8 plugin: cudalint's findings as flake8 errors under the `CDL` prefix.

A thin adapter: every finding comes from `cudalint.runner.lint_text`, the engine the
command line uses, on the lines flake8 already read. flake8 stays in charge of what
it owns: `--select`/`--extend-select`/`--ignore`/`--extend-ignore`, `# noqa`
(and `--disable-noqa`), `--per-file-ignores`, `--jobs` and the output format.

Which rules run: cudalint's default set, plus any rule outside it that the flake8
options name explicitly with a `CDL` selector (`--extend-select CDL210`, or
`--select CDL` for every rule), less whatever flake8's own decision leaves out. When
flake8's selection excludes every CDL code the plugin does no work at all.

Target torch release: `--cudalint-torch-version` (or `cudalint-torch-version =` in
flake8's configuration), else `torch-version` in `[tool.cudalint]`, else the torch pin
in the project's top-level manifests (requirements*.txt, pyproject.toml, setup.py, ...),
else the newest release cudalint knows.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import sys
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from cudalint import __version__

Error = Tuple[int, int, str, type]


def _normalise(codes: Optional[Sequence[str]]) -> List[str]:
    return [code.strip().upper() for code in (codes or []) if code and code.strip()]


def codes_to_run(options: argparse.Namespace, catalog=None) -> FrozenSet[str]:
    """The CDL codes flake8's options select: cudalint's defaults plus explicitly named extras,
    each kept only if flake8's own decision engine selects it."""
    from cudalint.catalog import load_catalog

    catalog = catalog or load_catalog()
    explicit = [
        selector
        for selector in _normalise(getattr(options, "select", None)) + _normalise(getattr(options, "extend_select", None))
        if selector.startswith("CDL")
    ]
    candidates = [
        rule.code for rule in catalog if rule.default or any(rule.code.startswith(selector) for selector in explicit)
    ]
    decide = _decider(options)
    return frozenset(code for code in candidates if decide(code))


def _decider(options: argparse.Namespace):
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return lambda code: engine.decision_for(code) is Decision.Selected
    except Exception:  # noqa: BLE001 - options without flake8's fields (a bare Namespace): select by prefix
        select = tuple(_normalise(getattr(options, "select", None)) + _normalise(getattr(options, "extend_select", None)))
        ignore = tuple(_normalise(getattr(options, "ignore", None)) + _normalise(getattr(options, "extend_ignore", None)))
        return lambda code: (not select or code.startswith(select)) and not code.startswith(ignore or ("\0",))


def _torch_version(text: str) -> str:
    from cudalint.versions import parse_version

    try:
        parse_version(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a torch version like 2.3 or 2.3.1") from None
    return text.strip()


class CudalintChecker:
    name = "cudalint"
    version = __version__

    selected: Optional[FrozenSet[str]] = None  # decided once per process by parse_options
    torch_option: Optional[str] = None
    use_noqa = False  # flake8 applies `# noqa` itself; parse_options turns cudalint's on too (it matches codes
    # case-insensitively, knows `# cudalint: noqa` and multi-line statements) unless --disable-noqa
    _targets: Dict[str, str] = {}

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]):
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager) -> None:
        manager.add_option(
            "--cudalint-torch-version",
            default=None,
            parse_from_config=True,
            type=_torch_version,
            help="torch release the project targets for cudalint's CDL checks "
            "(default: [tool.cudalint] torch-version, the project's manifests, else the newest cudalint knows)",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        cls.torch_option = getattr(options, "cudalint_torch_version", None) or None
        cls.use_noqa = not getattr(options, "disable_noqa", False)
        with _imports_outside_the_tree():  # the catalog reads the package table (cudalint.manifests: PyYAML)
            from cudalint.catalog import keep_compact_copy

            keep_compact_copy(_project("stdin")[0])  # the catalog's compact copy, where `cudalint check` keeps it
            cls.selected = codes_to_run(options)
        cls._targets = {}

    def run(self) -> Iterator[Error]:
        selected = type(self).selected
        if selected is None:  # used without flake8's option parsing: the default rule set
            selected = type(self).selected = codes_to_run(argparse.Namespace())
        if not selected:
            return
        with _imports_outside_the_tree():  # `python -m flake8` puts the linted tree first on sys.path
            from cudalint.config import Settings
            from cudalint.discover import kind_of
            from cudalint.runner import lint_text

            text = "".join(self.lines)
            kind = kind_of(Path(self.filename)) or "python"
            root, configured = _project(self.filename)  # one search for the file's pyproject.toml
            settings = Settings(select=selected, project=self._project_index(root))
            torch_version = self._torch_version(root, configured)
            self._prepare_gates(root, selected, torch_version)
            findings = lint_text(self.filename, kind, text, settings, torch_version, noqa=type(self).use_noqa)
        for finding in findings:
            # cudalint's columns are 1-based; flake8 wants 0-based and prints col + 1
            yield finding.line, max(finding.column - 1, 0), f"{finding.code} {finding.message}", type(self)

    def _project_index(self, root: Path):
        """The project index of the file's project, built once per flake8 process (and cached on disk)."""
        cls = type(self)
        indexes = cls.__dict__.get("_indexes")
        if indexes is None:
            indexes = cls._indexes = {}
        key = str(root)
        if key not in indexes:
            from cudalint.config import Settings
            from cudalint.runner import project_index

            try:
                indexes[key] = project_index(Settings(select=frozenset(), root=Path(root)), cache=True)
            except Exception:  # noqa: BLE001 - an unreadable tree costs the project rules, not the run
                indexes[key] = None
        return indexes[key]

    def _prepare_gates(self, root: Path, selected, torch_version: str) -> None:
        """The gates' words from the project's gate cache (beside its stored index), as `cudalint check`
        reads them, once per flake8 process and release: a file the gates settle then costs no libcst."""
        cls = type(self)
        prepared = cls.__dict__.get("_gates_prepared")
        if prepared is None:
            prepared = cls._gates_prepared = set()
        key = (str(root), selected, torch_version)
        if key in prepared:
            return
        prepared.add(key)
        from cudalint.config import Settings
        from cudalint.runner import prepare_gates

        try:
            prepare_gates(Settings(select=selected, root=Path(root)), {torch_version}, True)
        except Exception:  # noqa: BLE001 - no stored words: the engine computes them, as without a cache
            pass

    def _torch_version(self, root: Path, configured: Optional[str]) -> str:
        cls = type(self)
        if cls.torch_option:
            return cls.torch_option
        key = str(root)
        if key not in cls._targets:
            cls._targets[key] = configured or _from_manifests(root)
        return cls._targets[key]


@contextlib.contextmanager
def _imports_outside_the_tree():
    """sys.path without the working directory while cudalint imports what it needs (libcst, PyYAML, ...)."""
    saved = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if entry not in ("", os.getcwd())]
    try:
        yield
    finally:
        sys.path[:] = saved


def _project(filename: str) -> Tuple[Path, Optional[str]]:
    """The folder whose pyproject.toml has [tool.cudalint] (else config.project_root) and its torch-version."""
    from cudalint.config import ConfigError, find_pyproject, project_root, read_table

    # flake8's stdin mode names the buffer "stdin" (or --stdin-display-name, which need not exist on disk)
    start = Path(filename) if filename not in ("-", "stdin") else Path.cwd()
    try:
        config = find_pyproject(start)
    except OSError:
        config = None
    if config is None:
        return (project_root([start]) if start.exists() else Path.cwd()), None
    try:
        version = read_table(config).get("torch-version")
    except ConfigError:
        version = None
    return config.parent, version


def _from_manifests(root: Path) -> str:
    """The runner's own rule for the target release, over the manifests at the top of the project."""
    from cudalint.config import Settings
    from cudalint.runner import target_torch

    version, _origin = target_torch(Settings(select=frozenset(), root=root), [])
    return version
