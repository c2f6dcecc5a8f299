"""Positions from one statement's code generation equal libcst's PositionProvider over the whole module."""

import ast

import hypothesmith
import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from hypothesis import HealthCheck, assume, given, settings

from cudalint.catalog import load_catalog
from cudalint.python import analyze, positions
from cudalint.python.outline import outline
from cudalint.python.positions import MAX_SEARCHES, Positions, whole_module


def chains(module: cst.Module):
    """Every node with the statements it lies in, outermost first (what the walk's stack holds)."""
    found = []

    def visit(node, chain):
        if isinstance(node, positions.STATEMENTS):
            chain = chain + (node,)
        found.append((node, chain))
        for child in node.children:
            visit(child, chain)

    visit(module, ())
    return found


def assert_same_positions(source: str) -> int:
    """Every node's position, looked up through its statements, is PositionProvider's; returns how
    many nodes were answered without the whole-module pass."""
    module = cst.parse_module(source)
    tree = compile(source, "<test>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    expected = whole_module(module)
    assert expected == MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)  # libcst's own answer
    lazy = Positions(module, outline(tree))
    nodes = chains(module)
    for node, chain in nodes:
        lazy.anchor(node, chain)
    answered = 0
    # Nodes inside statements first: the module's own header and footer need the whole-module pass.
    for node, _ in sorted(nodes, key=lambda entry: not entry[1]):
        if node not in expected:
            continue
        assert lazy[node] == expected[node], (type(node).__name__, source)
        answered += lazy.whole is None
    return answered


SOURCE = '''\
"""Module docstring."""
# a comment before the imports
import os, sys ; import torch

x = 1; y = torch.ones(3).cuda()   # trailing comment


@decorator(
    "multi-line",
)
@other
class Model(Base):
    """Doc."""

    a: int = 0

    def forward(self, value, *args, device="cuda", **kwargs):
        if value:  # comment
            return value.to("cuda")
        elif args:
            pass
        else:
            with torch.no_grad(), open("f") as handle:
                for item in [1, 2,
                             3]:
                    while True: break
        try:
            torch.cuda.synchronize()
        except RuntimeError:
            pass
        finally:
            del x
        label = "\u00e9t\u00e9"; other = label + "cuda"
        return label


async def run():
    async with lock:
        async for item in stream:
            await item
    match command:
        case {"device": "cuda"}:
            pass
        case _:
            raise SystemExit(
                "no"
            )


if __name__ == "__main__":
\tvalue = torch.device("cuda")
\tif value: \\
\t\tprint(value)
'''


def test_a_module_of_every_statement_kind_gets_libcsts_positions():
    assert assert_same_positions(SOURCE) > 200


def test_crlf_and_indentation_that_changes_per_block():
    source = "def f():\r\n   if x:\r\n         call('cuda')\r\n   return 1\r\nclass A:\r\n  b = 1\r\n"
    assert assert_same_positions(source) > 10


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_generated_modules_get_libcsts_positions(source):
    try:
        compile(source, "<test>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        cst.parse_module(source)
    except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError, MemoryError):
        assume(False)
    assert_same_positions(source)


def lint_examples(rules, checks):
    return {rule.code: analyze.check_python(rule.example_file, rule.bad, checks, (2, 13), unsafe_fixes=True) for rule in rules}


def test_rule_examples_report_without_a_whole_module_pass_unless_they_plan_fixes(monkeypatch):
    """Each rule's bad example gets the same findings (positions, related places, fix edits) as with
    PositionProvider over the whole module; an example whose findings plan no fix never needs that
    pass (fix planning reads the positions of every call, so a file with fixes has one)."""
    catalog = load_catalog()
    checks = analyze.checks_for(frozenset(rule.code for rule in catalog), tuple(catalog))
    examples = [rule for rule in catalog if rule.example_file.endswith(".py") and rule.match]
    whole_passes = []
    real_whole = Positions._whole
    monkeypatch.setattr(Positions, "_whole", lambda self: whole_passes.append(self) or real_whole(self))
    lazy = lint_examples(examples, checks)
    found = [finding for findings in lazy.values() for finding in findings]
    unfixed = [code for code, findings in lazy.items() if findings and all(f.fix is None for f in findings)]
    assert len(found) > 40 and sum(finding.fix is not None for finding in found) > 10 and len(unfixed) > 15
    assert whole_passes == []
    monkeypatch.setattr(Positions, "_find", lambda self, node: whole_module(self.module).get(node))
    assert lint_examples(examples, checks) == lazy


def test_a_node_outside_the_reported_statements_is_searched_for_then_falls_back_to_the_whole_module():
    source = "import torch\nx = 1\ndef f():\n" + "".join(f"    a{i} = torch.ones({i})\n" for i in range(10))
    module = cst.parse_module(source)
    tree = compile(source, "<test>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    lazy = Positions(module, outline(tree))
    calls = [statement.body[0].value for statement in module.body[2].body.body]
    whole = whole_module(module)
    for found, call in enumerate(calls[:MAX_SEARCHES]):  # no chain was anchored: found from the module down
        assert lazy[call] == whole[call] and lazy.whole is None
    assert (lazy[calls[0]].start.line, lazy[calls[0]].start.column, lazy[calls[0]].end.column) == (4, 9, 22)
    assert lazy[calls[MAX_SEARCHES]] == whole[calls[MAX_SEARCHES]]
    assert lazy.whole is not None  # past the searches a file may make: one whole-module pass