"""`cudalint compare` on small state dicts saved with real torch, and `cudalint report --compare`."""

import json

import pytest

from conftest import ROOT
from cudalint.cli import main

torch = pytest.importorskip("torch")


def state(**changes):
    doc = {"model": {"layer.weight": torch.arange(12, dtype=torch.float32).reshape(4, 3) / 7,
                     "layer.bias": torch.ones(3)},
           "outputs": [torch.linspace(0, 1, 5), (torch.tensor([1, 2, 3]),)]}
    for key, value in changes.items():
        if value is None:
            del doc["model"][key]
        else:
            doc["model"][key] = value
    return doc


@pytest.fixture
def saved(tmp_path):
    def save(name, obj):
        path = tmp_path / name
        torch.save(obj, path)
        return str(path)
    return save


def run(capsys, *args):
    code = main(["compare", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_identical_files_pass(saved, capsys):
    a, b = saved("a.pt", state()), saved("b.pt", state())
    code, out, _ = run(capsys, a, b)
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [
        ["ok", "model.layer.bias"], ["ok", "model.layer.weight"], ["ok", "outputs[0]"], ["ok", "outputs[1][0]"]]
    assert lines[-1] == "4 tensors compared, 0 beyond rtol=1e-05 atol=1e-08; largest drift 0.0e+00 at model.layer.bias"


def test_perturbed_tensor_fails_with_key_and_drift(saved, capsys):
    weight = state()["model"]["layer.weight"].clone()
    weight[1, 2] += 3.1e-3
    a, b = saved("a.pt", state()), saved("b.pt", state(**{"layer.weight": weight}))
    code, out, _ = run(capsys, a, b)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("DRIFT    model.layer.weight  shape (4, 3)  dtype float32  max_abs 3.1e-03")
    assert lines[-1] == ("4 tensors compared, 1 beyond rtol=1e-05 atol=1e-08; largest drift 3.1e-03 at "
                         "model.layer.weight")
    # a looser tolerance accepts the same drift
    assert run(capsys, a, b, "--atol", "1e-2")[0] == 0


def test_json_fields(saved, capsys, tmp_path):
    weight = state()["model"]["layer.weight"].clone()
    weight[0, 0] += 0.5
    a, b = saved("a.pt", state()), saved("b.pt", state(**{"layer.weight": weight}))
    code, out, _ = run(capsys, a, b, "--format", "json", "--rtol", "1e-3", "--atol", "1e-6")
    assert code == 1
    doc = json.loads(out)
    assert list(doc) == ["a", "b", "rtol", "atol", "tensors", "missing_in_a", "missing_in_b", "verdict"]
    assert (doc["a"], doc["b"], doc["rtol"], doc["atol"], doc["verdict"]) == (a, b, 1e-3, 1e-6, "fail")
    worst = doc["tensors"][0]
    assert list(worst) == ["key", "shape_a", "shape_b", "dtype_a", "dtype_b", "max_abs", "max_rel", "within"]
    assert worst["key"] == "model.layer.weight"
    assert (worst["shape_a"], worst["shape_b"], worst["dtype_a"], worst["dtype_b"]) == ([4, 3], [4, 3], "float32",
                                                                                          "float32")
    assert worst["max_abs"] == pytest.approx(0.5)
    assert worst["max_rel"] == pytest.approx(1.0)  # |0 - 0.5| / |0.5|
    assert worst["within"] is False
    assert all(row["within"] for row in doc["tensors"][1:])
    assert doc["missing_in_a"] == doc["missing_in_b"] == []
    # --output writes the same document
    out_file = tmp_path / "compare.json"
    assert run(capsys, a, b, "--format", "json", "--output", str(out_file))[0] == 1
    assert json.loads(out_file.read_text())["tensors"][0]["key"] == "model.layer.weight"


def test_missing_key_and_shape_mismatch(saved, capsys):
    a = saved("a.pt", state(extra=torch.zeros(2)))
    b = saved("b.pt", state(**{"layer.bias": torch.ones(4), "layer.weight": None}))
    code, out, _ = run(capsys, a, b)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == ("MISMATCH model.layer.bias  shape (3,) vs (4,)  dtype float32  max_abs -  max_rel -")
    assert f"MISSING  model.layer.weight  only in {a}" in lines
    assert f"MISSING  model.extra  only in {a}" in lines
    code, out, _ = run(capsys, a, b, "--format", "json")
    doc = json.loads(out)
    assert doc["missing_in_b"] == ["model.layer.weight", "model.extra"]
    assert doc["missing_in_a"] == []
    assert doc["tensors"][0]["within"] is False and doc["tensors"][0]["max_abs"] is None
    # keys only in B are reported too, and a dtype change is a mismatch
    code, out, _ = run(capsys, saved("c.pt", state(**{"layer.bias": torch.ones(3, dtype=torch.float64)})), a,
                       "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["missing_in_a"] == ["model.extra"]
    assert doc["tensors"][0]["key"] == "model.layer.bias" and doc["tensors"][0]["dtype_a"] == "float64"
    assert doc["tensors"][0]["max_abs"] == 0.0 and doc["tensors"][0]["within"] is False


def test_bad_paths_exit_2(saved, capsys, tmp_path):
    a = saved("a.pt", state())
    code, _, err = run(capsys, a, str(tmp_path / "nope.pt"))
    assert code == 2 and "nope.pt: no such file" in err
    garbage = tmp_path / "garbage.pt"
    garbage.write_text("not a torch file")
    code, _, err = run(capsys, str(garbage), a)
    assert code == 2 and "garbage.pt: cannot be loaded with torch.load" in err


def test_report_numerics_item_uses_the_comparison(saved, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    weight = state()["model"]["layer.weight"].clone()
    weight[1, 2] += 3.1e-3
    a, b = saved("a.pt", state()), saved("b.pt", state(**{"layer.weight": weight}))
    passed, failed = tmp_path / "pass.json", tmp_path / "fail.json"
    assert run(capsys, a, a, "--format", "json", "--output", str(passed))[0] == 0
    assert run(capsys, a, b, "--format", "json", "--output", str(failed))[0] == 1

    def numerics(compare_file):
        assert main(["report", "fixtures/demo", "--format", "json", "--compare", str(compare_file)]) == 0
        doc = json.loads(capsys.readouterr().out)
        return doc["checklist"][-1]

    item = numerics(passed)
    assert (item["id"], item["verdict"]) == ("numerics", "pass")
    assert item["evidence"][-1].startswith(f"comparison of {a} with {a}: 4 tensors compared, 0 beyond")
    item = numerics(failed)
    assert item["verdict"] == "fail"
    assert item["evidence"][0] == ("model.layer.weight: max_abs 3.1e-03, max_rel 4.3e-03, "
                                   "beyond rtol=1e-05 atol=1e-08")
    assert item["evidence"][-1].endswith("largest drift 3.1e-03 at model.layer.weight")
    assert main(["report", "fixtures/demo", "--compare", str(tmp_path / "trace.json")]) == 2
    assert "--compare" in capsys.readouterr().err
