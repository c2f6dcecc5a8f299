"""A test of torch's own version, decided at the target release.

`if version.parse(torch.__version__) >= version.parse("2.4.0") and version.parse(torch.__version__)
< version.parse("2.4.1"):` patches torch 2.4.0 only; `if torch.__version__ < "1.10": <old API>` serves
releases long gone. cudalint's answers hold for one torch release (the target): at that release such a
test has one value, so the branch it rules out never runs there, on a Mac or anywhere, and the guard
evaluator treats it as a branch that never runs on a Mac.

torch's version on either side: `torch.__version__` (a TorchVersion, which compares with strings as
versions do: torch/torch_version.py), `torch.version.__version__`, either parsed (`packaging.version.
parse`/`Version`, `pkg_resources.parse_version`, `LooseVersion`, `StrictVersion`, `TorchVersion`), its
`.base_version`/`.public`, or a name bound once to one of those. A version on the other: a string, the
same parsers of a string, or a name bound once to one. A target given as major.minor stands for every
patch release of it: a test whose value differs between them (`< "2.9.1"` at 2.9) is not decided.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, Tuple

import libcst as cst

from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

TORCH_VERSIONS = frozenset({"torch.__version__", "torch.version.__version__"})
PARSERS = frozenset({
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
    "torch.torch_version.TorchVersion",
})
VERSION_TEXT = frozenset({"base_version", "public"})  # attributes of a parsed version that keep the release
MAX_DEPTH = 4  # names bound to names followed
LATEST_PATCH = 10 ** 6
_RELEASE = re.compile(r"\s*v?(\d{1,9})(?:\.(\d{1,9}))?(?:\.(\d{1,9}))?(.*)\Z", re.S)  # no 5,000-digit int()
_OPERATORS = {
    cst.LessThan: lambda a, b: a < b,
    cst.LessThanEqual: lambda a, b: a <= b,
    cst.GreaterThan: lambda a, b: a > b,
    cst.GreaterThanEqual: lambda a, b: a >= b,
    cst.Equal: lambda a, b: a == b,
    cst.NotEqual: lambda a, b: a != b,
}
Release = Tuple[int, int, int, int]  # major, minor, patch, and -1 for a pre-release or development build


def decided(model: "SemanticModel", test: cst.Comparison, scope: "Scope") -> Optional[bool]:
    """The value of `test` at the target release when it compares torch's version with a version; else None."""
    target = model.torch_version
    if not target or len(test.comparisons) != 1:
        return None
    comparison = test.comparisons[0]
    compare = _OPERATORS.get(type(comparison.operator))
    if compare is None:
        return None
    for torch_side, other, flipped in ((test.left, comparison.comparator, False), (comparison.comparator, test.left, True)):
        if not _is_torch_version(model, torch_side, scope, 0):
            continue
        literal = _version(model, other, scope, 0)
        if literal is None:
            return None
        low = (target[0], target[1] if len(target) > 1 else 0, target[2] if len(target) > 2 else 0, 0)
        high = low if len(target) > 2 else (low[0], low[1], LATEST_PATCH, 0)
        answers = {compare(literal, at) if flipped else compare(at, literal) for at in (low, high)}
        return answers.pop() if len(answers) == 1 else None
    return None


def _is_torch_version(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, (cst.Name, cst.Attribute)) and model.resolve(node, scope) in TORCH_VERSIONS:
        return True
    if isinstance(node, cst.Attribute) and node.attr.value in VERSION_TEXT:
        return _is_torch_version(model, node.value, scope, depth + 1)
    if isinstance(node, cst.Call):
        inner = _only_argument(node)
        if inner is None:
            return False
        if model.resolve(node.func, scope) in PARSERS or (isinstance(node.func, cst.Name) and node.func.value == "str"
                                                          and not model.lookup(node.func.value, scope)):
            return _is_torch_version(model, inner, scope, depth + 1)
        return False
    bound = model.assigned_once(node, scope)
    return bound is not None and _is_torch_version(model, bound.value, bound.context, depth + 1)


def _version(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int) -> Optional[Release]:
    if depth > MAX_DEPTH:
        return None
    text = string_value(node)
    if text is not None:
        return _release(text)
    if isinstance(node, cst.Call) and model.resolve(node.func, scope) in PARSERS:
        inner = _only_argument(node)
        return _version(model, inner, scope, depth + 1) if inner is not None else None
    bound = model.assigned_once(node, scope)
    return _version(model, bound.value, bound.context, depth + 1) if bound is not None else None


def _release(text: str) -> Optional[Release]:
    """"2.4.1" -> (2, 4, 1, 0); "2.1.0a0", "2.2.0.dev20231010" -> (2, 1, 0, -1): before the release."""
    match = _RELEASE.match(text)
    if match is None:
        return None
    major, minor, patch, rest = match.groups()
    if rest and not re.match(r"(?:[.+-]?(?:a|b|rc|dev|post|alpha|beta|pre|c)\S*|\+\S*)\Z", rest, re.I):
        return None  # not a version this reading understands ("2.x", "2.4.1.3")
    pre = -1 if rest and not rest.startswith("+") and not re.match(r"[.]?post", rest, re.I) else 0
    return int(major), int(minor or 0), int(patch or 0), pre


def _only_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[0].value if len(positional) == 1 and len(call.args) == 1 else None
