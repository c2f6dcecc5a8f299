"""CDL109 and files a project ships: a `torch.load` of a path built from `__file__` that names a torch
archive of the project whose pickles record every storage on the CPU needs no map_location. The archive
is read as pickle opcodes, never unpickled, in either format (a zip archive, or the pickles one after another
of a file saved before torch 1.6). Anything else stays reported: a storage on another device (a meta
tensor), any string naming one, a FIFO, a path that leaves the project through `..` or a symbolic link, a
file that is not there."""

import os

import torch

from conftest import lint_tree

MODULE = '''import os
import pathlib
from pathlib import Path

import torch


def tables():
    return torch.load(os.path.join(os.path.dirname(__file__), "tables.pt"))


def hadamard():
    parent = pathlib.Path(os.path.abspath(__file__)).parent
    return torch.load(str(parent) + "/tables.pt", weights_only=True)


def by_pathlib(name):
    here = Path(__file__).resolve().parent
    return torch.load(here / "data" / name), torch.load(here / "data" / "other.pt")


def meta():
    return torch.load(os.path.join(os.path.dirname(__file__), "meta.pt"))


def named():
    return torch.load(os.path.join(os.path.dirname(__file__), "named.pt"))


def legacy():
    return torch.load(os.path.join(os.path.dirname(__file__), "legacy.pt"))


def fifo():
    return torch.load(os.path.join(os.path.dirname(__file__), "fifo.pt"))


def outside():
    return torch.load(os.path.join(os.path.dirname(__file__), "..", "..", "outside.pt"))


def linked():
    return torch.load(os.path.join(os.path.dirname(__file__), "linked.pt"))


def missing():
    return torch.load(os.path.join(os.path.dirname(__file__), "missing.pt"))
'''


def test_only_archives_of_cpu_storages_inside_the_project_load_without_map_location(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "pkg" / "data").mkdir(parents=True)
    torch.save({"a": torch.ones(3), "b": torch.arange(4)}, project / "pkg" / "tables.pt")
    torch.save(torch.zeros(2), project / "pkg" / "data" / "other.pt")
    torch.save(torch.empty(2, device="meta"), project / "pkg" / "meta.pt")
    torch.save({"weights": torch.ones(2), "device": "cuda:0"}, project / "pkg" / "named.pt")
    torch.save(torch.ones(2), project / "pkg" / "legacy.pt", _use_new_zipfile_serialization=False)
    os.mkfifo(project / "pkg" / "fifo.pt")
    torch.save(torch.ones(2), tmp_path / "outside.pt")
    os.symlink(tmp_path / "outside.pt", project / "pkg" / "linked.pt")
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/model.py": MODULE}
    found = [(line, column) for path, code, line, column in lint_tree(project, monkeypatch, files) if code == "CDL109"]
    assert found == [(19, 12), (23, 12), (27, 12), (35, 12), (39, 12), (43, 12), (47, 12)]


def test_an_old_format_file_is_judged_by_its_storages(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    torch.save({"w": torch.ones(2)}, project / "pkg" / "cpu.pt", _use_new_zipfile_serialization=False)
    torch.save(torch.empty(2, device="meta"), project / "pkg" / "meta.pt", _use_new_zipfile_serialization=False)
    (project / "pkg" / "plain.pt").write_bytes(b"\x80\x02K\x01.")  # a pickle of 1, no torch file
    module = "import os\n\nimport torch\n\nHERE = os.path.dirname(__file__)\n" + "".join(
        f"{name} = torch.load(os.path.join(HERE, '{name}.pt'))\n" for name in ("cpu", "meta", "plain"))
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/model.py": module}
    found = [(line, column) for path, code, line, column in lint_tree(project, monkeypatch, files) if code == "CDL109"]
    assert found == [(7, 8), (8, 9)]


PARENTS = '''from pathlib import Path

import torch

DIR = Path(__file__).parents[0]
TOP = Path(__file__).resolve().parents[1]
TABLE = torch.load(str(DIR / "precomputed" / "gammas.pt"), weights_only=True)
SHARED = torch.load(TOP / "shared.pt")
FAR = torch.load(Path(__file__).parents[2] / "shared.pt")
'''


def test_a_path_from_the_parents_of_the_module_file(tmp_path, monkeypatch):
    # parents[0] is the module's folder, parents[1] the one above; parents[2] names a folder outside the project
    project = tmp_path / "project"
    (project / "pkg" / "precomputed").mkdir(parents=True)
    torch.save(torch.ones(3), project / "pkg" / "precomputed" / "gammas.pt")
    torch.save(torch.ones(3), project / "shared.pt")
    torch.save(torch.ones(3), tmp_path / "shared.pt")
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/tables.py": PARENTS}
    found = [(path, line, column) for path, code, line, column in lint_tree(project, monkeypatch, files) if code == "CDL109"]
    assert found == [("pkg/tables.py", 9, 7)]


RELATIVE = '''import torch


def fixtures():
    inputs = torch.load("tests/input_data.pt")
    beside = torch.load("beside.pt")
    both = torch.load("twice.pt")
    escaped = torch.load("../outside.pt")
    absent = torch.load("tests/absent.pt")
    return inputs, beside, both, escaped, absent
'''


def test_a_relative_path_from_the_project_root_or_the_module_folder(tmp_path, monkeypatch):
    # "twice.pt" names two different files, one at the root and one beside the module: neither is judged
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    torch.save(torch.ones(3), project / "tests" / "input_data.pt")
    torch.save(torch.ones(3), project / "tests" / "beside.pt")
    torch.save(torch.ones(3), project / "twice.pt")
    torch.save(torch.zeros(3), project / "tests" / "twice.pt")
    torch.save(torch.ones(3), tmp_path / "outside.pt")
    files = {"tests/test_fixtures.py": RELATIVE}
    found = [(path, line, column) for path, code, line, column in lint_tree(project, monkeypatch, files) if code == "CDL109"]
    assert found == [("tests/test_fixtures.py", 7, 12), ("tests/test_fixtures.py", 8, 15), ("tests/test_fixtures.py", 9, 14)]
