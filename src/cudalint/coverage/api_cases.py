"""Group the traced samples of one API into cases told apart by cheap features.

A feature is the input's ndim or a str/bool keyword argument. The smallest set
of features (one, else two) whose values determine the operators reached,
ignoring structural operators such as views, becomes the case key; each
combination of values seen becomes one case.
"""

from __future__ import annotations

import json
from itertools import combinations
from typing import Dict, List, Optional, Sequence, Tuple

from .names import base_name
from .resolve import STRUCTURAL_OPS

Sample = Tuple[Dict[str, object], Sequence[str]]


def _work_ops(ops: Sequence[str]) -> frozenset:
    return frozenset(op for op in ops if base_name(op) not in STRUCTURAL_OPS)


def _determines(samples: Sequence[Sample], keys: Tuple[str, ...]) -> bool:
    seen: Dict[tuple, frozenset] = {}
    for feats, ops in samples:
        value = tuple(feats.get(key) for key in keys)
        if seen.setdefault(value, _work_ops(ops)) != _work_ops(ops):
            return False
    return True


def case_keys(samples: Sequence[Sample]) -> Optional[Tuple[str, ...]]:
    keys = sorted({key for feats, _ in samples for key in feats})
    for size in (1, 2):
        for combo in combinations(keys, size):
            if _determines(samples, combo):
                return combo
    return None


def split_cases(samples: Sequence[Sample]) -> List[dict]:
    """``[{"when": {feature: value}, "ops": [...]}, ...]``; [] when all samples reach the same
    operators or no one or two features tell them apart."""
    if len({_work_ops(ops) for _, ops in samples}) < 2:
        return []
    keys = case_keys(samples)
    if keys is None:
        return []
    cases: Dict[str, Tuple[dict, set]] = {}
    for feats, ops in samples:
        when = {key: feats[key] for key in keys if key in feats}
        cases.setdefault(json.dumps(when, sort_keys=True), (when, set()))[1].update(ops)
    return [{"when": when, "ops": sorted(ops)} for _, (when, ops) in sorted(cases.items())]
