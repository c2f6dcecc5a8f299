"""CDL104 and the fallback of a device parameter that defaults to None: `self.device = <"cuda" else
"cpu"> if device is None else device` (also `if device is None: ...` and `device or ...`) runs only
when a call leaves the parameter out. When every call of the function in the project passes it (the
project index's call table, as for a "cuda" default: project/default_calls.py), the fallback never
runs and is not reported; a call that leaves it out, or spreads `*args`/`**kwargs`, keeps it. (The
module here is private, `pkg/_face.py`: a public module's functions are the package's API, whose users
may leave the parameter out: test_round128_patterns.py.)"""

from conftest import findings_of, triples

FACE = '''import torch


class RetinaFace(torch.nn.Module):
    def __init__(self, half=False, device=None):
        super().__init__()
        self.device = (
            torch.device("cuda" if torch.cuda.is_available() else "cpu")
            if device is None
            else device
        )


def helper(x, device=None):
    if device is None:
        if torch.cuda.is_available():
            device = "cuda"
        else:
            device = "cpu"
    return x.to(device)


def orfill(x, device=None):
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return x.to(device)


def entry(x, device=None):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu") if device is None else device
    return x.to(device)
'''

CALLERS = '''from pkg._face import RetinaFace, entry, helper, orfill

net = RetinaFace(device="cpu")
y = helper(1, "cpu")
z = orfill(1, device="mps")
w = entry(1)
'''


def test_a_fallback_every_call_overrides_is_not_reported():
    found = findings_of(FACE, path="pkg/_face.py", select={"CDL104"}, project_files={"pkg/__init__.py": "", "pkg/use.py": CALLERS})
    assert triples(found) == [("CDL104", 29, 27)]


SOME_LEAVE_IT_OUT = '''from pkg._face import RetinaFace, helper, orfill


def build(*args, **kwargs):
    return RetinaFace(*args, **kwargs)


y = helper(1)
z = orfill(1, device="mps")
'''


def test_a_call_that_leaves_it_out_or_spreads_keeps_it():
    found = findings_of(FACE, path="pkg/_face.py", select={"CDL104"}, project_files={"pkg/__init__.py": "", "pkg/use.py": SOME_LEAVE_IT_OUT})
    assert triples(found) == [("CDL104", 8, 26), ("CDL104", 16, 9), ("CDL104", 29, 27)]


TESTS_ONLY = '''from pkg._face import RetinaFace, entry, helper, orfill


def test_face():
    RetinaFace(device="cpu")
    helper(1, "cpu")
    orfill(1, device="cpu")
    entry(1, device="cpu")
'''


def test_calls_in_tests_say_nothing_of_the_programs_callers():
    found = findings_of(FACE, path="pkg/_face.py", select={"CDL104"}, project_files={"pkg/__init__.py": "", "tests/test_face.py": TESTS_ONLY})
    assert triples(found) == [("CDL104", 8, 26), ("CDL104", 16, 9), ("CDL104", 24, 25), ("CDL104", 29, 27)]


HELPERS = '''import torch


def make(x, device="cuda"):
    return x.to(device)
'''

HELPER_TESTS = '''from tests.helpers import make


def test_make():
    make(1, device="cpu")
'''


def test_but_do_for_a_test_suites_own_helpers():
    found = findings_of(HELPERS, path="tests/helpers.py", select={"CDL108"},
                        project_files={"tests/__init__.py": "", "tests/test_make.py": HELPER_TESTS})
    assert triples(found) == []
    alone = findings_of(HELPERS, path="tests/helpers.py", select={"CDL108"}, project_files={"tests/__init__.py": ""})
    assert triples(alone) == [("CDL108", 4, 20)]
