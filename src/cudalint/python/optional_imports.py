"""Code that runs only where an optional library imports, or never.

`if is_xformers_available(): import xformers`, `if not is_triton_available(): <stub> else:
import triton`, `if not _TE_AVAILABLE: raise ModuleNotFoundError(...)` before the import, a class
whose constructor raises that way, and `if TYPE_CHECKING:` (never true at run time): an import
there only runs where it succeeds, so it is no porting problem (an import that runs
unconditionally at module import is). The tests are what names are bound to: the availability
queries of rules/optional_code.toml (`importlib.util.find_spec`, `RequirementCache`), names bound
only to those (or to False/None), and helpers, in this file or through the project index, whose
every return is one.

The answer is a Guard: `when_true` means "if the test is true, the library imports (or the code
never runs)", `when_false` the same for the test being false.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from cudalint.python.optional_facts import optional_facts
from cudalint.python.semantic.guards import UNKNOWN, Guard

MAX_DEPTH = 6
AVAILABLE = Guard(True, False)


class Availability:
    def __init__(self, model):
        self.model = model
        self.facts = optional_facts()
        self.memo = {}

    def test(self, node: cst.BaseExpression, scope=None, depth: int = 0) -> Guard:
        scope = scope or self.model.scope
        key = (id(node), id(scope))
        if key not in self.memo:
            self.memo[key] = UNKNOWN  # a cycle through bindings is unknown
            self.memo[key] = self._test(node, scope, depth) if depth <= MAX_DEPTH else UNKNOWN
        return self.memo[key]

    def _test(self, node, scope, depth) -> Guard:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self.test(node.expression, scope, depth + 1).negated()
        if isinstance(node, cst.BooleanOperation):
            left, right = self.test(node.left, scope, depth + 1), self.test(node.right, scope, depth + 1)
            if isinstance(node.operator, cst.And):
                return Guard(left.when_true or right.when_true, left.when_false and right.when_false)
            return Guard(left.when_true and right.when_true, left.when_false or right.when_false)
        if isinstance(node, cst.NamedExpr):
            return self.test(node.value, scope, depth + 1)
        if isinstance(node, cst.Comparison):
            return self._none_comparison(node, scope, depth)
        if isinstance(node, cst.Call):
            return self._call(node, scope, depth)
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._reference(node, scope, depth)
        return UNKNOWN

    def _none_comparison(self, node: cst.Comparison, scope, depth) -> Guard:
        """`find_spec("triton") is not None` keeps the query's meaning; `is None` turns it round."""
        if len(node.comparisons) != 1:
            return UNKNOWN
        target = node.comparisons[0]
        for atom, other in ((node.left, target.comparator), (target.comparator, node.left)):
            if _is_none(other):
                inner = self.test(atom, scope, depth + 1)
                if isinstance(target.operator, (cst.IsNot, cst.NotEqual)):
                    return inner
                if isinstance(target.operator, (cst.Is, cst.Equal)):
                    return inner.negated()
        return UNKNOWN

    def _call(self, call: cst.Call, scope, depth) -> Guard:
        model = self.model
        qualified = model.resolve(call.func, scope)
        if qualified in self.facts.queries:
            return AVAILABLE
        if isinstance(call.func, cst.Name) and call.func.value == "bool" and len(call.args) == 1 and not model.lookup("bool", scope):
            return self.test(call.args[0].value, scope, depth + 1)
        if qualified is not None:
            return self._project(qualified)
        returned = []
        for callee in model.values(call.func, scope, depth + 1):
            inner = model.scopes.get(id(callee.data)) if callee.kind == "func" else None
            if inner is None or not inner.returns:
                return UNKNOWN
            returned.extend((value, inner) for value, _ in inner.returns)
        return self._only_when_available(returned, depth)

    def _reference(self, node, scope, depth) -> Guard:
        model = self.model
        qualified = model.resolve(node, scope)
        if qualified in self.facts.never_true:
            return AVAILABLE  # its body never runs
        if qualified is not None:
            return self._project(qualified)
        bindings = model.bindings_of(node, scope)
        if not bindings or any(binding.kind != "assign" or binding.value is None for binding in bindings):
            return UNKNOWN
        return self._only_when_available([(binding.value, binding.context) for binding in bindings], depth)

    def _only_when_available(self, values, depth) -> Guard:
        """Every value is an availability test or False/None, and at least one is a test."""
        tested = False
        for value, scope in values:
            if _is_false(value):
                continue
            if not self.test(value, scope, depth + 1).when_true:
                return UNKNOWN
            tested = True
        return AVAILABLE if tested else UNKNOWN

    def _project(self, qualified: str) -> Guard:
        project = self.model.project
        if project is not None and project.is_own(qualified) and project.is_availability_test(qualified):
            return AVAILABLE
        return UNKNOWN

    # -- where an import only runs once it can succeed ---------------------------------
    def optional_fields(self, node: cst.CSTNode) -> tuple:
        """The fields of an `if` (or a class) that only run where an optional library imports."""
        if isinstance(node, cst.If):
            found = self.test(node.test)
            return (("body",) if found.when_true else ()) + (("orelse",) if found.when_false else ())
        if isinstance(node, cst.ClassDef) and self._constructor_requires(node):
            return ("body",)
        return ()

    def exits_unless_available(self, node: cst.If, ends_flow) -> bool:
        """`if not _TE_AVAILABLE: raise ModuleNotFoundError(...)`: the rest of the block runs only
        where the library imports (so does the rest after `if available: ... else: return`)."""
        found = self.test(node.test)
        if not found.known:
            return False
        body = ends_flow(node.body) is not None
        orelse = isinstance(node.orelse, cst.Else) and ends_flow(node.orelse.body) is not None
        return (found.when_false and body and not orelse) or (found.when_true and orelse and not body)

    def _constructor_requires(self, node: cst.ClassDef) -> bool:
        """A class whose `__init__` raises unless the library imports: its methods only run on an
        instance, so only where the library is there."""
        init = next(
            (item for item in getattr(node.body, "body", ()) if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"),
            None,
        )
        inner = self.model.scopes.get(id(init)) if init is not None else None
        if inner is None or not isinstance(init.body, cst.IndentedBlock):
            return False
        for statement in init.body.body:
            if isinstance(statement, cst.If) and _raises(statement.body):
                found = self.test(statement.test, inner)
                if found.when_false and statement.orelse is None:
                    return True
        return False


def _raises(block: cst.BaseSuite) -> bool:
    last = block.body[-1] if block.body else None
    statements = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return bool(statements) and isinstance(statements[-1], cst.Raise)


def _is_none(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _is_false(node: Optional[cst.CSTNode]) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "False")
