"""rules/overrides.toml: methods whose override implements the caller's own call (`def cuda(self)`),
and the codes not reported inside them, since the caller's call is where they belong."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Tuple

from cudalint.catalog import CatalogError, load_catalog, rules_table

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

FILE = "overrides.toml"


@dataclass(frozen=True)
class Override:
    method: str
    positional: int  # positional arguments besides self that torch's own method takes at most
    silences: Tuple[str, ...]  # codes or code prefixes
    why: str
    off_mac: bool = False  # what the override calls runs only where CUDA is (the project index reads it)


@functools.lru_cache(maxsize=1)
def load_overrides() -> Dict[str, Override]:
    """The table by method name; CatalogError names the entry that is not right."""
    data = rules_table(FILE)
    catalog = load_catalog()
    found: Dict[str, Override] = {}
    for number, table in enumerate(data.get("override", []), start=1):
        method, silences, why = table.get("method"), table.get("silences"), table.get("why")
        if not (isinstance(method, str) and method.isidentifier() and isinstance(why, str) and why.strip()):
            raise CatalogError(f"{FILE}: override {number} needs a method name and a why")
        if not (isinstance(silences, list) and silences and all(isinstance(code, str) for code in silences)):
            raise CatalogError(f"{FILE}: override {method!r} needs a list of codes in silences")
        unknown = [code for code in silences if not catalog.is_selector(code)]
        if unknown:
            raise CatalogError(f"{FILE}: override {method!r} silences unknown codes {', '.join(unknown)}")
        positional = table.get("positional")
        if not isinstance(positional, int) or isinstance(positional, bool) or positional < 0:
            raise CatalogError(f"{FILE}: override {method!r} needs positional, the most positional arguments torch's method takes")
        off_mac = table.get("off_mac", False)
        if not isinstance(off_mac, bool):
            raise CatalogError(f"{FILE}: override {method!r}: off_mac is true or false")
        if method in found:
            raise CatalogError(f"{FILE}: override {method!r} is listed twice")
        found[method] = Override(method, positional, tuple(silences), why, off_mac)
    return found


def silenced_in(node: cst.FunctionDef, scope_kind: str) -> Optional[Tuple[str, ...]]:
    """The codes silenced inside a function definition: a method of a class (the scope it is defined in
    is a class) named in the table and callable as torch's own; None for anything else. (No libcst at
    run time here: the project index, which works on CPython's tree, reads the table too.)"""
    if scope_kind != "class":
        return None
    override = load_overrides().get(node.name.value)
    if override is None or _required(node) > override.positional:
        return None  # not callable as torch's method: `def pin_memory(self, tensor)` pins what it is given
    return override.silences


def _required(function: cst.FunctionDef) -> int:
    """Positional parameters besides self that a call must pass."""
    params = [*function.params.posonly_params, *function.params.params]
    return sum(1 for param in params[1:] if param.default is None)
