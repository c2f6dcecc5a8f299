"""The reachability walk builds a guard table (`_Reader.tabulate`, up to 3 ** 3 evaluations of a test)
only for tests that met a name of another module when first judged, from the names that judgement met:
a test made only of local values has no table, and judging a test again to find its names (`table_of`)
was a large share of the index's time."""

import ast
import textwrap

from cudalint.project import facts as facts_module
from cudalint.project.facts import read_facts
from cudalint.python.guard_facts import guard_facts

SOURCE = textwrap.dedent(
    """
    import torch
    from pkg.env import has_cuda
    from pkg.impl import a, b, c, d


    def run(config, n):
        if n > 1:
            a()
        if config.fast:
            b()
        if torch.cuda.is_available():
            c()
        if has_cuda():
            d()
    """
)


def read(monkeypatch):
    asked = []
    tabulate, table_of = facts_module._Reader.tabulate, facts_module._Reader.table_of

    def tabulating(self, judge, leaves):
        asked.append((judge, leaves))
        return tabulate(self, judge, leaves)

    def judging_again(self, judge):
        asked.append((judge, None))
        return table_of(self, judge)

    monkeypatch.setattr(facts_module._Reader, "tabulate", tabulating)
    monkeypatch.setattr(facts_module._Reader, "table_of", judging_again)
    guards = guard_facts()
    found = read_facts(ast.parse(SOURCE), "pkg.caller", guards.queries, guards.flags, guards.skip_if,
                       guards.skip_unless, SOURCE.encode(), guards)
    return found, asked


def test_only_a_test_with_another_modules_name_is_tabulated(monkeypatch):
    found, asked = read(monkeypatch)
    # `n > 1` and `config.fast` name nothing of another module; torch.cuda.is_available() is a guard itself.
    # the walk asks for each arm of every `if` (4 tests on the walk before this change)
    walked = [leaves for judge, leaves in asked if judge.__qualname__.startswith("_Uses._condition")]
    assert None not in walked  # each table from the names its first judgement met: no test judged again
    assert [leaves for leaves in walked if leaves] == [[("call", "pkg.env.has_cuda")]]  # (no names: no table)
    assert found.conditions == [[[["call", "pkg.env.has_cuda"]], {"1": (True, False), "2": (False, True)}]]
    assert found.uses["pkg.impl.a"] == [0, [], ["run"], []]
    assert found.uses["pkg.impl.b"] == [0, [], ["run"], []]
    assert found.uses["pkg.impl.c"] == [0, ["run"], [], []]
    assert found.uses["pkg.impl.d"] == [0, [], [], [["run", [[0, True]]]]]
