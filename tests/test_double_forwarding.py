"""CDL602: a class's own `.double()` that forwards the call (`return super().double()`) implements
the conversion; the user's call of it is the use. Any other `.double()` is reported."""

import textwrap

from conftest import findings_of, triples


def test_a_double_override_forwarding_the_call_is_not_reported():
    text = textwrap.dedent(
        """
        import torch


        class Mixin(torch.nn.Module):
            def double(self):
                self._dtype = "float64"
                return super().double()

            def widen(self, x):
                return x.double()


        def convert(module):
            return module.double()
        """
    ).lstrip("\n")
    assert triples(findings_of(text, select={"CDL602"})) == [("CDL602", 10, 18), ("CDL602", 14, 19)]
