"""Which locked packages a Mac actually installs.

A lock file records every package of every platform: torch's Linux-only NVIDIA
wheels sit next to it with the markers that keep them off macOS. A package is
installed on a Mac when a chain of dependency edges from a root reaches it and
no edge on the chain has a marker that is false on macOS.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Set, Tuple

Edge = Tuple[str, str, bool]  # (from, to, the edge's marker keeps it off macOS)


def reachable_on_mac(names: Iterable[str], edges: Iterable[Edge], roots: Iterable[str] = ()) -> Set[str]:
    """Names reachable from the roots (or, without roots, from every package nothing depends on)."""
    names = set(names)
    edges = list(edges)
    start = set(roots) or names - {target for _, target, _ in edges}
    following: Dict[str, List[str]] = {}
    for source, target, off_mac in edges:
        if not off_mac:
            following.setdefault(source, []).append(target)
    seen: Set[str] = set()
    stack = list(start)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(following.get(name, ()))
    return seen
