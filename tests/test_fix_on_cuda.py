"""Safe means identical on CUDA, proven by running it: every safe fix kind's original and fixed
snippet execute under real torch told it is on a CUDA host (torch.cuda.is_available(),
torch.accelerator.* answer as a CUDA machine does, MPS is absent), and what the torch APIs
receive and what the code ends up holding must be the same.

The APIs that would need a GPU to run are replaced by recorders that write down the arguments
as the API sees them (bound to its parameters, defaults filled in); the rest run for real
(torch.autocast, GradScaler, torch.device, get_default_backend_for_device)."""

import inspect

import pytest
import torch
import torch.distributed
import torch.utils.data
from test_fix_outputs import DEFAULT

from cudalint.fixes import fix_text
from cudalint.python.fixplan import MODULE_NAMES


def _device(value):
    return None if value is None else str(torch.device(value))


def _bound(api, args, kwargs):
    signature = inspect.signature(api)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


@pytest.fixture
def cuda_host(monkeypatch):
    """Real torch answering as a CUDA machine; returns the list the recorders append to."""
    calls = []

    def recorder(effect, summary, result=None):
        def fake(*args, **kwargs):
            calls.append((effect, summary(*args, **kwargs)))
            return result

        return fake

    def tensor(*size, device=None, **_):
        return (size, _device(device))

    def load(*args, **kwargs):
        return _device(_bound(torch.serialization.load, args, kwargs)["map_location"])

    def jit_load(*args, **kwargs):
        return _device(_bound(torch.jit._serialization.load, args, kwargs)["map_location"])

    def cuda_event(enable_timing=False, blocking=False, interprocess=False, **extra):
        return (None, enable_timing, blocking, interprocess, tuple(sorted(extra)))

    def event(device=None, *, enable_timing=False, blocking=False, interprocess=False, **extra):
        return (device, enable_timing, blocking, interprocess, tuple(sorted(extra)))

    def one_device(device=None):
        return _device(device) if not isinstance(device, int) else device

    def loader(dataset, **kwargs):
        pinned = kwargs.get("pin_memory", False)
        # From torch 2.7 pin_memory_device is deprecated: memory is pinned for the current
        # accelerator, which on this host is CUDA, as an empty pin_memory_device always meant.
        return (pinned, kwargs.get("pin_memory_device") or "cuda", kwargs.get("num_workers", 0))

    def backend(*args, **kwargs):
        return kwargs.get("backend", args[0] if args else None)

    patches = {
        (torch.cuda, "is_available"): lambda: True,
        (torch.cuda, "is_bf16_supported"): lambda *args, **kwargs: True,
        (torch.backends.mps, "is_available"): lambda: False,
        (torch.accelerator, "is_available"): lambda: True,
        (torch.accelerator, "current_accelerator"): lambda check_available=False: torch.device("cuda"),
        (torch, "ones"): recorder("tensor", tensor),
        (torch, "zeros"): recorder("tensor", tensor),
        (torch, "load"): recorder("load", load, {}),
        (torch.jit, "load"): recorder("jit load", jit_load, {}),
        (torch.cuda, "Event"): recorder("event", cuda_event),
        (torch, "Event"): recorder("event", event),
        (torch.cuda, "synchronize"): recorder("synchronize", one_device),
        (torch.accelerator, "synchronize"): recorder("synchronize", one_device),
        (torch.cuda, "empty_cache"): recorder("empty_cache", lambda: ()),
        (torch.accelerator, "empty_cache"): recorder("empty_cache", lambda: ()),
        (torch.cuda, "max_memory_allocated"): recorder("max_memory_allocated", one_device, 123),
        (torch.accelerator, "max_memory_allocated"): recorder("max_memory_allocated", one_device, 123),
        (torch.cuda, "set_device"): recorder("set_device", one_device),
        (torch.accelerator, "set_device_index"): recorder("set_device", one_device),
        (torch.cuda, "current_device"): recorder("current_device", lambda: (), 0),
        (torch.accelerator, "current_device_index"): recorder("current_device", lambda: (), 0),
        (torch.utils.data, "DataLoader"): recorder("loader", loader),
        (torch.distributed, "init_process_group"): recorder("init_process_group", backend),
    }
    for (owner, name), value in patches.items():
        monkeypatch.setattr(owner, name, value)
    return calls


def _autocast_state():
    return (torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"), torch.is_autocast_cache_enabled())


def _observe(value):
    """What code can see of a value it holds."""
    if isinstance(value, torch.amp.GradScaler):
        return ("GradScaler", type(value._device).__name__, value._device, value._enabled, value._init_scale)
    if isinstance(value, torch.device):
        return ("device", str(value))
    if isinstance(value, dict):
        return {key: _observe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_observe(item) for item in value)
    return value


def _run(code, calls):
    calls.clear()
    namespace = {"autocast_state": _autocast_state, "__name__": "snippet"}
    exec(compile(code, "snippet", "exec"), namespace)
    held = {name: _observe(value) for name, value in namespace.items() if not name.startswith("__") and name != "autocast_state"}
    held = {name: value for name, value in held.items() if not inspect.ismodule(value) and not callable(value)}
    return list(calls), held


# Every kind of safe fix, as a snippet whose result can be observed.
SAFE_KINDS = [
    ("CDL101 literal", 'import torch\nx = torch.ones(2, device="cuda")\n'),
    ("CDL101 torch.device", 'import torch\nd = torch.device("cuda")\n'),
    ("CDL101 binding", 'import torch\nGPU = "cuda"\nx = torch.zeros(2, device=GPU)\n'),
    ("CDL101 config dict", 'config = dict(device="cuda", lr=0.1)\nother = {"device": "cuda"}\n'),
    ("CDL101 GradScaler", 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'),
    ("CDL104 string", 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'),
    ("CDL104 device", 'import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n'),
    ("CDL104 inside torch.device", 'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'),
    ("CDL105 set_device", "import torch\ntorch.cuda.set_device(1)\nindex = torch.cuda.current_device()\n"),
    ("CDL109 load", 'import torch\nstate = torch.load("m.pt")\nweights = torch.load("w.pt", weights_only=True)\n'),
    ("CDL109 jit load", 'import torch\nmodule = torch.jit.load("m.pt")\n'),
    ("CDL111 is_built", 'import torch\nuse = "mps" if torch.backends.mps.is_built() else "cpu"\n'),
    ("CDL201 synchronize", "import torch\ntorch.cuda.synchronize()\ntorch.cuda.synchronize(device=0)\n"),
    ("CDL202 memory", "import torch\ntorch.cuda.empty_cache()\npeak = torch.cuda.max_memory_allocated()\n"),
    (
        "CDL205 autocast and GradScaler",
        "import torch\nfrom torch.cuda.amp import GradScaler\n\nscaler = GradScaler(1024.0)\nplain = torch.cuda.amp.GradScaler(enabled=True)\n"
        "with torch.cuda.amp.autocast(True):\n    state = autocast_state()\n"
        "with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n    other = autocast_state()\n",
    ),
    ("CDL206 cpu autocast", "import torch\nwith torch.cpu.amp.autocast():\n    state = autocast_state()\n"),
    ("CDL301 pin_memory", "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True)\n"),
    (
        "CDL303 pin_memory_device",
        'import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader([1], pin_memory=True, pin_memory_device="cuda", num_workers=2)\n',
    ),
    ("CDL306 Event", "import torch\nstart = torch.cuda.Event(True)\nend = torch.cuda.Event(enable_timing=True, blocking=True)\n"),
    ("CDL701 backend", 'import torch\nimport torch.distributed as dist\ndist.init_process_group(backend="nccl")\ndist.init_process_group("nccl")\n'),
]


@pytest.mark.parametrize("version", ["2.3", "2.6", "2.13"])
@pytest.mark.parametrize("kind, code", SAFE_KINDS, ids=[kind for kind, _ in SAFE_KINDS])
def test_safe_fix_is_identical_on_cuda(kind, code, version, cuda_host):
    outcome = fix_text("snippet.py", code, DEFAULT, version, unsafe=False)
    assert outcome.error is None
    original_calls, original_held = _run(code, cuda_host)
    fixed_calls, fixed_held = _run(outcome.fixed, cuda_host)
    assert set(fixed_held) - set(original_held) <= set(MODULE_NAMES)  # only the device the fix defines
    assert (fixed_calls, {name: fixed_held[name] for name in original_held}) == (original_calls, original_held), outcome.fixed


def test_every_safe_fix_kind_changes_the_code_at_the_newest_target():
    unchanged = [kind for kind, code in SAFE_KINDS if fix_text("snippet.py", code, DEFAULT, "2.13", unsafe=False).fixed == code]
    assert unchanged == []


def test_the_recorders_tell_a_difference(cuda_host):
    """The comparison can fail: a CPU map_location, a torch.device GradScaler, a dtype landing
    on the wrong autocast parameter are all seen."""
    assert _run('import torch\ns = torch.load("m.pt")\n', cuda_host) != _run('import torch\ns = torch.load("m.pt", map_location="cuda")\n', cuda_host)
    as_string = _run('import torch\ns = torch.amp.GradScaler("cuda")\n', cuda_host)
    assert as_string != _run('import torch\ns = torch.amp.GradScaler(torch.device("cuda"))\n', cuda_host)
    bf16 = "import torch\nwith torch.cuda.amp.autocast(dtype=torch.bfloat16):\n    state = autocast_state()\n"
    assert _run(bf16, cuda_host) != _run("import torch\nwith torch.cuda.amp.autocast():\n    state = autocast_state()\n", cuda_host)
    assert _run("import torch\ne = torch.cuda.Event(True)\n", cuda_host) != _run("import torch\ne = torch.Event(blocking=True)\n", cuda_host)
