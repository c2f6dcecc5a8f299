"""CDL108 and the values of a parameter: a "cuda" default that every call in the project overrides is
never what runs (project/default_calls.py). Calls are matched by the name they call, a method's through
any receiver and a class's `__init__` through the class, and the parameter counts as passed by keyword
or by position. A default that some call leaves out, that a call spreading `*args`/`**kwargs` may leave
out, or of a function nothing in the project calls (an entry point for users) is still reported, and so
is a "cuda" default reaching a device argument (CDL101) under the same terms."""

from conftest import findings_of, triples

GENERATORS = '''import torch


class Generator:
    def grid(self, sizes, device="cuda"):
        return torch.zeros(sizes, device=device)

    def flags(self, sizes, device="cuda"):
        return torch.ones(sizes, device=device)


class Box:
    def __init__(self, n, device="cuda"):
        self.data = torch.zeros(n, device=device)


def helper(x, device="cuda"):
    return x.to(device)


def relayed(x, device="cuda"):
    return x.to(device)


def entry(model, device="cuda"):
    return model.to(device)
'''

USES = '''from generators import Box, Generator, helper, relayed

generator = Generator()
generator.grid((2,), device="cpu")
generator.grid((2,), "mps")
generator.flags((2,))
generator.flags((2,), device="cpu")
box = Box(3, device="cpu")
helper(1, "cpu")


def relay(*args, **kwargs):
    return relayed(*args, **kwargs)
'''


def test_a_default_every_call_overrides_is_not_reported():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL108"}, project_files={"uses.py": USES})
    assert triples(found) == [("CDL108", 8, 35), ("CDL108", 21, 23), ("CDL108", 25, 25)]


def test_nor_where_the_default_reaches_a_device_argument():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL101"}, project_files={"uses.py": USES})
    assert triples(found) == [("CDL101", 8, 35), ("CDL101", 21, 23), ("CDL101", 25, 25)]


def test_without_the_callers_every_default_is_reported():
    found = findings_of(GENERATORS, path="generators.py", select={"CDL108"}, project_files={"other.py": "x = 1\n"})
    assert [line for _, line, _ in triples(found)] == [5, 8, 13, 17, 21, 25]


def test_the_table_is_kept_in_the_index_cache_and_follows_a_changed_caller(tmp_path):
    from pathlib import Path

    from cudalint.config import Settings
    from cudalint.runner import project_index

    (tmp_path / "generators.py").write_text(GENERATORS, encoding="utf-8")
    (tmp_path / "uses.py").write_text(USES, encoding="utf-8")
    settings = Settings(select=frozenset({"CDL108"}), root=Path(tmp_path))
    cold = project_index(settings, cache=True).default_calls
    assert cold["grid"] == {"device": [2, 0]} and cold["flags"] == {"device": [2, 1]} and cold["Box"] == {"device": [1, 0]}
    assert project_index(settings, cache=True).default_calls == cold  # read back from the stored index
    (tmp_path / "uses.py").write_text(USES + "generator.grid((3,))\n", encoding="utf-8")
    assert project_index(settings, cache=True).default_calls["grid"] == {"device": [3, 1]}


def test_a_damaged_stored_table_is_not_trusted(tmp_path):
    import json
    from pathlib import Path

    from cudalint.config import Settings
    from cudalint.project import default_calls
    from cudalint.runner import project_index

    (tmp_path / "generators.py").write_text(GENERATORS, encoding="utf-8")
    (tmp_path / "uses.py").write_text(USES, encoding="utf-8")
    settings = Settings(select=frozenset({"CDL108"}), root=Path(tmp_path))
    expected = project_index(settings, cache=True).default_calls
    [stored] = (tmp_path / ".cudalint_cache").glob("project-index-*.data")
    entries = json.loads(stored.read_text(encoding="utf-8"))
    digest, modules = entries[default_calls.CACHE_KEY]
    for relative in modules:
        modules[relative][1] = {"grid": {"device": ["many", None]}}
    stored.write_text(json.dumps(entries), encoding="utf-8")
    assert project_index(settings, cache=True).default_calls == expected


def test_a_device_object_default_every_call_overrides_is_not_reported():
    """`torch.device("cuda")` as the default (CDL101 at the literal, CDL113 at a call that omits it)."""
    generators = '''import torch


class Cache:
    def __init__(self, n, device=torch.device("cuda")):
        self.data = torch.zeros(n, device=device)


def frames(path, compute_device=torch.device("cuda")):
    return torch.zeros(2, device=compute_device)


def loader(path, compute_device=torch.device("cuda")):
    return torch.zeros(2, device=compute_device)
'''
    uses = '''from generators import Cache, frames, loader

cache = Cache(3, device="cpu")
first = frames("a", compute_device="cpu")
second = loader("b")
'''
    found = findings_of(generators, path="generators.py", select={"CDL101", "CDL108"}, project_files={"uses.py": uses})
    assert triples(found) == [("CDL101", 13, 46)]
    callers = findings_of(uses, path="uses.py", select={"CDL113"}, project_files={"generators.py": generators})
    assert triples(callers) == [("CDL113", 5, 10)]
