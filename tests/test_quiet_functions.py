"""Functions no check can fire in are passed over by the walk, and nothing a check reports changes."""

import ast
import textwrap

import libcst as cst
import pytest

from cudalint.catalog import load_catalog
from cudalint.python import analyze, engine, visitor
from cudalint.python.outline import outline
from cudalint.python.quiet import quiet_functions

CATALOG = load_catalog()
CHECKS = analyze.checks_for(frozenset(rule.code for rule in CATALOG), tuple(CATALOG))
RELEASE = (2, 13)

SOURCE = textwrap.dedent('''\
    import torch

    DEVICE = "cuda"


    def plain(x):
        return x + 1


    def uses_device(x):
        return x.to(DEVICE)


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dev = "cuda"

        def forward(self, x):
            return x.to(self.dev)

        def size(self):
            return 3


    def train(device, steps):
        return torch.zeros(steps).to(device)


    def helper(r):
        return r


    def main():
        train("cuda", 3)


    def placed(x):
        return x.to(where())


    def where():
        return gpu_name


    gpu_name = "cuda:0"


    def twice():
        return 1


    def twice():
        return torch.cuda.device_count()
    ''')


def quiet(source, project=None):
    tree = ast.parse(source)
    return quiet_functions(outline(tree), source, analyze.worded_test(CHECKS.gates(RELEASE), project))


def test_functions_without_a_word_or_a_name_bound_to_one_are_quiet():
    # DEVICE and self.dev are bound to code with a word; train is called with one (its parameters hold
    # it); gpu_name is bound to one after the function that reads it, and `where` returns it, so
    # `placed` is loud through two names; the second `twice` holds a word, so neither is quiet.
    assert quiet(SOURCE) == frozenset({("plain",), ("Model", "size"), ("helper",)})


def test_a_project_word_makes_a_function_loud():
    class Project:
        gate_words = frozenset({"helper"})

    assert quiet(SOURCE, Project()) == frozenset({("plain",), ("Model", "size")})


def test_a_star_import_of_code_with_a_word_leaves_nothing_quiet():
    assert quiet("from torch.cuda import *\n\ndef plain(x):\n    return x\n") == frozenset()
    assert quiet("from os import *\n\ndef plain(x):\n    return x\n") == frozenset({("plain",)})


def test_an_option_declared_with_a_word_binds_its_dest():
    source = textwrap.dedent('''\
        import argparse

        def options():
            parser = argparse.ArgumentParser()
            parser.add_argument("--gpu-device", default="cuda")
            return parser.parse_args()

        def run(args, x):
            return x.to(args.gpu_device)

        def other(args, x):
            return x.to(args.cpu_device)
        ''')
    assert quiet(source) == frozenset({("other",)})


def test_names_bound_through_each_other_past_the_rounds_leave_nothing_quiet():
    chain = "\n".join(f"n{i} = n{i + 1}" for i in range(12)) + '\nn12 = "cuda"\n\ndef plain(x):\n    return x\n'
    assert quiet(chain) == frozenset()


def test_the_walk_does_not_enter_a_quiet_body(monkeypatch):
    entered = []
    walk = visitor.Walker.walk

    def recording(self, node):
        if type(node) is cst.Name:
            entered.append(node.value)
        return walk(self, node)

    monkeypatch.setattr(visitor.Walker, "walk", recording)
    findings = analyze.check_python("m.py", SOURCE, CHECKS, RELEASE)
    assert [(finding.code, finding.line, finding.column) for finding in findings] == [
        ("CDL101", 3, 10), ("CDL101", 17, 20), ("CDL101", 46, 12)]
    assert "r" in entered  # helper's parameter: its signature is walked
    assert "x" in entered and "gpu_name" in entered
    assert entered.count("helper") == 1  # its name, never a call inside another function's body
    assert entered.count("r") == 1  # the parameter, not the `return r` of the body


def lint_all(sources):
    return {name: [(f.code, f.line, f.column, f.message, f.related) for f in analyze.check_python(name, text, CHECKS, RELEASE)]
            for name, text in sources}


@pytest.mark.parametrize("which", ["bad", "good"])
def test_every_rule_example_reports_the_same_as_a_walk_of_every_function(monkeypatch, which):
    examples = [(f"{rule.code}/{rule.example_file}", getattr(rule, which)) for rule in CATALOG
                if rule.example_file.endswith(".py") and rule.match and getattr(rule, which)]
    examples += [(f"{rule.code}/{name}", text) for rule in CATALOG for name, text in (rule.example_files or {}).items()
                 if name.endswith(".py")]
    assert len(examples) > 40
    passed_over = lint_all(examples)
    monkeypatch.setattr(engine, "quiet_functions", lambda *args: frozenset())
    assert lint_all(examples) == passed_over
