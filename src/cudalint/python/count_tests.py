"""A CUDA query that counts (`torch.cuda.device_count()`, a flag bound to one) compared with a number or
None, read as a guard. The count is 0 on a Mac (None for a version or handle that is absent there), so
what the comparison says follows from its value there: `count > 0`, `>= 2`, `== 2` and `is not None`
hold only where the query does; `count == 0`, `< 2`, `<= 1`, `!= 2` and `is None` fail only there.
One rule for both trees: the guard evaluator on libcst's (semantic/guards.py) and the index's facts
reader on CPython's (project/facts.py)."""

from __future__ import annotations

from typing import Optional

FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}  # `0 < n` is `n > 0`


def count_meaning(op: str, number: Optional[int], count_left: bool = True) -> Optional[bool]:
    """`op` is one of ==, !=, <, <=, >, >=, is, is not; `number` None compares with None. True: the
    comparison holds only where the query does; False: it fails only there; None: it says nothing."""
    if number is None:
        if op in ("is not", "!="):
            return True
        if op in ("is", "=="):
            return False
        return None
    if not count_left:
        op = FLIPPED.get(op, op)
    if (op == ">" and number >= 0) or (op == ">=" and number >= 1) or (op == "!=" and number == 0) or (op == "==" and number >= 1):
        return True
    if (op == "==" and number == 0) or (op == "<" and number >= 1) or (op == "<=" and number >= 0) or (op == "!=" and number >= 1):
        return False
    return None
