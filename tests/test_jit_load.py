"""CDL109 covers `torch.jit.load` as it does `torch.load` (the catalog's `loaders`): a TorchScript archive
scripted or traced on CUDA is restored onto CUDA without a `map_location`. A map_location given by
keyword or as the second positional argument is enough; a CUDA one is reported at the value; a file the
same function wrote with `torch.jit.save` is a round trip, while one written with `torch.save` is not."""

from conftest import findings_of, triples
from test_fix_outputs import DEFAULT

from cudalint.fixes import fix_text

SOURCE = '''import torch
from torch import jit

a = torch.jit.load("model.pt")
b = torch.jit.load("model.pt", map_location="cpu")
c = torch.jit.load("model.pt", "cpu")
d = torch.jit.load("model.pt", map_location="cuda")
e = jit.load("model.pt")


def round_trip(module, path):
    torch.jit.save(module, path)
    return torch.jit.load(path)


def other_saver(module, path):
    torch.save(module.state_dict(), path)
    return torch.jit.load(path)
'''


def test_jit_load_findings():
    assert triples(findings_of(SOURCE, select={"CDL109"})) == [
        ("CDL109", 4, 5),
        ("CDL109", 7, 45),
        ("CDL109", 8, 5),
        ("CDL109", 18, 12),
    ]


def test_jit_load_message_names_the_loader():
    messages = [finding.message for finding in findings_of(SOURCE, select={"CDL109"})]
    assert messages[0].startswith("torch.jit.load without map_location")
    assert messages[2].startswith("torch.jit.load without map_location")  # the API, however it is imported


def test_jit_load_fix():
    source = 'import torch\nmodule = torch.jit.load("m.pt")\n'
    outcome = fix_text("example.py", source, DEFAULT, "2.13", False)
    assert outcome.fixed == (
        'import torch\n\nDEVICE = (\n    torch.accelerator.current_accelerator(check_available=True)\n    or torch.device("cpu")\n)\n'
        'module = torch.jit.load(\n    "m.pt",\n    map_location=None if torch.cuda.is_available() else DEVICE,\n)\n'
    )
