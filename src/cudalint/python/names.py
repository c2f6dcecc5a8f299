"""Syntax helpers: dotted names, literal strings, source text. Meaning (what a name is
bound to, what a value can be) is the semantic model's business (python/semantic/)."""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from typing import Iterator, Optional, Tuple

import libcst as cst

from cudalint.device_text import CUDA_DEVICE_RE


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts = []
    while type(node) is cst.Attribute:  # libcst's node classes are final; isinstance with their ABC is slow
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def chain_root(node: cst.BaseExpression) -> cst.BaseExpression:
    """What a chain of attributes and subscripts starts from: `batch` of `batch["data"].x[0]`."""
    while type(node) is cst.Attribute or type(node) is cst.Subscript:
        node = node.value
    return node


@functools.lru_cache(maxsize=8192)
def _literal_text(source: str) -> Optional[str]:
    """A string literal's value from its source text (libcst evaluates it with a compile each time)."""
    try:
        value = ast.literal_eval(source)
    except Exception:  # noqa: BLE001 - malformed escapes are not our business
        return None
    return value if isinstance(value, str) else None


def string_value(node: cst.BaseExpression) -> Optional[str]:
    """The value of a plain (or implicitly concatenated) string literal."""
    kind = type(node)
    if kind is cst.SimpleString:
        return _literal_text(node.value)
    if kind is cst.ConcatenatedString:
        left, right = string_value(node.left), string_value(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def string_elements(node: cst.BaseExpression) -> Tuple[str, ...]:
    """The value of a string literal, or the values of the string literals among the elements of a tuple,
    list or set literal (other elements left out: compare the count with the elements where that matters)."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return tuple(text for text in (string_value(element.value) for element in node.elements) if text is not None)
    text = string_value(node)
    return (text,) if text is not None else ()


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


def is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


_CODEGEN = cst.Module(body=[])
MAC_PATH_RE = re.compile(r"(?<![A-Za-z0-9])mps(?![A-Za-z0-9])|\baccelerator\b")  # `mps`, `is_mps_available`; `accelerator`, not `_accelerator_flag`


def source_of(node: cst.CSTNode) -> str:
    return _CODEGEN.code_for_node(node)


def mentions_mac_path(node: cst.CSTNode) -> bool:
    """The code names a path that works on a Mac: MPS or the generic accelerator API (in a name, an
    attribute, a string, a comment).

    Read token by token, without generating the node's source: every string field of a node under it
    (names, strings, comments, numbers, whitespace) is a token's text, and a word of the source lies
    within one token (neighbouring tokens of a valid tree never both have word characters where they meet)."""
    search = MAC_PATH_RE.search
    stack = [node]
    pop, append = stack.pop, stack.append
    while stack:
        current = pop()
        for name in _fields(type(current)):
            value = getattr(current, name)
            kind = type(value)
            if kind is str:
                if ("mps" in value or "accelerator" in value) and search(value):
                    return True
            elif kind is list or kind is tuple:
                for item in value:
                    if isinstance(item, cst.CSTNode):
                        append(item)
            elif kind is not bool and isinstance(value, cst.CSTNode):
                append(value)
    return False


@functools.lru_cache(maxsize=None)
def _fields(kind: type) -> Tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(kind))


def is_cuda_string(node: cst.BaseExpression) -> bool:
    value = string_value(node)
    return value is not None and (value == "cuda" or value.startswith("cuda:"))


def negative_literal(node) -> bool:
    """`-1` as written (a minus and a decimal integer): the "no device" value of an int device option."""
    return (type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus
            and type(node.expression) is cst.Integer and node.expression.value.replace("_", "").isdigit())


# The error texts of CUDA's allocator (c10/cuda/CUDACachingAllocator.cpp: "CUDA out of memory. Tried to
# allocate ..."; a kernel launch's "CUDA error: out of memory"); MPS writes "MPS backend out of memory".
CUDA_OOM_MESSAGES = ("CUDA out of memory", "CUDA error: out of memory")


def names_cuda_oom(text: Optional[str]) -> bool:
    return text is not None and any(message.lower() in text.lower() for message in CUDA_OOM_MESSAGES)


def text_literal(node: cst.CSTNode) -> Optional[str]:
    """The text of a string written as such (not an f-string), else None."""
    return string_value(node) if type(node) in (cst.SimpleString, cst.ConcatenatedString) else None


def membership_literal(node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The literal on the left of `"..." in x` / `"..." not in x`."""
    if type(node) is cst.Comparison and len(node.comparisons) == 1:
        if type(node.comparisons[0].operator) in (cst.In, cst.NotIn) and text_literal(node.left) is not None:
            return node.left
    return None


def conjuncts(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The parts of an `and` chain (the node itself when it is none)."""
    return _operands(node, cst.And)


def disjuncts(node: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The parts of an `or` chain (the node itself when it is none)."""
    return _operands(node, cst.Or)


def _operands(node: cst.BaseExpression, operator: type) -> Iterator[cst.BaseExpression]:
    if type(node) is cst.BooleanOperation and type(node.operator) is operator:
        yield from _operands(node.left, operator)
        yield from _operands(node.right, operator)
    else:
        yield node


def tests_cuda_oom(test: cst.BaseExpression) -> bool:
    """A test that holds only for an error text of CUDA's allocator: `"CUDA out of memory" in str(e)`,
    alone or as one part of an `and`; never true of an error raised on a Mac."""
    return any(
        membership_literal(part) is not None and type(part.comparisons[0].operator) is cst.In
        and names_cuda_oom(text_literal(part.left))
        for part in conjuncts(test)
    )


def int_literal(node) -> Optional[int]:
    """The value of an integer written as such, `-1` included; None for anything else."""
    if negative_literal(node):
        return -int(node.expression.value.replace("_", ""))
    if type(node) is cst.Integer:
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    return None
