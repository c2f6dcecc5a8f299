"""What blind rounds 148 to 157 showed."""

import textwrap

from conftest import findings_of, lint_tree


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


NAME_OF = "import torch\n\n\ndef name_of(i):\n    return torch.cuda.get_device_properties(i).name\n\n\n"


def test_a_helper_called_only_from_a_comprehension_over_the_cuda_devices_is_cuda_only(tmp_path, monkeypatch):
    files = {"pkg/__init__.py": "", "pkg/devices.py": NAME_OF + "def names():\n    return [name_of(i) for i in range(torch.cuda.device_count())]\n"}
    assert lint_tree(tmp_path / "a", monkeypatch, files) == []
    files["pkg/devices.py"] = NAME_OF + "def names(use_cuda):\n    return {i: name_of(i) for i in range(4) if torch.cuda.is_available()}\n"
    assert lint_tree(tmp_path / "b", monkeypatch, files) == []
    # a comprehension over another range calls it on a Mac too
    files["pkg/devices.py"] = NAME_OF + "def names(n):\n    return [name_of(i) for i in range(n)]\n"
    assert lint_tree(tmp_path / "c", monkeypatch, files) == [("pkg/devices.py", "CDL204", 5, 12)]


def test_a_device_chain_that_sets_the_device_or_calls_torch_cuda_turns_mps_away():
    text = '''
    import torch


    class Process:
        def setup(self):
            if self.device_type == "cuda":
                torch.cuda.set_device(self.device)
            elif self.device_type == "cpu":
                torch.set_default_device(self.device)
            else:
                raise ValueError(f"Cannot handle device type {self.device_type}")


    def free_bytes(device, limits):
        if device.type == "cuda":
            return cuda_free_bytes(device)
        elif device.type == "cpu":
            return limits.cpu_bytes
        else:
            raise ValueError(f"unrecognized device type: {device!r}")


    def cuda_free_bytes(device):
        return torch.cuda.mem_get_info(device)[0]


    def kernel(x, limits):
        if x.device.type == "cuda":
            return cuda_free_bytes(x.device)
        elif x.device.type == "cpu":
            return limits.cpu_bytes
        else:
            raise ValueError("no kernel")
    '''
    assert lint(text, {"CDL116"}) == [("CDL116", 11, 13), ("CDL116", 20, 9)]


def test_a_compile_backend_a_cuda_only_package_registers_is_its_import():
    text = '''
    import torch

    BACKEND = "hidet"


    def fast(model, trt=False):
        if trt:
            return torch.compile(model, backend="torch_tensorrt")
        return torch.compile(model, backend=BACKEND, mode="max-autotune-no-cudagraphs")


    optimized = torch._dynamo.optimize("tensorrt")
    portable = torch.compile(torch.nn.Linear(2, 2), backend="inductor")
    '''
    assert sorted(lint(text, {"CDL404"})) == [("CDL404", 3, 11), ("CDL404", 8, 37), ("CDL404", 12, 36)]


def test_an_extra_named_after_the_cuda_package_it_holds_is_for_cuda_machines(tmp_path, monkeypatch):
    pyproject = ('[project]\nname = "x"\nversion = "0.1"\ndependencies = ["torch>=2.4"]\n\n'
                 '[project.optional-dependencies]\nflash4 = ["flash-attn-4"]\nfast = ["flash-attn", "einops"]\nextra = ["xformers"]\n')
    metadata = ("Metadata-Version: 2.1\nName: y\nVersion: 0.1\nRequires-Dist: torch\n"
                "Requires-Dist: flash-attn-4; extra == 'flash4'\nRequires-Dist: xformers; extra == 'all'\nRequires-Dist: rich; extra == 'all'\n")
    assert lint_tree(tmp_path / "a", monkeypatch, {"pyproject.toml": pyproject, "y-0.1.dist-info/METADATA": metadata}) == [
        ("pyproject.toml", "CDL501", 8, 9),
        ("pyproject.toml", "CDL501", 9, 10),
        ("y-0.1.dist-info/METADATA", "CDL501", 6, 16),
    ]


def test_is_cuda_that_only_chooses_an_optimizers_fused_kernels_is_no_finding():
    text = '''
    import torch


    def build(params, lr):
        params = list(params)
        fused = any(p.is_cuda for p in params)
        return torch.optim.AdamW(params, lr=lr, fused=fused, foreach=params[0].is_cuda)


    def place(params):
        on_gpu = any(p.is_cuda for p in params)
        return "gpu" if on_gpu else "cpu", torch.optim.AdamW(params, capturable=on_gpu)
    '''
    assert lint(text, {"CDL103"}) == [("CDL103", 11, 18)]


def test_a_chain_whose_arms_return_torch_values_and_then_raises_turns_mps_away():
    text = '''
    import torch


    def autocast_dtype(device_type: str):
        if device_type == "cuda":
            return torch.float16
        elif device_type == "cpu":
            return torch.bfloat16
        raise ValueError(f"Unsupported device type: {device_type}")


    def ordinal(device_type: str):
        if device_type == "cuda":
            return 0
        elif device_type == "cpu":
            return -1
        raise ValueError(device_type)


    def missing(device_type: str):
        if device_type == "cuda":
            return torch.float16
        elif device_type == "cpu":
            return torch.bfloat16
        raise NotImplementedError(device_type)
    '''
    assert lint(text, {"CDL116"}) == [("CDL116", 9, 5)]


def test_a_dict_literal_only_compared_places_nothing():
    text = '''
    import json


    def verify(path):
        scope = json.load(open(path))["scope"]
        expected = {"device": "cuda:0", "dtype": "float32"}
        if scope != expected:
            raise ValueError("scope differs")
        if scope["output"] != {"device": "cuda:0", "rank": 1}:
            raise ValueError("output differs")
        config = {"device": "cuda:0"}
        if config == scope:
            return config
    '''
    assert lint(text, {"CDL101"}) == [("CDL101", 11, 25)]


def test_a_name_bound_to_a_cuda_api_and_called_only_under_a_guard_is_cuda_only(tmp_path, monkeypatch):
    module = ("import torch\n\n"
              "if hasattr(torch.cuda, 'memory_reserved'):\n    get_reserved = torch.cuda.memory_reserved\n"
              "else:\n    get_reserved = torch.cuda.memory_cached\n\n\n"
              "def available(device):\n    if device.type == 'cuda':\n        return get_reserved(device)\n    return 1 << 30\n")
    assert lint_tree(tmp_path / "a", monkeypatch, {"pkg/__init__.py": "", "pkg/memory.py": module}) == []
    called_anywhere = module + "\n\ndef report():\n    return get_reserved()\n"
    assert lint_tree(tmp_path / "b", monkeypatch, {"pkg/__init__.py": "", "pkg/memory.py": called_anywhere}) == [
        ("pkg/memory.py", "CDL202", 4, 20),
        ("pkg/memory.py", "CDL202", 6, 20),
    ]


def test_a_scaler_turned_off_with_a_false_literal_does_nothing():
    text = '''
    import torch


    def bench(use_amp):
        off = torch.amp.GradScaler(enabled=False)
        maybe = torch.amp.GradScaler(enabled=use_amp)
        return off, maybe
    '''
    assert lint(text, {"CDL207"}) == [("CDL207", 6, 13)]


def test_code_after_a_call_that_raises_without_cuda_runs_only_off_a_mac(tmp_path, monkeypatch):
    module = ("import torch\n\n\ndef _require_cuda():\n    if not torch.cuda.is_available():\n        raise RuntimeError('needs CUDA')\n\n\n"
              "def _case():\n    return torch.ones(2, device='cuda')\n\n\n"
              "def main():\n    _require_cuda()\n    return _case()\n")
    assert lint_tree(tmp_path / "a", monkeypatch, {"smoke.py": module}) == []
    called_first = module.replace("    _require_cuda()\n    return _case()\n", "    x = _case()\n    _require_cuda()\n    return x\n")
    assert lint_tree(tmp_path / "b", monkeypatch, {"smoke.py": called_first}) == [("smoke.py", "CDL101", 10, 33)]


def test_the_device_of_a_function_that_starts_a_process_group_is_the_cpu_on_a_mac():
    text = '''
    import os

    import torch
    from torch.distributed import init_process_group


    def setup_ddp(self):
        if not torch.distributed.is_initialized():
            init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
        if torch.cuda.is_available():
            self.device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}")
        else:
            self.device = torch.device("cpu")


    def train(self, distributed):
        if distributed:
            init_process_group(backend="gloo")
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    '''
    assert lint(text, {"CDL104"}) == [("CDL104", 19, 32)]


def test_a_method_handed_over_from_a_test_skipped_without_cuda_runs_only_off_a_mac(tmp_path, monkeypatch):
    module = ("import pytest\nimport torch\nfrom torch.distributed import launcher\n\n"
              "needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason='cuda')\n\n\n"
              "class TestCheckpoint:\n    def _dist(self):\n        torch.cuda.set_device(0)\n\n"
              "    @needs_cuda\n    def test_dist(self, config):\n        launcher.elastic_launch(config, entrypoint=self._dist)()\n")
    assert lint_tree(tmp_path / "a", monkeypatch, {"tests/test_ckpt.py": module}) == []
    unskipped = module.replace("    @needs_cuda\n", "")
    assert lint_tree(tmp_path / "b", monkeypatch, {"tests/test_ckpt.py": unskipped}) == [("tests/test_ckpt.py", "CDL105", 10, 9)]


def test_float64_handed_to_a_project_class_whose_device_defaults_to_the_cpu_stays_on_the_host(tmp_path, monkeypatch):
    files = {
        "pkg/__init__.py": "from .sim import Simulator, build\n",
        "pkg/sim.py": ("import torch\n\n\nclass Simulator:\n    def __init__(self, n, *, device='cpu', dtype=torch.float32):\n"
                       "        self.x = torch.zeros(n, device=torch.device(device), dtype=dtype)\n\n\n"
                       "def build(n, dtype, device=None):\n    return torch.zeros(n, dtype=dtype, device=device)\n"),
        "examples/run.py": ("import torch\n\nimport pkg\n\n"
                            "a = pkg.Simulator(3, dtype=torch.float64)\nb = pkg.build(3, torch.float64)\n"
                            "c = pkg.Simulator(3, device='mps', dtype=torch.float64)\nd = pkg.build(3, torch.float64, 'mps')\n"),
    }
    assert lint_tree(tmp_path / "a", monkeypatch, files) == [("examples/run.py", "CDL601", 7, 42), ("examples/run.py", "CDL601", 8, 18)]


def test_is_cuda_kept_in_a_name_and_handed_to_a_function_that_only_tests_it_is_a_guard():
    text = '''
    import torch


    def _cuda_kernel(x):
        return x


    def erfi(x):
        is_cuda = x.is_cuda
        if is_cuda:
            return _cuda_kernel(x)
        return dispatch(x, is_cuda=is_cuda)


    def dispatch(x, is_cuda=None):
        return _cuda_kernel(x) if is_cuda else torch.special.erf(x)


    def place(x):
        on_gpu = x.is_cuda
        return record(x, on_gpu)


    def record(x, flag):
        return {"on_gpu": flag, "x": x}
    '''
    assert lint(text, {"CDL103"}) == [("CDL103", 20, 14)]


def test_a_float64_module_constant_a_function_moves_to_the_device_is_seen_moving():
    text = '''
    import torch

    NODES = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64)
    WEIGHTS = torch.tensor([0.5, 0.5], dtype=torch.float32)


    def nodes(device):
        return NODES.to(device), WEIGHTS.to(device)


    def host_nodes():
        return NODES.to("cpu")
    '''
    assert lint(text, {"CDL601", "CDL608"}) == [("CDL608", 8, 12)]


def test_is_cuda_unpacked_and_never_read_changes_nothing():
    text = '''
    import torch.nn.functional as F


    def attend(q, k, v):
        _, heads, q_len, _, is_cuda, device = *q.shape, q.is_cuda, q.device
        return F.scaled_dot_product_attention(q, k, v)


    def place(q):
        _, on_gpu = q.shape, q.is_cuda
        return on_gpu
    '''
    assert lint(text, {"CDL103"}) == [("CDL103", 10, 26)]


def test_ddp_device_ids_of_the_current_cuda_device_is_one_finding():
    text = '''
    import torch
    from torch.nn.parallel import DistributedDataParallel


    def wrap(model):
        return DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])


    def index():
        return torch.cuda.current_device()
    '''
    assert lint(text, {"CDL105", "CDL707"}) == [("CDL707", 6, 43), ("CDL105", 10, 12)]


def test_a_module_whose_package_imports_tensorrt_first_runs_only_where_it_loads(tmp_path, monkeypatch):
    timing = "import torch\n\n\ndef bench(f, *args):\n    torch.cuda.synchronize()\n    return f(*args)\n"
    files = {"pkg/__init__.py": "", "pkg/fx/__init__.py": "import tensorrt as trt\n", "pkg/fx/timing.py": timing, "pkg/other.py": timing}
    assert lint_tree(tmp_path / "a", monkeypatch, files) == [("pkg/fx/__init__.py", "CDL404", 1, 1), ("pkg/other.py", "CDL201", 5, 5)]


def test_a_default_every_call_passes_in_a_package_of_examples_is_never_used(tmp_path, monkeypatch):
    infer = ("import torch\n\n\ndef run(model, device_type='cuda'):\n    return model.to(device_type)\n\n\n"
             "def main(model, args):\n    return run(model, device_type=args.device)\n")
    files = {"pkg/__init__.py": "", "pkg/downstream_examples/__init__.py": "", "pkg/downstream_examples/infer.py": infer}
    assert lint_tree(tmp_path / "a", monkeypatch, files) == []
    files["pkg/core/__init__.py"] = ""
    files["pkg/core/infer.py"] = infer
    assert lint_tree(tmp_path / "b", monkeypatch, files) == [("pkg/core/infer.py", "CDL108", 4, 28)]


def test_a_process_group_started_with_nccl_alone_leaves_the_device_choice_a_finding():
    text = '''
    import torch


    def train(rank, world_size):
        torch.distributed.init_process_group(backend="nccl", rank=rank, world_size=world_size)
        device = torch.device("cuda", rank) if torch.cuda.is_available() else torch.device("cpu")
        return device
    '''
    assert lint(text, {"CDL104"}) == [("CDL104", 6, 14)]
