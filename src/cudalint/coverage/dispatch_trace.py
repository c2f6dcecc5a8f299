"""Record the ATen operators a call reaches, under a TorchDispatchMode (needs torch).

`record_ops` (the API -> operator data) and `cudalint trace` (the operators a
whole program reaches) share `dispatch_recorder`.
"""

from __future__ import annotations

from typing import Callable, Set


def op_name(func) -> str:
    """``aten::add.Tensor`` for an OpOverload; the default overload keeps the bare name."""
    schema = func._schema
    return schema.name + ("." + schema.overload_name if schema.overload_name else "")


def dispatch_recorder(on_op: Callable):
    """A TorchDispatchMode that runs every operator unchanged and then calls
    ``on_op(func, args, kwargs, out)``; ``out`` is None when the operator raised.

    Composite-implicit operators decompose before they reach a dispatch mode, so
    what is seen is what the backend kernels see (on CPU: the CPU path).
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            try:
                out = func(*args, **kwargs)
            except BaseException:
                on_op(func, args, kwargs, None)
                raise
            on_op(func, args, kwargs, out)
            return out

    return Recorder()


def record_ops(fn: Callable, *args, **kwargs) -> Set[str]:
    """Call ``fn`` and return the names of the ``aten::`` operators dispatched while it ran."""
    ops: Set[str] = set()

    def note(func, _args, _kwargs, _out) -> None:
        name = op_name(func)
        if name.startswith("aten::"):
            ops.add(name)

    with dispatch_recorder(note):
        fn(*args, **kwargs)
    return ops
