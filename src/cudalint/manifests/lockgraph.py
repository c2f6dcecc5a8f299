"""Which locked packages a Mac actually installs.

A lock file records every package of every platform: torch's Linux-only NVIDIA
wheels sit next to it with the markers that keep them off macOS. A package is
installed on a Mac when a chain of dependency edges from a root reaches it and
no edge on the chain has a marker that is false on macOS.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Set, Tuple

from cudalint.manifests.base import Parsed, make_dependency

Edge = Tuple[str, str, bool]  # (from, to, the edge's marker keeps it off macOS)
Entry = tuple  # (name, span, source line, version, its own marker keeps it off macOS)


def add_locked(parsed: Parsed, path: str, entries: List[Entry], edges: Iterable[Edge], roots: Iterable[str] = ()) -> Parsed:
    """Each locked package as a `==version` dependency, off the Mac when its own marker or every
    chain to it keeps it there."""
    on_mac = reachable_on_mac((entry[0] for entry in entries), edges, roots)
    for name, span, source, version, marked_off_mac in entries:
        parsed.dependencies.append(
            make_dependency(
                path, span, name=name, specifier=f"=={version}" if version else "", extras=(), marker=None,
                raw=source, section="package", kind="package", off_mac=marked_off_mac or name not in on_mac, locked=True,
            )
        )
    return parsed


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
