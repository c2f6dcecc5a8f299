"""One canonical name per API: re-exports mapped through rules/aliases.toml."""

from __future__ import annotations

import functools
from typing import Dict, Tuple

from cudalint.catalog import rules_table


@functools.lru_cache(maxsize=1)
def alias_table() -> Tuple[Tuple[str, str], ...]:
    """(name, canonical) pairs, longest name first, so the most specific entry wins."""
    data = rules_table("aliases.toml")
    pairs: Dict[str, str] = {entry["name"]: entry["canonical"] for entry in data.get("alias", [])}
    return tuple(sorted(pairs.items(), key=lambda pair: len(pair[0]), reverse=True))


@functools.lru_cache(maxsize=4096)
def canonical(qualified: str) -> str:
    """`torch.cuda.memory.empty_cache` -> `torch.cuda.empty_cache`; unknown names are returned as they are. A
    private name under an aliased module (`torch.cuda.memory._snapshot`) is not re-exported (a star import
    skips it, a named import names public ones): it keeps its own module."""
    for _ in range(4):  # aliases may chain (torch.amp.autocast_mode.autocast -> torch.autocast)
        for name, target in alias_table():
            if qualified == name or (qualified.startswith(name + ".") and qualified[len(name) + 1] != "_"):
                replaced = target + qualified[len(name):]
                if replaced == qualified:
                    return qualified
                qualified = replaced
                break
        else:
            return qualified
    return qualified
