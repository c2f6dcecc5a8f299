"""poetry.lock: every locked package, reported at its `name = ` line."""

from __future__ import annotations

from cudalint.manifests.base import Parsed, normalize_name
from cudalint.manifests.lockgraph import add_locked
from cudalint.manifests.markers import excludes_macos
from cudalint.manifests.tables import items, text_of
from cudalint.manifests.toml_nodes import Node, read_toml_pieces


# What a lock file records that no check reads: the bulk of its bytes.
_UNREAD = frozenset({"wheels", "sdist", "files", "metadata"})


def _markers_exclude_mac(node: Node) -> bool:
    """A package's `markers`: one string, or a table of them per dependency group."""
    if node is None:
        return False
    if node.kind == "string":
        return excludes_macos(node.value)
    values = [value for _, value in items(node)]
    return bool(values) and all(v.kind == "string" and excludes_macos(v.value) for v in values)


def read(path: str, text: str) -> Parsed:
    """One `[[package]]` table at a time, reduced at once to name, version and edges (see uv_lock)."""
    parsed = Parsed()
    edges, entries = [], []
    for root, problems in read_toml_pieces(path, text, "package", _UNREAD):
        parsed.problems += problems
        for package in root.get("package").tables() if root.get("package") is not None else ():
            name_node = package.get("name")
            if not text_of(name_node):
                continue
            name = normalize_name(text_of(name_node))
            off_mac = _markers_exclude_mac(package.get("markers"))
            entries.append((name, name_node.entry, name_node.source, text_of(package.get("version")), off_mac))
            for target, constraint in items(package.get("dependencies")):
                alternatives = constraint.value if constraint.kind == "array" else [constraint]
                edge_off_mac = all(c.kind == "table" and excludes_macos(text_of(c.get("markers"))) for c in alternatives)
                edges.append((name, normalize_name(target), edge_off_mac))
    return add_locked(parsed, path, entries, edges)
