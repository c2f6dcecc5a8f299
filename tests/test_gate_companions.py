"""A gate word with companions (the catalog's `words_with`) counts only in a file that also holds one of
them: CDL607 reports a float64 NumPy array where a tensor made from it moves, so `torch.from_numpy` in a
file that moves nothing (`.to`, `.cuda`, `device=`, a module's state) is settled without libcst, and a file
that moves one still gets its finding, whichever form the move takes."""

import pytest

from cudalint import runner
from cudalint.catalog import load_catalog
from cudalint.python import analyze


def lint(text, settings, path="m.py"):
    found = runner.lint_text(path, "python", text, settings, "2.15")
    return [(f.code, f.line, f.column) for f in found]


NO_MOVE = '''import numpy as np
import torch


def load_weights(path):
    w = np.load(path)
    return torch.from_numpy(w), torch.as_tensor(w * 2)
'''


def test_a_file_that_makes_tensors_from_numpy_and_moves_none_needs_no_libcst(settings, engine_calls):
    assert lint(NO_MOVE, settings) == []
    assert engine_calls == []


@pytest.mark.parametrize(
    "move, expected",
    [
        ("    return torch.from_numpy(values).to(device)\n", [("CDL607", 8, 12)]),
        ("    return torch.from_numpy(values).cuda()\n", [("CDL102", 8, 37), ("CDL607", 8, 12)]),
        ("    return torch.as_tensor(values, device=device)\n", [("CDL607", 8, 12)]),
        ("    return torch.nn.Parameter(torch.from_numpy(values))\n", [("CDL607", 8, 12)]),
        # the device as a key of a dict spread into the call: a companion met as a string
        ("    options = {'device': device}\n    return torch.as_tensor(values, **options)\n", [("CDL607", 9, 12)]),
    ],
)
def test_a_file_that_moves_such_a_tensor_still_gets_its_finding(settings, engine_calls, move, expected):
    text = f"import numpy as np\nimport torch\n\n\ndef features(device):\n    values = np.random.rand(32, 8)\n    print(values)\n{move}"
    assert lint(text, settings) == expected
    assert engine_calls == ["m.py"]


def test_a_companion_word_some_other_entry_reads_alone_counts_alone(settings):
    catalog = tuple(load_catalog())
    words = analyze.checks_for(settings.select, catalog).words((2, 15, 0))
    companions = words[-1]
    assert set(companions) == {"from_numpy", "as_tensor", "tensor"}
    assert companions["from_numpy"] == frozenset({"to", "cuda", "device", "register_buffer", "register_parameter", "add_state",
                                                  "Parameter"})
    # float64 is CDL608's word beside a move, but CDL601 reads torch.float64 wherever it is: no companion
    assert "float64" not in companions
