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
