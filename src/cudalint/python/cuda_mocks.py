"""A test that makes CUDA's availability query answer False runs without CUDA on every host.

    @patch("mypkg.device.torch.cuda.is_available", return_value=False)
    def test_falls_back_to_cpu(self, _):
        assert resolve_device("cuda") == torch.device("cpu")

`unittest.mock.patch` of the query's name (as any module reaches it: `mypkg.device.torch.cuda.is_available`),
`patch.object(torch.cuda, "is_available", ...)` and pytest's `monkeypatch.setattr` of either form, with
`return_value=False` (or another false constant) or a replacement that returns one (`lambda: False`), as the function's decorator or
anywhere in its body. Such a test checks what the code does where CUDA is missing, on a CUDA host as on a
Mac: nothing in it runs differently there, so nothing in it is a porting problem (a "cuda" it hands in is
the input the fallback is tested with). rules/guards.toml names the patchers and the queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from cudalint.python.children import nodes_in
from cudalint.python.mac_failures import falsy_constant
from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

MONKEYPATCH = "monkeypatch"  # pytest's fixture: a test gets it by this parameter name


def imports_patchers(model: "SemanticModel") -> bool:
    """The module imports unittest.mock (or the `mock` backport) at its top: only then can a function of it
    patch by those patchers (asked once per file, before any function's body is read for them)."""
    facts = model.guards.facts
    roots = {name.partition(".")[0] for name in (*facts.query_patchers, *facts.object_patchers)}
    return any(binding.kind == "import" and (binding.qualified or "").partition(".")[0] in roots
               for bindings in model.module_scope.bindings.values() for binding in bindings)


def mocks_cuda_away(model: "SemanticModel", function: cst.FunctionDef, patchers_imported: bool) -> bool:
    """A decorator of the function, or a call in its body (not in a function it defines), patches a CUDA
    availability query to answer False; read only where the module imports a patcher or the function takes
    pytest's `monkeypatch`."""
    params = function.params
    if not patchers_imported and not any(
            param.name.value == MONKEYPATCH for param in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return False
    calls = [decorator.decorator for decorator in function.decorators if type(decorator.decorator) is cst.Call]
    calls += [node for node in nodes_in(function.body) if type(node) is cst.Call]
    return any(_answers_no_cuda(model, call) for call in calls)


def _answers_no_cuda(model: "SemanticModel", call: cst.Call) -> bool:
    facts = model.guards.facts
    func = call.func
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    qualified = model.resolve(func)
    if qualified in facts.query_patchers:  # patch("torch.cuda.is_available", return_value=False)
        target, replacement = string_value(positional[0]) if positional else None, (positional[1:2] or [keywords.get("new")])[0]
    elif qualified in facts.object_patchers:  # patch.object(torch.cuda, "is_available", return_value=False)
        target, replacement = _attribute_target(model, positional), (positional[2:3] or [keywords.get("new")])[0]
    elif type(func) is cst.Attribute and func.attr.value == "setattr" and type(func.value) is cst.Name \
            and func.value.value == MONKEYPATCH:  # monkeypatch.setattr("torch.cuda.is_available", lambda: False)
        if len(positional) == 2:
            target, replacement = string_value(positional[0]), positional[1]
        else:
            target, replacement = _attribute_target(model, positional), (positional[2:3] or [None])[0]
    else:
        return False
    if target is None or not any(target == query or target.endswith("." + query) for query in facts.queries):
        return False
    returned = keywords.get("return_value")
    return (returned is not None and falsy_constant(returned)) or (type(replacement) is cst.Lambda and falsy_constant(replacement.body))


def _attribute_target(model: "SemanticModel", positional) -> Optional[str]:
    """`torch.cuda, "is_available"` -> "torch.cuda.is_available"."""
    if len(positional) < 2:
        return None
    owner, name = model.resolve(positional[0]), string_value(positional[1])
    return f"{owner}.{name}" if owner and name else None

