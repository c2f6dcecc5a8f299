"""`cudalint check --show-settings`: the settings a run would use, and where each came from."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Sequence

from cudalint.catalog import Catalog
from cudalint.config import Settings


def _codes(codes, catalog: Catalog) -> str:
    return ", ".join(sorted(codes)) if codes else "(none)"


def show_settings(settings: Settings, paths: Sequence[str], catalog: Catalog) -> str:
    from cudalint.discover import discover
    from cudalint.runner import target_torch

    files = list(discover(paths, settings.exclude, settings.root))
    lines: List[str] = []
    source = str(settings.config_file) if settings.config_file else "none (defaults and command-line flags only)"
    lines.append(f"configuration file: {source}")
    lines.append(f"project root: {Path(os.path.abspath(settings.root))}")
    default = sorted(rule.code for rule in catalog if rule.default)
    extra = sorted(set(settings.select) - set(default))
    left_out = sorted(set(default) - set(settings.select))
    lines.append(f"rules: {len(settings.select)} selected of {len(catalog.rules)}")
    lines.append(f"  added to the default set: {_codes(extra, catalog)}")
    lines.append(f"  left out of the default set: {_codes(left_out, catalog)}")
    lines.append("per-file-ignores (patterns relative to the project root):")
    lines += [f"  {pattern} = {_codes(codes, catalog)}" for pattern, codes in settings.per_file_ignores] or ["  (none)"]
    lines.append(f"exclude: {', '.join(settings.exclude)}")
    lines.append(f"unfixable: {_codes(settings.unfixable, catalog)}")
    lines.append(f"unsafe fixes: {'on' if settings.unsafe_fixes else 'off'}")
    if settings.device.expression:
        lines.append(f"device expression: {settings.device.expression}"
                     + (f" (import: {settings.device.import_line})" if settings.device.import_line else ""))
    lines.append("torch target:")
    for path in paths:
        version, origin = target_torch(settings, [f for f in files if _under(f.path, path)])
        lines.append(f"  {path}: torch {version} ({origin})")
    lines.append(f"files to check: {len(files)}")
    return "\n".join(lines) + "\n"


def _under(file: Path, path: str) -> bool:
    file_abs, root = os.path.abspath(file), os.path.abspath(path)
    return file_abs == root or file_abs.startswith(root.rstrip(os.sep) + os.sep)
