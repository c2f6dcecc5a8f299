"""Name resolution without scope analysis: an import map built during the same pass.

`import torch.cuda as tc`, `from torch import cuda` and `import torch as T` all make
`tc.synchronize`, `cuda.synchronize` and `T.cuda.synchronize` resolve to
`torch.cuda.synchronize`. The map is per file and flow-insensitive, which is what
rules about module-level APIs need, at a fraction of the cost of full scope analysis.
"""

from __future__ import annotations

import re
from typing import Dict, Optional

import libcst as cst

CUDA_DEVICE_RE = re.compile(r"^cuda(:\d+)?$")


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def module_name(node: cst.BaseExpression) -> str:
    return dotted(node) or ""


class ImportMap:
    def __init__(self) -> None:
        self.aliases: Dict[str, str] = {}

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.aliases[top] = top

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = module_name(node.module)
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    def resolve(self, node: cst.BaseExpression) -> Optional[str]:
        """Qualified name of a Name/Attribute chain rooted in an import, else None."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def is_module_ref(self, node: cst.BaseExpression) -> bool:
        return self.resolve(node) is not None


def string_value(node: cst.BaseExpression) -> Optional[str]:
    """The value of a plain (or implicitly concatenated) string literal."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - malformed escapes are not our business
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def is_cuda_device_string(node: cst.BaseExpression) -> bool:
    """"cuda", "cuda:0", f"cuda:{rank}", "cuda:" + str(i), "cuda:%d" % i, "cuda:{}".format(i)."""
    value = string_value(node)
    if value is not None:
        return bool(CUDA_DEVICE_RE.match(value))
    if isinstance(node, cst.FormattedString):
        head = node.parts[0] if node.parts else None
        return isinstance(head, cst.FormattedStringText) and head.value.startswith("cuda:")
    if isinstance(node, cst.BinaryOperation):
        left = string_value(node.left)
        if isinstance(node.operator, (cst.Add, cst.Modulo)) and left is not None:
            return left.startswith("cuda:") or left == "cuda"
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        template = string_value(node.func.value)
        return template is not None and template.startswith("cuda:")
    return False


def is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"
