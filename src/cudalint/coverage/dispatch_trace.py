"""Record the ATen operators a call reaches, under a TorchDispatchMode (needs torch)."""

from __future__ import annotations

from typing import Callable, Set


def op_name(func) -> str:
    """``aten::add.Tensor`` for an OpOverload; the default overload keeps the bare name."""
    schema = func._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def record_ops(fn: Callable, *args, **kwargs) -> Set[str]:
    """Call ``fn`` and return the names of the ``aten::`` operators dispatched while it ran.

    Composite-implicit operators decompose before they reach a dispatch mode, so
    what is recorded is what the backend kernels see (on CPU: the CPU path).
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops: Set[str] = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = op_name(func)
            if name.startswith("aten::"):
                self.ops.add(name)
            return func(*args, **(kwargs or {}))

    with Recorder() as recorder:
        fn(*args, **kwargs)
    return recorder.ops
