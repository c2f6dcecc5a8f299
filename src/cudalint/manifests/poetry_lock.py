"""poetry.lock: every locked package, reported at its `name = ` line."""

from __future__ import annotations

from cudalint.manifests.base import Parsed, make_dependency, normalize_name
from cudalint.manifests.lockgraph import reachable_on_mac
from cudalint.manifests.markers import excludes_macos
from cudalint.manifests.tables import items, text_of
from cudalint.manifests.toml_nodes import Node, read_toml


def _markers_exclude_mac(node: Node) -> bool:
    """A package's `markers`: one string, or a table of them per dependency group."""
    if node is None:
        return False
    if node.kind == "string":
        return excludes_macos(node.value)
    values = [value for _, value in items(node)]
    return bool(values) and all(v.kind == "string" and excludes_macos(v.value) for v in values)


def read(path: str, text: str) -> Parsed:
    root, problems = read_toml(path, text)
    parsed = Parsed(problems=list(problems))
    packages = root.get("package").tables() if root.get("package") is not None else []
    edges, entries = [], []
    for package in packages:
        name_node = package.get("name")
        if not text_of(name_node):
            continue
        name = normalize_name(text_of(name_node))
        entries.append((name, name_node, text_of(package.get("version")), _markers_exclude_mac(package.get("markers"))))
        for target, constraint in items(package.get("dependencies")):
            alternatives = constraint.value if constraint.kind == "array" else [constraint]
            off_mac = all(c.kind == "table" and excludes_macos(text_of(c.get("markers"))) for c in alternatives)
            edges.append((name, normalize_name(target), off_mac))
    on_mac = reachable_on_mac((entry[0] for entry in entries), edges)
    for name, node, version, marked_off_mac in entries:
        parsed.dependencies.append(
            make_dependency(
                path, node.entry, name=name, specifier=f"=={version}" if version else "", extras=(), marker=None,
                raw=node.source, section="package", kind="package", off_mac=marked_off_mac or name not in on_mac,
            )
        )
    return parsed
