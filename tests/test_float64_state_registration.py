"""CDL608 and state: a float64 buffer a module gives itself (`self.register_buffer`) or that the code
registers on a module it builds moves with the module; one registered on a module the function was
handed (thop's `add_hooks(m)`, run on a model already placed) moves nothing and is not reported."""

import textwrap

from conftest import findings_of, triples


def test_float64_state_is_reported_only_where_its_module_moves_after():
    source = textwrap.dedent(
        """
        import torch


        def add_hooks(m):
            m.register_buffer("total_ops", torch.zeros(1, dtype=torch.float64))


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("table", torch.zeros(4, dtype=torch.float64))
                other = torch.nn.Linear(2, 2)
                other.register_buffer("t", torch.zeros(4, dtype=torch.float64))
        """
    ).lstrip("\n")
    assert triples(findings_of(source, select={"CDL608"})) == [("CDL608", 11, 9), ("CDL608", 13, 9)]
