"""A name imported differently in the two arms of an `if` (a shim for old and new torch) resolves, where
it is read, to the import of its own arm: `autocast("cuda")` after `from torch.amp import autocast` is
CDL207's autocast device, not the deprecated `torch.cuda.amp.autocast` of the other arm (whose import is
then not reported either). A read after both arms keeps the first import, as before."""

from conftest import findings_of, triples

SHIM = '''import torch


def autocast(**kwargs):
    if torch.__version__ < "2.4":
        from torch.cuda.amp import autocast

        return autocast(**kwargs)
    else:
        from torch.amp import autocast

        return autocast("cuda", **kwargs)


def after(flag):
    if flag:
        from torch.cuda.amp import GradScaler
    else:
        from torch.amp import GradScaler
    return GradScaler()
'''


def test_each_arm_reads_its_own_import():
    found = findings_of(SHIM, select={"CDL205", "CDL207"}, torch_version="2.9")
    assert triples(found) == [("CDL207", 12, 25), ("CDL205", 17, 9), ("CDL205", 20, 12)]
    old = findings_of(SHIM, select={"CDL205", "CDL207"}, torch_version="2.3")
    assert triples(old) == [("CDL205", 6, 9), ("CDL205", 8, 16), ("CDL205", 17, 9), ("CDL205", 20, 12)]
