"""A run pays only for what it needs: the gates' words from the gate cache, no libcst for files the
gates settle, worker processes only for files that reach the engine, one pool for the run."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT
from cudalint import catalog as catalog_module
from cudalint import runner
from cudalint.project import index as index_module
from cudalint.catalog import load_catalog
from cudalint.config import resolve
from cudalint.python import analyze
from cudalint.python.gate_cache import GateCache

CUDA = "import torch\ntorch.cuda.synchronize()\n"
CLEAN = "import os\nx = os.getcwd()  # cuda in a comment\n"


def settings_for(root):
    return resolve(load_catalog(), config_path=None)


@pytest.fixture
def pools(monkeypatch):
    """Each worker pool the runner starts: the (file, release) pairs it was given."""
    started = []
    real = runner._lint_parallel

    def recording(todo, *args, **kwargs):
        started.append(sorted((source.display, version) for _, source, version in todo))
        return real(todo, *args, **kwargs)

    monkeypatch.setattr(runner, "_lint_parallel", recording)
    return started


def test_a_small_run_starts_a_worker_only_when_a_file_reaches_the_engine(tmp_path, monkeypatch, pools):
    for index in range(5):
        (tmp_path / f"clean{index}.py").write_text(CLEAN)
    (tmp_path / "broken.py").write_text("def f(:\n")
    monkeypatch.chdir(tmp_path)
    result = runner.run(["."], settings_for(tmp_path), jobs=2)
    assert [(f.path, f.code, f.line, f.column) for f in result.findings] == [("broken.py", "CDL000", 1, 7)]
    assert pools == []  # the gates settled every file here
    (tmp_path / "uses_cuda.py").write_text(CUDA)
    (tmp_path / "z_clean.py").write_text(CLEAN)
    result = runner.run(["."], settings_for(tmp_path), jobs=2)
    assert [(f.path, f.code, f.line) for f in result.findings] == [("broken.py", "CDL000", 1), ("uses_cuda.py", "CDL201", 2)]
    # the gates ran on the project index's parse: only the file that reaches the engine goes to a worker
    assert pools == [[("uses_cuda.py", "2.15")]]


def test_one_pool_for_every_release_of_the_run(tmp_path, monkeypatch, pools):
    (tmp_path / "requirements.txt").write_text("torch==2.3.0\n")
    (tmp_path / "a.py").write_text(CUDA)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "requirements.txt").write_text("torch==2.9.0\n")
    (sub / "b.py").write_text(CUDA)
    monkeypatch.chdir(tmp_path)
    result = runner.run(["."], settings_for(tmp_path), jobs=2)
    assert [(f.path, f.code) for f in result.findings if f.code == "CDL201"] == [("a.py", "CDL201"), ("sub/b.py", "CDL201")]
    assert len(pools) == 1
    assert [name for name, _ in pools[0] if name.endswith(".py")] == ["a.py", "sub/b.py"]
    assert len({version for _, version in pools[0]}) == 2


def test_a_large_run_gates_every_file_on_the_index_parse_and_sends_the_pool_only_what_passes(tmp_path, monkeypatch, pools):
    for index in range(runner.GATE_HERE_FILES):
        (tmp_path / f"m{index:02}.py").write_text(CLEAN)
    for index in range(3):
        (tmp_path / f"uses{index}.py").write_text(CUDA)
    monkeypatch.chdir(tmp_path)
    result = runner.run(["."], settings_for(tmp_path), jobs=2)
    assert [(f.path, f.code, f.line) for f in result.findings] == [(f"uses{i}.py", "CDL201", 2) for i in range(3)]
    assert pools == [[(f"uses{i}.py", "2.15") for i in range(3)]]


def test_a_large_run_with_an_index_built_before_sends_every_file_to_the_pool(tmp_path, monkeypatch, pools):
    for index in range(runner.GATE_HERE_FILES):
        (tmp_path / f"m{index:02}.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    settings = settings_for(tmp_path)
    settings.project = runner.project_index(settings)  # as a front end that keeps its index passes it
    assert runner.run(["."], settings, jobs=2).findings == []
    assert len(pools) == 1 and len(pools[0]) == runner.GATE_HERE_FILES


@pytest.fixture
def sent_settings(monkeypatch):
    """The settings each batch handed to a worker pool carries."""
    from concurrent.futures import ProcessPoolExecutor

    sent = []
    real = ProcessPoolExecutor.submit

    def recording(self, function, *args, **kwargs):
        if function is runner._lint_many:
            sent.append(args[1])
        return real(self, function, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", recording)
    return sent


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_forked_workers_inherit_the_settings_and_project_index_instead_of_a_copy_per_batch(tmp_path, monkeypatch, sent_settings, method):
    """Where workers are forked, a batch carries no settings: the workers inherit the run's (and its
    project index, megabytes pickled for a large project) from the parent. Where they start afresh,
    each batch carries a copy. The findings are the same, those that need the index among them."""
    import multiprocessing

    from cudalint.config import Settings

    monkeypatch.setattr(multiprocessing, "get_start_method", lambda *args, **kwargs: method)
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('fused_ops_cuda', ['fused.cu'])])\n")
    for index in range(runner.PARALLEL_THRESHOLD):
        (tmp_path / f"uses{index:02}.py").write_text(CUDA)
    (tmp_path / "solo.py").write_text("import fused_ops_cuda\n")
    monkeypatch.chdir(tmp_path)
    result = runner.run(["."], settings_for(tmp_path), jobs=2)
    codes = Counter(f.code for f in result.findings if f.path.endswith(".py") and f.path != "setup.py")
    assert codes == {"CDL201": runner.PARALLEL_THRESHOLD, "CDL406": 1}
    assert [f.line for f in result.findings if f.path == "solo.py"] == [1]
    assert len(sent_settings) > 1
    if method == "fork":
        assert sent_settings == [None] * len(sent_settings)
    else:
        assert all(isinstance(settings, Settings) for settings in sent_settings)
    assert runner._forked_settings is None  # only for the time of the pool


def test_each_file_is_parsed_by_cpython_once_for_the_index_and_both_gates(tmp_path, monkeypatch):
    """The project index's parse is the gates' parse; a file that passes them is parsed by libcst
    only (its outline travels with it to the worker). Here the worker's share runs in this process."""
    parsed = []
    real_tree, real_parse = analyze.cpython_tree, index_module._parse
    monkeypatch.setattr(analyze, "cpython_tree", lambda path, *args, **kw: parsed.append(path) or real_tree(path, *args, **kw))
    monkeypatch.setattr(index_module, "_parse", lambda data, path: parsed.append(path) or real_parse(data, path))

    def in_process(todo, settings, jobs, finished, tick, passed=None):
        for index, source, version in todo:
            finished(index, runner.lint_source(source, settings, version, (passed or {}).get(index)))

    monkeypatch.setattr(runner, "_lint_parallel", in_process)
    for index in range(runner.GATE_HERE_FILES + 2):
        (tmp_path / f"m{index:02}.py").write_text(CLEAN if index % 2 else CUDA)
    (tmp_path / "broken.py").write_text("def f(:\n")
    monkeypatch.chdir(tmp_path)
    result = runner.run(["."], settings_for(tmp_path), jobs=1)
    assert [(f.path, f.code) for f in result.findings] == [("broken.py", "CDL000")] + [
        (f"m{index:02}.py", "CDL201") for index in range(0, runner.GATE_HERE_FILES + 2, 2)
    ]
    counts = Counter(name for name in parsed if name != "warm-up.py")  # the runner's own text, before the workers start
    assert {name: n for name, n in counts.items() if n != 1} == {"broken.py": 3}  # the index twice, then its CDL000
    assert len(counts) == runner.GATE_HERE_FILES + 3


def test_gate_words_are_stored_beside_the_result_cache_and_reused(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    settings = settings_for(tmp_path)
    runner.run(["."], settings, jobs=1, cache=True)
    entries = sorted((tmp_path / ".cudalint_cache").glob("gates-*.data"))
    assert len(entries) == 1
    catalog = load_catalog()
    expected = analyze.Checks({r.code: r for r in catalog if r.code in settings.select}, tuple(catalog)).words((2, 15, 0))
    stored = json.loads(entries[0].read_text())
    rooted, resolved, imports, companions = ({word: frozenset(roots) for word, roots in stored[part].items()}
                                             for part in ("rooted", "resolved", "imports", "companions"))
    assert (frozenset(stored["names"]), frozenset(stored["strings"]), frozenset(stored["texts"]), frozenset(stored["keywords"]),
            rooted, resolved, imports, frozenset(stored["called"]), stored["argued"], companions) == expected
    assert stored["companions"]["from_numpy"] == ["Parameter", "add_state", "cuda", "device", "register_buffer", "register_parameter", "to"]
    assert stored["argued"]["interpolate"]["dtypes"] == ["byte", "uint8"]  # bicubic on uint8 (PyTorch's MPS test list)
    assert stored["called"] == ["double", "record_stream", "type"]
    assert stored["imports"]["triton"] == ["triton"]
    assert stored["resolved"]["init_process_group"] == ["torch"] and "nccl" in stored["strings"]
    assert stored["texts"] == ["nvcc", "nvidia-cuda-mps-control", "nvidia-smi", "out of memory", "rocm-smi"]  # read anywhere in a string

    store = GateCache(tmp_path, catalog)
    assert store.get(settings.select, (2, 15, 0)) == expected
    assert store.get(settings.select, (2, 3, 0)) is None  # another release is another entry
    assert store.get(settings.select - {"CDL201"}, (2, 15, 0)) is None  # so is another selection
    entries[0].write_text("{not json")
    assert store.get(settings.select, (2, 15, 0)) is None  # a broken entry is a miss...
    (tmp_path / "a.py").write_text(CLEAN + "y = 1\n")  # a file to gate: not answered from the result cache
    runner.run(["."], settings, jobs=1, cache=True)
    assert store.get(settings.select, (2, 15, 0)) == expected  # ...and is written again


def test_a_stale_gate_entry_is_a_miss(tmp_path, monkeypatch):
    catalog = load_catalog()
    codes = frozenset({"CDL201"})
    store = GateCache(tmp_path, catalog)
    argued = {"interpolate": {"calls": [{"arguments": {"mode": [3, "nearest", False]}, "releases": [[[{"mode": "area"}, [["aten::x", "cpu"]], False]]],
                                         "needs": {}, "pools": {}}], "dtypes": ["byte"]}}
    words = (frozenset({"synchronize"}), frozenset(), frozenset(), frozenset(), {"float64": frozenset({"torch"})}, {"empty_cache": frozenset({"torch"})},
             {"triton": frozenset({"triton"})}, frozenset({"record_stream"}), argued, {"from_numpy": frozenset({"to", "device"})})
    store.put(codes, (2, 15, 0), words)
    assert store.get(codes, (2, 15, 0)) == words
    entry = next((tmp_path / ".cudalint_cache").glob("gates-*.data"))
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps({**data, "key": "0" * 64}))  # computed by another cudalint or catalog
    assert GateCache(tmp_path, catalog).get(codes, (2, 15, 0)) is None


def test_a_gate_entry_whose_call_tables_are_malformed_or_too_large_is_a_miss(tmp_path):
    catalog = load_catalog()
    codes = frozenset({"CDL604"})
    store = GateCache(tmp_path, catalog)
    call = {"arguments": {}, "releases": [[[{"mode": "area"}, [["aten::x", "cpu"]], False]]], "needs": {}, "pools": {}}
    words = (frozenset(), frozenset(), frozenset(), frozenset(), {}, {"interpolate": frozenset({"torch"})}, {}, frozenset(),
             {"interpolate": {"calls": [call], "dtypes": []}}, {})
    store.put(codes, (2, 15, 0), words)
    entry = next((tmp_path / ".cudalint_cache").glob("gates-*.data"))
    data = json.loads(entry.read_text())
    assert store.get(codes, (2, 15, 0)) == words
    # twelve case-choosing arguments with many named values: more combinations than a judge may try
    cases = [[{f"k{i}": f"v{i}{j}" for i in range(12)}, [["aten::x", "cpu"]], False] for j in range(8)]
    for argued in ({"interpolate": {"calls": [{**call, "releases": [cases]}], "dtypes": []}},
                   {"interpolate": {"calls": [{"arguments": {}}], "dtypes": []}},
                   {"interpolate": {"calls": [call], "dtypes": [3]}}):
        entry.write_text(json.dumps({**data, "argued": argued}))
        assert GateCache(tmp_path, catalog).get(codes, (2, 15, 0)) is None, argued


def test_no_cache_writes_no_gate_entry_and_a_cache_folder_out_of_the_project_is_not_used(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text(CUDA)
    monkeypatch.chdir(project)
    runner.run(["."], settings_for(project), jobs=1, cache=False)
    assert not (project / ".cudalint_cache").exists()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / ".cudalint_cache").symlink_to(outside)
    result = runner.run(["."], settings_for(project), jobs=1, cache=True)
    assert [f.code for f in result.findings] == ["CDL201"]
    assert list(outside.iterdir()) == []
    assert GateCache(project, load_catalog()).usable is False


STARTUP = """
import sys
from cudalint.cli import main
code = main(["check", "-q", sys.argv[1]])
print(code, sorted(name for name in ("libcst", "concurrent.futures.process", "cudalint.python.engine",
      "cudalint.report.sarif", "cudalint.python.fixplan", "cudalint.coverage", "cudalint.manifests.conda",
      "cudalint.manifests.checks", "cudalint.manifests.includes", "tomllib", "dataclasses")
      if name in sys.modules))
"""


def test_a_clean_file_is_checked_without_libcst_or_a_worker(tmp_path):
    """Once the gate words are stored, a file the gates settle imports no libcst, starts no worker
    process and loads no output format, fix planning, coverage database or manifest checks it does not use,
    nor a TOML parser (the rules' data files come parsed with the catalog) or dataclasses (and inspect)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    (tmp_path / "clean.py").write_text(CLEAN)
    first = subprocess.run([sys.executable, "-c", STARTUP, "clean.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert "'libcst'" in first.stdout.splitlines()[-1]  # the first run computes the gate words
    (tmp_path / "clean.py").write_text(CLEAN + "y = 2\n")  # not answered from the result cache
    again = subprocess.run([sys.executable, "-c", STARTUP, "clean.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert again.stdout.splitlines() == ["0 []"], again.stderr
    (tmp_path / "clean.py").write_text(CUDA)
    found = subprocess.run([sys.executable, "-c", STARTUP, "clean.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert found.stdout.splitlines()[0] == "clean.py:2:1: CDL201 torch.cuda.synchronize raises without CUDA; use torch.accelerator.synchronize() (torch >= 2.6)"
    assert "'concurrent.futures.process'" in found.stdout.splitlines()[-1]


def catalog_loaded(monkeypatch, root):
    """load_catalog's own work (not the process's memo of it), its compact copy kept under `root`."""
    monkeypatch.setattr(catalog_module, "_compact_root", root)
    return catalog_module.load_catalog.__wrapped__()


def rule_rows(catalog):
    return [tuple(rule) for rule in catalog]


def no_toml(data, directory):
    raise AssertionError("the catalog's TOML was parsed")


def test_the_catalog_loads_from_its_compact_copy_once_one_is_stored(tmp_path, monkeypatch):
    parsed = catalog_loaded(monkeypatch, None)
    assert not (tmp_path / ".cudalint_cache").exists()  # no folder named: nothing written
    stored = catalog_loaded(monkeypatch, tmp_path)  # parses the TOML and stores the copy
    assert (tmp_path / ".cudalint_cache" / "catalog.data").is_file()
    with monkeypatch.context() as patched:
        patched.setattr(catalog_module, "_tables", no_toml)
        copied = catalog_loaded(monkeypatch, tmp_path)
    assert rule_rows(copied) == rule_rows(stored) == rule_rows(parsed)
    assert copied.version == parsed.version
    assert copied["CDL404"].match["imports"] == parsed["CDL404"].match["imports"]  # packages.toml's names, expanded
    # the rules' data files ride along, parsed: the same tables the TOML gives
    paths = [str(catalog_module.rules_dir() / name) for name in catalog_module.DATA_FILES]
    assert sorted(copied.data) == sorted(paths)
    for path in paths:
        assert copied.data[path] == parsed.data[path] == catalog_module.toml_parser().loads(Path(path).read_text())


def test_a_stale_or_broken_compact_catalog_is_a_miss_and_is_written_again(tmp_path, monkeypatch):
    parsed = catalog_loaded(monkeypatch, None)
    catalog_loaded(monkeypatch, tmp_path)
    entry = tmp_path / ".cudalint_cache" / "catalog.data"
    data = json.loads(entry.read_text())
    stale = {**data, "key": "0" * 64, "tables": [["cdl1-device.toml", [{"code": "CDL999"}]]]}  # another cudalint's
    entry.write_text(json.dumps(stale))
    assert rule_rows(catalog_loaded(monkeypatch, tmp_path)) == rule_rows(parsed)
    assert json.loads(entry.read_text()) == data  # rewritten for this cudalint and catalog
    entry.write_text('{"key": "' + data["key"] + '", "tables": [["x", [1]]]}')  # the right key, nonsense inside
    assert rule_rows(catalog_loaded(monkeypatch, tmp_path)) == rule_rows(parsed)
    entry.unlink()
    entry.mkdir()  # not a regular file
    assert rule_rows(catalog_loaded(monkeypatch, tmp_path)) == rule_rows(parsed)


def test_a_compact_catalog_is_never_kept_in_a_cache_folder_that_leads_out_of_the_project(tmp_path, monkeypatch):
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    (project / ".cudalint_cache").symlink_to(outside)
    parsed = catalog_loaded(monkeypatch, None)
    assert rule_rows(catalog_loaded(monkeypatch, project)) == rule_rows(parsed)
    assert list(outside.iterdir()) == []


def test_the_cli_keeps_the_compact_catalog_in_the_project_and_not_with_no_cache(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    (tmp_path / "clean.py").write_text(CLEAN)
    command = [sys.executable, "-m", "cudalint", "check", "-q"]
    done = subprocess.run([*command, "--no-cache", "clean.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert not (tmp_path / ".cudalint_cache").exists()
    sub = tmp_path / "sub"
    sub.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.cudalint]\n")
    done = subprocess.run([*command, "../clean.py"], cwd=sub, capture_output=True, text=True, env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert (tmp_path / ".cudalint_cache" / "catalog.data").is_file()  # at the project root, beside pyproject.toml
    assert not (sub / ".cudalint_cache").exists()
