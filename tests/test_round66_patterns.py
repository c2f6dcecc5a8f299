"""Patterns from blind rounds 66 and 67 (bench/EVAL.md, session 38): a test module's `__main__` block that
calls its tests, a test that follows a tensor's device, an opt-in switch read negated or placing a list, a
device passed by position to the file's own function or class, a decorator that supplies arguments, and two
CUDA-only libraries the package table lacked."""

from conftest import findings_of, triples

HOST_TESTS = '''import torch
from kinematics import build_chain


def test_cpu_only():
    x = build_chain().to(dtype=torch.float64)
    y = torch.zeros(3, device=x.device, dtype=x.dtype).to(x.device)
    assert torch.allclose(x + y, x)


def test_cuda():
    if torch.cuda.is_available():
        x = torch.ones(3, dtype=torch.float64, device="cuda")
        assert x.sum() == 3


if __name__ == "__main__":
    test_cpu_only()
    test_cuda()
'''


def test_a_main_block_calling_the_tests_leaves_each_test_judged_alone():
    found = findings_of(HOST_TESTS, path="tests/test_ops.py", select={"CDL601"})
    assert triples(found) == []


def test_a_main_block_that_places_a_tensor_still_counts():
    source = HOST_TESTS + '    torch.ones(1).to("cuda")\n'
    found = findings_of(source, path="tests/test_ops.py", select={"CDL601"})
    assert triples(found) == [("CDL601", 6, 32)]


def test_a_test_reading_self_device_places_a_tensor():
    source = '''import torch


class TestOps:
    def test_sum(self):
        x = torch.ones(3, dtype=torch.float64).to(self.device)
        assert x.sum() == 3


def test_cuda():
    torch.ones(1, device="cuda")
'''
    found = findings_of(source, path="tests/test_ops.py", select={"CDL601"})
    assert triples(found) == [("CDL601", 6, 33)]


SWITCHES = '''import torch


class Approximator:
    def __init__(self, net, use_cuda=False):
        self._use_cuda = use_cuda
        self.net = net

    def predict(self, batch):
        if not self._use_cuda:
            args = [torch.as_tensor(x) for x in batch]
        else:
            args = [torch.as_tensor(x).cuda() for x in batch]
        return self.net(*args)

    def targets(self, ys):
        if self._use_cuda:
            ys = [y.cuda() for y in ys]
        return ys

    def mixed(self, batch):
        if not self._use_cuda:
            pass
        else:
            batch = batch.cuda()
            torch.cuda.synchronize()
        return batch
'''


def test_an_opt_in_switch_read_negated_or_placing_a_list_guards_its_arm():
    found = findings_of(SWITCHES, select={"CDL102", "CDL201"})
    assert triples(found) == [("CDL102", 25, 27), ("CDL201", 26, 13)]


POSITIONAL = '''import sounddevice
import torch


class Scorer:
    def __init__(self, device, name="base"):
        self.device = device
        self.net = torch.nn.Linear(2, 2).to(self.device)


def build(device, n=1):
    return torch.zeros(n, device=device)


def label(name, device=None):
    return name


def query(device, kind):
    return sounddevice.query_devices(device, kind)


if __name__ == "__main__":
    scorer = Scorer("cuda", name="large")
    z = build("cuda", 3)
    tag = label("cuda")
    caps = query("cuda", "input")
'''


def test_a_device_passed_by_position_to_the_files_own_function_or_class():
    found = findings_of(POSITIONAL, select={"CDL101"})
    assert triples(found) == [("CDL101", 24, 21), ("CDL101", 25, 15)]


DECORATED = '''import torch
from torch.cuda.amp import autocast
from fastargs.decorators import param


@param("training.epochs")
def train(model, loader, epochs=None):
    for _ in range(epochs):
        for x in loader:
            with autocast():
                model(x)


if __name__ == "__main__":
    train(None, [])
'''


def test_a_decorator_that_may_supply_arguments_hides_the_defaults_from_the_call_sites():
    found = findings_of(DECORATED, path="train.py", select={"CDL205"})
    assert triples(found) == [("CDL205", 2, 1), ("CDL205", 10, 18)]


def test_without_the_decorator_the_call_sites_decide():
    source = DECORATED.replace('@param("training.epochs")\n', "")
    found = findings_of(source, path="train.py", select={"CDL205"})
    assert triples(found) == [("CDL205", 2, 1), ("CDL205", 9, 18)]


def test_tiny_cuda_nn_and_nvdiffrast_are_cuda_only_libraries():
    source = '''import nvdiffrast.torch as dr


def encoder():
    import tinycudann as tcnn
    return tcnn.Encoding(3, {})
'''
    found = findings_of(source, select={"CDL404"})
    assert triples(found) == [("CDL404", 1, 1), ("CDL404", 5, 5)]
    assert "nvdiffrast runs only on NVIDIA GPUs" in found[0].message
    assert "tiny-cuda-nn runs only on NVIDIA GPUs" in found[1].message


def test_the_manifests_know_them_too():
    found = findings_of("tinycudann\nnvdiffrast @ git+https://github.com/NVlabs/nvdiffrast\n", path="requirements.txt",
                        kind="requirements", select={"CDL501"})
    assert triples(found) == [("CDL501", 1, 1), ("CDL501", 2, 1)]
