"""Resolve composite operators: a composite runs on MPS where its callees run.

Follows each composite's direct callees recursively (a callee that is being
resolved further up the chain counts as neutral, so cycles terminate) and
collects the operators without an MPS path that can be reached.

Two rules keep device and layout branches from counting as gaps:

* callees that only shape, view, copy or allocate tensors (``STRUCTURAL_OPS``)
  are taken to run everywhere and are not followed (their code paths for
  sparse or nested tensors would otherwise reach unrelated kernels); nor are
  conjugation callees, which only work on complex tensors;
* a callee whose only kernels belong to one other backend or layout
  (``cudnn_*``, ``*_for_cpu``, sparse, quantized, ...) sits behind a device or
  layout check and is ignored.

Where a composite picks its path by device in a way the call graph cannot show
(the convolutions choosing ``_mps_convolution``), a reviewed correction
(data/mps-coverage/corrections.toml) fixes its outcome: such an operator
carries a ``forced`` code and is not resolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Mapping, Optional, Tuple

from . import status as codes
from .names import base_name
from .release_facts import (
    KIND_COMPOSITE,
    KIND_CPU_FALLBACK,
    KIND_MISSING,
    KIND_MISSING_BACKEND,
    KIND_NATIVE,
    OpFacts,
)

# Callees that only shape, view, copy or allocate tensors; they never carry the computation.
STRUCTURAL_OPS = frozenset(
    """
    _reshape_alias _to_copy _unsafe_view alias as_strided clone contiguous copy_ detach empty empty_like
    empty_strided expand expand_as fill_ full full_like lift_fresh narrow new_empty new_empty_strided
    new_full new_zeros ones ones_like permute reshape resize_ resize_as_ resolve_conj resolve_neg select
    set_ slice squeeze t to transpose unbind unsqueeze view view_as zero_ zeros zeros_like
    """.split()
)
# Conjugation only does work for complex tensors; complex support is a dtype question (see ``xfail``).
COMPLEX_ONLY_OPS = frozenset("_conj _conj_physical conj conj_physical view_as_complex view_as_real".split())
NOT_FOLLOWED = STRUCTURAL_OPS | COMPLEX_ONLY_OPS


@dataclass(frozen=True)
class Reach:
    gaps: FrozenSet[str] = frozenset()       # reachable operators without any MPS path
    fallbacks: FrozenSet[str] = frozenset()  # reachable explicit CPU fallbacks
    works: bool = False                      # some reachable non-structural operator runs on MPS


_NEUTRAL = Reach()


def _forced_reach(key: str, code: str) -> Reach:
    """What a composite with a corrected outcome stands for, to the composites calling it."""
    if code == codes.CODE_COMPOSITE_RUNS:
        return Reach(works=True)
    if code == codes.CODE_COMPOSITE_FALLBACK:
        return Reach(fallbacks=frozenset({key}))
    if code == codes.CODE_COMPOSITE_UNKNOWN:
        return _NEUTRAL
    return Reach(gaps=frozenset({key}), works=code == codes.CODE_COMPOSITE_PARTIAL)


def _leaf_reach(key: str, facts: Optional[OpFacts]) -> Reach:
    if facts is not None and facts.forced:
        return _forced_reach(key, facts.forced)
    if facts is None or facts.kind == KIND_MISSING_BACKEND:
        return _NEUTRAL
    if facts.kind == KIND_NATIVE:
        return Reach(works=True)
    if facts.kind == KIND_CPU_FALLBACK:
        return Reach(fallbacks=frozenset({key}))
    return Reach(gaps=frozenset({key}))


class Resolver:
    """Resolves every composite of one release.

    Composites call each other in cycles, so reachability is computed per
    strongly connected component (Tarjan), callees first: every member of a
    cycle reaches the same operators, whatever order the queries come in.
    """

    def __init__(self, ops: Mapping[str, OpFacts]):
        self.ops = ops
        self._reach: Dict[str, Reach] = {}

    def _followed(self, key: str) -> Tuple[str, ...]:
        """Callees whose own reach counts for ``key`` (structural ones are not followed)."""
        callees = self.ops[key].callees or ()
        return tuple(c for c in callees if base_name(c) not in NOT_FOLLOWED)

    def _is_composite(self, key: str) -> bool:
        """A composite to resolve (one with a corrected outcome counts as a leaf)."""
        facts = self.ops.get(key)
        return facts is not None and facts.kind == KIND_COMPOSITE and not facts.forced

    def reach(self, key: str) -> Reach:
        if not self._is_composite(key):
            return _leaf_reach(key, self.ops.get(key))
        if key not in self._reach:
            self._resolve_from(key)
        return self._reach[key]

    def _own_reach(self, key: str) -> Reach:
        """What ``key`` reaches through its non-composite callees."""
        callees = self.ops[key].callees or ()
        parts = [_leaf_reach(c, self.ops.get(c)) for c in self._followed(key) if not self._is_composite(c)]
        return _union(parts, works=not callees)

    def _resolve_from(self, root: str) -> None:
        index: Dict[str, int] = {}
        low: Dict[str, int] = {}
        stack: list = []
        on_stack: set = set()
        work = [(root, iter(self._followed(root)))]
        index[root] = low[root] = 0
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if not self._is_composite(child) or child in self._reach:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(self._followed(child))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                self._close_component(members)

    def _close_component(self, members: list) -> None:
        inside = set(members)
        parts = [self._own_reach(m) for m in members]
        for member in members:
            for callee in self._followed(member):
                if callee not in inside and self._is_composite(callee):
                    parts.append(self._reach[callee])
        result = _union(parts)
        for member in members:
            self._reach[member] = result

    def code(self, key: str) -> str:
        """The storage code of one operator (see ``status``)."""
        facts = self.ops.get(key)
        if facts is None:
            return codes.CODE_ABSENT
        if facts.forced:
            return facts.forced
        if facts.kind == KIND_NATIVE:
            return codes.CODE_NATIVE
        if facts.kind == KIND_CPU_FALLBACK:
            return codes.CODE_CPU_FALLBACK
        if facts.kind == KIND_MISSING:
            return codes.CODE_MISSING
        if facts.kind == KIND_MISSING_BACKEND:
            return codes.CODE_MISSING_BACKEND
        assert facts.kind == KIND_COMPOSITE, facts.kind
        if facts.callees is None:
            return codes.CODE_COMPOSITE_UNKNOWN
        reach = self.reach(key)
        if reach.gaps:
            return codes.CODE_COMPOSITE_PARTIAL if reach.works else codes.CODE_COMPOSITE_FAILS
        if reach.fallbacks:
            return codes.CODE_COMPOSITE_FALLBACK
        return codes.CODE_COMPOSITE_RUNS


def _union(parts, works: bool = False) -> Reach:
    gaps, fallbacks = set(), set()
    for part in parts:
        gaps |= part.gaps
        fallbacks |= part.fallbacks
        works = works or part.works
    return Reach(frozenset(gaps), frozenset(fallbacks), works)


def resolve_release(ops: Mapping[str, OpFacts]) -> Dict[str, str]:
    """Storage code of every operator of one release, composites resolved."""
    resolver = Resolver(ops)
    return {key: resolver.code(key) for key in sorted(ops)}


def reachable_gaps(key: str, ops: Mapping[str, OpFacts]) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(operators without MPS, explicit CPU fallbacks) reachable from ``key``, sorted."""
    reach = Resolver(ops).reach(key)
    return tuple(sorted(reach.gaps)), tuple(sorted(reach.fallbacks))
