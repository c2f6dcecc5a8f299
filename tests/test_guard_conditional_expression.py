"""A conditional expression is a guard through its arms: `True if torch.cuda.is_available() else False`
is the query itself, `False if torch.cuda.is_available() else True` its negation, and an arm that is
no constant guards as it would alone. In the file (the semantic model) and through a helper of
another module (the project index)."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def flag(model, x):
    use_gpu = True if torch.cuda.is_available() else False
    if use_gpu:
        model = model.cuda()
    return model


def negated(model):
    on_cpu = False if torch.cuda.is_available() else True
    if not on_cpu:
        model = model.cuda()
    return model


def an_arm_that_guards(model, args):
    cuda = torch.cuda.is_available() if args.gpu else False
    if cuda:
        model = model.cuda()
    return model


def either_arm_may_hold(model, args):
    cuda = True if torch.cuda.is_available() else args.force
    if cuda:
        model = model.cuda()
    return model


def wrong_way_round(model):
    use_cpu = True if torch.cuda.is_available() else False
    if not use_cpu:
        model = model.cuda()
    return model
'''


def lint(source: str, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL102"}, **kwargs))


def test_conditional_expressions_of_constants_guard_as_their_test():
    # either_arm_may_hold: args.force may be true on a Mac; wrong_way_round: `not` of the query's
    # value is true on a Mac
    assert lint(SOURCE) == [("CDL102", 28, 23), ("CDL102", 35, 23)]


def test_a_helper_of_another_module_returning_one():
    helper = "import torch\n\n\ndef use_gpu():\n    return True if torch.cuda.is_available() else False\n"
    source = """
    from pkg.env import use_gpu


    def run(model):
        if use_gpu():
            model = model.cuda()
        return model


    def run_else(model):
        if not use_gpu():
            return model
        return model.cuda()
    """
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/env.py": helper}
    assert lint(source, project_files=files, path="pkg/run.py") == []
    unguarded = helper.replace("True if torch.cuda.is_available() else False", "True if torch.cuda.device_count() else True")
    files["pkg/env.py"] = unguarded
    assert lint(source, project_files=files, path="pkg/run.py") == [("CDL102", 6, 23), ("CDL102", 13, 18)]
