"""Patterns from blind rounds 52 and 53 (bench/EVAL.md, session 36): a CPU tensor type made the default, a
parameter whose default the function never uses, a script's host data saved and read back, a program's main
block that a test imports the module of, loops over written device lists, and modules of another device's
bridge (`import habana_frameworks`)."""

from conftest import findings_of, lint_tree, triples


def test_a_cpu_tensor_type_as_the_default_is_no_cuda_tensor_type():
    source = ('import torch\n\n'
              'torch.set_default_tensor_type(torch.DoubleTensor)\n'
              'torch.set_default_tensor_type(torch.BFloat16Tensor)\n'
              'torch.set_default_tensor_type(torch.cuda.FloatTensor)\n'
              'torch.set_default_tensor_type("torch.cuda.HalfTensor")\n')
    found = sorted(findings_of(source, select={"CDL212"}), key=lambda f: f.sort_key)
    assert triples(found) == [("CDL212", 5, 31), ("CDL212", 6, 31)]
    assert found[0].message == ("torch.cuda.FloatTensor is a CUDA tensor type; use torch.set_default_device() and "
                                "torch.set_default_dtype() (torch >= 2.0)")
    assert found[1].message.startswith('"torch.cuda.HalfTensor" is a CUDA tensor type')


def test_a_default_the_function_never_uses_is_no_finding():
    source = '''import torch


def optimize(t, device="cuda", backend="nccl", verbose=False):
    """Rebinds its device before reading it, never reads its backend."""
    scale = t.abs().max()
    device = pick_accelerator()
    return t.to(device) / scale


def train(t, device="cuda", backend="nccl"):
    device = device or "cpu"
    init(backend)
    return t.to(device)
'''
    assert triples(findings_of(source, select={"CDL101", "CDL108", "CDL706"})) == [("CDL108", 11, 21), ("CDL706", 11, 37)]


def test_host_data_a_script_saves_at_its_top_level_is_read_back_without_a_map_location(tmp_path, monkeypatch):
    saver = ('import sys\n\nimport numpy\nimport torch\n\nOUT = sys.argv[1]\nweights = numpy.load("w.npy")\n'
             'sorted_idx = numpy.argsort(weights)\nsorted_idx = sorted_idx[::-1]\n'
             'torch.save(sorted_idx, "{}/sorted_idx.pt".format(OUT))\nmodel = torch.load("model.pt")\n')
    reader = 'import os\n\nimport torch\n\n\ndef order(root):\n    return torch.load(os.path.join(root, "sorted_idx.pt"))\n'
    found = lint_tree(tmp_path, monkeypatch, {"filter.py": saver, "dataset.py": reader})
    assert [entry for entry in found if entry[1] == "CDL109"] == [("filter.py", "CDL109", 11, 9)]


def test_the_main_block_of_a_program_a_test_imports_is_what_runs(tmp_path, monkeypatch):
    program = '''import argparse

import torch


def main(args):
    return torch.zeros(1, device=args.device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    args = parser.parse_args()
    main(args)
'''
    test = 'from pkg.prompt import main\n\n\ndef test_main():\n    class Args:\n        device = "cpu"\n\n    main(Args())\n'
    library = 'from pkg.prompt import main\n'
    files = {"pkg/__init__.py": "", "pkg/prompt.py": program, "tests/__init__.py": "", "tests/test_prompt.py": test}
    assert [entry for entry in lint_tree(tmp_path, monkeypatch, files) if entry[0] == "pkg/prompt.py"] == [
        ("pkg/prompt.py", "CDL116", 12, 45)]
    # imported by the package's own code, the block is a developer's demo of library code
    files["pkg/cli.py"] = library
    assert [entry for entry in lint_tree(tmp_path, monkeypatch, files) if entry[0] == "pkg/prompt.py"] == []


def test_a_loop_over_written_devices_hands_each_one_on():
    source = '''import torch

DEVICES = ("cpu", "cuda")


def test_clamp():
    for d in ["cpu", "cuda"]:
        a = torch.linspace(-2, 2, steps=100, device=d)


def test_skipped():
    for device in DEVICES:
        if device == "cuda" and not torch.cuda.is_available():
            continue
        a = torch.ones(2).to(device)


def test_mps():
    for device in ["cpu", "mps"]:
        a = torch.ones(2).to(device)
'''
    found = findings_of(source, path="tests/test_clamp.py", select={"CDL101"})
    assert triples(found) == [("CDL101", 7, 22)]
    assert [(r.line, r.column) for r in found[0].related] == [(8, 53)]


def test_a_module_built_on_another_devices_bridge_runs_only_there(tmp_path, monkeypatch):
    gaudi = ('import habana_frameworks.torch.core as htcore\nimport torch\nfrom auto_gptq.quantization import GPTQ\n\n\n'
             'def step(x):\n    torch.cuda.synchronize()\n    return x.to("hpu")\n')
    plain = 'import torch\nfrom auto_gptq.quantization import GPTQ\n'
    found = lint_tree(tmp_path, monkeypatch, {"pkg/__init__.py": "", "pkg/gaudi.py": gaudi, "pkg/plain.py": plain})
    assert [entry for entry in found if entry[0].startswith("pkg/")] == [("pkg/plain.py", "CDL404", 2, 1)]


def test_a_guarded_move_of_several_values_at_once_is_a_cuda_or_cpu_choice():
    # gpytorch's notebooks: `if torch.cuda.is_available(): train_x, train_y = train_x.cuda(), train_y.cuda()`
    source = ('import torch\n\nif torch.cuda.is_available():\n    train_x, train_y = train_x.cuda(), train_y.to("cuda")\n\n'
              'if torch.cuda.is_available():\n    a, b = a.cuda(), b\n')
    assert triples(findings_of(source, select={"CDL104"})) == [("CDL104", 3, 1)]


def test_a_sound_cards_device_index_is_no_torch_device():
    # denoiser's live.py (round 54): `sd.InputStream(device=device_in)`, an audio interface's index
    source = ('import sounddevice as sd\nimport torch\n\n\ndef run(device_in: int):\n'
              '    stream = sd.InputStream(device=device_in, channels=1)\n    return torch.ones(1).to(device_in)\n')
    assert triples(findings_of(source, select={"CDL101"}, torch_version="2.4")) == [("CDL101", 7, 29)]


def test_float64_on_a_device_that_is_the_cpu_on_a_mac_stays_there():
    # synthcity's NOTEARS modules (round 55): `nn.Linear(...).to(DEVICE).double()` with a CUDA-or-CPU DEVICE
    source = ('import torch\nfrom torch import nn\n\nDEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
              'def build(d, device):\n    fc = nn.Linear(d, d).to(DEVICE).double()\n    return fc, nn.Linear(d, d).to(device).double()\n')
    assert triples(findings_of(source, select={"CDL104", "CDL602"})) == [("CDL104", 4, 23), ("CDL602", 9, 43)]


def test_a_programs_device_choice_nothing_reads_is_no_finding(tmp_path, monkeypatch):
    # neuromancer's Part_3_pNLP.py (round 55): `device = f"cuda:{args.gpu}" if args.gpu is not None else "cpu"`, never used
    choice = 'import torch\n\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'
    main = 'if __name__ == "__main__":\n    print(1)\n'
    files = {"pkg/__init__.py": "", "pkg/config.py": choice, "scripts/unused.py": choice + main,
             "scripts/used.py": choice + "x = torch.ones(1).to(device)\n" + main}
    found = lint_tree(tmp_path, monkeypatch, files)
    # a library module's name is its users' too, read or not here
    assert [entry for entry in found if entry[1] == "CDL104"] == [("pkg/config.py", "CDL104", 3, 10), ("scripts/used.py", "CDL104", 3, 10)]
    files["scripts/other.py"] = "from unused import device\n"  # imported: another module may read it
    found = lint_tree(tmp_path, monkeypatch, files)
    assert [entry[0] for entry in found if entry[1] == "CDL104"] == ["pkg/config.py", "scripts/unused.py", "scripts/used.py"]
