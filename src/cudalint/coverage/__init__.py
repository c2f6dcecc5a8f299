"""MPS operator coverage: per torch release, what each ATen operator does on Apple's MPS backend.

    from cudalint.coverage import CoverageDB, assess_api
    db = CoverageDB.load()
    db.status("aten::grid_sampler_3d", "2.5")        # OpStatus.NOT_IMPLEMENTED
    db.first_supported("grid_sampler_3d")            # "2.9.1"
    assess_api("torch.nn.functional.grid_sample", "2.5", ndim=5)

Nothing here imports torch; the data lives in rules/ (see docs/coverage.md).
"""

from .api_ops import OpVerdict, api_ops, assess_api
from .db import CoverageDB, rules_dir
from .status import OpStatus, Resolution
from .xfail import DtypeLimits, KnownFailure

__all__ = [
    "CoverageDB",
    "DtypeLimits",
    "KnownFailure",
    "OpStatus",
    "OpVerdict",
    "Resolution",
    "api_ops",
    "assess_api",
    "rules_dir",
]
