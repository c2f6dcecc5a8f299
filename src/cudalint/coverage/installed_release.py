"""One release's facts read from the installed torch (``--from-installed-torch``).

Only the dispatch table is in the wheel. Composite callees are borrowed from
the newest older release in the database that knows them (the database's
release_info names it as ``callees_from``); explicit CPU fallbacks registered
outside the yaml and the OpInfo test lists are absent for such a release.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import List, Sequence

from .native_functions import installed_torch, read_native_functions
from .release_facts import KIND_COMPOSITE, OpFacts, ReleaseFacts
from .reviewed_facts import Registration, Span, covering, scan_torch
from .versions import version_tuple


def installed_python_registrations(version: str, known: Sequence[Registration]) -> List[Registration]:
    """MPS registrations in the installed torch's .py files that ``known`` does not list for ``version``."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return []
    minor = ".".join(version.split(".")[:2])
    found = []
    for op, file in sorted(scan_torch(Path(spec.origin).parent).items()):
        if not covering(known, op, version):
            found.append(Registration(op, Span(minor, minor), file, f"found in {file} of the installed torch {version}"))
    return found


def read_installed_release(known: List[ReleaseFacts]) -> ReleaseFacts:
    torch_info = installed_torch()
    version = str(torch_info["version"])
    ops = read_native_functions(torch_info["yaml"])  # type: ignore[arg-type]
    older = sorted((r for r in known if version_tuple(r.version) < version_tuple(version)),
                   key=lambda r: version_tuple(r.version), reverse=True)
    donor = older[0] if older else None
    for name, facts in ops.items():
        if facts.kind == KIND_COMPOSITE and facts.callees is None and donor is not None:
            borrowed = donor.ops.get(name)
            if borrowed is not None and borrowed.kind == KIND_COMPOSITE and borrowed.callees is not None:
                ops[name] = OpFacts(KIND_COMPOSITE, tuple(c for c in borrowed.callees))
    info = {
        "source": "installed torch",
        "dispatch_table": f"torchgen/packaged/ATen/native/native_functions.yaml of the installed torch {version}",
        "git_version": str(torch_info["git_version"]),
        "xfail": "absent",
        "callees_from": donor.version if donor is not None else "",
    }
    return ReleaseFacts(version=version, info=info, ops=ops, xfail=None)
