"""torch.backends.mps.is_available() and is_built() are true on every Mac and false on a CUDA host
(rules/guards.toml `mac_queries`): what runs only where they are false never runs on a Mac, in the file
and through a helper of another module. A selection bound to a name or an instance's attribute that a
later binding points at MPS forgets nothing."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def run(x, half):
    if not torch.backends.mps.is_available():
        with torch.autocast(device_type="cuda", enabled=half):
            torch.cuda.synchronize()
    else:
        x = x * 2
    if torch.backends.mps.is_built():
        x = x * 3
    else:
        torch.cuda.synchronize()
    if torch.backends.mps.is_available():
        torch.cuda.synchronize()
    return x


class Speaker:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if torch.backends.mps.is_available():
            self.device = torch.device("mps")


class Listener:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
'''


def lint(source: str, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL104", "CDL201", "CDL207"}, **kwargs))


def test_code_that_runs_only_without_mps():
    # kept: a CUDA call where MPS is available (15), a selection nothing points at MPS (28)
    assert lint(SOURCE) == [("CDL201", 15, 9), ("CDL104", 28, 36)]


def test_a_helper_of_another_module():
    helper = "import torch\n\n\ndef no_mps():\n    return not torch.backends.mps.is_available()\n"
    source = """
    import torch
    from pkg.env import no_mps


    def run():
        if no_mps():
            torch.cuda.synchronize()
    """
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/env.py": helper}
    assert lint(source, project_files=files, path="pkg/run.py") == []


def test_an_attribute_bound_to_an_accelerator_elsewhere_is_no_override():
    source = """
    import torch


    class Model:
        def __init__(self, tp, accelerator):
            if tp:
                self.device = accelerator.device
            else:
                self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    """
    assert lint(source) == [("CDL104", 9, 27)]


def test_selections_inside_other_expressions():
    # the selection is an operand of `or`, an arm of another conditional, a parameter's default: no
    # binding of a name or attribute to look through, reported as it is (and no internal error)
    source = """
    import torch


    class Runner:
        def __init__(self, device=None, given=None):
            self.device = device or torch.device(0 if torch.cuda.is_available() else "cpu")
            self.other = torch.device("cuda" if torch.cuda.is_available() else "cpu") if given is None else given


    def load(device=torch.device("cuda" if torch.cuda.is_available() else "cpu")):
        return device
    """
    found = findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL000", "CDL104"})
    assert triples(found) == [("CDL104", 6, 46), ("CDL104", 7, 35), ("CDL104", 10, 30)]
