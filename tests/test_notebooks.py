"""Jupyter notebooks: code cells checked as one script, findings placed on the .ipynb file's own lines and
columns, IPython syntax left out, no fixes, and a file that is no notebook reported with where it breaks."""

import json

from conftest import lint_tree, run_cli


def _notebook(*cells, indent=1, ensure_ascii=False):
    """A notebook as nbformat writes it: one JSON string per source line."""
    document = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source if isinstance(source, str) else list(source),
             **({"execution_count": None, "outputs": []} if kind == "code" else {})}
            for kind, source in cells
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(document, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def _line_of(text, fragment):
    """1-based line and column of a fragment of the file."""
    before = text[: text.index(fragment)]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


CELLS = (
    ("markdown", ["# Training on the GPU\n", "model.cuda()\n"]),
    ("code", ["%matplotlib inline\n", "!pip install torchvision\n", "import torch\n", "\n", "model = torch.nn.Linear(2, 2)\n"]),
    ("code", ["%%bash\n", "python -c 'import torch; torch.ones(1).cuda()'\n"]),
    ("code", ["%%writefile notes.txt\n", "model.cuda()\n"]),
    ("code", ["%%writefile train.py\n", "import torch\n", "torch.cuda.empty_cache()\n"]),
    ("code", ["%%time\n", "model = model.cuda()\n"]),
    ("code", ["model?\n"]),
    ("code", ["x = torch.ones(2).to(\"cuda\")  # the d\u00e9vice\n", "y = torch.ones(2).cuda()  # noqa: CDL102\n"]),
    ("code", "for step in range(3):\n    !echo step\n    torch.cuda.synchronize()"),
)


def test_code_cells_are_checked_where_the_file_writes_them(tmp_path, monkeypatch):
    text = _notebook(*CELLS)
    found = lint_tree(tmp_path, monkeypatch, {"train.ipynb": text})
    cuda_call = _line_of(text, "= model.cuda()")  # the code cell's, not the markdown cell's
    assert found == [
        ("train.ipynb", "CDL202", *_line_of(text, "torch.cuda.empty_cache()")),
        ("train.ipynb", "CDL102", cuda_call[0], cuda_call[1] + len("= model.")),
        ("train.ipynb", "CDL101", *_line_of(text, "\\\"cuda\\\")")),
        ("train.ipynb", "CDL201", *_line_of(text, "torch.cuda.synchronize()")),
    ]


def test_notebooks_get_no_fixes_and_fix_leaves_them_as_they_are(tmp_path):
    path = tmp_path / "train.ipynb"
    text = _notebook(*CELLS)
    path.write_text(text)
    listed = run_cli("check", "--format", "json", str(path), cwd=tmp_path)
    assert listed.returncode == 1
    assert [finding["fix"] for finding in json.loads(listed.stdout)] == [None, None, None, None]
    fixed = run_cli("check", "--fix", "--unsafe-fixes", str(path), cwd=tmp_path)
    assert fixed.returncode == 1
    assert path.read_text() == text


def test_ascii_escaped_and_one_string_sources_are_placed_too(tmp_path, monkeypatch):
    text = _notebook(("code", "import torch\nx = torch.zeros(1, device='cuda')  # d\u00e9j\u00e0 vu\n"), ensure_ascii=True)
    assert "\\u00e9" in text
    found = lint_tree(tmp_path, monkeypatch, {"one.ipynb": text})
    assert found == [("one.ipynb", "CDL101", *_line_of(text, "'cuda'"))]


def test_an_nbformat_3_notebook_is_read_from_its_worksheets(tmp_path, monkeypatch):
    document = {"nbformat": 3, "worksheets": [{"cells": [{"cell_type": "code", "input": ["import torch\n", "torch.ones(1).cuda()\n"]}]}]}
    text = json.dumps(document, indent=1)
    assert lint_tree(tmp_path, monkeypatch, {"old.ipynb": text}) == [("old.ipynb", "CDL102", *_line_of(text, "cuda()"))]


def test_a_file_that_is_no_notebook_is_reported_and_the_run_goes_on(tmp_path, monkeypatch):
    files = {"broken.ipynb": '{\n "cells": [\n  {"cell_type": "code",, }\n ]\n}\n',
             "list.ipynb": "[1, 2]\n", "deep.ipynb": "[" * 5000 + "]" * 5000,
             "ok.py": "import torch\n\ntorch.ones(1).cuda()\n"}
    found = lint_tree(tmp_path, monkeypatch, files)
    assert found == [("broken.ipynb", "CDL000", 3, 24), ("deep.ipynb", "CDL000", 1, 1), ("list.ipynb", "CDL000", 1, 1),
                     ("ok.py", "CDL102", 3, 15)]
    listed = run_cli("check", "--select", "CDL000", "--format", "json", ".", cwd=tmp_path)
    messages = {finding["path"]: finding["message"] for finding in json.loads(listed.stdout)}
    assert messages == {
        "broken.ipynb": "not a notebook: Expecting property name enclosed in double quotes; the file was not checked",
        "deep.ipynb": "not a notebook: JSON nested more than 64 levels deep; the file was not checked",
        "list.ipynb": "not a notebook: the JSON is not an object; the file was not checked",
    }


def test_a_notebook_is_read_to_four_times_the_size_limit(tmp_path):
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["x" * 1000 + "\n"] * 30}]
    document = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": outputs,
                           "source": ["import torch\n", "torch.ones(1).cuda()\n"]}], "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "big.ipynb").write_text(json.dumps(document, indent=1))
    (tmp_path / "big.py").write_text("import torch\n\ntorch.ones(1).cuda()\n" + "#" * 20000 + "\n")
    listed = run_cli("check", "--max-file-size", "10000", "--format", "json", ".", cwd=tmp_path)
    found = sorted((finding["path"], finding["code"]) for finding in json.loads(listed.stdout))
    assert found == [("big.ipynb", "CDL102"), ("big.py", "CDL000")]
    (tmp_path / "big.ipynb").write_text(json.dumps({**document, "padding": "y" * 40000}, indent=1))
    listed = run_cli("check", "--max-file-size", "10000", "--format", "json", "big.ipynb", cwd=tmp_path)
    assert [finding["code"] for finding in json.loads(listed.stdout)] == ["CDL000"]


def test_float64_in_a_notebook_that_places_no_tensor_on_a_device_stays_on_the_cpu(tmp_path, monkeypatch):
    cpu = _notebook(("code", ["import torch\n", "model = torch.nn.Linear(2, 2).to(torch.float64)\n", "y = model.double()\n"]))
    moved = _notebook(("code", ["import torch\n", "model = torch.nn.Linear(2, 2).to(torch.float64)\n", "x = torch.ones(2).double()\n"]),
                      ("code", ["model.to(\"mps\")\n"]))
    found = lint_tree(tmp_path, monkeypatch, {"cpu.ipynb": cpu, "moved.ipynb": moved})
    assert [(path, code) for path, code, _, _ in found] == [("moved.ipynb", "CDL601")]


def test_a_related_place_in_another_cell_is_placed_in_the_file_too(tmp_path):
    text = _notebook(("code", ["import torch\n", "DEVICE = \"cuda\"\n"]), ("markdown", ["Move it:\n"]),
                     ("code", ["x = torch.ones(2)\n", "y = x.to(DEVICE)\n"]))
    (tmp_path / "move.ipynb").write_text(text)
    listed = run_cli("check", "--select", "CDL101", "--format", "json", "move.ipynb", cwd=tmp_path)
    [finding] = json.loads(listed.stdout)
    assert (finding["line"], finding["column"]) == _line_of(text, '\\"cuda\\"')
    assert [(related["line"], related["column"]) for related in finding["related"]] == [_line_of(text, "DEVICE)")]
