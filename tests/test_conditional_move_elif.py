"""CDL104 and a conditional move to CUDA as the last `elif` of a chain: `if device: model.to(device)` /
`elif torch.cuda.is_available(): model.to("cuda")` leaves a Mac that passes no device on the CPU, like
the same move at the head of an `if`. A chain that tests for MPS first picks the Mac's GPU itself."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def place(model, device=None):
    if device:
        model.to(device)
    elif torch.cuda.is_available():
        model.to("cuda")
    return model


def place_mps(model, device=None):
    if torch.backends.mps.is_available():
        model.to("mps")
    elif torch.cuda.is_available():
        model.to("cuda")
    return model


def head(model):
    if torch.cuda.is_available():
        model.cuda()
    return model
'''


def test_a_conditional_move_in_an_elif_is_a_selection_that_forgets_mps():
    found = triples(findings_of(textwrap.dedent(SOURCE).lstrip("\n"), select={"CDL101", "CDL102", "CDL104"}))
    assert found == [("CDL104", 7, 5), ("CDL104", 21, 5)]


FLAGS = '''
import torch


class Engine:
    def __init__(self, model, use_gpu=True):
        self.use_gpu = torch.cuda.is_available() and use_gpu
        self.verbose = use_gpu
        self.model = model

    def step(self, x):
        if self.use_gpu:
            x = x.cuda()
        return self.model(x)

    def talk(self, x):
        if self.verbose:
            x = x.cuda()
        return x


def local(model):
    use_cuda = torch.cuda.is_available()
    if use_cuda:
        model.cuda()
    return model
'''


def test_a_flag_the_class_binds_to_an_availability_query_decides_the_move():
    """torchreid's engines: `self.use_gpu = torch.cuda.is_available() and use_gpu` in `__init__`, then `if
    self.use_gpu: imgs = imgs.cuda()`: the same CUDA-or-CPU choice as a local flag (23). A flag bound to
    what the caller passed (17) is no question about the host: that move is CDL102's."""
    found = triples(findings_of(textwrap.dedent(FLAGS).lstrip("\n"), select={"CDL104", "CDL102"}))
    assert found == [("CDL104", 11, 9), ("CDL102", 17, 19), ("CDL104", 23, 5)]


def test_cpu_0_is_the_cpu_arm_of_a_selection():
    """monai-generative's tests: `torch.device("cuda:0" if torch.cuda.is_available() else "cpu:0")` is the
    same CUDA-or-CPU choice ("cpu:0" names the one CPU device); "cpu:1" is no device torch knows as the host."""
    source = (
        "import torch\n\na = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu:0\")\n"
        "b = torch.device(\"cuda:0\" if torch.cuda.is_available() else \"cpu:1\")\n"
    )
    assert triples(findings_of(source, select={"CDL104"})) == [("CDL104", 3, 18)]


RETURNS = '''
import torch


def maybe_cuda(x):
    if torch.cuda.is_available():
        return x.cuda()
    return x


def then_mps(x):
    if torch.cuda.is_available():
        return x.cuda()
    if torch.backends.mps.is_available():
        return x.to("mps")
    return x


def moved_then_mps(x):
    if torch.cuda.is_available():
        x = x.cuda()
    if torch.backends.mps.is_available():
        x = x.to("mps")
    return x
'''


def test_a_move_returned_only_where_cuda_is_available():
    """pytorch-toolbelt's `maybe_cuda`: `if torch.cuda.is_available(): return x.cuda()`, then `return x`
    (5). A later statement of the block that picks MPS makes it a choice of either GPU (11, 19)."""
    assert triples(findings_of(textwrap.dedent(RETURNS).lstrip("\n"), select={"CDL104"})) == [("CDL104", 5, 5)]


def test_a_move_to_cuda_whose_other_branches_run_only_off_a_mac():
    """open_clip's profiler: `if torch.cuda.is_available(): model = model.cuda()` / `elif device == "npu"
    and torch.npu.is_available(): model = model.npu()`, no `else`: on a Mac no branch runs and the model
    stays on the CPU. An `elif` a Mac can take (MPS, or a test the guard evaluator cannot place) or an
    `else` keeps it quiet."""
    source = textwrap.dedent(
        """
        import torch


        def profile(model, device):
            if torch.cuda.is_available():
                model = model.cuda()
            elif device == "npu" and torch.npu.is_available():
                model = model.npu()
            return model


        def mac_too(model):
            if torch.cuda.is_available():
                model = model.cuda()
            elif torch.backends.mps.is_available():
                model = model.to("mps")
            return model


        def unknown(model, device):
            if torch.cuda.is_available():
                model = model.cuda()
            elif device:
                model = model.to(device)
            return model
        """
    ).lstrip("\n")
    assert triples(findings_of(source, select={"CDL104"})) == [("CDL104", 5, 5)]
