"""CDL218: out-of-memory handling that recognises the error by CUDA's message.

`"CUDA out of memory" in str(e)`, a list of messages with CUDA's in it, `msg.startswith("CUDA out of
memory")`, `"CUDA" in msg and "out of memory" in msg`: each is a test of an error's text, and on MPS
the allocator's text is "MPS backend out of memory (...)", so the test is false there and the
handler (halve the batch, free the cache, retry) never runs. A test of "out of memory" alone
matches both. Messages that are made (`raise RuntimeError("CUDA out of memory")` in a test, a log
line) are not tests and are left alone.
"""

from __future__ import annotations

import libcst as cst

from cudalint.python.context import FileContext
from cudalint.python.names import conjuncts, membership_literal, names_cuda_oom, text_literal
from cudalint.python.visitor import Registry

GENERIC = "out of memory"
# What a container may sit in on its way to where it is used: other containers, and their elements.
_HELD_IN = (cst.Element, cst.DictElement, cst.Tuple, cst.List, cst.Set, cst.Dict)
# Methods and functions whose first argument is text searched for in another string.
SEARCHES = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "search", "match", "fullmatch"})
MESSAGE = (
    "{found} tests for CUDA's out-of-memory message; on MPS the error reads \"MPS backend out of memory\", "
    "so this never matches there: test for \"out of memory\""
)


def _comparison(node: cst.Comparison, ctx: FileContext) -> None:
    literal = membership_literal(node)
    if literal is None:
        return
    text = text_literal(literal)
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
    for part in conjuncts(top):
        other = membership_literal(part)
        words = (text_literal(other) or "") if other is not None else ""
        if GENERIC in words.lower() and "mps" not in words.lower():
            ctx.report("CDL218", literal, MESSAGE.format(found=f"{text!r} with {words!r}"))
            return


def _container(node: cst.BaseExpression, ctx: FileContext) -> None:
    """A tuple, list or set of messages to look for, with CUDA's but none that MPS's message matches."""
    texts = [(text_literal(element.value), element.value) for element in node.elements if isinstance(element, cst.Element)]
    found = [(text, value) for text, value in texts if names_cuda_oom(text)]
    if not found or any(text is not None and GENERIC in text.lower() and not names_cuda_oom(text) for text, _ in texts):
        return
    holder = next((ancestor for ancestor in reversed(ctx.stack[:-1]) if not isinstance(ancestor, _HELD_IN)), None)
    if isinstance(holder, (cst.Arg, cst.Call, cst.Return, cst.Yield)):
        return  # handed to a call or back to the caller (`return "CUDA out of memory", 500`): a message made
    for text, value in found:
        ctx.report("CDL218", value, MESSAGE.format(found=repr(text)))


def _search(node: cst.Call, ctx: FileContext) -> None:
    func = node.func
    name = func.attr.value if isinstance(func, cst.Attribute) else None
    if name not in SEARCHES or not node.args or node.args[0].keyword is not None:
        return
    text = text_literal(node.args[0].value)
    if names_cuda_oom(text):
        ctx.report("CDL218", node.args[0].value, MESSAGE.format(found=repr(text)))


def oom_message(registry: Registry) -> None:
    registry.on(cst.Comparison, _comparison)
    registry.on(cst.Call, _search)
    for kind in (cst.Tuple, cst.List, cst.Set):
        registry.on(kind, _container)
