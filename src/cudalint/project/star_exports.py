"""What `from module import *` binds, for the project index (CPython's tree, no libcst).

Python's rule (the language reference, "The import statement"): the names listed in the module's
`__all__`, or, when it has none, every name bound at its module level that does not begin with an
underscore. Research code leans on it (`from .utils import *` bringing `HAS_FLASH_ATTENTION`,
`DEVICE`, helpers), and a name the semantic model cannot resolve is neither a guard nor a value.

One module's part is read here: its literal `__all__` (None when it has none, or one the reader
cannot follow), the public names it binds with where each comes from, and the modules it
star-imports itself. The index joins them across modules (ProjectIndex.star_exports).
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional

from cudalint.project.reach import TRIES

BLOCKS = (ast.If, ast.With, ast.For, ast.While, *TRIES)
UNKNOWN = "?"  # an `__all__` built other than from literals


def star_facts(tree: ast.Module, absolute: Callable[[int, Optional[str]], str]) -> Optional[list]:
    """[listed names or None, {public name: what it names ("" when bound here)}, [modules star-imported]],
    or None for a module that binds no public name and star-imports nothing."""
    listed: Optional[List[str]] = None
    public: Dict[str, str] = {}
    sources: List[str] = []
    stack = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            public.setdefault(node.name, "")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                public.setdefault(local, alias.name if alias.asname else local)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.level, node.module)
            for alias in node.names:
                if alias.name == "*":
                    sources.append(base)
                else:
                    public.setdefault(alias.asname or alias.name, f"{base}.{alias.name}" if base else "")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    listed = _listed(node, listed)
                else:
                    for name in _names(target):
                        public.setdefault(name, "")
        elif isinstance(node, BLOCKS):
            inner = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())]
            for handler in getattr(node, "handlers", ()):
                inner.extend(handler.body)
            stack.extend(reversed(inner))
    public = {name: origin for name, origin in public.items() if not name.startswith("_")}
    if listed == [UNKNOWN]:
        listed = None
    if not public and not sources and listed is None:
        return None
    return [listed, public, sources]


def _listed(node, listed: Optional[List[str]]) -> List[str]:
    """`__all__ = [...]`, `__all__ += [...]`: the names so far; [UNKNOWN] once one is not a literal."""
    value = node.value
    if listed == [UNKNOWN] or not isinstance(value, (ast.List, ast.Tuple)):
        return [UNKNOWN]
    names = [item.value for item in value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    if len(names) != len(value.elts):
        return [UNKNOWN]
    return (listed or []) + names if isinstance(node, ast.AugAssign) else names


def _names(target: ast.AST) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for item in target.elts for name in _names(item)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []
