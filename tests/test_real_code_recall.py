"""Patterns porting reviewers flag in real code that the rules used to miss, and the
look-alikes that must stay quiet; each pinned by exact code, line and column."""

import textwrap

from conftest import findings_of, triples


def lint(source: str, select=None, **kwargs):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select, torch_version="2.13", **kwargs))


# -- CDL205: the from-import of a torch.cuda.amp API is where a port names the portable one -----
def test_from_import_of_a_cuda_amp_decorator_is_reported_with_its_uses():
    assert lint(
        """
        import torch
        from torch.cuda.amp import custom_bwd, custom_fwd

        class Scale(torch.autograd.Function):
            @staticmethod
            @custom_fwd
            def forward(ctx, x):
                return x

            @staticmethod
            @custom_bwd
            def backward(ctx, grad):
                return grad
        """,
        select=["CDL205"],
    ) == [("CDL205", 2, 1), ("CDL205", 6, 6), ("CDL205", 11, 6)]


def test_an_api_named_only_in_annotations_is_no_finding_and_neither_is_its_import():
    assert lint(
        """
        from torch.cuda.amp import GradScaler

        def save(scaler: GradScaler = None) -> "GradScaler":
            value: GradScaler = scaler
            return value
        """,
        select=["CDL205"],
    ) == []


def test_an_import_whose_every_use_is_guarded_is_no_finding():
    assert lint(
        """
        import torch
        from torch.cuda.amp import GradScaler

        if torch.cuda.is_available():
            scaler = GradScaler()
        """,
        select=["CDL205"],
    ) == []


def test_attribute_uses_do_not_report_the_plain_torch_import():
    assert lint(
        """
        import torch
        scaler = torch.cuda.amp.GradScaler()
        """,
        select=["CDL205"],
    ) == [("CDL205", 2, 10)]


# -- CDL207: the autograd decorators of torch.amp with a CUDA device type ------------------------
def test_custom_fwd_and_custom_bwd_with_a_cuda_device_type_are_reported():
    assert lint(
        """
        import torch
        from torch.amp import custom_bwd
        fwd = torch.amp.custom_fwd(device_type = "cuda")
        bwd = custom_bwd(device_type="cuda")
        portable = torch.amp.custom_fwd(device_type="mps")
        """,
        select=["CDL207"],
    ) == [("CDL207", 3, 28), ("CDL207", 4, 18)]


# -- CDL103: an is_cuda test whose other branch raises is a demand, not a guard ------------------
def test_is_cuda_test_that_raises_for_other_tensors_is_reported():
    assert lint(
        """
        def forward(x):
            if not x.is_cuda:
                raise NotImplementedError
            return x

        def backward(grad):
            if grad.is_cuda:
                return grad
            else:
                raise RuntimeError("CUDA tensors only")
        import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
        """,
        select=["CDL103"],
    ) == [("CDL103", 2, 12), ("CDL103", 7, 8)]


def test_is_cuda_test_that_leaves_its_block_with_a_raise_right_after_is_reported():
    # `if x.is_cuda: return x` and then `raise`: the way taken when it is False raises. A statement
    # between them that does work makes it a fallback like any other (not reported).
    assert lint(
        """
        def forward(x):
            if x.is_cuda:
                return x
            raise ValueError("CUDA tensors only")

        def each(items):
            for item in items:
                if item.is_cuda:
                    continue
                raise ValueError(item)

        def fallback(x):
            if x.is_cuda:
                return x
            y = x.cpu()
            raise ValueError(y)
        import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
        """,
        select=["CDL103"],
    ) == [("CDL103", 2, 8), ("CDL103", 8, 12)]


def test_is_cuda_test_with_a_working_other_branch_is_no_finding():
    assert lint(
        """
        def to_host(x):
            if x.is_cuda:
                return x.cpu()
            return x

        def keep(x):
            if not x.is_cuda:
                return x
            raise_later = True
            return raise_later

        def mixed(x, strict):
            if not x.is_cuda and strict:
                raise ValueError("the branch raises only when strict")
        """,
        select=["CDL103"],
    ) == []


# -- CDL101: getattr's default reaches a device argument ----------------------------------------
def test_getattr_default_reaching_a_device_argument_is_reported_where_written():
    assert lint(
        """
        def setup(args, init):
            return init(device=getattr(args, "device", "cuda"))

        def portable(args, init):
            return init(device=getattr(args, "device", "cpu"))
        """,
        select=["CDL101"],
    ) == [("CDL101", 2, 48)]


# -- CDL104: an integer index chosen because CUDA is available --------------------------------
def test_a_cuda_ordinal_arm_of_a_device_selection_forgets_mps():
    assert lint(
        """
        import torch
        a = torch.device(0 if torch.cuda.is_available() else "cpu")
        b = torch.zeros(2, device=0 if torch.cuda.is_available() else "cpu")
        c = torch.device(0 if torch.backends.mps.is_available() else "cpu")
        d = max(0 if torch.cuda.is_available() else 1, 2)
        e = torch.device(0 if torch.cuda.is_available() else "mps")
        """,
        select=["CDL104"],
    ) == [("CDL104", 2, 18), ("CDL104", 3, 27)]


def test_rules_without_at_import_report_only_the_use():
    assert lint(
        """
        from torch.utils.cpp_extension import CUDAExtension
        ext = CUDAExtension("ops", ["ops.cu"])
        """,
        select=["CDL401"],
    ) == [("CDL401", 2, 7)]


# -- CDL109: a save of what was loaded, to another path, is a conversion, not a round trip ----
def test_loading_then_saving_elsewhere_still_needs_a_map_location():
    assert lint(
        """
        import torch
        def convert(source, target):
            state = torch.load(source / "model.pth")
            torch.save(state, target)
        def round_trip(model, path):
            torch.save(model.state_dict(), path / "m.pt")
            model.load_state_dict(torch.load(path / "m.pt"))
        def keyword(model, path):
            torch.save(model.state_dict(), f=path)
            return torch.load(path)
        """,
        select=["CDL109"],
    ) == [("CDL109", 3, 13)]


# -- CDL114: Lightning pinned to the CUDA accelerator -------------------------------------------
def test_lightning_cuda_accelerator_and_cuda_accelerator_class_are_reported():
    assert lint(
        """
        import lightning as L
        from lightning.fabric.accelerators import CUDAAccelerator
        from lightning.pytorch import Trainer

        ACCELERATOR = "cuda"
        fabric = L.Fabric(devices=1, accelerator="cuda")
        trainer = Trainer(accelerator=ACCELERATOR)
        portable = L.Fabric(accelerator="auto")
        either_gpu = Trainer(accelerator="gpu")
        count = CUDAAccelerator.auto_device_count()
        if isinstance(fabric.accelerator, CUDAAccelerator):
            pass
        """,
        select=["CDL114"],
    ) == [("CDL114", 5, 15), ("CDL114", 6, 30), ("CDL114", 10, 9)]


# -- CDL115: the CUDA device count as a divisor --------------------------------------------------
def test_dividing_by_the_cuda_device_count_is_reported_at_the_count():
    findings = findings_of(
        textwrap.dedent(
            """
            import os
            import torch

            rank = int(os.environ["RANK"])
            num_gpus = torch.cuda.device_count()
            local = rank % num_gpus
            per = 64 // torch.cuda.device_count()
            floor = 64 // max(torch.cuda.device_count(), 1)
            if torch.cuda.device_count() > 0:
                share = 64 / torch.cuda.device_count()
            times = 64 * num_gpus
            text = "%d GPUs" % torch.cuda.device_count()
            """
        ).lstrip("\n"),
        select=["CDL115"],
        torch_version="2.13",
    )
    assert triples(findings) == [("CDL115", 5, 12), ("CDL115", 7, 13)]
    assert [(r.line, r.column, r.message) for r in findings[0].related] == [(6, 9, "torch.cuda.device_count() divides here")]


def test_a_count_whose_zero_is_replaced_before_it_divides_is_not_reported():
    """Composer's launcher: `args.nproc = torch.cuda.device_count()`, then `if args.nproc == 0: args.nproc
    = 1` in a block around the store. A test that does not replace the zero still leaves it reported."""
    assert lint(
        """
        import os
        import torch

        def launch(args, rank):
            if args.nproc is None:
                if "LOCAL_WORLD_SIZE" in os.environ:
                    args.nproc = int(os.environ["LOCAL_WORLD_SIZE"])
                else:
                    args.nproc = torch.cuda.device_count()
                if args.nproc == 0:
                    args.nproc = 1
            return rank % args.nproc

        def spread(rank):
            n = torch.cuda.device_count()
            if not n:
                n = 1
            m = torch.cuda.device_count()
            if m < 1:
                print("no GPU")
            return rank // n + rank // m
        """,
        select=["CDL115"],
    ) == [("CDL115", 18, 9)]


# -- CDL407: the top package's __init__, extensions the project builds, packages that fail first --
CHAIN_FILES = {
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='pkg', ext_modules=[CUDAExtension('scan_cuda', ['scan.cu'])])\n"
    ),
    "pkg/__init__.py": "from pkg.ops.scan import scan\nfrom pkg.models.big import Big\nfrom pkg.plain import helper\n",
    "pkg/plain.py": "def helper():\n    return 1\n",
    "pkg/ops/__init__.py": "",
    "pkg/ops/scan.py": "import scan_cuda\n\ndef scan(x):\n    return scan_cuda.fwd(x)\n",
    "pkg/ops/norm.py": "import triton\n",
    "pkg/models/__init__.py": "",
    "pkg/models/big.py": "from pkg.models.block import Block\n",
    "pkg/models/block.py": "from pkg.ops.norm import layer_norm\n",
    "pkg/models/small.py": "from pkg.ops.scan import scan\n",
    "other/__init__.py": "import triton\n",
    "other/user.py": "from pkg.ops.scan import scan\n",
}


def test_top_package_init_reports_each_eager_import_that_ends_in_cuda_code():
    path = "pkg/__init__.py"
    assert lint(CHAIN_FILES[path], path=path, project_files=CHAIN_FILES, select=["CDL407"]) == [
        ("CDL407", 1, 1),  # pkg.ops.scan imports the extension setup.py builds
        ("CDL407", 2, 1),  # pkg.models.big -> block -> norm -> triton: three modules down
    ]


def test_an_extension_the_project_builds_ends_a_chain_at_its_boundary():
    path = "pkg/models/small.py"
    [finding] = findings_of(CHAIN_FILES[path], path=path, project_files=CHAIN_FILES, select=["CDL407"], torch_version="2.13")
    assert (finding.line, finding.column) == (1, 1)
    assert "pkg/models/small.py → pkg/ops/scan.py → scan_cuda" in finding.message
    path = "pkg/models/big.py"  # a longer chain below a subpackage: left to the boundary (block.py)
    assert lint(CHAIN_FILES[path], path=path, project_files=CHAIN_FILES, select=["CDL407"]) == []


def test_a_module_whose_package_init_imports_the_library_itself_gets_no_chain_finding():
    path = "other/user.py"
    assert lint(CHAIN_FILES[path], path=path, project_files=CHAIN_FILES, select=["CDL407"]) == []


# -- precision: enum members, dispatch-table entries, assertion messages ------------------------
def test_enum_members_naming_cuda_or_nccl_are_no_defaults():
    assert lint(
        """
        import enum
        from enum import Enum

        class Kind(str, Enum):
            CUDA = "cuda"

        class Derived(Kind):
            NCCL = "nccl"

        class Flags(enum.IntEnum):
            GPU = 1

        class Config:
            device = "cuda"
            backend = "nccl"
        """,
        select=["CDL108", "CDL706"],
    ) == [("CDL108", 14, 14), ("CDL706", 15, 15)]


def test_the_cuda_entry_of_a_dispatch_table_is_no_finding_but_a_call_in_it_is():
    assert lint(
        """
        import torch
        ACTIVITIES = {"cpu": torch.profiler.ProfilerActivity.CPU, "cuda": torch.profiler.ProfilerActivity.CUDA}
        SYNC = {"mps": torch.mps.synchronize, "cuda": torch.cuda.synchronize}
        EAGER = {"cuda": torch.cuda.memory_allocated()}
        OTHER = {"gpu": torch.cuda.synchronize}
        """,
        select=["CDL201", "CDL202", "CDL213"],
    ) == [("CDL202", 4, 18), ("CDL201", 5, 17)]


def test_a_cuda_query_in_an_assertion_message_is_no_finding():
    assert lint(
        """
        import torch
        def check(loss):
            assert not loss.isnan(), f"NaN on device {torch.cuda.current_device()}"
            assert torch.cuda.current_device() == 0, "first device"
        """,
        select=["CDL105"],
    ) == [("CDL105", 4, 12)]


def test_a_function_that_maps_its_tensor_loads_keeps_host_side_loads_as_they_are():
    assert lint(
        """
        import torch
        def resume(model, scheduler, folder, device):
            model.load_state_dict(torch.load(folder / "model.bin", map_location=device))
            scheduler.load_state_dict(torch.load(folder / "scheduler.bin"))
        def restore(model, folder):
            model.load_state_dict(torch.load(folder / "model.bin"))
        """,
        select=["CDL109"],
    ) == [("CDL109", 6, 27)]


def test_a_top_package_init_that_imports_the_library_under_a_non_cuda_test_reports_no_chain():
    files = dict(CHAIN_FILES)
    files["pkg/__init__.py"] = (
        "import os\n"
        "import torch\n"
        "if torch.cuda.is_available():\n"
        "    import triton\n"
        "from pkg.ops.scan import scan\n"  # still reported: the guarded import runs only on CUDA hosts
        "if 'SPACE' not in os.environ:\n"
        "    import triton\n"
        "from pkg.models.big import Big\n"  # the package already failed on the line above
    )
    path = "pkg/__init__.py"
    assert lint(files[path], path=path, project_files=files, select=["CDL407"]) == [("CDL407", 5, 1)]


def test_is_cuda_asserted_only_in_a_mode_the_caller_opts_into_is_no_finding():
    assert lint(
        """
        def step(params, capturable):
            if capturable:
                assert all(p.is_cuda for p in params)
            assert params[0].is_cuda
        import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
        """,
        select=["CDL103"],
    ) == [("CDL103", 4, 12)]


# -- CDL111: the build test after an availability check that leaves ------------------------------
def test_is_built_after_leaving_unless_mps_is_available_is_not_reported():
    """Composer's DeviceMPS: `if not torch.backends.mps.is_available(): raise ...` first, then `if not
    torch.backends.mps.is_built(): raise ...`: nothing is chosen because MPS is built. A build test with
    no such exit before it (or one after a test that does not leave) still is."""
    assert lint(
        """
        import torch

        class DeviceMPS:
            def __init__(self):
                if not torch.backends.mps.is_available():
                    raise RuntimeError("MPS requires macOS 12.3")
                if not torch.backends.mps.is_built():
                    raise RuntimeError("torch was not built with MPS")

        def pick():
            if not torch.backends.mps.is_available():
                print("no MPS")
            if torch.backends.mps.is_built():
                return "mps"
            return "cpu"
        """,
        select=["CDL111"],
    ) == [("CDL111", 13, 8)]


def test_a_switch_whose_branch_takes_cuda_or_raises_forgets_mps():
    """simpletransformers' models: `if use_cuda:` takes CUDA where it is available and raises where it is
    not, `else:` takes the CPU: whatever the caller passes, MPS is never chosen (and the default,
    `use_cuda=True`, raises on a Mac). A branch whose CUDA choice has a working fallback is a guard
    the switch merely asks for, and is not such a selection."""
    assert lint(
        """
        import torch

        class Model:
            def __init__(self, use_cuda=True, cuda_device=-1):
                if use_cuda:
                    if torch.cuda.is_available():
                        if cuda_device == -1:
                            self.device = torch.device("cuda")
                        else:
                            self.device = torch.device(f"cuda:{cuda_device}")
                    else:
                        raise ValueError("'use_cuda' set to True when cuda is unavailable.")
                else:
                    self.device = "cpu"

        def pick(use_gpu):
            if use_gpu:
                if not torch.cuda.is_available():
                    raise RuntimeError("no GPU")
                device = "cuda"
            else:
                device = "cpu"
            return device

        def fine(use_gpu):
            if use_gpu:
                device = "cuda" if torch.cuda.is_available() else "mps"
            else:
                device = "cpu"
            return device
        """,
        select=["CDL104"],
    ) == [("CDL104", 5, 9), ("CDL104", 17, 5)]


def test_a_move_among_other_statements_with_an_else_that_places_nothing():
    """backgroundremover's load_model: where CUDA is available the weights load and the net moves to
    CUDA; the `else` loads them onto the CPU and moves nothing, so a Mac's GPU is never used. An `else`
    that places the net somewhere (a device, MPS) is a selection of its own."""
    assert lint(
        """
        import torch

        def load_model(net, path, device):
            if torch.cuda.is_available():
                net.load_state_dict(torch.load(path))
                net.to(torch.device("cuda"))
            else:
                net.load_state_dict(torch.load(path, map_location="cpu"))
            if torch.cuda.is_available():
                net.load_state_dict(torch.load(path))
                net.cuda()
            else:
                net.to(device)
            if torch.cuda.is_available():
                print("cuda")
            else:
                print("cpu")
            if torch.cuda.is_available():
                nan = torch.tensor(float("nan")).cuda()
            else:
                nan = torch.tensor(float("nan"))
            return net

        def try_tensor_cuda(tensor, cuda):
            if cuda and torch.cuda.is_available():
                return tensor.cuda()
            else:
                return tensor.cpu()
        """,
        select=["CDL104"],
    ) == [("CDL104", 4, 5), ("CDL104", 25, 5)]


def test_a_tuple_compared_with_one_holding_cuda_is_a_cuda_test():
    """optimum-benchmark's trackers: `self.is_pytorch_cuda = (self.backend, self.device) == ("pytorch",
    "cuda")` holds only where the device is CUDA, so its `if` and a private method called only under it
    (the project index's reach) run off a Mac; `!=` is the other way round, and a tuple with no CUDA in
    it says nothing."""
    assert lint(
        """
        import torch

        class LatencyTracker:
            def __init__(self, backend, device):
                self.backend, self.device = backend, device
                self.is_pytorch_cuda = (self.backend, self.device) == ("pytorch", "cuda")

            def track(self):
                if self.is_pytorch_cuda:
                    torch.cuda.synchronize()
                    self._cuda_memory()
                if (self.backend, self.device) != ("pytorch", "cuda"):
                    return
                torch.cuda.synchronize()

            def _cuda_memory(self):
                torch.cuda.synchronize()

            def other(self):
                if (self.backend, self.device) == ("pytorch", "cpu"):
                    torch.cuda.synchronize()
        """,
        select=["CDL201"], path="bench/trackers.py", project_files={"bench/__init__.py": ""},
    ) == [("CDL201", 21, 13)]


def test_is_built_inside_an_availability_test_is_not_reported():
    """happytransformer's device choice: `if torch.backends.mps.is_available():` then `if
    torch.backends.mps.is_built():` inside it. The `else` of an availability test is no such place."""
    assert lint(
        """
        import torch

        def pick():
            device = None
            if torch.backends.mps.is_available():
                if torch.backends.mps.is_built():
                    device = torch.device("mps")
            if torch.backends.mps.is_available() and torch.cuda.is_available():
                pass
            else:
                if torch.backends.mps.is_built():
                    device = torch.device("mps")
            return device
        """,
        select=["CDL111"],
    ) == [("CDL111", 11, 12)]


# -- CDL108/CDL706: the class attributes of a class whose constructor raises off a Mac --------------
def test_class_attributes_of_a_class_constructed_only_with_cuda_are_not_reported():
    """Composer's DeviceGPU: `dist_backend = "nccl"` is read by instances, which `__init__` refuses to
    make without CUDA. The same attributes in a class whose constructor only warns still are."""
    assert lint(
        """
        import torch

        class DeviceGPU:
            dist_backend = "nccl"
            default = "cuda"

            def __init__(self):
                if not torch.cuda.is_available():
                    raise ValueError("no CUDA")

        class DeviceAny:
            dist_backend = "nccl"
            default = "cuda"

            def __init__(self):
                if not torch.cuda.is_available():
                    print("no CUDA")
        """,
        select=["CDL108", "CDL706"],
    ) == [("CDL706", 12, 20), ("CDL108", 13, 15)]


# -- a flag cleared where CUDA is missing ---------------------------------------------------------
def test_a_flag_the_constructor_clears_without_cuda_guards_its_readers():
    """Ludwig's trainer: `self.use_amp = config.use_amp`, then `if self.use_amp: if torch.cuda.is_available():
    ... else: self.use_amp = False`. After it the flag is true only where CUDA is, so the GradScaler and
    autocast that read it are guarded. A flag cleared under a test a Mac need not take still is no guard."""
    assert lint(
        """
        import contextlib
        import torch

        class Trainer:
            def __init__(self, config):
                self.use_amp = config.use_mixed_precision
                if self.use_amp:
                    if torch.cuda.is_available():
                        print("AMP")
                    else:
                        self.use_amp = False
                self.scaler = torch.amp.GradScaler("cuda") if self.use_amp else None

            def step(self):
                with torch.amp.autocast("cuda") if self.use_amp else contextlib.nullcontext():
                    pass

        class Other:
            def __init__(self, config):
                self.use_amp = config.use_mixed_precision
                if config.verbose:
                    self.use_amp = False

            def step(self):
                with torch.amp.autocast("cuda") if self.use_amp else contextlib.nullcontext():
                    pass
        """,
        select=["CDL101", "CDL207"],
    ) == [("CDL207", 25, 33)]


# -- CDL103: an is_cuda test whose other way reads the tensor into NumPy ---------------------------
def test_is_cuda_whose_false_way_calls_numpy_on_the_tensor_is_reported():
    """robomimic's to_numpy: `if x.is_cuda: return x.detach().cpu().numpy()` then `x.detach().numpy()`;
    an MPS tensor takes the second way, and `.numpy()` raises for it. Both ways moving to the CPU, or
    NumPy of another tensor, is no finding."""
    assert lint(
        """
        def to_numpy(x):
            if x.is_cuda:
                return x.detach().cpu().numpy()
            return x.detach().numpy()

        def to_numpy_else(x):
            if x.is_cuda:
                return x.cpu().numpy()
            else:
                return x.data.numpy()

        def to_numpy_expression(x):
            return x.cpu().numpy() if x.is_cuda else x.numpy()

        def fine(x, y):
            if not x.is_cuda:
                return y.numpy()
            return x.cpu().numpy() if x.is_cuda else x.cpu().numpy()
        import torch  # the module imports torch (CDL103 reads `.is_cuda` only there)
        """,
        select=["CDL103"],
    ) == [("CDL103", 2, 8), ("CDL103", 7, 8), ("CDL103", 13, 31)]


def test_jit_extension_sources_named_through_local_names():
    """exllamav2's ext.py: the .cu files are listed in `sources_`, joined to a folder in a comprehension
    bound to `sources`, and `load(..., sources=sources)` compiles them with nvcc. A load whose names lead
    only to C++ files is a CPU extension."""
    assert lint(
        """
        import os
        from torch.utils.cpp_extension import load

        sources_ = ["ext_bindings.cpp", "cuda/graph.cu"]
        sources = [os.path.join("ext", s) for s in sources_]
        ext = load(name="ext", sources=sources)
        cpp_only = ["ops.cpp"]
        ops = load(name="ops", sources=[os.path.join("ops", s) for s in cpp_only])
        """,
        select=["CDL402"],
    ) == [("CDL402", 6, 7)]
