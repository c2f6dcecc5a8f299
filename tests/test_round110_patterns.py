"""What blind rounds 110 to 11x (torchrunx, core-pytorch-utils, paracuda, torch-pc, ...) showed: mmcv's lite
releases, map_location that is None, and a CUDA device count checked for zero before it divides."""

import textwrap

from conftest import findings_of


def lint(text, select, **options):
    found = findings_of(textwrap.dedent(text).lstrip("\n"), select=select, **options)
    return [(f.code, f.line, f.column) for f in found]


def test_mmcv_below_2_is_the_lite_build_without_kernels():
    found = findings_of("mmcv<2\nmmcv==1.7.1\nmmcv~=1.6\nmmcv>=1.3\nmmcv\nmmcv-full==1.7.0\n",
                        path="requirements.txt", kind="requirements")
    assert [(f.code, f.line, f.column) for f in found] == [("CDL504", 4, 1), ("CDL504", 5, 1), ("CDL504", 6, 1)]


def test_map_location_none_written_or_defaulted_is_a_load_without_map_location():
    assert lint(
        """
        import torch

        state = torch.load("x.pt", map_location=None)


        def load(fp, device=None):
            return torch.load(fp, map_location=device)


        def replaced(fp, device=None):
            if device is None:
                device = "cpu"
            return torch.load(fp, map_location=device)


        def chosen(fp):
            location = None if torch.cuda.is_available() else "cpu"
            return torch.load(fp, map_location=location)


        def defaulted(fp, device=None):
            return torch.load(fp, map_location=device or "cpu")


        def replaced_off_cuda(path):
            map_location = None
            if not torch.cuda.is_available():
                map_location = "cpu"
            return torch.load(path, map_location=map_location)


        def forwarded(path, map_location=None):
            return torch.load(path, map_location=map_location)


        def checked(path, device=None):
            if device is None:
                device = "cuda" if torch.cuda.is_available() else "cpu"
                return torch.load(path, map_location=device)
            return torch.load(path, map_location=device)
        """,
        {"CDL109"},
    ) == [("CDL109", 3, 9), ("CDL109", 7, 12)]


def test_map_location_none_is_fixed_in_place():
    found = findings_of('import torch\nstate = torch.load("x.pt", map_location=None)\n', select={"CDL109"})
    assert found[0].message == (
        "torch.load with map_location=None, which maps nothing, restores tensors to the device they were saved"
        " from; a checkpoint saved on CUDA fails to load on MPS or CPU"
    )
    assert found[0].fix is not None


def test_a_device_count_checked_for_zero_before_it_divides_is_no_finding():
    assert lint(
        """
        import torch


        def clamped(gpus, items):
            available = torch.cuda.device_count()
            if gpus > available:
                gpus = available
            if gpus <= 0:
                return
            for i, item in enumerate(items):
                print(i % gpus)


        def stopped(items):
            n = torch.cuda.device_count()
            if n < 1:
                raise SystemExit("no GPU")
            return items[0] % n


        def unchecked(gpus, items):
            available = torch.cuda.device_count()
            if gpus > available:
                gpus = available
            return items % gpus
        """,
        {"CDL115"},
    ) == [("CDL115", 22, 17)]


def test_cpp_extension_paths_of_cuda_in_either_spelling_are_reported():
    assert lint(
        """
        from torch.utils.cpp_extension import include_paths, library_paths

        inc = include_paths(device_type="cuda")
        lib = library_paths(device_type="cuda")
        old = include_paths(cuda=True)
        cpu = include_paths(device_type="cpu"), library_paths()
        """,
        {"CDL405"},
    ) == [("CDL405", 3, 21), ("CDL405", 4, 21), ("CDL405", 5, 21)]


def test_a_move_to_cuda_made_only_when_it_is_available_in_any_form_is_reported():
    assert lint(
        """
        import torch

        use_cuda = torch.cuda.is_available()


        def expression(x):
            return x.cuda() if torch.cuda.is_available() else x


        def through_a_name(x):
            x = x.cuda() if use_cuda else x
            return x


        def early_return(batch):
            if not torch.cuda.is_available():
                return batch
            if isinstance(batch, torch.Tensor):
                batch = batch.cuda()
            return batch


        def portable(x, device):
            y = x.to(device) if device.type != "cpu" else x
            if not torch.cuda.is_available():
                return x
            return y
        """,
        {"CDL104"},
    ) == [("CDL104", 7, 12), ("CDL104", 11, 9), ("CDL104", 16, 5)]


def test_float64_numpy_data_made_a_tensor_with_torch_tensor_is_reported_in_any_file():
    assert lint(
        """
        import numpy as np
        import torch


        def constants(device):
            a = torch.tensor([np.log(2 * np.pi)], device=device)
            b = torch.tensor(np.zeros(3)).to(device)
            return a, b
        """,
        {"CDL607"},
    ) == [("CDL607", 6, 9), ("CDL607", 7, 9)]


def test_a_flag_set_true_only_where_cuda_is_asks_the_host():
    assert lint(
        """
        import torch


        class Learner:
            def __init__(self, model):
                self.cuda = False
                if torch.cuda.is_available():
                    self.cuda = True
                self.model = model.cuda() if self.cuda else model

            def step(self, x):
                x = x.cuda() if self.cuda else x
                return self.model(x)


        class Switched:
            def __init__(self, model, gpu):
                self.gpu = False
                if gpu:
                    self.gpu = True
                self.model = model.cuda() if self.gpu else model
        """,
        {"CDL104"},
    ) == [("CDL104", 9, 22), ("CDL104", 12, 13)]


def test_a_device_chosen_by_the_test_that_picks_the_backend_goes_with_the_process_group():
    assert lint(
        """
        import torch
        import torch.distributed as dist


        def setup():
            use_cuda = torch.cuda.is_available()
            dist.init_process_group(backend="nccl" if use_cuda else "gloo")
            return torch.device("cuda") if use_cuda else torch.device("cpu")


        def single():
            use_cuda = torch.cuda.is_available()
            return torch.device("cuda") if use_cuda else torch.device("cpu")
        """,
        {"CDL104"},
    ) == [("CDL104", 13, 12)]


def test_is_cuda_branch_whose_moves_a_later_type_as_repeats_is_no_placement():
    assert lint(
        """
        import torch


        def ssim(img1, window, channel):
            if img1.is_cuda:
                window = window.cuda(img1.get_device())
            window = window.type_as(img1)
            return torch.nn.functional.conv2d(img1, window, groups=channel)


        def kept(img1, window):
            if img1.is_cuda:
                window = window.cuda(img1.get_device())
            return window
        """,
        {"CDL103"},
    ) == [("CDL103", 12, 8)]


def test_a_count_that_is_zero_where_cuda_is_missing_and_a_loop_over_cuda_devices_only_are_guards():
    assert lint(
        """
        import torch


        def devices(n):
            n_cuda = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if n_cuda > 0:
                torch.cuda.synchronize()
            return n_cuda


        def drain(stages):
            for d in {st.device for st in stages if st.device.type == "cuda"}:
                torch.cuda.synchronize(d)
            for t in (t for t in stages if t.device.type == "cuda"):
                torch.cuda.synchronize(t.device)


        def unfiltered(stages):
            for d in {st.device for st in stages}:
                torch.cuda.synchronize(d)
        """,
        {"CDL201"},
    ) == [("CDL201", 20, 9)]


def test_nccl_collectives_called_directly_are_reported():
    assert lint(
        """
        import torch
        import torch.cuda.nccl as nccl


        def reduce(grads):
            nccl.all_reduce(grads, op=nccl.SUM)


        def checked(tensors):
            if torch.cuda.nccl.is_available(tensors):
                torch.cuda.nccl.broadcast(tensors)
        """,
        {"CDL701"},
    ) == [("CDL701", 6, 5)]


def test_cv_cuda_is_a_cuda_only_integration():
    assert lint("import cvcuda\nimport nvcv\n\n\ndef blur(src, dst):\n    cvcuda.gaussian_into(dst, src, (3, 3), (1.0, 1.0))\n",
                {"CDL404"}) == [("CDL404", 1, 1)]
    found = findings_of("cvcuda-cu12==0.13.0\n", path="requirements.txt", kind="requirements")
    assert [(f.code, f.line, f.column) for f in found] == [("CDL501", 1, 1)]


def test_a_region_that_calls_a_function_of_the_file_is_judged_by_that_function():
    assert lint(
        """
        import torch
        from torch.amp import autocast


        def rotate_half(x):
            x1 = x[..., ::2]
            x2 = x[..., 1::2]
            return torch.stack((-x2, x1), dim=-1).flatten(-2)


        def project(x, w):
            return x @ w


        @autocast("cuda", enabled=False)
        def apply_rotary_pos_emb(pos, t):
            return t * pos.cos() + rotate_half(t) * pos.sin()


        @autocast("cuda", enabled=False)
        def projected(t, w):
            return project(t, w)
        """,
        {"CDL207"},
    ) == [("CDL207", 20, 11)]


def test_a_model_the_class_places_and_saves_whole_is_a_checkpoint_not_a_cache():
    assert lint(
        """
        import torch


        class Office:
            def __init__(self, net, path):
                self.net = net
                self.path = path

            def fit(self):
                self.net.train()

            def save_model(self):
                torch.save(self.net, self.path)

            def load_model(self):
                return torch.load(self.path)


        class Cache:
            def __init__(self, path):
                self.path = path
                self.table = {}

            def save(self):
                torch.save(self.table, self.path)

            def load(self):
                return torch.load(self.path)
        """,
        {"CDL109"},
    ) == [("CDL109", 16, 16)]


def test_legacy_cuda_tensor_types_named_in_a_table_of_types_are_no_finding():
    assert lint(
        """
        import torch

        TENSOR_TYPES = [torch.FloatTensor, torch.cuda.FloatTensor, torch.Tensor]
        ORDER = (torch.LongTensor, torch.cuda.LongTensor)


        def is_tensor(x):
            return type(x) in TENSOR_TYPES or type(x) in ORDER


        def make(n):
            return [torch.cuda.FloatTensor(n)], torch.zeros(n).type(torch.cuda.HalfTensor)
        """,
        {"CDL212"},
    ) == [("CDL212", 12, 13), ("CDL212", 12, 61)]


def test_astype_float_of_anything_is_float64_numpy_data():
    assert lint(
        """
        import torch


        def run(points, dev):
            pts = points.astype(float)
            return torch.as_tensor(pts, device=dev)


        def run32(points, dev):
            return torch.as_tensor(points.astype("float32"), device=dev)
        """,
        {"CDL607"},
    ) == [("CDL607", 6, 12)]


def test_isinstance_of_a_cuda_only_librarys_type_is_a_cuda_guard():
    assert lint(
        """
        import torch
        from finufft import Plan as cpuPlan
        try:
            from cufinufft import Plan as cudaPlan
        except ImportError:
            cudaPlan = None


        def run(plan, x: torch.Tensor):
            if isinstance(plan, cpuPlan):
                return plan.execute(x.numpy())
            elif isinstance(plan, cudaPlan):
                return plan.execute(x.cuda())


        def other(plan, x):
            if isinstance(plan, (cpuPlan, dict)):
                return x.cuda()
            return x
        """,
        {"CDL102"},
    ) == [("CDL102", 18, 18)]


def test_a_move_beside_a_move_of_what_is_there_to_move_is_a_move():
    assert lint(
        """
        import torch


        def place(model, x, to_cuda=True):
            if to_cuda and torch.cuda.is_available():
                model.to("cuda")
                if isinstance(x, torch.Tensor):
                    x = x.to("cuda")
            return model, x
        """,
        {"CDL104"},
    ) == [("CDL104", 5, 5)]


def test_a_none_default_every_call_in_the_file_passes_is_its_callers_choice():
    assert lint(
        """
        import torch


        def stats(path, device=None):
            return torch.load(path, map_location=device)


        def convert(path, device=None):
            if device is None:
                device = "cpu"
            return stats(path, device=device)
        """,
        {"CDL109"},
    ) == []
