"""What counts as a CUDA guard: a test after which code only runs on a CUDA host.

`if torch.cuda.is_available():`, `if x.is_cuda:`, `if device.type == "cuda":`,
`if use_cuda:`, `if torch.version.cuda:` ... Code in the guarded branch is not a
portability problem as long as the other branch works; `cuda_required` reports the
guards whose other branch raises.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from cudalint.python.names import ImportMap, dotted, string_value

CUDA_QUERIES = {
    "torch.cuda.is_available",
    "torch.cuda.device_count",
    "torch.cuda.is_initialized",
    "torch.backends.cudnn.is_available",
    "torch.distributed.is_nccl_available",
}
CUDA_FLAGS = {"torch.version.cuda"}
FLAG_NAME_RE = re.compile(r"(cuda|gpu)", re.IGNORECASE)
MAC_PATH_RE = re.compile(r"\b(mps|accelerator)\b")
_CODEGEN = cst.Module(body=[])


def source_of(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def mentions_mac_path(node: cst.CSTNode) -> bool:
    """The code names a path that works on a Mac: MPS or the generic accelerator API."""
    return bool(MAC_PATH_RE.search(source_of(node)))


def is_cuda_string(node: cst.BaseExpression) -> bool:
    value = string_value(node)
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def is_availability_query(test: cst.BaseExpression, imports: ImportMap) -> bool:
    """`torch.cuda.is_available()`, `torch.cuda.device_count() > 0`: a question about the host."""
    if isinstance(test, cst.Comparison):
        test = test.left
    return isinstance(test, cst.Call) and imports.resolve(test.func) in CUDA_QUERIES


def is_cuda_guard(test: cst.BaseExpression, imports: ImportMap) -> bool:
    """True when the test being true implies a CUDA host (for `and`: either side does)."""
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And):
            return is_cuda_guard(test.left, imports) or is_cuda_guard(test.right, imports)
        return is_cuda_guard(test.left, imports) and is_cuda_guard(test.right, imports)
    if isinstance(test, cst.Call):
        qualified = imports.resolve(test.func)
        if qualified in CUDA_QUERIES:
            return True
        name = dotted(test.func) or ""
        if name.endswith(".startswith") and test.args and is_cuda_string(test.args[0].value):
            return True
        return False
    if isinstance(test, cst.Comparison):
        left = test.left
        if is_cuda_guard(left, imports):
            return True  # torch.cuda.device_count() > 1, torch.version.cuda is not None
        for target in test.comparisons:
            op = target.operator
            if isinstance(op, (cst.Equal, cst.In)) and (is_cuda_string(left) or is_cuda_string(target.comparator)):
                return True
        return False
    if isinstance(test, (cst.Name, cst.Attribute)):
        qualified = imports.resolve(test)
        if qualified in CUDA_FLAGS:
            return True
        if qualified is not None:
            return False
        last = test.value if isinstance(test, cst.Name) else test.attr.value
        return last == "is_cuda" or bool(FLAG_NAME_RE.search(last))
    return False


def negated_guard(test: cst.BaseExpression, imports: ImportMap) -> bool:
    """`not torch.cuda.is_available()`, `device.type != "cuda"`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return is_cuda_guard(test.expression, imports)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, (cst.NotEqual, cst.NotIn)):
            return is_cuda_string(test.left) or is_cuda_string(target.comparator)
    return False


def guarded_branch(test: cst.BaseExpression, imports: ImportMap) -> Optional[str]:
    """Which branch of an if/ternary only runs on CUDA: "body", "orelse" or None."""
    if is_cuda_guard(test, imports):
        return "body"
    if negated_guard(test, imports):
        return "orelse"
    return None


def ends_flow(block: cst.BaseSuite) -> Optional[str]:
    """"raise"/"return" when the suite's last statement leaves the block."""
    body = block.body
    if not body:
        return None
    last = body[-1]
    statements = last.body if isinstance(last, cst.SimpleStatementLine) else [last]
    final = statements[-1] if statements else None
    if isinstance(final, cst.Raise):
        return "raise"
    if isinstance(final, (cst.Return, cst.Continue, cst.Break)):
        return "return"
    if isinstance(final, cst.Expr) and isinstance(final.value, cst.Call):
        name = dotted(final.value.func) or ""
        if name in ("sys.exit", "exit", "quit", "os._exit"):
            return "raise"
    return None
