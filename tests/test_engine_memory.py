"""A file's trees are freed when the engine is done with it, by reference counting alone: the semantic
model's helpers point back at it, and a scope's bindings at their scope, so the engine cuts those links.
Left to the cyclic collector, every libcst tree would stay alive until a collection found it, and each
collection would scan the trees of the files before (the collector is also kept out of the engine's
work on a file: a pass there could only scan the live tree)."""

import gc
from pathlib import Path

from cudalint.catalog import load_catalog
from cudalint.config import resolve
from cudalint.python import analyze

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "train.py"


def test_a_linted_file_leaves_no_cyclic_garbage():
    catalog = load_catalog()
    checks = analyze.checks_for(resolve(catalog, config_path=None).select, tuple(catalog))
    text = DEMO.read_text()
    first = analyze.check_python("train.py", text, checks, (2, 15))  # warm: the engine and its tables
    assert first  # the demo holds findings: the walk, the fix planning and positions all ran
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        again = analyze.check_python("train.py", text, checks, (2, 15))
        assert again == first
        assert gc.collect() == 0
    finally:
        if collecting:
            gc.enable()
