"""Guards from loops over a device count and from the communication backend: a loop over
`range(torch.cuda.device_count())` runs its body only where the count is positive, and a branch
taken when the backend is NCCL (rules/guards.toml off_mac_backends) never runs on a Mac."""

import textwrap

from conftest import findings_of, triples

SETUP = "from setuptools import setup\nsetup(name='pkg')\n"


def lint(source, select=None, project_files=None, path="example.py"):
    files = None
    if project_files is not None:
        files = {"setup.py": SETUP, "pkg/__init__.py": "", **{k: textwrap.dedent(v).lstrip("\n") for k, v in project_files.items()}}
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select, project_files=files, path=path))


LOOPS = """
import torch

COUNT = torch.cuda.device_count()


def capabilities():
    found = []
    for i in range(torch.cuda.device_count()):
        found.append(torch.cuda.get_device_capability(i))
    for i in range(1, COUNT, 2):
        found.append(torch.cuda.get_device_capability(i))
    for i in range(-1, torch.cuda.device_count()):
        found.append(torch.cuda.get_device_capability(i))
    for i in range(torch.cuda.device_count(), 0, -1):
        found.append(torch.cuda.get_device_capability(i))
    for i in range(4):
        found.append(torch.cuda.get_device_capability(i))
    for i in range(torch.cuda.device_count()):
        pass
    else:
        torch.cuda.synchronize()
    return found
"""


def test_a_loop_over_the_device_count_runs_only_off_a_mac():
    # A negative start, a negative step, a literal count and the loop's `else:` all run on a Mac.
    assert lint(LOOPS, select={"CDL204", "CDL201"}) == [
        ("CDL204", 13, 22), ("CDL204", 15, 22), ("CDL204", 17, 22), ("CDL201", 21, 9),
    ]


def test_a_rebound_range_is_not_the_builtin():
    source = """
    import torch

    range = lambda n: [0, 1]


    def first():
        for i in range(torch.cuda.device_count()):
            return torch.cuda.get_device_capability(i)
    """
    assert lint(source, select={"CDL204"}) == [("CDL204", 8, 16)]


def test_a_helper_called_only_in_a_device_count_loop_is_used_only_off_a_mac():
    helpers = """
    import torch


    def capability(i):
        return torch.cuda.get_device_capability(i)
    """
    caller = """
    import torch

    from pkg.helpers import capability


    def all_capabilities():
        return [capability(i) for i in range(2)] + [loop() for _ in [0]]


    def loop():
        found = []
        for i in range(torch.cuda.device_count()):
            found.append(capability(i))
        return found
    """
    # The comprehension's range(2) runs on a Mac: the helper keeps its finding.
    assert lint(helpers, select={"CDL204"}, project_files={"pkg/caller.py": caller}, path="pkg/helpers.py") == [
        ("CDL204", 5, 12),
    ]
    only_loop = caller.replace("[capability(i) for i in range(2)] + ", "")
    assert lint(helpers, select={"CDL204"}, project_files={"pkg/caller.py": only_loop}, path="pkg/helpers.py") == []


BACKENDS = """
import torch
import torch.distributed as dist


class Compressor:
    def __init__(self, backend="nccl"):
        self.backend = backend
        if self.backend == "nccl":
            torch.cuda.synchronize()
        elif self.backend == "gloo":
            torch.cuda.synchronize()
        if dist.get_backend() in ("nccl",):
            torch.cuda.empty_cache()
        if dist.get_backend() != "nccl":
            return
        torch.cuda.synchronize()
"""


def test_a_branch_for_the_nccl_backend_never_runs_on_a_mac():
    assert lint(BACKENDS, select={"CDL201", "CDL202"}) == [("CDL201", 11, 13)]


def test_a_module_imported_only_for_the_nccl_backend_is_used_only_off_a_mac():
    backend = """
    import cupy
    """
    optimizer = """
    class OneBitAdam:
        def __init__(self, comm_backend_name="nccl"):
            self.comm_backend_name = comm_backend_name
            if self.comm_backend_name == "nccl":
                from pkg.comm.nccl import NcclBackend
            elif self.comm_backend_name == "mpi":
                from pkg.comm.mpi import MpiBackend
    """
    files = {"pkg/comm/__init__.py": "", "pkg/comm/mpi.py": backend, "pkg/optimizer.py": optimizer}
    assert lint(backend, select={"CDL404"}, project_files=files, path="pkg/comm/nccl.py") == []
    assert lint(backend, select={"CDL404"}, project_files={**files, "pkg/comm/nccl.py": backend}, path="pkg/comm/mpi.py") == [
        ("CDL404", 1, 1),
    ]


def test_a_sequence_of_device_indices_is_empty_on_a_mac():
    # list(range(count)) through a helper: `if not devices: raise` exits, and a loop over it never runs
    assert lint(
        """
        import torch


        def _visible():
            return list(range(torch.cuda.device_count()))


        def find_usable(names):
            devices = _visible()
            for index in devices:
                torch.tensor(0, device=torch.device("cuda", index))
            for index in sorted(names):
                torch.cuda.set_device(index)
            if not devices:
                raise ValueError("no CUDA devices")
            torch.cuda.set_device(devices[0])
        """
    ) == [("CDL105", 13, 9), ("CDL112", 14, 5)]


BACKEND_CLASSES = """
import torch


def num_cuda_devices():
    return torch.cuda.device_count()


class CUDAAccelerator:
    def setup_device(self, device):
        torch.cuda.set_device(device)

    @staticmethod
    def get_parallel_devices(devices):
        return [torch.device("cuda", i) for i in devices]

    @staticmethod
    def is_available():
        return num_cuda_devices() > 0


class AnyAccelerator:
    def setup_device(self, device):
        torch.cuda.set_device(device)

    def is_available(self):
        return torch.cuda.is_available() or torch.backends.mps.is_available()


class Plain:
    def setup_device(self, device):
        torch.cuda.set_device(device)
"""


def test_the_cuda_backend_of_a_device_abstraction_runs_only_where_cuda_is():
    # A class whose is_available() is a CUDA query is picked only where it says yes; one that may say yes
    # on a Mac, and a class with no availability test, are judged line by line.
    assert lint(BACKEND_CLASSES) == [("CDL105", 23, 9), ("CDL105", 31, 9)]


def test_a_helper_called_only_by_a_cuda_backend_class_is_used_only_off_a_mac():
    files = {
        "pkg/cuda.py": """
            import torch


            class CUDAAccelerator:
                def teardown(self):
                    _clear_cuda_memory()

                @staticmethod
                def is_available():
                    return torch.cuda.device_count() > 0


            def _clear_cuda_memory():
                torch.cuda.empty_cache()


            def _clear_anywhere():
                torch.cuda.empty_cache()


            _clear_anywhere()
        """,
    }
    source = files["pkg/cuda.py"]
    assert lint(source, select={"CDL202"}, project_files=files, path="pkg/cuda.py") == [("CDL202", 18, 5)]


def test_a_backend_class_whose_query_comes_from_another_module():
    # pytorch's CUDAAccelerator asks fabric's num_cuda_devices(): the index judges that condition, and the
    # helper both backends call is CUDA-only
    files = {
        "pkg/fabric.py": """
            import torch


            def num_cuda_devices():
                return torch.cuda.device_count()


            def _clear_cuda_memory():
                torch.cuda.empty_cache()
        """,
        "pkg/trainer.py": """
            from pkg.fabric import _clear_cuda_memory, num_cuda_devices


            class CUDAAccelerator:
                def teardown(self):
                    _clear_cuda_memory()

                @staticmethod
                def is_available():
                    \"\"\"CUDA devices are there.\"\"\"
                    return num_cuda_devices() > 0
        """,
    }
    assert lint(files["pkg/fabric.py"], select={"CDL202"}, project_files=files, path="pkg/fabric.py") == []
    files["pkg/trainer.py"] = files["pkg/trainer.py"].replace("return num_cuda_devices() > 0", "return True")
    assert lint(files["pkg/fabric.py"], select={"CDL202"}, project_files=files, path="pkg/fabric.py") == [("CDL202", 9, 5)]


def test_a_comprehension_over_the_device_count_builds_nothing_on_a_mac():
    # Every part that runs per item is silent when a `for` of the comprehension counts devices;
    # the iterable of the first `for` runs anyway, and a literal count runs on a Mac.
    source = """
    import torch

    devices = [torch.device(f"cuda:{i}") for i in range(torch.cuda.device_count())]
    names = {i: torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())}
    best = max(torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count()))
    pairs = [(n, i) for n in "ab" for i in range(torch.cuda.device_count()) if torch.cuda.get_device_capability(i)[0] > 7]
    fixed = [torch.cuda.get_device_name(i) for i in range(2)]
    wide = [i for i in range(torch.cuda.device_count(torch.cuda.current_device()))]
    """
    assert lint(source, select={"CDL101", "CDL105", "CDL204"}) == [
        ("CDL204", 7, 10), ("CDL105", 8, 50),
    ]


def test_torchs_name_for_the_nccl_backend_guards_like_the_string():
    source = """
    import torch
    import torch.distributed as dist
    from torch.distributed import Backend


    def barrier(backend):
        if backend == dist.Backend.NCCL:
            dist.barrier(device_ids=[torch.cuda.current_device()])
        if Backend.NCCL != backend:
            dist.barrier()
        else:
            torch.cuda.synchronize()
        if backend == dist.Backend.GLOO:
            torch.cuda.synchronize()
    """
    assert lint(source, select={"CDL105", "CDL201"}) == [("CDL201", 14, 9)]


def test_torchs_amp_absence_test_is_true_on_a_mac():
    source = """
    import torch
    from torch.cuda.amp.common import amp_definitely_not_available


    def scale(x, enabled):
        if amp_definitely_not_available():
            return x
        return x.cuda()


    def other(x):
        if not amp_definitely_not_available():
            return x.cuda()
        return x.to("cuda")
    """
    assert lint(source, select={"CDL101", "CDL102"}) == [("CDL101", 14, 17)]


def test_a_module_constant_never_rebound_decides_its_branch_everywhere():
    # `DEBUG = False` once: `if DEBUG:` never runs; a `global` assignment elsewhere makes it a variable.
    source = """
    import torch

    DEBUG = False
    VERBOSE = False
    USE_CUDA = True


    def step(x):
        if DEBUG:
            torch.cuda.synchronize()
        if VERBOSE:
            torch.cuda.synchronize()
        if USE_CUDA:
            x = x.cuda()
        return x


    def louder():
        global VERBOSE
        VERBOSE = True
    """
    assert lint(source, select={"CDL102", "CDL201"}) == [("CDL201", 12, 9), ("CDL102", 14, 15)]


def test_a_device_count_above_an_index_is_true_only_off_a_mac():
    # yolov5's DDP set-up: the count is 0 on a Mac, so no index is below it; a name bound to a negative
    # number (a "no device" sentinel) keeps the test open on a Mac.
    source = """
    import os
    import torch

    LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
    NONE = -1


    def setup(rank):
        if LOCAL_RANK != -1:
            assert torch.cuda.device_count() > LOCAL_RANK, "insufficient CUDA devices"
            torch.cuda.set_device(LOCAL_RANK)
        if rank < torch.cuda.device_count():
            torch.cuda.set_device(rank)
        if torch.cuda.device_count() > NONE:
            torch.cuda.set_device(0)
        if torch.cuda.device_count() >= rank:
            torch.cuda.set_device(0)
    """
    assert lint(source, select={"CDL105"}) == [("CDL105", 15, 9), ("CDL105", 17, 9)]


def test_a_name_rebound_under_its_own_test_keeps_the_value_the_test_reads():
    # neuraloperator's comm.py: the count is read by the test; the rebinding in its body comes after it.
    # A rebinding under another test (`if flag: n = 8`) does reach it.
    source = """
    import torch
    import torch.distributed as dist


    def setup():
        world_size = torch.cuda.device_count()
        if world_size > 1:
            dist.init_process_group(backend="nccl")
            world_size = dist.get_world_size()
        return world_size


    def both(flag):
        n = torch.cuda.device_count()
        if flag:
            n = 8
        if n > 1:
            dist.init_process_group(backend="nccl")
    """
    assert lint(source, select={"CDL701"}) == [("CDL701", 18, 33)]


def test_a_backend_that_is_not_gloo_is_one_no_mac_has():
    # detectron2's comm.py (and effdet's copy): the device follows the backend, and the Mac's wheels build
    # gloo alone, so the CUDA arm and a branch under `!= "gloo"` never run there; `== "gloo"` does run.
    source = """
    import pickle
    import torch
    import torch.distributed as dist


    def _serialize_to_tensor(data, group):
        backend = dist.get_backend(group)
        device = torch.device("cpu" if backend == "gloo" else "cuda")
        buffer = pickle.dumps(data)
        return torch.ByteTensor(torch.ByteStorage.from_buffer(buffer)).to(device=device)


    def sync(backend):
        if backend != "gloo":
            torch.cuda.synchronize()
        if backend == "gloo":
            torch.cuda.synchronize()
    """
    assert lint(source) == [("CDL201", 17, 9)]
