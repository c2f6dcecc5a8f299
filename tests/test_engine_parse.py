"""The engine's libcst parse skips libcst's validation of the nodes its own parser builds: the tree is
libcst's, and every other construction of a node is still validated."""

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings

from cudalint.catalog import load_catalog
from cudalint.python import engine


def test_the_tree_is_libcsts_for_every_rule_example():
    examples = [rule.bad for rule in load_catalog() if rule.example_file.endswith(".py")] + [
        rule.good for rule in load_catalog() if rule.example_file.endswith(".py")
    ]
    assert len(examples) > 80
    for text in examples:
        try:
            expected = cst.parse_module(text)
        except cst.ParserSyntaxError:  # CDL000's example
            with pytest.raises(cst.ParserSyntaxError):
                engine.parse_module(text)
            continue
        module = engine.parse_module(text)
        assert module.deep_equals(expected), text
        assert module.code == text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(hypothesmith.from_grammar())
def test_the_tree_is_libcsts_for_generated_code(text):
    try:
        expected = cst.parse_module(text)
    except Exception as exc:  # noqa: BLE001 - what libcst refuses, the engine's parse refuses the same way
        with pytest.raises(type(exc)):
            engine.parse_module(text)
        return
    assert engine.parse_module(text).deep_equals(expected)


def test_validation_is_on_again_after_a_parse_and_after_a_parse_that_fails():
    engine.parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
    with pytest.raises(cst.ParserSyntaxError):
        engine.parse_module("def f(:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
