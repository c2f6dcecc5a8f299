"""What `self.<name>` is bound to, read across the classes of the file an instance may be.

A method of class K reads `self.x` on an instance of K or of a subclass of K, so the bindings that
count are those of K, of its bases and of its subclasses (the classes of this file that name each
other as bases): their methods' `self.x = ...` and their class bodies' `x = ...`. A base the file
does not define is taken to bind nothing of the name (as for a class with no known bases).

When anything else in the file binds an attribute of that name — `obj.x = ...`, `setattr(obj, "x",
...)` on an object that is not the `self` of one of those methods — what the attribute holds is
not known here, and the answer is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Set

import libcst as cst

from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Binding, Scope


class ClassAttributes:
    def __init__(self, model: "SemanticModel"):
        self.model = model
        self._bases: Optional[Dict[int, List["Scope"]]] = None  # id(class scope) -> the file's classes it derives from
        self._subclasses: Dict[int, List["Scope"]] = {}
        self._outside: Optional[Set[str]] = None  # attribute names bound other than on `self`

    def bindings(self, owner: "Scope", name: str) -> Optional[List["Binding"]]:
        """Every binding of `self.<name>` an instance of `owner` may see; None when the file binds the
        name elsewhere too."""
        if name in self._outside_names():
            return None
        found: List["Binding"] = []
        for klass in self.related(owner):
            found.extend(klass.attributes.get(name, ()))
            found.extend(klass.bindings.get(name, ()))
        return found

    def defines_method(self, owner: "Scope", name: str) -> bool:
        """The class, or one of the file's classes it derives from, defines a method `name`, or stores
        something under that name on its instances (`self.record_stream = DataPrefetcher._record_stream_for_image`,
        yolox): `self.name(...)` calls the project's code (hqq's `HQQLinear.cuda(self, device)`)."""
        if self._bases is None:
            self._link()
        stack, seen = [owner], set()
        while stack:
            klass = stack.pop()
            if id(klass) in seen:
                continue
            seen.add(id(klass))
            if any(binding.kind == "def" for binding in klass.bindings.get(name, ())) or klass.attributes.get(name):
                return True
            stack.extend(self._bases.get(id(klass), ()))
        return False

    def related(self, owner: "Scope") -> List["Scope"]:
        """The class, its bases and its subclasses among the classes of the file."""
        if self._bases is None:
            self._link()
        seen = {id(owner): owner}
        for edges in (self._bases, self._subclasses):
            stack = [owner]
            while stack:
                for other in edges.get(id(stack.pop()), ()):
                    if id(other) not in seen:
                        seen[id(other)] = other
                        stack.append(other)
        return list(seen.values())

    def _link(self) -> None:
        self._bases = {}
        for scope in list(self.model.scopes.values()):
            if scope.kind != "class" or scope.parent is None:
                continue
            for base in scope.node.bases:
                target = self._class_named(base.value, scope.parent)
                if target is not None and target is not scope:
                    self._bases.setdefault(id(scope), []).append(target)
                    self._subclasses.setdefault(id(target), []).append(scope)

    def _class_named(self, node: cst.BaseExpression, scope: "Scope") -> Optional["Scope"]:
        if not isinstance(node, cst.Name):
            return None
        bindings = self.model.lookup(node.value, scope)
        if len(bindings) != 1 or bindings[0].kind != "class":
            return None
        return self.model.scopes.get(id(bindings[0].node))

    def _outside_names(self) -> Set[str]:
        """Attribute names the file binds on something other than a method's `self`."""
        if self._outside is None:
            self._outside = set()
            self._statements(self.model.module_scope.node.body, self.model.module_scope)
        return self._outside

    def _statements(self, body, scope: "Scope") -> None:
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    self._small(small, scope)
            elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                inner = self.model.scopes.get(id(statement))
                self._suite(statement.body, inner if inner is not None else scope)
            else:
                for suite in _suites(statement):
                    self._suite(suite, scope)

    def _suite(self, suite, scope: "Scope") -> None:
        if isinstance(suite, cst.SimpleStatementSuite):
            for small in suite.body:
                self._small(small, scope)
        else:
            self._statements(suite.body, scope)

    def _small(self, small, scope: "Scope") -> None:
        targets = []
        if isinstance(small, cst.Assign):
            targets = [target.target for target in small.targets]
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            targets = [small.target]
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if isinstance(call.func, cst.Name) and call.func.value == "setattr" and len(call.args) >= 2:
                name = string_value(call.args[1].value)
                if name is not None:
                    self._outside.add(name)
            return
        while targets:
            target = targets.pop()
            if isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(element.value for element in target.elements)
            elif isinstance(target, cst.StarredElement):
                targets.append(target.value)
            elif isinstance(target, cst.Attribute) and not self._on_self(target.value, scope):
                self._outside.add(target.attr.value)

    def _on_self(self, node: cst.BaseExpression, scope: "Scope") -> bool:
        return isinstance(node, cst.Name) and scope.kind == "function" and scope.enclosing_class is not None and node.value == scope.self_name


def _suites(statement):
    """The suites of a compound statement other than a function or class."""
    for name in ("body", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if isinstance(part, cst.If):
            yield from _suites(part)
        elif isinstance(part, cst.BaseSuite):
            yield part
        elif part is not None and isinstance(getattr(part, "body", None), cst.BaseSuite):
            yield part.body
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    for case in getattr(statement, "cases", ()):
        yield case.body
