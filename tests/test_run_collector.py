"""A run tunes the cyclic garbage collector for itself and leaves it as it found it, even when it fails."""

import gc

import pytest

from cudalint import runner
from cudalint.catalog import load_catalog
from cudalint.config import resolve


def test_a_run_puts_the_collector_back(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    seen = []
    real = runner._lint_parallel

    def inside(todo, *rest):
        seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0, gc.isenabled()))
        return real(todo, *rest)

    monkeypatch.setattr(runner, "_lint_parallel", inside)
    result = runner.run(["."], resolve(load_catalog(), config_path=None), jobs=1)
    assert [(f.code, f.line, f.column) for f in result.findings] == [("CDL201", 2, 1)]
    assert seen == [(max(before[0][0], runner.RUN_GC_THRESHOLD), True, True)]
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_a_failing_run_puts_the_collector_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = (gc.get_threshold(), gc.get_freeze_count())

    def broken(*args, **kwargs):
        raise OSError("disk gone")

    monkeypatch.setattr(runner, "discover", broken)
    with pytest.raises(OSError, match="disk gone"):
        runner.run(["."], resolve(load_catalog(), config_path=None), jobs=1)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_no_collection_while_a_parser_builds_a_tree_and_the_collector_is_back_after(monkeypatch):
    import libcst as cst

    from cudalint.python import analyze, engine

    during = []
    real = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda text: during.append(gc.isenabled()) or real(text))
    assert engine.parse_module("x = 1\n").body[0].body[0].targets[0].target.value == "x"
    with pytest.raises(cst.ParserSyntaxError):
        engine.parse_module("def f(:\n")
    assert during == [False, False] and gc.isenabled()
    assert analyze.cpython_tree("m.py", "x = (\n").code == "CDL000" and gc.isenabled()
    gc.disable()
    try:  # a caller that turned the collector off keeps it off
        engine.parse_module("y = 2\n")
        assert not gc.isenabled()
    finally:
        gc.enable()
