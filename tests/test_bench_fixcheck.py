"""bench/run.py's checks of fixed files: pyflakes on original vs fixed, imports in a subprocess."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
_spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
bench_run = sys.modules["bench_run"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_run)


def test_new_pyflakes_reports_what_the_fix_added_only():
    before = "import os\nimport torch\nx = torch.ones(1)\nprint(undefined_before)\n"
    after = "import os\nimport torch\nx = torch.ones(1, device=DEVICE)\nprint(undefined_before)\nimport sys\n"
    assert bench_run.new_pyflakes(before, after, "m.py") == ["UndefinedName DEVICE", "UnusedImport sys"]
    assert bench_run.new_pyflakes(before, before, "m.py") == []
    assert bench_run.new_pyflakes(before, "def f(:\n", "m.py") == []  # compileall reports files that do not parse


def test_module_names_follow_the_layout(tmp_path):
    assert bench_run.module_name(tmp_path, tmp_path / "pkg" / "sub" / "mod.py") == "pkg.sub.mod"
    assert bench_run.module_name(tmp_path, tmp_path / "src" / "pkg" / "__init__.py") == "pkg"
    assert bench_run.module_name(tmp_path, tmp_path / "scripts" / "run-me.py") is None


def test_new_import_failures_compare_the_trees(tmp_path):
    for tree, body in (("before", "VALUE = 1\n"), ("after", "VALUE = DEVICE\n")):
        package = tmp_path / tree / "proj" / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "ok.py").write_text(body)
        (package / "broken.py").write_text("raise RuntimeError('no GPU')\n")
    changed = ["proj/pkg/ok.py", "proj/pkg/broken.py", "proj/README.md"]
    failures = bench_run.new_import_failures(tmp_path / "before", tmp_path / "after", changed)
    assert failures == ["proj/pkg/ok.py: NameError: name 'DEVICE' is not defined"]
    statuses = bench_run.import_statuses(tmp_path / "before" / "proj", ["pkg.ok", "pkg.broken", "pkg.missing"])
    assert statuses == {
        "pkg.ok": None,
        "pkg.broken": "RuntimeError: no GPU",
        "pkg.missing": "ModuleNotFoundError: No module named 'pkg.missing'",
    }


def test_the_process_tree_memory_counts_a_forked_childs_shared_pages_once_in_pss(tmp_path):
    # A parent that fills 64 MB, then forks a child that only sleeps: the child shares the parent's pages,
    # so the RSS sum counts them twice and the PSS sum once.
    script = (
        "import os, time\n"
        "data = bytearray(64 * 1024 * 1024)\n"
        "for i in range(0, len(data), 4096):\n"
        "    data[i] = 1\n"
        "pid = os.fork()\n"
        "time.sleep(1.5)\n"
        "if pid:\n"
        "    os.waitpid(pid, 0)\n"
    )
    measured = bench_run.measure("fork", [sys.executable, "-c", script], tmp_path, 0, 0)
    assert measured.rc == 0
    assert measured.tree_rss_mb > 2 * 64
    assert 64 < measured.tree_pss_mb < measured.tree_rss_mb - 48
