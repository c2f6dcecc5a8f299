"""A CUDA API as an assignment target is a monkeypatch (`torch.cuda.empty_cache = torch.mps.empty_cache`,
a port's own shim): it binds the name and uses nothing, so it is not reported; a call of it still is.
And intel_extension_for_pytorch imports only where IPEX is built (Linux and Windows): what the project
calls only after importing it never runs on a Mac (rules/guards.toml, off_mac_libraries)."""

from conftest import findings_of, triples

SHIM = '''import torch

if torch.backends.mps.is_available():
    torch.cuda.empty_cache = torch.mps.empty_cache
    torch.cuda.manual_seed: object = torch.mps.manual_seed
torch.cuda.empty_cache()
'''

HIJACK = '''import torch


def ipex_init():
    torch.cuda.empty_cache()
    torch.ones(2).cuda()
'''

CONFIG = '''try:
    import intel_extension_for_pytorch as ipex

    from pkg.ipex import ipex_init

    ipex_init()
except Exception:
    pass
'''


def test_a_monkeypatch_target_is_not_a_use():
    assert triples(findings_of(SHIM, select={"CDL202", "CDL203"})) == [("CDL202", 6, 1)]


def test_code_called_only_once_ipex_imports_never_runs_on_a_mac():
    files = {"pkg/__init__.py": "", "pkg/config.py": CONFIG}
    found = findings_of(HIJACK, path="pkg/ipex/__init__.py", select={"CDL102", "CDL202"}, project_files=files)
    assert triples(found) == []
    files["pkg/config.py"] = CONFIG.replace("import intel_extension_for_pytorch as ipex", "import numpy as ipex")
    found = findings_of(HIJACK, path="pkg/ipex/__init__.py", select={"CDL102", "CDL202"}, project_files=files)
    assert triples(found) == [("CDL202", 5, 5), ("CDL102", 6, 19)]
