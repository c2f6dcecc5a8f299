"""A name that is None on every Mac guards what its `is not None` / truthiness test runs: each other
value it holds is made under a CUDA guard, in the CUDA arm of a conditional, or by a call that raises
off CUDA. One value that a Mac can hold (a parameter, an unguarded tensor, a portable API) keeps the
finding."""

import textwrap

from conftest import findings_of, triples


def lint(source: str, select):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select=select))


def test_the_cuda_arm_of_a_conditional_and_its_tests():
    source = """
    import torch


    def run(x, device):
        stream = torch.cuda.Stream() if torch.cuda.is_available() else None
        index = torch.device(device).index if torch.device(device).type == "cuda" else None
        if stream is not None:
            torch.cuda.synchronize()
        if stream:
            torch.cuda.synchronize()
        if x.numel() > 0 and index is not None:
            x = x.cuda(index)
        if index is None:
            return x
        return x.cuda(index)
    """
    assert lint(source, {"CDL102", "CDL201"}) == []


def test_a_value_a_mac_can_hold_keeps_the_finding():
    source = """
    import torch


    def run(x, device, given=None):
        index = torch.device(device).index if device.startswith("mps") else None
        if index is not None:
            x = x.cuda(index)
        if given is not None:
            x = x.cuda(given)
        ready = torch.cuda.is_available() if x.numel() else None
        if ready is not None:
            torch.cuda.synchronize()
        if index is None:
            torch.cuda.synchronize()
        return x
    """
    assert lint(source, {"CDL102", "CDL201"}) == [
        ("CDL102", 7, 15),
        ("CDL102", 9, 15),
        ("CDL201", 12, 9),
        ("CDL201", 14, 9),
    ]


def test_an_attribute_set_only_under_a_cuda_guard_in_its_class():
    source = """
    import torch


    class Loader:
        def __init__(self, use_cuda_graph):
            self.event = None
            self.other = None
            if use_cuda_graph and torch.cuda.is_available():
                self.event = torch.cuda.Event()
            if use_cuda_graph:
                self.other = torch.Event()

        def step(self):
            if self.event is not None:
                torch.cuda.synchronize()
            if self.other is not None:
                torch.cuda.synchronize()
    """
    assert lint(source, {"CDL201"}) == [("CDL201", 17, 13)]


def test_a_result_that_raises_off_cuda_is_never_held_on_a_mac():
    source = """
    import torch


    def run(options):
        stream = torch.cuda.Stream() if options.overlap else None
        if stream is not None:
            torch.cuda.synchronize()
        return stream
    """
    # the stream is made (and reported) on line 5; the synchronize after the test never runs on a Mac
    assert lint(source, {"CDL201", "CDL305"}) == [("CDL305", 5, 14)]


def test_none_on_a_mac_is_no_count():
    source = """
    import torch


    def run(x, device):
        index = torch.device(device).index if torch.device(device).type == "cuda" else None
        if index == 0:
            return x
        else:
            return x.cuda()
    """
    # on a Mac `index == 0` is false, so the else branch runs there
    assert lint(source, {"CDL102"}) == [("CDL102", 9, 18)]


def test_a_test_first_met_deep_in_another_question_is_answered_in_full():
    # `module`'s bindings lead back to the guard of line 13 from deep inside the test of line 14;
    # what was worked out there with little depth left is not the answer for line 13 itself
    source = """
    import torch


    def place(module, name, device, value=None):
        for part in name.split("."):
            module = getattr(module, part)
        if value is not None:
            device = value.device
        old = getattr(module, name)
        if value is not None or old.device != torch.device(device):
            if module.weight is not None and str(module.weight.device) != "meta":
                index = torch.device(device).index if torch.device(device).type == "cuda" else None
                if not module.ready and index is not None:
                    if module.bias is not None and module.bias.device.type != "meta":
                        module = module.cuda(index)
                    elif module.bias is None:
                        module = module.cuda(index)
                module = module.cuda(index)
        return module
    """
    assert lint(source, {"CDL102"}) == [("CDL102", 18, 29)]
