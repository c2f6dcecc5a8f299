"""uv.lock: every locked package, reported at its `name = ` line.

Read one `[[package]]` table at a time and reduced at once to what the checks need (name, version,
whether a Mac installs it), so a lock of tens of megabytes costs little more memory than its text.
"""

from __future__ import annotations

from typing import FrozenSet, List

from cudalint.manifests.base import Parsed, normalize_name
from cudalint.manifests.checks import platform_named
from cudalint.manifests.lockgraph import add_locked
from cudalint.manifests.markers import excludes_macos
from cudalint.manifests.tables import items, text_of
from cudalint.manifests.toml_nodes import Node, read_toml_pieces


# What a lock file records that no check reads: the bulk of its bytes.
_UNREAD = frozenset({"wheels", "sdist", "files", "metadata"})


def _conflicts(root: Node) -> List[FrozenSet[str]]:
    """The lock's `conflicts`: groups of extras (and dependency groups) of one package that uv never
    installs together, each as the names its markers give them (`extra-17-optimum-benchmark-ipex`)."""
    groups = []
    conflicts = root.get("conflicts")
    for group in conflicts.value if conflicts is not None and conflicts.kind == "array" else ():
        names = set()
        for item in group.tables() if group.kind == "array" else ():
            package = text_of(item.get("package"))
            for kind in ("extra", "group"):
                value = text_of(item.get(kind))
                if package and value:
                    names.add(f"{kind}-{len(package)}-{package}-{value}")
        if len(names) > 1:
            groups.append(frozenset(names))
    return groups


def _edges(name: str, package: Node, exclusive: List[FrozenSet[str]]):
    groups = [("", package.get("dependencies"))]
    for table in ("optional-dependencies", "dev-dependencies"):
        groups += [(group, array) for group, array in items(package.get(table))]
    for group, array in groups:
        for dependency in array.tables() if array is not None and array.kind == "array" else ():
            target = text_of(dependency.get("name"))
            if target:
                off_mac = excludes_macos(text_of(dependency.get("marker")), exclusive) or platform_named(group)
                yield name, normalize_name(target), off_mac


def read(path: str, text: str) -> Parsed:
    parsed = Parsed()
    edges, roots, entries, exclusive = [], set(), [], []
    for root, problems in read_toml_pieces(path, text, "package", _UNREAD):
        parsed.problems += problems
        exclusive += _conflicts(root)
        for package in root.get("package").tables() if root.get("package") is not None else ():
            name_node = package.get("name")
            if not text_of(name_node):
                continue
            name = normalize_name(text_of(name_node))
            source = package.get("source")
            if source is not None and (source.get("virtual") is not None or source.get("editable") is not None):
                roots.add(name)
            forks = package.get("resolution-markers")
            fork_off_mac = bool(forks and forks.strings()) and all(excludes_macos(m.value, exclusive) for m in forks.strings())
            entries.append((name, name_node.entry, name_node.source, text_of(package.get("version")), fork_off_mac))
            edges.extend(_edges(name, package, exclusive))
    return add_locked(parsed, path, entries, edges, roots)
