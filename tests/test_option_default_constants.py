"""CDL108 for an option whose default is a constant naming CUDA: `add_argument("--device",
default=DEFAULT_DEVICE)` with `DEFAULT_DEVICE = "cuda"` in the same module (reported where the constant
is written, the option related) or in another module of the project (lama-cleaner's const.py; reported
at the option, the constant related). A constant that names another device is no finding."""

from conftest import findings_of, triples

CONST = 'AVAILABLE_DEVICES = ["cuda", "cpu", "mps"]\nDEFAULT_DEVICE = "cuda"\nDEFAULT_PORT = 8080\n'

ARGS = '''import argparse

from app.const import AVAILABLE_DEVICES, DEFAULT_DEVICE, DEFAULT_PORT

LOCAL_DEVICE = "cuda:0"
CPU = "cpu"

parser = argparse.ArgumentParser()
parser.add_argument("--device", default=DEFAULT_DEVICE, choices=AVAILABLE_DEVICES)
parser.add_argument("--eval-device", default=LOCAL_DEVICE)
parser.add_argument("--host-device", default=CPU)
parser.add_argument("--port", default=DEFAULT_PORT)
'''


def test_constants_that_name_cuda_as_option_defaults():
    found = findings_of(ARGS, path="app/cli.py", select={"CDL108"},
                        project_files={"app/__init__.py": "", "app/const.py": CONST})
    assert triples(found) == [("CDL108", 5, 16), ("CDL108", 9, 41)]
    messages = {f.line: f.message for f in found}
    assert messages == {
        5: '"cuda:0" reaches an option default (LOCAL_DEVICE): a CUDA device',
        9: "option defaults to DEFAULT_DEVICE = 'cuda' (set in app/const.py:2), a CUDA device",
    }
