"""The project's own words (another file's constants naming CUDA, callables with "cuda" defaults, modules
that import CUDA-only libraries, extensions it builds) reach a file only through an import of the project:
a file that merely uses the same name (its own `DEVICE`, `self.load_model`) is settled by the gates without
libcst, and a file that imports one still gets its finding, through a name or an imported module's attribute."""

from conftest import lint_tree, write_tree
from cudalint.catalog import load_catalog
from cudalint.config import resolve

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": 'DEVICE = "cuda"\n',
    "pkg/helpers.py": 'def load_model(path, device="cuda"):\n    return path, device\n',
    # the same names, none of them the project's: its own class attribute and method
    "pkg/unrelated.py": "class Thing:\n    DEVICE = None\n\n    def load_model(self):\n        return self.DEVICE\n",
    "pkg/user.py": (
        "import torch\n\nfrom pkg.config import DEVICE\nfrom .helpers import load_model\n\n"
        'x = torch.zeros(1).to(DEVICE)\nm = load_model("a.pt")\n'
    ),
    "pkg/other_user.py": "import torch\nfrom pkg import config\n\ny = torch.ones(2, device=config.DEVICE)\n",
}


def test_project_words_count_only_through_an_import_of_the_project(tmp_path, monkeypatch):
    findings = lint_tree(tmp_path, monkeypatch, FILES)
    assert findings == [
        ("pkg/helpers.py", "CDL108", 1, 29),
        ("pkg/other_user.py", "CDL101", 4, 26),  # an attribute of the imported module is its constant
        ("pkg/user.py", "CDL101", 6, 23),
        ("pkg/user.py", "CDL113", 7, 5),
    ]
    # unrelated.py mentions DEVICE and load_model but imports nothing of the project (config.py holds "cuda")
    assert passing(tmp_path, FILES) == ["pkg/config.py", "pkg/helpers.py", "pkg/other_user.py", "pkg/user.py"]


def passing(root, files, libraries=()):
    """The files that pass both gates (the libcst engine would parse them); `libraries`: CUDA-only ones."""
    from cudalint.project.index import build_index
    from cudalint.python import analyze

    catalog = load_catalog()
    checks = analyze.checks_for(resolve(catalog, config_path=None).select, tuple(catalog))
    project = build_index(root, libraries, (), ())
    return [name for name in sorted(files) if not isinstance(analyze.gate(name, files[name], checks, (2, 15), project), list)]


def test_the_gate_roots_name_where_each_word_can_come_from(tmp_path, monkeypatch):
    from cudalint.project.index import build_index

    write_tree(tmp_path, FILES)
    index = build_index(tmp_path, (), (), ())
    assert index.gate_roots_of("pkg/user.py") == {"DEVICE": frozenset({"pkg"}), "load_model": frozenset({"pkg"})}
    assert index.gate_words == frozenset({"DEVICE", "load_model"})


CHAIN = {
    "pkg/__init__.py": "from pkg import a\n",
    "pkg/a.py": "from pkg import b\n\nVALUE = 1\n",
    "pkg/b.py": "import triton\n",
    "pkg/c.py": "from pkg import a\n\nprint(a.VALUE)\n",
    "pkg/d.py": "import pkg.b\n",
    "pkg/e.py": "import json\n\n\nclass A:\n    b = 1\n    a = 2\n",
}


def test_a_module_importing_a_cuda_library_counts_everywhere_and_a_longer_chain_in_the_top_init(tmp_path, monkeypatch):
    """CDL407 reports a chain in the top package's `__init__`, and elsewhere only at the import of the
    module that imports the library itself: `a` (a -> b -> triton) matters only in pkg/__init__.py."""
    from cudalint.project.index import build_index

    assert lint_tree(tmp_path, monkeypatch, CHAIN) == [
        ("pkg/__init__.py", "CDL407", 1, 1),
        ("pkg/b.py", "CDL404", 1, 1),
    ]
    index = build_index(tmp_path, ("triton",), (), ())
    assert index.gate_roots_of("pkg/c.py") == {"b": frozenset({"pkg"})}
    # in the top __init__ every module whose import reaches triton: pkg itself, a, b, c and d
    assert index.gate_roots_of("pkg/__init__.py") == {name: frozenset({"pkg"}) for name in ("a", "b", "c", "d", "pkg")}
    # a.py and d.py import b; c.py imports only a, and e.py only names a and b
    assert passing(tmp_path, CHAIN, ("triton",)) == ["pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/d.py"]


OWN_LIBRARY = {
    "xformers/__init__.py": "",
    "xformers/ops.py": "import triton\n\n\ndef attention(q):\n    return q\n",
    "xformers/helpers.py": "def scale(x):\n    return x * 2\n",
    "xformers/utils.py": "import xformers\nfrom xformers.helpers import scale\n\nprint(scale(1), xformers.__name__)\n",
}


def test_an_import_of_the_projects_own_package_is_no_cuda_library_import(tmp_path, monkeypatch):
    """Linting xformers itself, `import xformers` is an import of the project, which the import checks
    never report: the gates settle utils.py; ops.py, importing triton, still passes."""
    assert lint_tree(tmp_path, monkeypatch, OWN_LIBRARY) == [("xformers/ops.py", "CDL404", 1, 1)]
    assert passing(tmp_path, OWN_LIBRARY, ("triton",)) == ["xformers/ops.py"]
    user = {"app/__init__.py": "", "app/model.py": "from xformers.ops import attention\n"}
    assert lint_tree(tmp_path / "user", monkeypatch, user) == [("app/model.py", "CDL404", 1, 1)]
    assert passing(tmp_path / "user", user) == ["app/model.py"]  # another project: a CUDA-only library


def test_a_file_with_no_word_of_the_checks_still_meets_the_projects_words(tmp_path, monkeypatch):
    """Its text holds no word the checks look for, so the gates do not walk its tree; the project's
    words, known only once the index is built, still reach it through its import."""
    files = {
        "pkg/__init__.py": "",
        "pkg/helpers.py": 'def load_model(path, device="cuda"):\n    return path, device\n',
        "pkg/plain.py": 'from pkg.helpers import load_model\n\nm = load_model("a.pt")\n',
        "pkg/same_name.py": "def load_model(path):\n    return path\n\n\nm = load_model(1)\n",
    }
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/helpers.py", "CDL108", 1, 29), ("pkg/plain.py", "CDL113", 3, 5)]
    assert passing(tmp_path, files) == ["pkg/helpers.py", "pkg/plain.py"]
