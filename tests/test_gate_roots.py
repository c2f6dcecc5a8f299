"""The gates answer "no finding" without libcst for a file whose check words can only be names of other
libraries: a word that matters only on a name resolving under torch (`load` for torch.load, `Embedding`
for torch.nn.Embedding, `mode` for torch.mode) counts only in a file that imports torch, directly or,
inside a package named torch, through a relative import. A file that does hold a finding still gets it."""

import pytest

from cudalint import runner
from cudalint.catalog import load_catalog
from cudalint.config import resolve
from cudalint.python import analyze

TORCH_WORDS_ELSEWHERE = '''"""Loads a checkpoint with torch.load onto cuda (a docstring)."""
import json
import tensorflow as tf

# torch.load(path) would need map_location here
config = json.load(open("config.json"))
layer = tf.keras.layers.Embedding(10, 3)
probs = tf.nn.log_softmax(config["logits"])
image = resize(probs, mode="nearest")
'''


def lint(text, settings, path="m.py"):
    found = runner.lint_text(path, "python", text, settings, "2.15")
    return [(f.code, f.line, f.column) for f in found]


def test_torch_words_on_other_libraries_names_need_no_libcst(settings, engine_calls):
    assert lint(TORCH_WORDS_ELSEWHERE, settings) == []
    assert engine_calls == []


def test_the_same_words_in_a_file_that_imports_torch_still_name_the_other_libraries(settings, engine_calls):
    # json.load, tf.nn.log_softmax: names under the modules the file imported them from. The first string is
    # no docstring here (an import comes first), and it holds "cuda" only inside a sentence: no device.
    assert lint("import torch\n" + TORCH_WORDS_ELSEWHERE, settings) == []
    assert engine_calls == []
    assert lint("import torch\n" + TORCH_WORDS_ELSEWHERE + "state = torch.load(path)\n", settings) == [("CDL109", 11, 9)]
    assert engine_calls == ["m.py"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("import json\nimport torch as t\n\nstate = t.load('model.pt')\nconfig = json.load(f)\n", [("CDL109", 4, 9)]),
        ("from torch import load\n\nstate = load('model.pt')\n", [("CDL109", 3, 9)]),
        ("import torch\nloader = torch.load\nstate = loader('model.pt')\n", [("CDL109", 3, 9)]),
        ("def read(path):\n    import torch\n    return torch.load(path)\n", [("CDL109", 3, 12)]),
    ],
)
def test_a_file_that_holds_a_finding_still_gets_it(settings, engine_calls, text, expected):
    assert lint(text, settings) == expected
    assert engine_calls == ["m.py"]


RELATIVE_LOAD = "from . import load\n\nstate = load('model.pt')\n"


@pytest.mark.parametrize("package, expected", [("torch", [("CDL109", 3, 9)]), ("other", [])])
def test_a_relative_import_counts_for_the_package_it_names(tmp_path, monkeypatch, package, expected):
    pools = []  # the files each worker pool was given (a file reaches a worker only to meet the engine)
    real = runner._lint_parallel
    monkeypatch.setattr(runner, "_lint_parallel", lambda todo, *rest: pools.append([s.display for _, s, _ in todo]) or real(todo, *rest))
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "reader.py").write_text(RELATIVE_LOAD)
    monkeypatch.chdir(tmp_path)
    settings = resolve(load_catalog(), config_path=None)
    result = runner.run([f"{package}/reader.py"], settings, jobs=1)
    assert [(f.path, f.code, f.line, f.column) for f in result.findings] == [(f"{package}/reader.py", *e) for e in expected]
    # inside `torch` the relative import names torch.load; inside `other`, other.load: the gates settle it
    assert pools == ([[f"{package}/reader.py"]] if expected else [])


def test_gate_words_of_other_modules_are_kept_apart(settings):
    catalog = load_catalog()
    checks = analyze.checks_for(settings.select, tuple(catalog))
    names, strings, texts, keywords, rooted, resolved, imports, called, *_ = checks.words((2, 15, 0))
    assert resolved["load"] == frozenset({"torch"})  # torch.load, torch.utils.cpp_extension.load: names
    assert resolved["Trainer"] == frozenset({"lightning", "pytorch_lightning"})
    assert {"torch", "torchvision"} <= rooted["log_softmax"]  # also a method of any tensor: any place
    assert resolved["interpolate"] == frozenset({"torch", "torchvision"})  # only F.interpolate and the like
    assert rooted["complex128"] == frozenset({"torch", "torchvision"})
    assert "cuda" in names and "cuda" not in rooted and "cuda" not in resolved  # `.cuda()` on anything counts
    assert "pin_memory" in keywords and imports["apex"] == frozenset({"apex"}) and "apex" not in names


ROOTED = {"log_softmax": frozenset({"torch"})}
RESOLVED = {"load": frozenset({"torch"})}


@pytest.mark.parametrize(
    "text, answer",
    [
        ("import json\njson.load(f)\n", False),
        ("import json, torch\njson.load(f)\n", False),  # json.load names json's
        ("import json, torch\njson.load(f)\ntorch.load(g)\n", True),
        ("import torch as t\nt.load(f)\n", True),
        ("import torch\nx = torch\nx.load(f)\n", True),  # an assigned name may alias what the file imports
        ("import torch\ndef f(x):\n    return x.load(g)\n", False),  # a parameter resolves to nothing
        ("import torch\nmodel = make()\nmodel.load(f)\nfor m in ms:\n    m.load(g)\n", False),  # nor a call's result
        ("import torch\na, b = torch, 1\na.load(f)\n", True),
        ("import torch\nx: object = torch.hub\nx.load(f)\n", True),
        ("from torch import load\n", True),
        ("import numpy as load\nfrom numpy import load\n", False),
        ("from .utils import load\n", frozenset({"torch"})),  # names under the file's own package
        ("from . import x\nx.load(f)\n", frozenset({"torch"})),
        ("import numpy\nx.log_softmax()\n", False),
        ("import torch\nmake().log_softmax()\n", True),  # a rooted word counts anywhere in a torch file
        ("from . import x\ny.log_softmax()\n", frozenset({"torch"})),
        ("x = 'load'  # load\n", False),
    ],
)
def test_mentions_answers_for_the_modules_a_file_imports(text, answer):
    import ast

    assert analyze._mentions(ast.parse(text), frozenset(), set(), None, rooted=ROOTED, resolved=RESOLVED) == answer


def _large(tail: str) -> str:
    """A module larger than one part (analyze.PART_BYTES), `tail` at its end."""
    body = "".join(f"def helper_{index}(config):\n    return json.load(config)  # {'x' * 60}\n\n\n" for index in range(3000))
    text = "import json\nimport torch\n\n\n" + body + tail
    assert len(text) > analyze.PART_BYTES
    return text


@pytest.mark.parametrize("tail, expected", [
    ("", []),
    ("state = torch.load('model.pt')\n", [("CDL109", 12005, 9)]),
    ("state = torch.load('model.pt')", [("CDL109", 12005, 9)]),  # no final newline: the tokenizer's end marker is past the last line
])
def test_a_file_checked_in_parts_is_settled_as_a_whole(tmp_path, monkeypatch, tail, expected):
    (tmp_path / "big.py").write_text(_large(tail))
    monkeypatch.chdir(tmp_path)
    pools = []
    real = runner._lint_parallel
    monkeypatch.setattr(runner, "_lint_parallel", lambda todo, *rest: pools.append([s.display for _, s, _ in todo]) or real(todo, *rest))
    result = runner.run(["big.py"], resolve(load_catalog(), config_path=None), jobs=1)
    assert [(f.code, f.line, f.column) for f in result.findings] == expected
    assert pools == ([["big.py"]] if expected else [])  # json.load everywhere: settled here, not cut into parts


def test_common_tensor_factories_alone_need_no_libcst(settings, engine_calls):
    # CDL301's entries for torch's factories count only where `pin_memory` is written (their `words`): a
    # file that builds tensors without it holds no finding of theirs and never reaches libcst.
    text = "import torch\n\nx = torch.tensor([1.0])\ny = torch.zeros(3)\n"
    assert lint(text, settings) == []
    assert engine_calls == []
    assert lint(text + "z = torch.tensor([1.0], pin_memory=True)\n", settings) == [("CDL301", 5, 25)]
