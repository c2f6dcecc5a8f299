"""`self` under another name: a name bound once to the method's `self` (`me = self`), or to
`weakref.proxy(self)`, and a closure's `self = self_ref`, reads the instance's attributes, so
`self._has_cuda = torch.cuda.is_available()` guards there as it does in the method. A name bound to
anything else (another object) reads that object's attributes."""

from conftest import findings_of, triples

SOURCE = '''import weakref

import torch


class Graph:
    def __init__(self, module, other):
        self._has_cuda = torch.cuda.is_available()
        self_ref = weakref.proxy(self)

        def call(x):
            self = self_ref
            if self._has_cuda:
                torch.cuda.current_stream().synchronize()
            return module(x)

        def elsewhere(x):
            self = other
            if self._has_cuda:
                torch.cuda.synchronize()
            return x

        self._call = call

    def method(self):
        me = self
        if me._has_cuda:
            torch.cuda.synchronize()
'''


def test_an_alias_of_self_reads_the_instance():
    assert triples(findings_of(SOURCE, select={"CDL201", "CDL305"})) == [("CDL201", 20, 17)]
