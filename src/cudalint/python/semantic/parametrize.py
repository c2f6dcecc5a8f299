"""What a test's parameter takes from `@pytest.mark.parametrize`.

`@pytest.mark.parametrize("device", DEVICES)` hands the test each element of DEVICES in turn, and
nothing else: the parameter's values are the elements' values. The argument values are read through
list and tuple literals, `+` of such, a name bound once to one, `list(...)`/`tuple(...)` of one, and
comprehensions, whose element is built only where their loops run (an element built over
`range(torch.cuda.device_count())` is taken only off a Mac); several names
(`"device, dtype"`) take their place in each row; `pytest.param(value, marks=...)` is its value,
taken only off a Mac when its marks skip the case without CUDA, as is a case the test's body first skips
where CUDA is missing (`if device == "cuda" and not torch.cuda.is_available(): pytest.skip()`), itself or
through a helper it calls with the parameter (`check_device(device)`, here or in another module of the
project) or a decorator whose wrapper does so. `indirect=` hands the values to
fixtures instead: not followed. A parameter no decorator names takes the values of the module's fixture of
its name that hands on each of its `params` (`return request.param`), read the same way, or of the module's
plain fixture of its name whose body is one `return` (or `yield`) of a value (`return torch.device("cuda" if
torch.cuda.is_available() else "cpu")`). Anything else is not followed (the parameter is unknown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

import libcst as cst

from cudalint.python.children import positional_params
from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel
    from cudalint.python.semantic.scopes import Scope

PARAMETRIZE = "pytest.mark.parametrize"
FIXTURE = "pytest.fixture"
MAX_ELEMENTS = 64
MAX_DEPTH = 4

Element = Tuple[cst.BaseExpression, "Scope", bool]  # the expression, where it is evaluated, taken only off a Mac


def parametrized(model: "SemanticModel", function: cst.FunctionDef, name: str, scope: "Scope") -> Optional[List[Element]]:
    """The values `name` takes from a parametrize decorator of `function` (evaluated in `scope`, where the
    function is defined); None where no decorator names it or its values cannot be read."""
    for decorator in function.decorators:
        call = decorator.decorator
        if type(call) is not cst.Call or model.resolve(call.func, scope) != PARAMETRIZE:
            continue
        arguments = _arguments(call)
        if arguments is None:
            continue
        names, argvalues = arguments
        if name not in names:
            continue
        rows = _elements(model, argvalues, scope, 0)
        if rows is None:
            return None
        found = []
        for row, where, off_mac in rows:
            row, off_mac = _unwrapped(model, row, where, off_mac)
            if len(names) > 1:
                if type(row) not in (cst.Tuple, cst.List) or len(row.elements) != len(names) or any(
                        type(element) is cst.StarredElement for element in row.elements):
                    return None
                row = row.elements[names.index(name)].value
            text = string_value(row)
            off_mac = off_mac or (text is not None and _skipped_without_cuda(model, function, name, text))
            found.append((row, where, off_mac))
        return found
    return _fixture_cases(model, name, scope) if _requests_fixtures(model, function, scope) else None


def _fixture_cases(model: "SemanticModel", name: str, scope: "Scope") -> Optional[List[Element]]:
    """The values a test's parameter takes from the module's fixture of that name that hands each of its
    `params` in turn (`@pytest.fixture(params=["cpu", pytest.param("cuda", marks=skip_no_cuda)])` over `def
    device(request): return request.param`); None for any other fixture, or none."""
    bindings = model.lookup(name, scope)
    if len(bindings) != 1 or bindings[0].kind != "def" or type(bindings[0].node) is not cst.FunctionDef:
        return None
    fixture = bindings[0].node
    params = None
    for decorator in fixture.decorators:
        call = decorator.decorator
        if type(call) is cst.Call and model.resolve(call.func, scope) == FIXTURE:
            keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
            if "name" in keywords or any(arg.star for arg in call.args):
                return None  # `@pytest.fixture(name="device")`: the function's name is not the fixture's
            params = keywords.get("params")
    if params is None:  # a plain fixture: the one value its body returns (`return torch.device("cuda" if ... else "cpu")`)
        returned, inner = _returned(fixture), model.scopes.get(id(fixture))
        return None if returned is None or inner is None else [(returned, inner, False)]
    if not _returns_its_param(fixture):
        return None
    rows = _elements(model, params, bindings[0].context, 0)
    if rows is None:
        return None
    found = []
    for row, where, off_mac in rows:
        value, off_mac = _unwrapped(model, row, where, off_mac)
        found.append((value, where, off_mac))
    return found


def _requests_fixtures(model: "SemanticModel", function: cst.FunctionDef, scope: "Scope") -> bool:
    """pytest fills the function's parameters with fixtures: a test (`test_*`) or a fixture itself."""
    return function.name.value.startswith("test") or is_fixture(model, function, scope)


def is_fixture(model: "SemanticModel", function: cst.FunctionDef, scope: Optional["Scope"] = None) -> bool:
    """`@pytest.fixture` or `@pytest.fixture(...)` decorates the function."""
    return any(model.resolve(decorator.decorator.func if type(decorator.decorator) is cst.Call else decorator.decorator,
                             scope) == FIXTURE for decorator in function.decorators)


def _returns_its_param(fixture: cst.FunctionDef) -> bool:
    """The fixture's body (past a docstring) is `return request.param`, `request` its first parameter."""
    value, params = _returned(fixture), positional_params(fixture)
    return (bool(params) and type(value) is cst.Attribute and value.attr.value == "param" and type(value.value) is cst.Name
            and value.value.value == params[0])


def _returned(fixture: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """What a fixture whose body (past a docstring) is one `return` or `yield` statement hands its tests."""
    statements = [statement for statement in _body(fixture)
                  if not (type(statement) is cst.SimpleStatementLine and len(statement.body) == 1
                          and type(statement.body[0]) is cst.Expr and string_value(statement.body[0].value) is not None)]
    if len(statements) != 1 or type(statements[0]) is not cst.SimpleStatementLine or len(statements[0].body) != 1:
        return None
    small = statements[0].body[0]
    if type(small) is cst.Return:
        return small.value
    if type(small) is cst.Expr and type(small.value) is cst.Yield and not isinstance(small.value.value, cst.From):
        return small.value.value
    return None


def _skipped_without_cuda(model: "SemanticModel", function: cst.FunctionDef, name: str, text: str) -> bool:
    """The test stops at once for this case where CUDA is missing: a statement of its body `if name == text
    and not torch.cuda.is_available(): pytest.skip(...)` (any order of the parts; `raise` too), a call of a
    helper that does so for the parameter it is handed, or a decorator whose wrapper does."""
    scope = model.scopes.get(id(function))
    return scope is not None and (
        _body_stops(model, function, name, text)
        or any(_helper_stops(model, statement, name, text, scope) for statement in _body(function))
        or any(_decorator_stops(model, decorator.decorator, name, text, scope.parent) for decorator in function.decorators))


def _body(function: cst.FunctionDef):
    return function.body.body if isinstance(function.body, cst.IndentedBlock) else ()


def _body_stops(model: "SemanticModel", function: cst.FunctionDef, param: str, text: str) -> bool:
    """A statement of the function's body stops it where CUDA is missing when `param == text`
    (GuardEvaluator.stops_unless_cuda)."""
    inner = model.scopes.get(id(function))
    return inner is not None and any(
        model.guards.stops_unless_cuda(statement, lambda part: _compares(part, param, text), inner) for statement in _body(function))


def _definitions(model: "SemanticModel", func: cst.BaseExpression, scope: "Scope") -> Optional[list]:
    """The file's own definitions a called (or decorating) name is bound to; None where it is not only those."""
    if type(func) is not cst.Name:
        return None
    bindings = model.lookup(func.value, scope)
    return [binding.node for binding in bindings] if bindings and all(binding.kind == "def" for binding in bindings) else None


def _project_stops(model: "SemanticModel", func: cst.BaseExpression, scope: "Scope") -> list:
    """FileFacts.device_skips of a function of another module of the project: [position, parameter, value]."""
    qualified = model.resolve(func, scope) if type(func) in (cst.Name, cst.Attribute) else None
    project = model.project
    return project.device_skips(qualified) if qualified is not None and project is not None and project.is_own(qualified) else []


def _decorator_stops(model: "SemanticModel", decorator: cst.BaseExpression, name: str, text: str, scope: "Scope") -> bool:
    """`@skip_if_no_cuda` whose one wrapper starts `if device == "cuda" and not torch.cuda.is_available():
    pytest.skip(...)` before it calls the test with the same `device` (position -1 in the index's facts)."""
    definitions = _definitions(model, decorator, scope)
    if definitions is not None:
        return all(_wrapper_stops(model, definition, name, text) for definition in definitions)
    return any(position == -1 and param == name and value == text
               for position, param, value in _project_stops(model, decorator, scope))


def _wrapper_stops(model: "SemanticModel", function: cst.FunctionDef, name: str, text: str) -> bool:
    wrappers = [item for item in _body(function) if type(item) is cst.FunctionDef]
    return len(wrappers) == 1 and name in positional_params(wrappers[0]) and _body_stops(model, wrappers[0], name, text)


def _helper_stops(model: "SemanticModel", statement: cst.CSTNode, name: str, text: str, scope: "Scope") -> bool:
    """`check_device(device)` (its value kept or not), where the helper, here or in another module of the
    project, stops for this value of the parameter that receives `name` (`if device == "cuda" and not
    torch.cuda.is_available(): pytest.skip(...)`)."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
        return False
    small = statement.body[0]
    call = small.value if type(small) in (cst.Expr, cst.Assign, cst.AnnAssign) else None
    if type(call) is not cst.Call:
        return False
    passed = [(index, arg.keyword.value if arg.keyword is not None else None) for index, arg in enumerate(call.args)
              if type(arg.value) is cst.Name and arg.value.value == name and not arg.star]
    if not passed:
        return False
    definitions = _definitions(model, call.func, scope)
    if definitions is not None:
        return all(_receiver_stops(model, definition, passed, text) for definition in definitions)
    return any(position >= 0 and value == text and ((keyword is None and index == position) or keyword == param)
               for position, param, value in _project_stops(model, call.func, scope) for index, keyword in passed)


def _receiver_stops(model: "SemanticModel", function: cst.FunctionDef, passed, text: str) -> bool:
    """The function stops for `text` in a parameter that receives the test's one (by position or keyword)."""
    params = positional_params(function)
    received = {params[index] if keyword is None and index < len(params) else keyword for index, keyword in passed}
    return any(_body_stops(model, function, param, text) for param in received if param is not None)


def _compares(test: cst.BaseExpression, name: str, text: str) -> bool:
    """`name == "text"` or `"text" == name`."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    left, right = test.left, test.comparisons[0].comparator
    return any(type(a) is cst.Name and a.value == name and string_value(b) == text for a, b in ((left, right), (right, left)))


def _arguments(call: cst.Call) -> Optional[Tuple[List[str], cst.BaseExpression]]:
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if "indirect" in keywords or any(arg.star for arg in call.args):
        return None
    argnames = positional[0] if positional else keywords.get("argnames")
    argvalues = positional[1] if len(positional) > 1 else keywords.get("argvalues")
    if argnames is None or argvalues is None:
        return None
    text = string_value(argnames)
    if text is not None:
        names = [part.strip() for part in text.split(",") if part.strip()]
    elif type(argnames) in (cst.List, cst.Tuple):
        names = [string_value(element.value) for element in argnames.elements]
        if any(found is None for found in names):
            return None
    else:
        return None
    return names, argvalues


def _elements(model: "SemanticModel", node: cst.BaseExpression, scope: "Scope", depth: int) -> Optional[List[Element]]:
    if depth > MAX_DEPTH:
        return None
    kind = type(node)
    if kind in (cst.List, cst.Tuple):
        if any(type(element) is cst.StarredElement for element in node.elements) or len(node.elements) > MAX_ELEMENTS:
            return None
        return [(element.value, scope, False) for element in node.elements]
    if kind is cst.BinaryOperation and type(node.operator) is cst.Add:
        left = _elements(model, node.left, scope, depth + 1)
        right = _elements(model, node.right, scope, depth + 1) if left is not None else None
        return left + right if right is not None else None
    if kind in (cst.ListComp, cst.GeneratorExp):
        off_mac, loop = False, node.for_in
        while loop is not None:
            off_mac = off_mac or model.guards.loop_off_mac(loop.iter, scope)
            loop = loop.inner_for_in
        return [(node.elt, scope, off_mac)]
    if kind is cst.Call and type(node.func) is cst.Name and node.func.value in ("list", "tuple") and len(node.args) == 1 \
            and not model.lookup(node.func.value, scope):
        return _elements(model, node.args[0].value, scope, depth + 1)
    if kind is cst.Name:
        bindings = model.lookup(node.value, scope)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return _elements(model, bindings[0].value, bindings[0].context, depth + 1)
    return None


def _unwrapped(model: "SemanticModel", row: cst.BaseExpression, scope: "Scope", off_mac: bool) -> Tuple[cst.BaseExpression, bool]:
    """`pytest.param(value, marks=...)` -> its value (a tuple of its values for several names), taken only
    off a Mac when a mark skips the case without CUDA (semantic/skip_markers.py)."""
    if type(row) is not cst.Call or model.resolve(row.func, scope) not in model.guards.facts.skip_params:
        return row, off_mac
    values = [arg for arg in row.args if arg.keyword is None and not arg.star]
    value = values[0].value if len(values) == 1 else cst.Tuple([cst.Element(arg.value) for arg in values])
    return value, off_mac or model.skip_markers.param_skips_off_cuda(row, scope)
