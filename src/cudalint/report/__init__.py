"""Output formats. Each takes the run result and returns the text to print; a format's module is
imported when it is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping

_MODULES = {
    "text": ("text", "render_text"),
    "json": ("json_format", "render_json"),
    "sarif": ("sarif", "render_sarif"),
    "github": ("github", "render_github"),
    "gitlab": ("gitlab", "render_gitlab"),
}


class _Formats(Mapping):
    """format name -> its render function."""

    def __getitem__(self, name: str) -> Callable[..., str]:
        module, function = _MODULES[name]
        return getattr(importlib.import_module(f"cudalint.report.{module}"), function)

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


FORMATS: Mapping[str, Callable[..., str]] = _Formats()


def __getattr__(name: str):
    for module, function in _MODULES.values():
        if function == name:
            return getattr(importlib.import_module(f"cudalint.report.{module}"), function)
    raise AttributeError(name)


__all__ = ["FORMATS", "render_github", "render_gitlab", "render_json", "render_sarif", "render_text"]
