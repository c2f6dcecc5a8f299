"""`if __name__ == "__main__":` in a module the project imports is a developer's demo of library code:
it never runs when the project is used, so what it does is not reported (as code that never runs on a
Mac is not). A module nothing imports is a program, and its main block is what runs: reported."""

from conftest import lint_tree

LIBRARY = 'import torch\n\n\ndef scale(x):\n    return x * 2\n\n\nif __name__ == "__main__":\n    print(scale(torch.ones(2).cuda()))\n'
PROGRAM = 'import torch\n\nif __name__ == "__main__":\n    print(torch.ones(2).cuda())\n'


def test_the_main_block_of_an_imported_module_is_not_reported(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/lib.py": LIBRARY, "pkg/user.py": "from pkg.lib import scale\n\nprint(scale(1))\n",
             "pkg/script.py": PROGRAM}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/script.py", "CDL102", 4, 25)]


def test_the_main_block_of_a_module_nothing_imports_is_reported(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/lib.py": LIBRARY}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/lib.py", "CDL102", 9, 31)]


def test_a_relative_import_makes_a_module_library_code_too(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "from .lib import scale\n", "pkg/lib.py": LIBRARY}
    assert lint_tree(tmp_path, monkeypatch, files) == []


def test_only_the_main_test_at_the_top_level_is_a_demo_block(tmp_path, monkeypatch):
    nested = LIBRARY.replace('if __name__ == "__main__":\n    print', 'def main():\n    if __name__ == "__main__":\n        print')
    files = {"pkg/__init__.py": "", "pkg/lib.py": nested, "pkg/user.py": "from pkg.lib import scale\n"}
    assert lint_tree(tmp_path, monkeypatch, files) == [("pkg/lib.py", "CDL102", 10, 35)]
