"""Settings: `[tool.cudalint]` in the nearest pyproject.toml, then command-line flags."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from cudalint.catalog import Catalog, toml_parser
from cudalint.fileio import DEFAULT_MAX_BYTES, UnreadableFile, read_regular_text
from cudalint.python.device_setting import DeviceSetting
from cudalint.versions import parse_version

KEYS = {
    "select": list,
    "ignore": list,
    "extend-select": list,
    "extend-ignore": list,
    "exclude": list,
    "extend-exclude": list,
    "per-file-ignores": dict,
    "torch-version": str,
    "device-expression": str,
    "device-import": str,
    "max-file-size": int,
    "file-timeout": (int, float),
    "fixable": list,
    "unfixable": list,
}
LIST_OF_STRINGS = ("select", "ignore", "extend-select", "extend-ignore", "exclude", "extend-exclude")
DEFAULT_FILE_TIMEOUT_S = 60.0

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".cudalint_cache",
    "node_modules",
    "build",
    "_build",  # Sphinx's output, which copies the documented examples (as ruff's default excludes it)
    ".ipynb_checkpoints",  # Jupyter's saved copies of the notebooks beside it
    "dist",
    "site-packages",
    "__pypackages__",
)


class ConfigError(ValueError):
    """A usage or configuration mistake: exit code 2."""


class Settings:
    """What one run checks and how (a plain class: see findings.py on start-up cost)."""

    FIELDS = (
        "select", "per_file_ignores", "unfixable", "exclude", "torch_version", "root", "config_file", "device",
        "unsafe_fixes", "project", "include_docs", "max_file_bytes", "file_timeout",
    )

    def __init__(
        self,
        select: frozenset[str],
        per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = (),
        unfixable: frozenset[str] = frozenset(),  # codes whose fixes are dropped (--fixable/--unfixable)
        exclude: tuple[str, ...] = DEFAULT_EXCLUDE,
        torch_version: str | None = None,
        root: Path | None = None,  # None: the current folder
        config_file: Path | None = None,
        device: DeviceSetting = DeviceSetting(),
        unsafe_fixes: bool = False,  # decides, e.g., whether enough fixes use the device to define DEVICE once
        project: object | None = None,  # the run's project index (cudalint.project)
        include_docs: bool = False,  # also read install commands in the code blocks of Markdown/reST files
        max_file_bytes: int = DEFAULT_MAX_BYTES,  # no file is read past this size
        file_timeout: float = DEFAULT_FILE_TIMEOUT_S,  # a file still being checked after this long gets CDL000
    ):
        self.select = select
        self.per_file_ignores = per_file_ignores
        self.unfixable = unfixable
        self.exclude = exclude
        self.torch_version = torch_version
        self.root = Path.cwd() if root is None else root
        self.config_file = config_file
        self.device = device
        self.unsafe_fixes = unsafe_fixes
        self.project = project
        self.include_docs = include_docs
        self.max_file_bytes = max_file_bytes
        self.file_timeout = file_timeout

    def replace(self, **changes) -> "Settings":
        """A copy with `changes` (this one is left as it is)."""
        return Settings(**{**{name: getattr(self, name) for name in self.FIELDS}, **changes})

    def __repr__(self) -> str:
        return "Settings(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS) + ")"


class Maybe:
    """In a shape: the value may also be None, or the key missing."""

    def __init__(self, shape):
        self.shape = shape


def shape_ok(value, shape) -> bool:
    """Whether JSON `value` has `shape`: a type or tuple of types (bool is never an int), [item shape],
    {key: shape} (keys required unless Maybe), or Maybe(shape). Only as deep as the shape goes."""
    if isinstance(shape, Maybe):
        return value is None or shape_ok(value, shape.shape)
    if isinstance(shape, list):
        return isinstance(value, list) and all(shape_ok(item, shape[0]) for item in value)
    if isinstance(shape, dict):
        return isinstance(value, dict) and all(
            (key in value and shape_ok(value[key], part)) or (isinstance(part, Maybe) and key not in value)
            for key, part in shape.items()
        )
    kinds = shape if isinstance(shape, tuple) else (shape,)
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def read_json_input(path: Path, option: str, accepted, written_by: str) -> dict:
    """A JSON document named by a command-line option (a trace, a comparison), or a usage error."""
    import json

    try:
        doc = json.loads(read_regular_text(path))
    except UnreadableFile as exc:
        raise ConfigError(f"{option} {path}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{option} {path}: not JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{option} {path}: not JSON (nested too deeply)") from None
    if not isinstance(doc, dict) or not accepted(doc):
        raise ConfigError(f"{option} {path}: not {written_by}")
    return doc


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else [start.parent, *start.parent.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                tool = _load_toml(candidate).get("tool")
            except ConfigError:
                continue  # not ours to judge: a broken pyproject.toml without [tool.cudalint] is skipped
            if isinstance(tool, dict) and "cudalint" in tool:
                return candidate
    return None


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _marked_folder(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds one of PROJECT_MARKERS."""
    for folder in [start, *start.parents]:
        if any(os.path.lexists(folder / marker) for marker in PROJECT_MARKERS):
            return folder
    return None


def project_root(paths: Sequence[Path], cwd: Path | None = None) -> Path:
    """The project a run without [tool.cudalint] lints: where its index, caches and per-file patterns start.

    For each path, the nearest folder at or above it that holds a project marker (pyproject.toml,
    setup.py, setup.cfg, .git), if that folder lies in the working folder; else the working folder
    when the path lies in it (a run inside a project indexes what is under the working folder, never
    more), else the marked folder, else the path's own folder. Paths in several projects share their
    common folder. So the working folder alone never decides: linting ../other/train.py from a home
    folder indexes ../other's project, and `cudalint check proj-a` from a folder of many projects
    indexes proj-a only."""
    here = (cwd or Path.cwd()).resolve()
    roots = []
    for path in paths or [here]:
        absolute = Path(os.path.abspath(here / path))
        folder = absolute if absolute.is_dir() else absolute.parent
        marked = _marked_folder(folder)
        inside = folder == here or here in folder.parents
        if marked is not None and (marked == here or here in marked.parents):
            roots.append(marked)
        elif inside:
            roots.append(here)
        else:
            roots.append(marked or folder)
    try:
        return Path(os.path.commonpath([str(root) for root in roots]))
    except ValueError:  # paths on different drives
        return here


def _load_toml(path: Path) -> dict:
    tomllib = toml_parser()
    try:
        return tomllib.loads(read_regular_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnreadableFile as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None


def read_table(path: Path) -> dict:
    data = _load_toml(path)
    tool = data.get("tool", {})
    table = tool.get("cudalint", {}) if isinstance(tool, dict) else {}
    if not isinstance(tool, dict) or not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.cudalint] must be a table")
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key [tool.cudalint] {key!r}{did_you_mean(key, KEYS)}; known keys: "
                              f"{', '.join(sorted(KEYS))}")
        expected = KEYS[key]
        if not isinstance(value, expected) or isinstance(value, bool):
            names = " or a ".join(kind.__name__ for kind in (expected if isinstance(expected, tuple) else (expected,)))
            raise ConfigError(f"{path}: [tool.cudalint] {key} must be a {names}")
        if key in LIST_OF_STRINGS and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: [tool.cudalint] {key} must be a list of strings")
    return table


def expand(selectors: Iterable[str], catalog: Catalog, where: str) -> frozenset[str]:
    codes = set()
    for selector in selectors:
        selector = selector.strip().upper()
        if not selector:
            continue
        if not catalog.is_selector(selector):
            raise ConfigError(f"{where}: unknown rule code or prefix {selector!r}{did_you_mean(selector, catalog.rules)}")
        codes.update(catalog.rules if selector == "ALL" else catalog.codes_for(selector))
    return frozenset(codes)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """"; did you mean X?" for the choice fewest edits away (a third of the word's length at most), else ""."""
    best, distance = None, max(1, len(word) // 3) + 1
    for choice in sorted(choices):
        edits = _edits(word.upper(), choice.upper())
        if edits < distance:
            best, distance = choice, edits
    return f"; did you mean {best}?" if best else ""


def _edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, start=1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


def split_codes(text: str | None) -> list[str]:
    return [part for part in (text or "").replace(" ", ",").split(",") if part]


def resolve(
    catalog: Catalog,
    *,
    config_path: Path | None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    exclude: Sequence[str] | None = None,
    extend_exclude: Sequence[str] = (),
    per_file_ignores: Sequence[str] = (),
    torch_version: str | None = None,
    max_file_size: int | None = None,
    file_timeout: float | None = None,
    fixable: Sequence[str] | None = None,
    unfixable: Sequence[str] = (),
    root: Path | None = None,
) -> Settings:
    """Merge file and flags; flags win. Raises ConfigError with the offending key or code.
    The project root is the configuration file's folder; without one, `root` (else the working folder)."""
    table = read_table(config_path) if config_path else {}
    where = f"{config_path} [tool.cudalint]" if config_path else "configuration"
    chosen = select if select is not None else table.get("select")
    base = expand(chosen, catalog, "--select" if select is not None else where) if chosen else frozenset(
        rule.code for rule in catalog if rule.default
    )
    codes = set(base)
    codes |= expand(table.get("extend-select", ()), catalog, where)
    codes |= expand(extend_select, catalog, "--extend-select")
    ignored = expand(table.get("ignore", ()), catalog, where)
    ignored |= expand(table.get("extend-ignore", ()), catalog, where)
    ignored |= expand(ignore, catalog, "--ignore")
    codes -= ignored
    if "CDL000" not in ignored:
        codes.add("CDL000")  # unreadable input is always said unless silenced by name

    ignores = []
    for pattern, listed in table.get("per-file-ignores", {}).items():
        if not isinstance(listed, list) or not all(isinstance(code, str) for code in listed):
            raise ConfigError(f"{where}: per-file-ignores {pattern!r} must map to a list of codes")
        ignores.append((pattern, expand(listed, catalog, f"{where} per-file-ignores")))
    for item in per_file_ignores:
        pattern, _, listed = item.partition(":")
        if not listed:
            raise ConfigError(f"--per-file-ignores: expected PATTERN:CODES, got {item!r}")
        ignores.append((pattern, expand(split_codes(listed), catalog, "--per-file-ignores")))

    version = torch_version or table.get("torch-version")
    if version is not None:
        try:
            parse_version(version)
        except ValueError:
            raise ConfigError(f"torch version {version!r} is not a version like 2.3 or 2.3.1") from None
    chosen_fixable = fixable if fixable is not None else table.get("fixable")
    may_fix = expand(chosen_fixable, catalog, "--fixable" if fixable is not None else where) if chosen_fixable else None
    not_fixable = expand(table.get("unfixable", ()), catalog, where) | expand(unfixable, catalog, "--unfixable")
    if may_fix is not None:
        not_fixable |= frozenset(catalog.rules) - may_fix
    excludes = tuple(exclude) if exclude is not None else tuple(table.get("exclude", DEFAULT_EXCLUDE))
    excludes += tuple(table.get("extend-exclude", ())) + tuple(extend_exclude)
    max_bytes = max_file_size if max_file_size is not None else table.get("max-file-size", DEFAULT_MAX_BYTES)
    if max_bytes < 1:
        raise ConfigError(f"{where}: max-file-size must be a positive number of bytes")
    timeout = file_timeout if file_timeout is not None else table.get("file-timeout", DEFAULT_FILE_TIMEOUT_S)
    if not timeout > 0:
        raise ConfigError(f"{where}: file-timeout must be a positive number of seconds")
    return Settings(
        select=frozenset(codes),
        per_file_ignores=tuple(ignores),
        exclude=excludes,
        torch_version=version,
        root=config_path.parent if config_path else (root or Path.cwd()),
        config_file=config_path,
        device=_device_setting(table, where),
        max_file_bytes=int(max_bytes),
        file_timeout=float(timeout),
        unfixable=frozenset(not_fixable),
    )


def _device_setting(table: dict, where: str) -> DeviceSetting:
    """`device-expression` (your own helper, e.g. "get_device()") and the `device-import` it needs."""
    expression, import_line = table.get("device-expression"), table.get("device-import")
    if import_line is not None and expression is None:
        raise ConfigError(f"{where}: device-import needs device-expression")
    if expression is not None:
        try:
            compile(expression, "device-expression", "eval")
            if import_line is not None:
                compile(import_line, "device-import", "exec")
        except SyntaxError as exc:
            raise ConfigError(f"{where}: device-expression/device-import is not valid Python: {exc.msg}") from None
    return DeviceSetting(expression, import_line)
