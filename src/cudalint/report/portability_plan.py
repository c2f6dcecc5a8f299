"""The migration plan in the portability report: the verdict, the blockers, the work left per file and per
top-level folder, and the project's own entry points for the trace hint.

Blockers are the findings of rules the catalog marks `blocks = "install" | "build" | "import"`, plus the
modules that import a CUDA extension the project builds (from a CUDAExtension("pkg._C", ...) call a
build-blocking finding points at): they fail to import wherever the extension was not compiled."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path, PurePosixPath
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from cudalint.catalog import FAMILIES, Catalog
from cudalint.findings import Finding, Safety, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

IMPORTER_REMEDY = ("Import the extension inside `try: ... except ImportError:` and fall back to a pure-PyTorch "
                   "implementation, so the module imports where the extension was not built.")
MAX_PARSE_BYTES = 2_000_000  # a file this large is not read for imports or entry points


def safe_fixable(finding: Finding) -> bool:
    return finding.fix is not None and finding.fix.safety is Safety.SAFE


def _read(path: str) -> Optional[str]:
    try:
        if os.path.getsize(path) > MAX_PARSE_BYTES:
            return None
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _parse(path: str) -> Optional[ast.Module]:
    text = _read(path)
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _blocker(finding: Finding, kind: str, what: str, remedy: str) -> dict:
    return {"kind": kind, "code": finding.code, "path": finding.path, "line": finding.line, "column": finding.column,
            "what": what, "remedy": remedy}


def blockers(findings: Sequence[Finding], catalog: Catalog, checked: Sequence[str]) -> List[dict]:
    """Install, build and import blockers, sorted by path and line."""
    found = []
    built: List[Tuple[str, Finding]] = []
    for finding in findings:
        rule = catalog.rules.get(finding.code)
        if rule is None or rule.blocks is None:
            continue
        found.append(_blocker(finding, rule.blocks, finding.message, rule.remedy))
        if rule.blocks == "build" and finding.path.endswith(".py"):
            built += [(name, finding) for name in _extension_names(finding)]
    flagged = {(b["path"], b["line"]) for b in found}  # an import a blocking rule reports already is not repeated
    for module, site in built:
        for path, line, column in _importers(module, checked):
            if (path, line) in flagged:
                continue
            found.append({"kind": "import", "code": site.code, "path": path, "line": line, "column": column,
                          "what": f"imports {module}, the CUDA extension built at {site.path}:{site.line}",
                          "remedy": IMPORTER_REMEDY})
    unique = {(b["path"], b["line"], b["column"], b["code"], b["what"]): b for b in found}
    return sorted(unique.values(), key=lambda b: (b["path"], b["line"], b["column"], b["code"]))


def _extension_names(finding: Finding) -> List[str]:
    """The module names of the extension calls on the finding's line: CUDAExtension("pkg._C", ...)."""
    tree = _parse(finding.path)
    names = []
    for node in ast.walk(tree) if tree else ():
        if not isinstance(node, ast.Call) or node.lineno != finding.line:
            continue
        arguments = [kw.value for kw in node.keywords if kw.arg == "name"] or node.args[:1]
        if arguments and isinstance(arguments[0], ast.Constant) and isinstance(arguments[0].value, str):
            names.append(arguments[0].value)
    return names


def _module_of(path: str) -> Tuple[str, bool]:
    """The dotted module a file is (following __init__.py up), and whether it is a package's __init__."""
    file = Path(path)
    parts = [] if file.stem == "__init__" else [file.stem]
    folder = file.parent
    while (folder / "__init__.py").is_file() and folder.name:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), file.stem == "__init__"


def _importers(module: str, checked: Sequence[str]) -> Iterable[Tuple[str, int, int]]:
    leaf = module.rsplit(".", 1)[-1]
    for path in checked:
        if not path.endswith(".py"):
            continue
        text = _read(path)
        if text is None or leaf not in text:
            continue
        tree = _parse(path)
        if tree is None:
            continue
        own, is_package = _module_of(path)
        package = own if is_package else own.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module, node.level, package)
                targets = [base] + [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            else:
                continue
            if any(target == module or target.startswith(module + ".") for target in targets if target):
                yield path, node.lineno, node.col_offset + 1


def _absolute(module: Optional[str], level: int, package: str) -> str:
    if not level:
        return module or ""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return ""
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def verdict(target: str, blocker_count: int, findings: Sequence[Finding], overall: str) -> str:
    fixable = sum(1 for f in findings if safe_fixable(f))
    blockers_text = "no blocker" if not blocker_count else f"{blocker_count} blocker{'s' if blocker_count != 1 else ''}"
    counts = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}, {fixable} fixable with `--fix`"
    if blocker_count or overall == "fail":
        return f"Not ready for MPS with torch {target}: {blockers_text}, {counts}."
    if findings:
        return f"Nearly ready for MPS with torch {target}: {blockers_text}, {counts}."
    return f"Ready for MPS with torch {target} as far as the code shows: no blocker, no finding."


def _relative(path: str, project: str) -> str:
    relative = Path(os.path.relpath(os.path.abspath(path), os.path.abspath(project))).as_posix()
    return path if relative.startswith("..") else relative


def work_left(findings: Sequence[Finding]) -> int:
    """Findings `--fix` will not take care of."""
    return sum(1 for f in findings if not safe_fixable(f))


def per_file(findings: Sequence[Finding], project: str) -> List[dict]:
    """One row per file with findings, the most work left first."""
    by_path: Dict[str, List[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    rows = []
    for path, found in by_path.items():
        families = {family: sum(1 for f in found if f.code.startswith(family)) for family in FAMILIES}
        rows.append({"path": path, "relative": _relative(path, project), "findings": len(found),
                     "errors": sum(1 for f in found if f.severity is Severity.ERROR),
                     "fixable": sum(1 for f in found if safe_fixable(f)), "work_left": work_left(found),
                     "families": {k: v for k, v in families.items() if v}})
    return sorted(rows, key=lambda r: (-r["work_left"], -r["findings"], r["path"]))


def per_folder(rows: Sequence[dict]) -> List[dict]:
    """Work left per top-level folder of the project (files at the top count as "."), the most first."""
    folders: Dict[str, dict] = {}
    for row in rows:
        parts = PurePosixPath(row["relative"]).parts
        name = parts[0] if len(parts) > 1 and parts[0] != ".." else "."
        entry = folders.setdefault(name, {"folder": name, "files": 0, "findings": 0, "fixable": 0, "work_left": 0})
        entry["files"] += 1
        for key in ("findings", "fixable", "work_left"):
            entry[key] += row[key]
    return sorted(folders.values(), key=lambda f: (-f["work_left"], -f["findings"], f["folder"]))


# ---- entry points, for the trace hint ---------------------------------------------------------------


def entry_points(project: str, checked: Sequence[str]) -> List[dict]:
    """Console scripts (pyproject.toml [project.scripts], setup.py/setup.cfg console_scripts), packages with
    a __main__.py and scripts with a top-level `if __name__ == "__main__":`, each with the trace command."""
    found: List[dict] = []
    mains: Set[str] = set()
    for path in checked:
        if not path.endswith(".py"):
            continue
        if Path(path).name == "__main__.py":
            module, _ = _module_of(str(Path(path).parent / "__init__.py"))
            if module:
                found.append({"kind": "module", "name": module, "source": path,
                              "command": f"cudalint trace --output trace.json -m {module}"})
        elif _has_main_guard(path):
            mains.add(path)
    scripts = _console_scripts(project)
    for name, target, source in scripts:
        module = target.split(":")[0].strip()
        file = _file_of(module, checked)
        runnable = file in mains
        found.append({"kind": "console_script", "name": name, "source": source, "target": target,
                      "command": f"cudalint trace --output trace.json -m {module}" if runnable else None})
    for path in sorted(mains):
        found.append({"kind": "script", "name": path, "source": path,
                      "command": f"cudalint trace --output trace.json -- python {path}"})
    order = {"console_script": 0, "module": 1, "script": 2}
    return sorted(found, key=lambda e: (order[e["kind"]], e["name"]))


def _file_of(module: str, checked: Sequence[str]) -> Optional[str]:
    for path in checked:
        if path.endswith(".py") and _module_of(path)[0] == module:
            return path
    return None


def _has_main_guard(path: str) -> bool:
    text = _read(path)
    if text is None or "__main__" not in text:
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.If) and _is_main_test(node.test) for node in tree.body)


def _is_main_test(test: ast.AST) -> bool:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    values = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(values) == 1


def _console_scripts(project: str) -> List[Tuple[str, str, str]]:
    root = Path(project) if Path(project).is_dir() else Path(project).parent
    found: List[Tuple[str, str, str]] = []
    pyproject = root / "pyproject.toml"
    text = _read(str(pyproject)) if pyproject.is_file() else None
    if text:
        try:
            scripts = tomllib.loads(text).get("project", {}).get("scripts", {})
        except tomllib.TOMLDecodeError:
            scripts = {}
        if isinstance(scripts, dict):
            found += [(str(k), str(v), str(pyproject)) for k, v in scripts.items() if isinstance(v, str)]
    setup_py = root / "setup.py"
    tree = _parse(str(setup_py)) if setup_py.is_file() else None
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts" and isinstance(value, (ast.List, ast.Tuple)):
                    for item in value.elts:
                        if isinstance(item, ast.Constant) and isinstance(item.value, str) and "=" in item.value:
                            name, _, target = item.value.partition("=")
                            found.append((name.strip(), target.strip(), str(setup_py)))
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        import configparser

        parser = configparser.ConfigParser()
        try:
            parser.read_string(_read(str(setup_cfg)) or "")
            lines = parser.get("options.entry_points", "console_scripts", fallback="")
        except configparser.Error:
            lines = ""
        for line in lines.splitlines():
            if "=" in line:
                name, _, target = line.partition("=")
                found.append((name.strip(), target.strip(), str(setup_cfg)))
    return sorted(set(found))


def trace_hint(points: Sequence[dict]) -> str:
    """The sentence that tells how to trace this project, naming its own entry points."""
    runnable = [p for p in points if p["command"]]
    if not runnable:
        return ("no trace given: static analysis cannot see every operator a run reaches; no entry point found "
                "(no console script, __main__.py or `if __name__ == \"__main__\":` script): trace the program you run "
                "with `cudalint trace --output trace.json -- python SCRIPT.py` and pass --trace")
    shown = "; ".join(f"`{p['command']}`" for p in runnable[:3])
    more = f" (and {len(runnable) - 3} more entry points)" if len(runnable) > 3 else ""
    return (f"no trace given: static analysis cannot see every operator a run reaches; trace an entry point of "
            f"the project, e.g. {shown}{more}, and pass --trace")
