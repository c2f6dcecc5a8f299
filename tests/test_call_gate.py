"""The gates judge a call of an op-coverage API by its arguments (python/call_gate.py, op_cases.py): a file
whose calls can only be in cases that run on MPS is settled without libcst, and no call the engine
reports is ever settled."""

import ast
import itertools

import pytest

from cudalint.catalog import load_catalog
from cudalint.python import analyze, engine, op_coverage
from cudalint.python.call_gate import CallGate
from cudalint.python.device_setting import DeviceSetting
from cudalint.versions import parse_version

COVERAGE = frozenset({"CDL604", "CDL605", "CDL606", "CDL609"})
HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef f(x, w, m, kw):\n"


def checks():
    catalog = tuple(load_catalog())
    return analyze.checks_for(COVERAGE, catalog)


def passes(body: str, version=(2, 9, 1)) -> bool:
    """Whether the file HEAD + body reaches the engine."""
    return not isinstance(analyze.gate("a.py", HEAD + body, checks(), version), list)


def findings(text: str, version=(2, 9, 1)):
    found = engine.analyze_module("a.py", text, checks().rules, checks().engine, version, DeviceSetting(), False)
    return [(f.code, f.line, f.column) for f in found if f.code in COVERAGE]


@pytest.mark.parametrize("body, reaches", [
    # grid_sample has no MPS kernel at 2.9 for padding_mode "border" on a 4-D input, and runs otherwise
    ('    return F.grid_sample(x, w)\n', False),  # padding_mode left out: "zeros"
    ('    return F.grid_sample(x, w, padding_mode="zeros", align_corners=False)\n', False),
    ('    return F.grid_sample(x, w, padding_mode="border")\n', True),
    ('    return F.grid_sample(x, w, "bilinear", "border")\n', True),  # the same, by position
    ('    return F.grid_sample(x, w, "bilinear", "zeros")\n', False),
    ('    return F.grid_sample(x, w, padding_mode=m)\n', True),  # a name may hold any value
    ('    return F.grid_sample(x, w, **kw)\n', True),
    ('    return F.grid_sample(*x)\n', True),
    ('    g = F.grid_sample\n    return g\n', True),  # not a call's callee: counts as before
    ('    return F.interpolate(x, scale_factor=2, mode="bilinear")\n', False),
    ('    return F.interpolate(x, size=(8, 8))\n', False),  # mode left out: "nearest"
    ('    n = torch.ones(3, 3, device=dev)\n    return n.norm(p=2, dim=-1)\n', False),
    ('    n = torch.ones(3, 3, device=dev)\n    return n.norm(2)\n', False),
    ('    n = torch.ones(3, 3, device=dev)\n    return n.norm(p="nuc")\n', True),
    ('    n = torch.ones(3, 3, device=dev)\n    return n.norm("nuc")\n', True),
    ('    return nn.Embedding(10, 3)\n', False),
    ('    return nn.Embedding(10, 3, padding_idx=0)\n', False),
    ('    return nn.Embedding(10, 3, max_norm=1.0)\n', True),
    ('    return nn.Embedding(10, 3, None, 1.0)\n', True),  # max_norm by position
    ('    return nn.Embedding(10, 3, None, None)\n', False),
    ('    return nn.Embedding(10, 3, max_norm=0)\n', True),  # 0 is set; only None and False are not
    ('    return nn.Embedding(10, 3, max_norm=False)\n', False),
    ('    return torch.unique(x)\n', False),
    ('    return torch.unique(x, dim=0)\n', True),
])
def test_a_call_counts_only_with_arguments_that_can_reach_a_gap(body, reaches):
    assert passes(body) is reaches


def test_an_import_of_the_name_counts_as_before():
    assert passes('    from torch.nn.functional import grid_sample\n    return grid_sample(x, w)\n')


def test_a_dtype_gap_counts_only_for_an_input_whose_dtype_the_file_can_spell():
    # F.linear has no MPS kernel for integer inputs (PyTorch's MPS test list): CDL606, when the dtype is visible
    plain = '    return F.linear(x, w)\n'
    assert not passes(plain)
    assert not passes('    y = torch.long\n' + plain)  # the dtype is named, but x's dtype is not known from it
    assert passes('    y = x.long()\n    return F.linear(x.float(), w)\n')  # a call's result may have any dtype the file names
    spelled = '    y = torch.ones(3, 3, dtype=torch.long, device=dev)\n    return F.linear(y, w)\n'
    assert passes(spelled)
    assert findings(HEAD + spelled) == [("CDL606", 8, 12)]
    assert passes('    return F.linear(x.long(), w)\n')
    assert passes('    from torch import *\n    y = ones(3)\n    return F.linear(y, w)\n')


def test_a_hostile_argument_is_read_as_any_value_without_exhausting_the_stack():
    negated = "-" * 990 + "1"
    nested = "1"
    for _ in range(150):
        nested = f"({nested},)"  # a tuple in a tuple, 150 deep
    for argument in (negated, nested):
        assert passes(f"    n = torch.ones(3, 3, device=dev)\n    return n.norm(p={argument})\n") is (argument is nested)
    assert passes("    n = torch.ones(3, 3, device=dev)\n    return n.norm(p=" + "-" * 3 + "1)\n") is False


def test_findings_of_argued_calls_are_what_they_were():
    text = HEAD + (
        '    a = F.interpolate(x, scale_factor=2, mode="bilinear")\n'
        '    e = nn.Embedding(10, 3, max_norm=1.0)\n'
        '    n = torch.ones(3, 3, device=dev)\n'
        '    return n.norm(p="nuc"), n.norm(p=2), a, e\n'
    )
    assert findings(text) == [("CDL605", 8, 9), ("CDL604", 10, 12)]
    assert findings(text, (2, 15, 0)) == [("CDL605", 8, 9)]


ABSENT = object()


def _calls(api: str, keys, choices, ndims):
    """Every call of the API with each named value of each argument (or none), on inputs of each rank."""
    short = api.rsplit(".", 1)[-1]
    for values in itertools.product(*[[ABSENT, *choices[key]] for key in keys]):
        given = ", ".join(f"{key}={value!r}" for key, value in zip(keys, values) if value is not ABSENT)
        for ndim in ndims:
            made = f"torch.zeros({', '.join(['2'] * ndim)}, device=dev)" if ndim else "x"
            if api.startswith("torch.Tensor."):
                call = f"inp.{short}({given})"
            elif api in op_coverage._module_names():
                call = f"{api}(4, 4{', ' if given else ''}{given})"
            else:
                call = f"{api}(inp{', ' if given else ''}{given})"
            yield short, made, call


@pytest.mark.parametrize("target", ["2.9", "2.15", "2.15 from 2.0"])
def test_no_call_the_engine_reports_is_settled(target):
    """Every argued API, with every value its cases name for each argument, on inputs of every rank its
    cases name: the engine's CDL604/605/609 lines are all lines the gate lets through."""
    version = parse_version(target)
    argued = op_coverage.argued_words(version)
    gate = CallGate(argued)
    lines, words = [], []
    for word, spec in sorted(argued.items()):
        for judge, api in zip(gate._judges_of(word)[0], sorted(_apis(word, version))):
            named = {key: [v for v in judge.choices[key] if isinstance(v, (str, int, float, bool, type(None)))]
                     for key in judge.keys}
            for short, made, call in _calls(api, judge.keys, named, [0, *judge.ndims]):
                lines.append(f"def f{len(lines)}(x):\n    inp = {made}\n    return {call}\n")
                words.append(short)
    text = "import torch\n\n\n" + "\n\n".join(lines)
    tree = ast.parse(text)
    reported = {line for code, line, _ in findings(text, version) if code != "CDL606"}
    assert reported  # the tables have gaps the engine reports
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    settled_but_reported = []
    for function, word in zip(functions, words):
        call = function.body[1].value
        if call.lineno in reported and not gate.may_report(word, call):
            settled_but_reported.append(ast.unparse(call))
    assert settled_but_reported == []
    assert len(reported) < len(functions)  # and some calls are settled


def _apis(word, version):
    release = op_coverage.release_for(version)
    older = op_coverage.older_allowed(version)
    return [api for api in (*op_coverage.load_api_ops()["apis"], *op_coverage._module_names())
            if api.rsplit(".", 1)[-1] == word and op_coverage.is_public(api) and op_coverage._has_gap(api, release, older)]
