"""A test of torch's own version has one value at the target release: the branch it rules out never
runs there, and what it holds is not reported. Tests the target cannot decide (a patch bound inside a
target given as major.minor), and tests of other things' versions, decide nothing."""

import textwrap

from conftest import findings_of, triples

SOURCE = """
import torch
from packaging import version
from packaging.version import Version

TORCH = version.parse(torch.__version__)
OLD = version.parse("2.4.0")


def patch():
    if version.parse(torch.__version__) >= version.parse("2.4.0") and version.parse(torch.__version__) < version.parse("2.4.1"):
        torch.cuda.synchronize()
    if torch.__version__ < "1.10":
        torch.cuda.synchronize()
    if TORCH >= OLD:
        x = 1
    else:
        torch.cuda.synchronize()
    if Version(version.parse(torch.__version__).base_version) < Version("2.1.0a0"):
        torch.cuda.synchronize()
    if version.parse(torch.__version__) < version.parse("2.9.1"):
        torch.cuda.synchronize()
    if version.parse(torch.__version__) <= version.parse("2.14"):
        torch.cuda.synchronize()
    if version.parse(version.__version__) < version.parse("1.0"):
        torch.cuda.synchronize()
    if torch.__version__ >= "3.x":
        torch.cuda.synchronize()
"""


def lint(version_said):
    return triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL201"}, torch_version=version_said))


def test_a_branch_the_target_release_rules_out_is_not_reported():
    # At 2.9.1: the 2.4.0-only patch, the pre-1.10 and pre-2.1 branches and the else of `>= 2.4.0` never run;
    # `< 2.9.1` is false; `<= 2.14` is true (reported); another package's version and "3.x" decide nothing.
    assert lint("2.9.1") == [("CDL201", 23, 9), ("CDL201", 25, 9), ("CDL201", 27, 9)]


def test_a_target_given_as_major_minor_decides_only_what_every_patch_release_agrees_on():
    # At 2.9 (any 2.9.x): `< 2.9.1` holds for 2.9.0 and not for 2.9.2, so it is left undecided.
    assert lint("2.9") == [("CDL201", 21, 9), ("CDL201", 23, 9), ("CDL201", 25, 9), ("CDL201", 27, 9)]


def test_an_older_target_runs_the_branches_of_its_own_release():
    # At 2.4 (any 2.4.x): the patch for 2.4.0 only may run, so it is reported; `>= 2.4.0` is true (its
    # else never runs); `< 2.9.1` and `<= 2.14` are true.
    assert lint("2.4") == [("CDL201", 11, 9), ("CDL201", 21, 9), ("CDL201", 23, 9), ("CDL201", 25, 9), ("CDL201", 27, 9)]


def test_a_version_too_long_to_read_decides_nothing():
    # A 5,000-digit "version" (past int()'s digit limit) is no version: the branch stays reported.
    source = "import torch\n\nif torch.__version__ < \"" + "1" * 5000 + "\":\n    torch.cuda.synchronize()\n"
    assert triples(findings_of(source, select={"CDL201"}, torch_version="2.9.1")) == [("CDL201", 4, 5)]
