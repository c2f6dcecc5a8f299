"""CDL104 stays quiet where a `"cuda" if available else "cpu"` selection is no porting problem:
not a device (part of a longer string), followed by an MPS override of the same name, or only
torch.load's map_location; everywhere else it is reported."""

import textwrap

from conftest import findings_of, triples


def lint(text):
    return triples(findings_of(textwrap.dedent(text).lstrip("\n"), select={"CDL104"}))


def test_part_of_a_longer_string_is_not_a_device():
    assert lint(
        """
        import torch

        on_gpu = torch.cuda.is_available()
        key = f"{'cuda' if on_gpu else 'cpu'}_time_total"
        name = "self_" + ("cuda" if on_gpu else "cpu")
        device = f"{'cuda' if on_gpu else 'cpu'}:{0}"
        other = f"{'cuda' if on_gpu else 'cpu'}"
        """
    ) == [("CDL104", 6, 13), ("CDL104", 7, 12)]


def test_an_mps_override_of_the_same_name_completes_the_selection():
    assert lint(
        """
        import torch

        torch_device = "cuda" if torch.cuda.is_available() else "cpu"
        if hasattr(torch.backends, "mps"):
            torch_device = "mps" if torch.backends.mps.is_available() else torch_device

        device = "cuda" if torch.cuda.is_available() else "cpu"
        other = "mps" if torch.backends.mps.is_available() else "cpu"
        """
    ) == [("CDL104", 7, 10)]


def test_only_a_map_location_of_torch_load():
    assert lint(
        """
        import torch


        def load(path, device=None):
            if device is None:
                device = "cuda" if torch.cuda.is_available() else "cpu"
                checkpoint = torch.load(path, map_location=device)
            else:
                checkpoint = torch.load(path, map_location=device)
            return checkpoint


        def direct(path):
            return torch.load(path, map_location="cuda" if torch.cuda.is_available() else "cpu")


        def load_and_move(path, model):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            state = torch.load(path, map_location=device)
            model.load_state_dict(state)
            return model.to(device)


        def wrapped(path):
            return torch.load(path, map_location=torch.device("cuda" if torch.cuda.is_available() else "cpu"))


        def picked():
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")


        def bound_device(path):
            device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
            return torch.load(path, map_location=device)


        def bound_device_moved(path, model):
            device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
            model.load_state_dict(torch.load(path, map_location=device))
            return model.to(device)
        """
    ) == [("CDL104", 18, 14), ("CDL104", 29, 25), ("CDL104", 38, 27)]


def test_a_selection_nothing_reads_changes_nothing():
    assert lint(
        """
        import torch


        def train(model, batches):
            device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
            for batch in batches:
                model(batch.cuda())


        def closure(model):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            return lambda x: x.to(device)


        def loop(batches):
            for batch in batches:
                if batch is not None:
                    batch.to(device)
                device = "cuda" if torch.cuda.is_available() else "cpu"


        def introspected():
            device = "cuda" if torch.cuda.is_available() else "cpu"
            return locals()


        def declared():
            global device
            device = "cuda" if torch.cuda.is_available() else "cpu"


        def keyword_only(model):
            device = "cuda" if torch.cuda.is_available() else "cpu"
            return model.to(device=None), model.device


        module_level = "cuda" if torch.cuda.is_available() else "cpu"


        def wrapped(model):
            # blitz's tests: the torch.device of the selection is bound to a name nothing reads
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return model(torch.ones(3))


        def wrapped_and_read(model):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return model.to(device)
        """
    ) == [("CDL104", 11, 14), ("CDL104", 19, 18), ("CDL104", 23, 14), ("CDL104", 29, 14), ("CDL104", 37, 16),
          ("CDL104", 47, 27)]


def test_a_chain_that_holds_a_selection_is_reported_once_where_the_selection_is():
    # torchani's _parse_device_and_dtype: the chain maps the caller's string; its `device is None` arm
    # is the selection that forgets MPS, reported there. A chain with no such arm is reported itself.
    assert lint(
        """
        import torch


        def parse(device=None):
            if device == "cuda":
                chosen = "cuda"
            elif device == "cpu":
                chosen = "cpu"
            elif device is None:
                chosen = "cuda" if torch.cuda.is_available() else "cpu"
            else:
                raise ValueError(device)
            return chosen


        def pick():
            if torch.cuda.is_available():
                chosen = "cuda"
            else:
                chosen = "cpu"
            return chosen
        """
    ) == [("CDL104", 10, 18), ("CDL104", 17, 5)]


def test_a_chosen_device_kept_only_where_cuda_is_available():
    assert lint(
        """
        import torch


        class Gate:
            def __init__(self, device="cuda"):
                self.device = torch.device(device if torch.cuda.is_available() else "cpu")


        def pick(args):
            return args.device if torch.cuda.is_available() else "cpu"


        def not_a_device(mode):
            return mode if torch.cuda.is_available() else "cpu"


        def loads_only(path, device):
            return torch.load(path, map_location=device if torch.cuda.is_available() else "cpu")


        class Inverted:
            # nussl's projet: the same choice written the other way round
            def prepare(self):
                self.device = "cpu" if not torch.cuda.is_available() else self.device


        def inverted(device):
            return torch.device("cpu" if not torch.cuda.is_available() else device)


        def inverted_not_a_device(mode):
            return "cpu" if not torch.cuda.is_available() else mode
        """
    ) == [("CDL104", 6, 36), ("CDL104", 10, 12), ("CDL104", 24, 23), ("CDL104", 28, 25)]


def test_a_move_in_the_variant_a_test_parameter_picks_is_the_tests_choice():
    # ptwt's test_cwt: `cuda` is parametrized [False, True]; under it, the move waits for CUDA
    source = """
        import pytest
        import torch


        @pytest.mark.parametrize("cuda", [False, True])
        def test_cwt(cuda):
            sig = torch.ones(3)
            if cuda:
                if torch.cuda.is_available():
                    sig = sig.cuda()
            return sig


        def test_host():
            sig = torch.ones(3)
            if torch.cuda.is_available():
                sig = sig.cuda()
            return sig
        """
    assert triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL104"}, path="cwt_checks.py")) == [
        ("CDL104", 16, 5)]
    # in a test module CDL104 is silenced altogether (a test that falls back to the CPU runs on a Mac)
    assert triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL104"}, path="tests/test_cwt.py")) == []


def test_a_selection_inside_a_device_call_is_one_finding():
    # penn: `torch.device("cpu" if gpu is None else f"cuda:{gpu}")` was CDL104 and CDL101 at its CUDA arm;
    # the selection's finding speaks for the arm (CDL104 supersedes CDL101 there, in the catalog)
    source = """
        import torch


        def pick(gpu=None):
            return torch.device("cpu" if gpu is None else f"cuda:{gpu}")


        def hard():
            return torch.device("cuda:0")
        """
    assert triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL101", "CDL104"})) == [
        ("CDL104", 5, 25), ("CDL101", 9, 25)]
    assert triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL101"})) == [
        ("CDL101", 5, 51), ("CDL101", 9, 25)]
