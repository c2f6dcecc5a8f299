"""Patterns from blind round 63 (bench/EVAL.md, session 37): a CUDA type used as the key of a dispatch table,
and a copy to the host made only for a tensor whose `.is_cuda` holds, before `.numpy()`. (Round 63's fixtures
loaded by a path relative to the project's root: tests/test_shipped_files.py.)"""

from conftest import findings_of, triples


def test_a_cuda_type_as_a_key_of_a_table_is_named_not_made():
    source = ('import torch\n\n'
              'class Pickler:\n'
              '    def __init__(self, reduce_event):\n'
              '        self.dispatch_table = {}\n'
              '        self.dispatch_table[torch.cuda.Event] = reduce_event\n'
              '        self.reducers = {torch.cuda.Event: reduce_event}\n'
              '        self.event = torch.cuda.Event(enable_timing=True)\n')
    assert triples(findings_of(source, select={"CDL306"})) == [("CDL306", 8, 22)]


def test_a_host_copy_made_only_for_a_cuda_tensor_before_numpy():
    source = ('import torch\n\n'
              'def to_numpy(inputs):\n'
              '    if inputs.is_cuda:\n'
              '        inputs = inputs.cpu()\n'
              '    return inputs.detach().numpy()\n\n'
              'def either(inputs):\n'
              '    if inputs.is_cuda:\n'
              '        values = inputs.cpu().numpy()\n'
              '    else:\n'
              '        values = inputs.numpy()\n'
              '    return values\n\n'
              'def portable(inputs):\n'
              '    if inputs.is_cuda:\n'
              '        inputs = inputs.cpu()\n'
              '    return inputs.sum()\n')
    found = findings_of(source, select={"CDL103", "CDL120"})
    assert triples(found) == [("CDL120", 4, 8), ("CDL103", 9, 8)]
