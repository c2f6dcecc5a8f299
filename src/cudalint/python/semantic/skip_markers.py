"""Which test skips take a test (or a parametrized case) away from every host without CUDA.

One reader for every place that asks: a test's or class's decorators and `pytestmark` (the walk), the
`marks=` of `pytest.param(...)` in a call or in `@pytest.mark.parametrize`'s values (semantic/parametrize.py).
A skip counts when its condition is false only off a Mac (`skipif(not torch.cuda.is_available())`,
`skipUnless(<CUDA>)`), when it skips on every host (`pytest.mark.skip`), when it is the project's own
`@require_cuda`-style helper (the project index), a marker the catalog knows by its keywords
(`RunIf(min_cuda_gpus=1)`), a name or list bound to one of those, or a decorator function of the file that
returns one; and, where nothing here can judge the condition (a helper from outside the project, a flag bound
only to True or False that the suite sets from elsewhere), when its reason says the test needs a GPU.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, FrozenSet, List, Optional

import libcst as cst

from cudalint.python.children import code_children
from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

MAX_DEPTH = 3


class SkipMarkers:
    def __init__(self, model: "SemanticModel"):
        self.model = model

    def skips_off_cuda(self, decorator: Optional[cst.BaseExpression], scope: Optional["Scope"] = None, depth: int = 0) -> bool:
        model = self.model
        if model.availability.always_skips(decorator):
            return True  # `@pytest.mark.skip(reason=...)`: skipped on every host, so off CUDA too
        if isinstance(decorator, (cst.Name, cst.Attribute)) and depth < MAX_DEPTH:
            qualified = model.resolve(decorator, scope)
            if qualified is not None and model.project is not None and model.project.is_own(qualified):
                return model.project.skips_off_cuda(qualified)  # @require_cuda from the project's test helpers
            for binding in model.bindings_of(decorator, scope):
                if binding.kind == "assign" and self.skips_off_cuda(binding.value, binding.context, depth + 1):
                    return True
                if binding.kind == "def" and self._returns_skip(binding.node, depth):
                    return True
            return False
        if isinstance(decorator, (cst.List, cst.Tuple)):
            return any(self.skips_off_cuda(element.value, scope, depth + 1) for element in decorator.elements)
        if not isinstance(decorator, cst.Call):
            return False
        qualified = model.resolve(decorator.func, scope)
        if qualified is not None and model.project is not None and model.project.is_own(qualified):
            if model.project.skips_off_cuda(qualified):  # @requires_gpu() from the project's test helpers
                return True
        if not decorator.args:
            return False
        facts = model.guards.facts
        condition = decorator.args[0].value
        if qualified in facts.skip_if or qualified in facts.skip_unless:
            found = model.guard(condition, scope)
            if found.when_false if qualified in facts.skip_if else found.when_true:
                return True
            # a condition nothing here can judge (a helper of a module the tree lacks), with a reason that
            # says the test needs CUDA: `skipif(not mod_task.use_cuda(), reason="gpu is required")`
            return (not (found.when_true or found.when_false) and needs_cuda(skip_reason(decorator), facts.skip_reason_words)
                    and (self._calls_outside(condition, scope) or self._opt_in_flag(condition, scope)))
        return model.guards.marker_skips(decorator, scope or model.scope)  # @RunIf(min_cuda_gpus=1): the catalog's marker keywords

    def param_skips_off_cuda(self, call: cst.Call, scope: Optional["Scope"] = None) -> bool:
        """`pytest.param(..., marks=[<a skip off CUDA>])` (the caller has checked it is one): the case runs
        only off a Mac."""
        marks = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "marks"), None)
        return marks is not None and self.skips_off_cuda(marks, scope)

    def _opt_in_flag(self, condition: cst.BaseExpression, scope) -> bool:
        """The condition is a flag (or its negation) every binding of which is True or False: a switch the
        suite turns on from outside the test (curated-transformers' `GPU_TESTS_ENABLED = False`, which its
        `enable_gpu` plugin sets), whose meaning only the skip's reason states."""
        while type(condition) is cst.UnaryOperation and type(condition.operator) is cst.Not:
            condition = condition.expression
        if type(condition) not in (cst.Name, cst.Attribute):
            return False
        values = self.model.values(condition, scope)
        return bool(values) and all(value.kind == "bool" for value in values)

    def _calls_outside(self, condition: cst.BaseExpression, scope) -> bool:
        """The condition calls a function from outside the project and torch, whose answer is not known here
        (the project's own helpers are read, and were judged to be no CUDA test)."""
        model = self.model
        stack: List[cst.CSTNode] = [condition]
        while stack:
            node = stack.pop()
            stack.extend(code_children(node))
            if type(node) is cst.Call:
                qualified = model.resolve(node.func, scope)
                if qualified is not None and qualified.split(".", 1)[0] != "torch" and not (
                        model.project is not None and model.project.is_own(qualified)):
                    return True
        return False

    def _returns_skip(self, function: cst.FunctionDef, depth: int) -> bool:
        """A decorator function of this file: `return unittest.skipUnless(<CUDA>, ...)(test_case)`, or
        `if not torch.cuda.is_available(): return unittest.skip(...)(test_case)` with every other return
        (the test as it was) reached only off a Mac."""
        model = self.model
        inner = model.scopes.get(id(function))
        if inner is None:
            return False
        skipping = False
        others = []
        for returned, conditions in inner.returns:
            call = returned.func if isinstance(returned, cst.Call) and isinstance(returned.func, cst.Call) else returned
            if self._skips_off_cuda_in(call, inner, depth + 1):
                return True
            if isinstance(call, cst.Call) and model.resolve(call.func, inner) in model.availability.facts.always_skip:
                skipping = True
            else:
                others.append(conditions)
        return skipping and all(model.guards.conditions_off_mac(conditions, inner) for conditions in others)

    def _skips_off_cuda_in(self, call, scope, depth: int) -> bool:
        if not isinstance(call, cst.Call) or not call.args or depth > MAX_DEPTH:
            return False
        facts = self.model.guards.facts
        qualified = self.model.resolve(call.func, scope)
        guard = self.model.guard(call.args[0].value, scope)
        return (qualified in facts.skip_if and guard.when_false) or (qualified in facts.skip_unless and guard.when_true)


def skip_reason(call: cst.Call) -> str:
    """The reason of a skip decorator: its `reason=` or its second positional argument, when a string."""
    keyed = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in ("reason", "msg")), None)
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    value = keyed if keyed is not None else positional[1] if len(positional) > 1 else None
    return (string_value(value) or "") if value is not None else ""


def needs_cuda(reason: str, words: FrozenSet[str]) -> bool:
    """The reason says the test needs CUDA: it holds one of the words (rules/guards.toml skip_reason_words)."""
    return any(word in words for word in re.split(r"[^a-z0-9]+", reason.lower()))
