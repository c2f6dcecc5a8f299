"""CDL218: out-of-memory handling that recognises the error by CUDA's message.

`"CUDA out of memory" in str(e)`, a list of messages with CUDA's in it, `msg.startswith("CUDA out of
memory")`, `"CUDA" in msg and "out of memory" in msg`: each is a test of an error's text, and on MPS
the allocator's text is "MPS backend out of memory (...)", so the test is false there and the
handler (halve the batch, free the cache, retry) never runs. A test of "out of memory" alone
matches both. Messages that are made (`raise RuntimeError("CUDA out of memory")` in a test, a log
line) are not tests and are left alone.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import names_cuda_oom, string_value
from cudalint.python.visitor import Registry

GENERIC = "out of memory"
# Methods and functions whose first argument is text searched for in another string.
SEARCHES = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "search", "match", "fullmatch"})
MESSAGE = (
    "{found} tests for CUDA's out-of-memory message; on MPS the error reads \"MPS backend out of memory\", "
    "so this never matches there: test for \"out of memory\""
)


def _literal(node: cst.CSTNode) -> Optional[str]:
    return string_value(node) if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)) else None


def _membership(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The literal on the left of `"..." in x` / `"..." not in x`."""
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        if isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)) and _literal(node.left) is not None:
            return node.left
    return None


def _conjuncts(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
        yield from _conjuncts(node.left)
        yield from _conjuncts(node.right)
    else:
        yield node


def _comparison(node: cst.Comparison, ctx: FileContext) -> None:
    literal = _membership(node)
    if literal is None:
        return
    text = _literal(literal)
    if names_cuda_oom(text):
        ctx.report("CDL218", literal, MESSAGE.format(found=repr(text)))
        return
    if text != "CUDA":
        return
    # `"CUDA" in msg and "out of memory" in msg`: the conjunction is CUDA's message, in two parts
    top = None
    for ancestor in reversed(ctx.stack[:-1]):
        if isinstance(ancestor, cst.BooleanOperation) and isinstance(ancestor.operator, cst.And):
            top = ancestor
        elif not isinstance(ancestor, cst.BooleanOperation):
            break
    if top is None:
        return
    for part in _conjuncts(top):
        other = _membership(part)
        words = (_literal(other) or "") if other is not None else ""
        if GENERIC in words.lower() and "mps" not in words.lower():
            ctx.report("CDL218", literal, MESSAGE.format(found=f"{text!r} with {words!r}"))
            return


def _container(node: cst.BaseExpression, ctx: FileContext) -> None:
    """A tuple, list or set of messages to look for, with CUDA's but none that MPS's message matches."""
    texts = [(_literal(element.value), element.value) for element in node.elements if isinstance(element, cst.Element)]
    found = [(text, value) for text, value in texts if names_cuda_oom(text)]
    if not found or any(text is not None and GENERIC in text.lower() and not names_cuda_oom(text) for text, _ in texts):
        return
    if isinstance(ctx.parent, (cst.Arg, cst.Call)):
        return  # handed to a call: a message made, not one looked for
    for text, value in found:
        ctx.report("CDL218", value, MESSAGE.format(found=repr(text)))


def _search(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else None
    if name not in SEARCHES or not node.args or node.args[0].keyword is not None:
        return
    text = _literal(node.args[0].value)
    if names_cuda_oom(text):
        ctx.report("CDL218", node.args[0].value, MESSAGE.format(found=repr(text)))


def oom_message(registry: Registry) -> None:
    registry.on(cst.Comparison, _comparison)
    registry.on(cst.Call, _search)
    for kind in (cst.Tuple, cst.List, cst.Set):
        registry.on(kind, _container)
