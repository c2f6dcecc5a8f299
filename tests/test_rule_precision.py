"""Rule policies that real code showed are needed (issue 11): what each rule reports and what it
no longer reports, pinned by exact code, line and column; and which rules left the default set."""

import json
import textwrap

import pytest

from conftest import findings_of, run_cli, triples
from cudalint.catalog import load_catalog

CATALOG = load_catalog()


def lint(source: str, select=None, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select, torch_version="2.13", **kwargs))


# -- rules out of the default set, each with the PyTorch source it rests on ---------------------
@pytest.mark.parametrize("code", ["CDL209", "CDL211", "CDL308", "CDL703", "CDL704"])
def test_inert_off_cuda_rules_leave_the_default_set_with_their_provenance(code):
    rule = CATALOG[code]
    assert rule.default is False
    assert rule.provenance.startswith(("torch/", "PyTorch docs"))
    assert f"Source: {rule.provenance}" in rule.explain()


def test_default_run_no_longer_reports_inert_flags_but_select_still_does(tmp_path):
    (tmp_path / "train.py").write_text(
        "import os\n"
        "import torch\n"
        'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n'
        "torch.backends.cudnn.deterministic = True\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        'model = torch.compile(torch.nn.Linear(2, 2), mode="reduce-overhead")\n'
        "wrapped = torch.nn.DataParallel(model)\n",
        encoding="utf-8",
    )
    quiet = run_cli("check", "--no-cache", "train.py", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout) == (0, "All clear: 1 file checked, target torch 2.15 (newest release cudalint knows).\n")
    loud = run_cli("check", "--no-cache", "--select", "CDL209,CDL211,CDL308,CDL703,CDL704", "--format", "json", "train.py", cwd=tmp_path)
    assert loud.returncode == 1
    assert [(d["code"], d["line"], d["column"]) for d in json.loads(loud.stdout)] == [
        ("CDL308", 3, 12),
        ("CDL209", 4, 1),
        ("CDL211", 5, 1),
        ("CDL704", 6, 46),
        ("CDL703", 7, 11),
    ]


# -- CDL703: only wrapping a model is reported, not naming the class ----------------------------
def test_data_parallel_named_in_isinstance_is_no_finding():
    assert lint(
        """
        import torch
        from torch.nn import DataParallel
        OPTIONS = (torch.nn.parallel.DistributedDataParallel, torch.nn.DataParallel)
        def unwrap(model):
            while isinstance(model, OPTIONS) or isinstance(model, (DataParallel,)):
                model = model.module
            return model
        def wrap(model):
            return torch.nn.DataParallel(model)
        def wrap_again(model):
            return DataParallel(model, device_ids=[0])
        """,
        select=["CDL703"],
    ) == [("CDL703", 9, 12), ("CDL703", 11, 12)]


# -- CDL204: a query is reported where it is called, not where it is saved or patched -----------
def test_bf16_query_saved_or_monkeypatched_is_no_finding():
    assert lint(
        """
        import torch
        old_is_bf16_supported = torch.cuda.is_bf16_supported
        def is_bf16_supported(including_emulation=False):
            return old_is_bf16_supported(including_emulation)
        torch.cuda.is_bf16_supported = is_bf16_supported
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        name = torch.cuda.get_device_name(0)
        """
    ) == [("CDL204", 6, 27), ("CDL204", 7, 8)]


# -- CDL203: CUDA seeding after the global seed, anywhere earlier in the same function -----------
def test_cuda_seed_after_the_global_seed_in_the_same_function_is_no_finding():
    assert lint(
        """
        import random
        import numpy as np
        import torch
        def set_seed(seed, xpu):
            random.seed(seed)
            np.random.seed(seed)
            torch.manual_seed(seed)
            torch.cuda.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)
            if xpu:
                torch.xpu.manual_seed_all(seed)
            else:
                torch.cuda.manual_seed_all(seed)
        def seed_cuda_only(seed):
            torch.cuda.manual_seed(seed)
            torch.manual_seed(seed)
        def seed_if(seed, flag):
            if flag:
                torch.manual_seed(seed)
            torch.cuda.manual_seed_all(seed)
        def outer(seed):
            torch.manual_seed(seed)
            def inner():
                torch.cuda.manual_seed(seed)
            return inner
        """,
        select=["CDL203"],
    ) == [("CDL203", 20, 5), ("CDL203", 24, 9)]  # seed_cuda_only: the global seed that follows seeds CUDA's too


def test_cuda_seed_after_a_global_seed_in_a_try_body_is_no_finding():
    # The body of a `try:` or `with` runs as a bare statement does (unless it raises); a handler does not.
    assert lint(
        """
        import torch
        def set_seed(s):
            try: torch.manual_seed(s)
            except NameError: pass
            try: torch.cuda.manual_seed_all(s)
            except NameError: pass
        def in_with(s, lock):
            with lock:
                torch.manual_seed(s)
            torch.cuda.manual_seed_all(s)
        def in_handler(s):
            try:
                pass
            except ValueError:
                torch.manual_seed(s)
            torch.cuda.manual_seed_all(s)
        """,
        select=["CDL203"],
    ) == [("CDL203", 16, 5)]


def test_cuda_seed_after_the_global_seed_at_module_level_is_no_finding():
    assert lint(
        """
        import torch
        from torch import random as trandom
        trandom.manual_seed(0)
        if torch.cuda.is_available() or True:
            torch.cuda.manual_seed_all(0)
        torch.cuda.get_rng_state()
        """,
        select=["CDL203"],
    ) == [("CDL203", 6, 1)]


# -- CDL103: an attribute the program stores under the name is_cuda ----------------------------
def test_is_cuda_as_an_assignment_target_is_no_finding():
    assert lint(
        """
        import torch
        class Loader:
            def __init__(self, device):
                self.is_cuda = torch.cuda.is_available() and device.type == "cuda"
                self.is_cuda: bool = False
            def check(self, x):
                assert x.is_cuda
        """,
        select=["CDL103"],
    ) == [("CDL103", 7, 16)]


# -- CDL407: the boundary is where another package reaches into a kernel module ---------------
def test_import_chain_between_siblings_of_one_package_is_left_to_cdl404():
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
        "pkg/__init__.py": "",
        "pkg/kernels/__init__.py": "from pkg.kernels.norm import fwd\nfrom .swiglu import act\n",
        "pkg/kernels/norm.py": "import triton\n\ndef fwd(x):\n    return x\n",
        "pkg/kernels/swiglu.py": "import triton\n\ndef act(x):\n    return x\n",
        "pkg/kernels/lora.py": "from pkg.kernels.swiglu import act\n",
        "pkg/models/__init__.py": "",
        "pkg/models/_utils.py": "import xformers\n",
        "pkg/models/llama.py": "from ._utils import *\nfrom pkg.kernels.norm import fwd\n",
    }
    assert lint("from pkg.models import llama\n", path="pkg/cli.py", project_files=files) == []
    for path, expected in {
        "pkg/kernels/__init__.py": [],
        "pkg/kernels/lora.py": [],
        "pkg/models/llama.py": [("CDL407", 2, 1)],  # models reaches into kernels: the boundary
    }.items():
        assert lint(files[path], path=path, project_files=files, select=["CDL407"]) == expected, path


def test_the_cdl407_example_still_reports_across_packages():
    rule = CATALOG["CDL407"]
    assert lint(rule.bad, project_files=dict(rule.example_files), select=["CDL407"]) == [("CDL407", 1, 1)]


# -- CDL102 / CDL302: a class's own cuda() / pin_memory() forwarding to its parts -------------
def test_forwarding_methods_are_no_finding_their_callers_are():
    assert lint(
        """
        import torch
        class Batch:
            def __init__(self, data):
                self.data = data
            def pin_memory(self):
                self.data = self.data.pin_memory()
                return self
            def cuda(self):
                return Batch(torch.as_tensor(self.data).cuda())
            def to_gpu(self):
                fn = lambda: self.data.cuda()
                return self.data.cuda(), fn
        def cuda(x):
            return x.cuda()
        batch = Batch(torch.ones(2)).pin_memory().cuda()
        """,
        select=["CDL102", "CDL302"],
    ) == [("CDL102", 11, 32), ("CDL102", 12, 26), ("CDL102", 14, 14), ("CDL302", 15, 30), ("CDL102", 15, 43)]


def test_a_method_that_takes_the_tensor_to_pin_is_an_api_that_pins():
    assert lint(
        """
        class Accelerator:
            def pin_memory(self, tensor, align_bytes=1):
                return tensor.pin_memory()
            def cuda(self, device=None):
                return self.module.cuda()
        """,
        select=["CDL102", "CDL302"],
    ) == [("CDL302", 3, 23)]


# -- messages say what the call does without CUDA at the target release -------------------------
def test_memory_and_seed_messages_say_silent_or_raising():
    found = findings_of(
        "import torch\n"
        "torch.cuda.empty_cache()\n"
        "used = torch.cuda.memory_allocated()\n"
        "free, total = torch.cuda.mem_get_info()\n"
        "torch.cuda.manual_seed_all(0)\n",
        torch_version="2.9",
    )
    assert [(f.code, f.line, f.column, f.message) for f in found] == [
        ("CDL202", 2, 1, "torch.cuda.empty_cache does nothing without CUDA (torch/cuda/memory.py: only once CUDA is "
         "initialized), so the MPS cache is never freed; use torch.accelerator.empty_cache() under an is_available() "
         "check (torch >= 2.9)"),
        ("CDL202", 3, 8, "torch.cuda.memory_allocated returns 0 without CUDA (torch/cuda/memory.py: empty statistics "
         "until CUDA is initialized), so on MPS it reports nothing; use torch.accelerator.memory_allocated() (torch >= 2.9)"),
        ("CDL202", 4, 15, "torch.cuda.mem_get_info is CUDA-only; use torch.accelerator.get_memory_info() (torch >= 2.10)"),
        ("CDL203", 5, 1, "torch.cuda.manual_seed_all does nothing without CUDA (torch/cuda/random.py queues it until "
         "CUDA initializes), so it seeds nothing on MPS; use torch.manual_seed(s)"),
    ]


# -- CDL403: only what fails on None is reported, as CDL216 does for torch.version.cuda ----------
def test_cuda_home_tested_stored_or_printed_is_no_finding_joined_it_is():
    assert lint(
        """
        import os
        from pathlib import Path
        import torch.utils.cpp_extension
        from torch.utils.cpp_extension import CUDA_HOME
        if CUDA_HOME is None:
            print(f"no CUDA toolkit: CUDA_HOME={CUDA_HOME}")
        cuda_home = torch.utils.cpp_extension.CUDA_HOME
        available = torch.utils.cpp_extension.CUDA_HOME is not None and bool(CUDA_HOME)
        version = read_version(CUDA_HOME)
        lib = os.path.join(torch.utils.cpp_extension.CUDA_HOME, "lib64")
        nvcc = CUDA_HOME + "/bin/nvcc"
        include = Path(CUDA_HOME) / "include"
        root = CUDA_HOME.rstrip("/")
        """,
        select=["CDL403"],
    ) == [("CDL403", 10, 20), ("CDL403", 11, 8), ("CDL403", 12, 16), ("CDL403", 13, 8)]


def test_cuda_home_messages_name_the_misuse():
    found = findings_of('import os\nfrom torch.utils.cpp_extension import CUDA_HOME\nlib = os.path.join(CUDA_HOME, "lib")\n', select=["CDL403"])
    assert [f.message for f in found] == [
        "os.path.join(CUDA_HOME) fails without a CUDA toolkit (every Mac), where CUDA_HOME is None; build a CPU-only variant then"
    ]


def test_cuda_profiler_activity_message_says_it_records_nothing():
    found = findings_of(
        "from torch.profiler import ProfilerActivity, profile\nwith profile(activities=[ProfilerActivity.CUDA]):\n    pass\n",
        select=["CDL213"],
    )
    assert [(f.code, f.line, f.column, f.message) for f in found] == [
        ("CDL213", 2, 26, 'torch.profiler.ProfilerActivity.CUDA records nothing without CUDA (torch/autograd/profiler.py '
         'warns "CUDA is not available, disabling CUDA profiling" and profiles the CPU only); use '
         "torch.profiler.supported_activities()"),
    ]


def test_the_cuda_runtime_bindings_raise_without_cuda():
    # cleanrl's async PPO pins its shared buffers through the CUDA runtime at the top of the script.
    source = ("import torch\nfrom torch.cuda import cudart\n\nrt = torch.cuda.cudart()\nrt.cudaHostRegister(0, 8, 0)\n"
              "cudart().cudaProfilerStart()\nif torch.cuda.is_available():\n    torch.cuda.cudart().cudaProfilerStop()\n")
    found = findings_of(source, select=["CDL213"])
    assert triples(found) == [("CDL213", 4, 6), ("CDL213", 6, 1)]
    assert found[0].message == (
        "torch.cuda.cudart initializes CUDA and returns NVIDIA's runtime bindings (torch/cuda/__init__.py), so it raises "
        "without CUDA; use torch.profiler.profile() to profile; other runtime calls (cudaHostRegister) need a CUDA guard")


def test_an_api_named_only_to_compare_with_is_no_finding():
    found = triples(findings_of(textwrap.dedent(
        """
        import torch
        from torch.profiler import ProfilerActivity


        def sort_key(activities, x):
            cuda = ProfilerActivity.CUDA in activities
            wide = x.dtype in (torch.float64, torch.double) or x.dtype == torch.float64
            return [ProfilerActivity.CUDA], cuda, wide
        """
    ).lstrip("\n")))
    assert found == [("CDL213", 8, 13)]


def test_a_cuda_device_built_only_to_compare_with_is_no_placement():
    source = """
        import torch as th


        def seed(self, seed, device):
            using_cuda = self.device.type == th.device("cuda").type
            if device == th.device("cuda"):
                th.manual_seed(seed)
            if th.device("cuda:1").index != device.index:
                return using_cuda
            moved = th.zeros(1).to(th.device("cuda").type)
            chosen = th.device("cuda")
            return moved, chosen
        """
    assert lint(source, select={"CDL101"}) == [("CDL101", 10, 38), ("CDL101", 11, 24)]


def test_device_selection_with_returns_or_a_default_before_the_test_is_reported():
    source = """
        import torch


        def early_return():
            if torch.cuda.is_available():
                return torch.device("cuda", index=0)
            return torch.device("cpu")


        def default_first():
            device = "cpu"
            if torch.cuda.is_available():
                device = "cuda"
            return device


        def returns_in_both_branches():
            if torch.cuda.is_available():
                return "cuda"
            else:
                return "cpu"


        def with_mps():
            if torch.cuda.is_available():
                return "cuda"
            elif torch.backends.mps.is_available():
                return "mps"
            return "cpu"


        def other_name_before():
            fallback = "cpu"
            if torch.cuda.is_available():
                device = "cuda"
            return device, fallback


        def falls_through():
            if torch.cuda.is_available():
                print("cuda")
            return "cpu"
        """
    assert lint(source, select={"CDL104"}) == [("CDL104", 5, 5), ("CDL104", 12, 5), ("CDL104", 18, 5)]


def test_device_selection_through_a_local_helper_that_returns_a_cuda_device_is_reported():
    source = """
        import os
        import torch
        from torch import device as Device


        def default_device():
            if torch.cuda.is_available():
                return cuda_device()
            return Device("cpu")


        def cuda_device():
            rank = os.getenv("LOCAL_RANK")
            if rank is None:
                return Device("cuda", index=0)
            return Device("cuda", index=int(rank))


        def unknown_choice(pick):
            if torch.cuda.is_available():
                return pick()
            return "cpu"
        """
    assert lint(source, select={"CDL104"}) == [("CDL104", 7, 5)]


def test_device_selection_with_a_nested_choice_in_the_cuda_branch_is_reported():
    source = """
        import torch


        def init_device(args):
            if torch.cuda.is_available():
                if args.distributed:
                    device = "cuda:%d" % args.local_rank
                else:
                    device = "cuda:0"
                torch.cuda.set_device(device)
            else:
                device = "cpu"
            return device


        def nested_mps(args):
            if torch.cuda.is_available():
                if args.prefer_mps and torch.backends.mps.is_available():
                    device = "mps"
                else:
                    device = "cuda"
            else:
                device = "cpu"
            return device
        """
    assert lint(source, select={"CDL104"}) == [("CDL104", 5, 5)]


def test_float64_made_on_the_default_device_is_reported_only_as_module_state():
    source = """
        import torch
        from torch import nn


        def schedule(n):
            return torch.linspace(0, 1, n, dtype=torch.float64)


        TABLE = torch.tensor([1 / 5, 3 / 10], dtype=torch.float64)
        A = [[1 / 5], [3 / 40, 9 / 40]]
        A = torch.tensor(A, dtype=torch.float64)
        MID = [0] * 4
        MID = torch.tensor(MID, dtype=torch.float64)
        EPSILON = torch.finfo(torch.float64).eps
        TABLEAU = [[0.5], [0.25, 0.25]]
        ROWS = [torch.tensor(row, dtype=torch.float64) for row in TABLEAU] + [torch.tensor(r, dtype=torch.float64) for r in [[0.5]]]
        LOADED = [torch.tensor(row, dtype=torch.float64) for row in load()]


        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.register_buffer("betas", torch.linspace(0, 1, n, dtype=torch.float64))
                self.weight = nn.Parameter(torch.zeros(n, dtype=torch.float64))

            def forward(self, x, data):
                copied = torch.tensor(data, dtype=torch.float64)
                wide = x.to(torch.float64)
                return copied, wide


        class Metric:
            def __init__(self, n):
                self.add_state("iou_sum", default=torch.zeros(n, dtype=torch.double), dist_reduce_fx="sum")
        """
    assert lint(source, select={"CDL601"}) == [
        ("CDL601", 17, 35), ("CDL601", 23, 69), ("CDL601", 24, 57), ("CDL601", 27, 43), ("CDL601", 28, 21),
        ("CDL601", 34, 64),
    ]


def test_is_cuda_kept_in_a_name_that_is_only_tested_is_a_guard():
    source = """
        class Attend:
            def forward(self, q, k):
                _, heads, q_len, k_len, is_cuda, device = *q.shape, k.shape[-2], q.is_cuda, q.device
                return self.cuda_config if is_cuda else self.cpu_config


        def search(query, gpus):
            is_cuda = query.is_cuda
            return run(query, is_cuda, gpus)


        def pick(x):
            on_gpu = x.is_cuda
            if not on_gpu:
                raise ValueError("needs CUDA")
            return x


        def trim(x):
            fast = x.is_cuda
            while fast and x.numel():
                x = x[1:]
            return x


        def contract(x, fused, kernel):
            ok = fused and x.is_cuda and kernel is not None
            if ok:
                return kernel(x)
            return x * 2


        def either(x, fused):
            ok = fused or x.is_cuda
            return x if ok else x * 2
        import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
        """
    # a conjunct of an `and` kept in a name is true only where the attribute is; an `or` says nothing so
    assert lint(source, select={"CDL103"}) == [("CDL103", 8, 15), ("CDL103", 13, 14), ("CDL103", 34, 19)]


def test_a_load_of_the_same_file_the_function_maps_elsewhere_is_reported():
    source = """
        import torch


        def load_model(model, path, device):
            try:
                model.load_state_dict(torch.load(path, map_location=device))
            except KeyError:
                state = torch.load(path)
                model.load_state_dict(state)


        def resume(path, device):
            weights = torch.load(path, map_location=device)
            counters = torch.load(path + ".steps")
            return weights, counters

        """
    assert lint(source, select={"CDL109"}) == [("CDL109", 8, 17)]


def test_a_float64_tensor_registered_as_module_state_is_a_move():
    source = """
        import torch
        from torch import nn


        class Diffusion(nn.Module):
            def __init__(self, n):
                super().__init__()
                betas = torch.linspace(1e-4, 0.02, n, dtype=torch.float64)
                self.register_buffer("betas", betas)
                self.register_buffer("narrowed", betas.float())
                self.register_buffer("direct", torch.zeros(n, dtype=torch.float64))
        """
    assert lint(source, select={"CDL601", "CDL608"}) == [("CDL608", 9, 9), ("CDL608", 11, 9)]


def test_a_float64_parameter_moves_with_its_module():
    source = """
        import torch
        from torch import nn


        class Scale(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(n, dtype=torch.float64))
                self.narrow = nn.Parameter(torch.ones(n, dtype=torch.float64).float())
        """
    assert lint(source, select={"CDL601", "CDL608"}) == [("CDL608", 8, 23)]


def test_a_float64_tensor_made_on_a_named_cpu_device_stays_on_the_host():
    source = """
        import torch


        def affine(matrix, device):
            host = torch.device("cpu")
            eye = torch.eye(4, device=torch.device("cpu"), dtype=torch.float64)
            kept = torch.as_tensor(matrix, device=host, dtype=torch.float64)
            moved = torch.ones(4, device=device, dtype=torch.float64)
            return eye, kept, moved
        """
    assert lint(source, select={"CDL601", "CDL608"}) == [("CDL608", 8, 13)]


def test_a_cuda_class_tested_against_with_isinstance_is_not_a_use():
    # isinstance/issubclass's class argument is a test of what the code has, as a comparison is; so is a
    # dict keyed by the class, a type registered for objects of it (a lookup with it is a use:
    # tests/test_type_positions.py).
    source = """
        import torch

        SAVERS = {torch.nn.Module: "module", torch.cuda.amp.GradScaler: "scaler"}


        def kind(x):
            if isinstance(x, (torch.cuda.Event, torch.cuda.amp.GradScaler)):
                return issubclass(type(x), torch.cuda.Stream)
            return isinstance(torch.cuda.Stream(), object)
        """
    assert lint(source, select={"CDL205", "CDL305", "CDL306"}) == [("CDL305", 9, 23)]


def test_double_on_a_tensor_the_code_shows_on_the_cpu_is_no_finding():
    source = """
        import torch


        def convert(X, a, device):
            host = X.cpu().detach().contiguous().double().clone().numpy()
            shared = torch.from_numpy(a).double()
            moved = X.to("cpu").double()
            literal = torch.tensor([1.0, 2.0]).double()
            kept = X.detach().double()
            placed = X.to(device).double()
            return host, shared, moved, literal, kept, placed
        """
    assert lint(source, select={"CDL602"}) == [("CDL602", 9, 23), ("CDL602", 10, 27)]


def test_a_cast_to_float64_of_a_tensor_on_the_cpu_is_no_finding():
    source = """
        import torch


        def widen(x):
            host = x.cpu().detach().to(torch.float64)
            kept = x.detach().to(torch.float64)
            return host, kept
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 6, 26)]


def test_float64_data_from_numpy_is_made_on_the_host():
    # NumPy arrays live in host memory: torch.tensor of one, with no device, builds on the CPU.
    source = """
        import numpy as np
        import torch


        def matrices(image, centre, moved, device):
            offset = np.asarray(image.center) - np.asarray(centre)
            host = torch.tensor(offset, dtype=torch.float64)
            grid = torch.as_tensor(np.linspace(0, 1, 5) * 2, dtype=torch.float64)
            back = torch.tensor(moved.cpu().numpy(), dtype=torch.float64)
            mixed = torch.tensor(offset * moved, dtype=torch.float64)
            given = torch.tensor(moved, dtype=torch.float64)
            placed = torch.tensor(offset, dtype=torch.float64, device=device)
            return host, grid, back, mixed, given, placed
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 10, 48), ("CDL601", 11, 39), ("CDL601", 12, 41)]


def test_legacy_cpu_tensor_types_and_python_numbers_build_on_the_host():
    # torch.DoubleTensor is the CPU type of float64; time.time() and math.pi are Python numbers.
    source = """
        import math
        import time
        import torch


        def state(weights, device):
            sampled = torch.DoubleTensor(weights)
            stamp = torch.tensor(time.time(), dtype=torch.float64)
            angle = torch.tensor(math.pi / 2, dtype=torch.float64)
            moved = torch.DoubleTensor(weights).cuda()
            cast = weights.type(torch.DoubleTensor)
            return sampled, stamp, angle, moved, cast
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 10, 13), ("CDL601", 11, 25)]


def test_a_tensor_of_a_python_sequence_built_by_a_builtin_is_made_on_the_host():
    # torch.tensor of a list or tuple (not of a tensor) is made on the default device, the CPU.
    source = """
        import torch


        def features(fixed, X):
            values = torch.tensor(list(fixed.values()), dtype=torch.double)
            ordered = torch.tensor(sorted(fixed), dtype=torch.float64)
            pairs = torch.tensor(tuple(fixed.items()), dtype=torch.float64, device=X.device)
            return values.to(X), ordered, pairs


        def shadowed(fixed, list):
            return torch.tensor(list(fixed), dtype=torch.float64)
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 7, 54), ("CDL601", 12, 44)]


def test_a_tensor_of_an_array_compared_with_a_string_is_made_on_the_host():
    # `labels == "*"` of a NumPy array is an array of bools: torch.tensor of it is made on the CPU.
    source = """
        import numpy as np
        import torch


        def write(x, alphabet):
            labels = np.array(list(alphabet) + [""])
            stops = torch.tensor(labels == "*", dtype=torch.double)
            maybe = torch.tensor(x == "*", dtype=torch.double)
            mixed = torch.tensor(labels == x, dtype=torch.double)
            return stops, maybe, mixed
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 8, 42), ("CDL601", 9, 45)]


def test_a_float64_dtype_handed_to_a_function_of_the_file_that_takes_device_none_stays_on_the_host():
    # torch's convention: device=None is the default device, the CPU; given a device (or a spread that
    # may hold one, or a function whose own default is an accelerator) the tensor may be on the device.
    source = """
        import torch


        def change_basis(l, dtype=None, device=None):
            return torch.eye(2 * l + 1, dtype=dtype, device=device)


        def nj(*irreps, filter_ir_mid=None, dtype=None, device=None):
            return [torch.eye(2, dtype=dtype, device=device) for _ in irreps]


        def placed(l, dtype=None, device="cuda"):
            return torch.eye(l, dtype=dtype, device=device)


        def clebsch(l1, l2, device, extra):
            q1 = change_basis(l1, dtype=torch.float64)
            q2 = change_basis(l2, dtype=torch.float64, device=device)
            q3 = change_basis(l2, torch.float64, device)
            q4 = change_basis(l2, dtype=torch.float64, **extra)
            q5 = nj(*extra, filter_ir_mid=None, dtype=torch.float64)
            q6 = placed(l1, dtype=torch.float64)
            return q1, q2, q3, q4, q5, q6
        """
    assert lint(source, select={"CDL601"}) == [("CDL601", 18, 33), ("CDL601", 19, 27), ("CDL601", 20, 33), ("CDL601", 22, 27)]


def test_checkpoint_device_states_are_reported_where_they_raise_on_mps():
    # torch/utils/checkpoint.py: get_device_states enters torch.mps.device(), which torch.mps lacks.
    source = """
        import torch
        from torch.utils.checkpoint import get_device_states


        class RandContext:
            def __init__(self, *tensors):
                self.cpu_state = torch.get_rng_state()
                self.devices, self.states = get_device_states(*tensors)
                self.again = torch.utils.checkpoint.get_device_states(*tensors)
        """
    assert lint(source, select={"CDL203"}) == [("CDL203", 8, 37), ("CDL203", 9, 22)]


def test_a_backend_choice_that_gives_the_cpu_gloo_is_no_nccl_finding():
    # A Mac runs collectives on CPU tensors only; a choice that gives the CPU gloo serves it.
    source = """
        import torch.distributed as dist


        def setup(cfg, device):
            dist.init_process_group(backend="gloo" if cfg.device == "cpu" else "nccl")
            backend = "nccl" if device.type != "cpu" else "gloo"
            dist.init_process_group(backend)
            dist.new_group(backend="nccl" if "cpu" != device.type else "gloo")
            dist.init_process_group(backend="nccl" if cfg.fast else "gloo")
            dist.init_process_group(backend="nccl" if device.type == "cpu" else "gloo")
        """
    assert lint(source, select={"CDL701"}) == [("CDL701", 9, 37), ("CDL701", 10, 37)]


def test_is_cuda_asserted_false_is_no_finding():
    # `assert not y.is_cuda` holds for every tensor a Mac has (CPU or MPS).
    source = """
        import torch


        def check(net, x, case):
            y = net(x)
            assert not y.is_cuda
            assert not y.is_cuda and y.dtype == torch.float32
            case.assertFalse(y.is_cuda)
            assert y.is_cuda
            return y
        """
    assert lint(source, select={"CDL103"}) == [("CDL103", 9, 12)]


def test_a_device_for_the_tensors_of_a_collective_may_fall_back_to_the_cpu():
    # gloo, the only backend a Mac has, takes CPU tensors: CPU is the right fallback there.
    source = """
        import torch
        import torch.distributed as dist


        def hostnames(name, world_size):
            device = "cpu"
            if torch.cuda.is_available():
                device = f"cuda:{torch.cuda.current_device()}"
            name = name.to(device)
            out = [torch.zeros_like(name) for _ in range(world_size)]
            dist.all_gather(out, name)
            return out


        def total(x):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            t = torch.tensor([x], device=device)
            dist.all_reduce(t)
            return t.item()


        def model_device():
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """
    assert lint(source, select={"CDL104"}) == [("CDL104", 23, 25)]


# -- code that runs only where the package of a device type no Mac has imports (torch_xla) ---------
XLA_STRATEGY = """
import torch
from lightning_utilities.core.imports import RequirementCache

_XLA_AVAILABLE = RequirementCache("torch_xla>=1.13", "torch_xla")
_RICH_AVAILABLE = RequirementCache("rich>=10.2.2")


class XLAStrategy:
    def __init__(self):
        if not _XLA_AVAILABLE:
            raise ModuleNotFoundError(str(_XLA_AVAILABLE))

    def load_checkpoint(self, path):
        return torch.load(path)


class RichStrategy:
    def __init__(self):
        if not _RICH_AVAILABLE:
            raise ModuleNotFoundError(str(_RICH_AVAILABLE))

    def load_checkpoint(self, path):
        return torch.load(path)


def reduce(tensor):
    import torch_xla.core.xla_model as xm

    torch.cuda.synchronize()
    return xm.mesh_reduce("loss", tensor, sum)


def step(model, batch):
    if _XLA_AVAILABLE:
        torch.cuda.empty_cache()
    return model(batch.cuda())
"""


def test_code_that_needs_torch_xla_never_runs_on_a_mac():
    # The XLA strategy's constructor raises without torch_xla, the rest of reduce() runs only after its
    # import, the branch only where it imports: none runs on a Mac. The same shapes around another
    # package (rich installs on a Mac) and the unguarded .cuda() are still reported.
    assert lint(XLA_STRATEGY) == [("CDL109", 23, 16), ("CDL102", 36, 24)]


def test_torch_xla_availability_from_another_module_of_the_project(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "avail.py").write_text(
        "from lightning_utilities.core.imports import RequirementCache\n\n"
        '_XLA_AVAILABLE = RequirementCache("torch_xla>=1.13", "torch_xla")\n'
        '_RICH_AVAILABLE = RequirementCache("rich>=10.2.2")\n'
    )
    (package / "strategy.py").write_text(
        "import torch\n\nfrom pkg.avail import _RICH_AVAILABLE, _XLA_AVAILABLE\n\n\n"
        "class XLAStrategy:\n    def __init__(self):\n        if not _XLA_AVAILABLE:\n            raise ModuleNotFoundError()\n\n"
        "    def load_checkpoint(self, path):\n        return torch.load(path)\n\n\n"
        "class RichStrategy:\n    def __init__(self):\n        if not _RICH_AVAILABLE:\n            raise ModuleNotFoundError()\n\n"
        "    def load_checkpoint(self, path):\n        return torch.load(path)\n"
    )
    result = run_cli("check", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    found = [(f["path"], f["code"], f["line"], f["column"]) for f in json.loads(result.stdout)]
    assert found == [("pkg/strategy.py", "CDL109", 21, 16)]


def test_importing_torch_xla_is_no_finding_itself():
    assert lint("import torch_xla\nimport torch_xla.core.xla_model as xm\n\nDEVICE = xm.xla_device()\n") == []


def test_float64_of_what_a_call_loads_or_makes_on_the_cpu_is_no_finding():
    # map_location= or device= naming the host puts what the call returns there; a name bound only to
    # such values (or to a cast of itself) is on the host, unless a statement moves it in place first.
    source = """
        import torch
        from pkg import load_model


        def load(path, device):
            a = torch.load(path, map_location="cpu").to(torch.float64)
            b = load_model(path, device=torch.device("cpu")).to(torch.float64)
            c = torch.load(path, map_location=torch.device("cpu"))
            c = c.double()
            d = torch.load(path, map_location="cpu")
            d.to(device)
            e = load_model(path, device=device).to(torch.float64)
            return a, b, c, d.double(), e
        """
    assert lint(source, select={"CDL601", "CDL602"}) == [("CDL601", 12, 44), ("CDL602", 13, 23)]


def test_cuda_seed_that_a_later_global_seed_of_its_block_repeats_is_no_finding():
    assert lint(
        """
        import numpy as np
        import torch
        def run(seed):
            np.random.seed(seed)
            torch.cuda.manual_seed_all(seed)
            torch.random.manual_seed(seed)
        def later_elsewhere(seed, flag):
            torch.cuda.manual_seed(seed)
            if flag:
                torch.manual_seed(seed)
        """,
        select=["CDL203"],
    ) == [("CDL203", 8, 5)]
