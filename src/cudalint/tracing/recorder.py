"""Capture while the user's code runs (needs torch): every operator through a TorchDispatchMode, and the
CUDA-only Python APIs it calls through thin counting wrappers. Neither changes what the code computes:
operators run as dispatched and their results are returned as they are; wrappers call through."""

from __future__ import annotations

import functools
import inspect
import os
import sys
from typing import Callable, Dict, List, Optional, Tuple

from cudalint.coverage.dispatch_trace import dispatch_recorder, op_name

from .records import WATCHED_DTYPES, ApiCall, Created, OpRecord, Site, TraceData
from .sites import SiteFinder

# torch.cuda functions that answer honestly on any machine: portable code calls them to choose a device.
PORTABLE_CUDA_QUERIES = frozenset({"is_available", "is_initialized", "device_count"})
# Operators that bring a tensor built outside the dispatcher (torch.tensor([...])) into it: their input is
# the new tensor itself, so a watched dtype there counts as created.
LIFT_OPS = frozenset({"aten::lift_fresh", "aten::lift_fresh_copy", "aten::lift"})


class Recorder:
    """Collects operators, watched dtypes created and CUDA-only API calls; `data()` snapshots them."""

    def __init__(self, torch):
        self._torch = torch
        self._sites = SiteFinder(os.path.dirname(os.path.abspath(torch.__file__)))
        self._names: Dict[object, str] = {}
        self._ops: Dict[str, OpRecord] = {}
        self._op_dtypes: Dict[str, Dict[object, int]] = {}
        self._created: Dict[Tuple[str, str, Optional[Site]], int] = {}
        self._api_calls: Dict[str, List] = {}  # api -> [count, first site]
        self._watched = {getattr(torch, name): name for name in WATCHED_DTYPES}
        self._cuda_tensor_ops = 0
        self._restore: List[Callable[[], None]] = []
        self._mode = dispatch_recorder(self._on_op)

    # lifecycle ------------------------------------------------------------

    def start(self) -> None:
        self._wrap_cuda_apis()
        self._mode.__enter__()

    def stop(self) -> None:
        try:
            self._mode.__exit__(None, None, None)
        finally:
            while self._restore:
                self._restore.pop()()

    # operators ------------------------------------------------------------

    def _on_op(self, func, args, kwargs, out) -> None:
        name = self._names.get(func)
        if name is None:
            name = self._names[func] = op_name(func)
        record = self._ops.get(name)
        if record is None:
            record = self._ops[name] = OpRecord(name, site=self._sites.find())
            self._op_dtypes[name] = {}
        record.count += 1
        tensor_type = self._torch.Tensor
        dtypes = set()
        on_cuda = False
        for value in (*args, *kwargs.values()):
            if isinstance(value, tensor_type):
                dtypes.add(value.dtype)
                on_cuda = on_cuda or value.is_cuda
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, tensor_type):
                        dtypes.add(item.dtype)
                        on_cuda = on_cuda or item.is_cuda
        counts = self._op_dtypes[name]
        for dtype in dtypes:
            counts[dtype] = counts.get(dtype, 0) + 1
        for result in out if isinstance(out, (list, tuple)) else (out,):
            if not isinstance(result, tensor_type):
                continue
            on_cuda = on_cuda or result.is_cuda
            watched = self._watched.get(result.dtype)
            if watched is not None and (result.dtype not in dtypes or name in LIFT_OPS):
                key = (watched, name, self._sites.find())
                self._created[key] = self._created.get(key, 0) + 1
        if on_cuda:
            self._cuda_tensor_ops += 1

    # CUDA-only APIs -------------------------------------------------------

    def _wrap_cuda_apis(self) -> None:
        torch = self._torch
        for name, value in list(vars(torch.cuda).items()):
            if name.startswith("_") or name in PORTABLE_CUDA_QUERIES:
                continue
            if not (inspect.isfunction(value) or inspect.isbuiltin(value)):
                continue
            if not str(getattr(value, "__module__", "") or "").startswith("torch.cuda"):
                continue
            self._patch(torch.cuda, name, f"torch.cuda.{name}")
        self._patch(torch.Tensor, "cuda", "Tensor.cuda")
        self._patch(torch.nn.Module, "cuda", "nn.Module.cuda")

    def _patch(self, owner, name: str, api: str) -> None:
        had_own = name in vars(owner)
        original = getattr(owner, name)
        sites = self._sites
        calls = self._api_calls

        @functools.wraps(original)
        def counted(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if sites.is_user(caller):
                entry = calls.get(api)
                if entry is None:
                    calls[api] = [1, sites.find()]
                else:
                    entry[0] += 1
            return original(*args, **kwargs)

        setattr(owner, name, counted)
        self._restore.append(lambda: setattr(owner, name, original) if had_own else delattr(owner, name))

    # result ---------------------------------------------------------------

    def data(self) -> TraceData:
        ops = []
        for name, record in sorted(self._ops.items()):
            dtypes = {str(dtype).replace("torch.", ""): n for dtype, n in self._op_dtypes[name].items()}
            ops.append(OpRecord(name, record.count, dict(sorted(dtypes.items())), record.site))
        created = [Created(dtype, op, count, site) for (dtype, op, site), count in self._created.items()]
        created.sort(key=lambda c: (c.dtype, c.op, str(c.site)))
        apis = [ApiCall(api, count, site) for api, (count, site) in sorted(self._api_calls.items())]
        return TraceData(ops=ops, created=created, cuda_apis=apis, cuda_tensor_ops=self._cuda_tensor_ops)
