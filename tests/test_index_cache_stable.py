"""The project index's cache serves the next process: its key and digest do not follow string hashing,
which Python seeds differently in every process (a set's order, and so its repr, changes with it)."""

import json
import os
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import json, sys, types
    from pathlib import Path
    from cudalint.project import index as index_module
    from cudalint.runner import project_index

    read = []
    original = index_module.read_facts
    def counting(*args, **kwargs):
        read.append(1)
        return original(*args, **kwargs)
    index_module.read_facts = counting
    built = project_index(types.SimpleNamespace(root=Path(sys.argv[1])), cache=True)  # it reads only the root
    print(json.dumps({"read": len(read), "digest": built.facts_digest}))
    """
)


def _run(root, seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    done = subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def test_a_second_process_reads_every_fact_from_the_cache(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .util import use_cuda\n")
    (tmp_path / "pkg" / "util.py").write_text(
        "import torch\n\ndef use_cuda():\n    return torch.cuda.is_available()\n\nDEVICE = 'cuda'\n"
    )
    (tmp_path / "train.py").write_text("from pkg import use_cuda\nif use_cuda():\n    import triton\n")
    first = _run(tmp_path, 1)
    second = _run(tmp_path, 2)
    assert first["read"] == 3
    assert second == {"read": 0, "digest": first["digest"]}


def _build(root, monkeypatch):
    """Build the index in this process, counting the modules whose facts are read (not reused)."""
    import types
    from pathlib import Path

    from cudalint.project import index as index_module
    from cudalint.runner import project_index

    read = []
    original = index_module.read_facts
    monkeypatch.setattr(index_module, "read_facts", lambda *args, **kwargs: read.append(1) or original(*args, **kwargs))
    built = project_index(types.SimpleNamespace(root=Path(root)), cache=True)
    return len(read), built


def test_a_stored_index_larger_than_any_source_file_is_still_reused(tmp_path, monkeypatch):
    """The stored index of a large tree is far bigger than the limit on one source file (12 MB for 2,000
    modules against 4 MB): it is read with a limit of its own, so the next run reuses it."""
    from cudalint.project import index as index_module

    for number in range(30):
        (tmp_path / f"mod{number}.py").write_text(f"import torch\n\ndef use{number}():\n    return torch.cuda.is_available()\n")
    first, _ = _build(tmp_path, monkeypatch)
    stored = tmp_path / ".cudalint_cache" / f"project-index-v{index_module.INDEX_VERSION}.data"
    biggest_source = max(path.stat().st_size for path in tmp_path.glob("*.py"))
    monkeypatch.setattr(index_module, "MAX_FILE_BYTES", biggest_source)  # the stored index is over it
    assert stored.stat().st_size > biggest_source
    second, _ = _build(tmp_path, monkeypatch)
    assert (first, second) == (30, 0)


def test_a_warm_run_that_changed_nothing_does_not_write_the_stored_index_again(tmp_path, monkeypatch):
    from cudalint.project import index as index_module

    (tmp_path / "a.py").write_text("import torch\nDEVICE = 'cuda'\n")
    _build(tmp_path, monkeypatch)
    stored = tmp_path / ".cudalint_cache" / f"project-index-v{index_module.INDEX_VERSION}.data"
    before = stored.stat().st_mtime_ns
    os.utime(stored, ns=(before - 10**9, before - 10**9))  # an older stamp: a rewrite would change it
    _build(tmp_path, monkeypatch)
    assert stored.stat().st_mtime_ns == before - 10**9
    (tmp_path / "a.py").write_text("import torch\nDEVICE = 'cpu'\n")
    read, _ = _build(tmp_path, monkeypatch)
    assert read == 1 and stored.stat().st_mtime_ns != before - 10**9


def test_an_index_cache_the_tree_ships_is_never_read_as_facts(tmp_path, monkeypatch):
    """A cache file made by another installation (another code fingerprint), whose facts were then made
    up (a CUDA default's parameter list cut short), as a hostile tree could ship it: every entry is a
    miss, the facts are read from the modules, and the run goes on."""
    from cudalint import cache as cache_module

    (tmp_path / "lib.py").write_text('import torch\n\n\ndef f(x, device="cuda"):\n    return x.to(device)\n')
    (tmp_path / "use.py").write_text("from lib import f\n\nf(1)\n")
    monkeypatch.setattr(cache_module, "_code_fingerprint", lambda: "another installation")
    _build(tmp_path, monkeypatch)
    monkeypatch.undo()
    [stored] = (tmp_path / ".cudalint_cache").glob("project-index-*.data")
    entries = json.loads(stored.read_text(encoding="utf-8"))
    entries["lib.py"][1]["cuda_defaults"] = {"f": [["device"]]}
    stored.write_text(json.dumps(entries), encoding="utf-8")
    read, built = _build(tmp_path, monkeypatch)
    assert read == 2
    assert built.facts["lib.py"].cuda_defaults == {"f": [("device", 1, 4, 17, '"cuda"')]}
    assert built.default_calls == {"f": {"device": [1, 1, [], 0, 0]}}
