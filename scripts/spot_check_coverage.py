#!/usr/bin/env python3
"""Spot-check the MPS coverage answers against sources the database is not built from.

    python scripts/spot_check_coverage.py            # table of disagreements and the agreement figure
    python scripts/spot_check_coverage.py --all      # every check

Two independent sources:

1. **PyTorch's MPS OpInfo test lists** of each release (common_mps.py / test_mps.py; the raw lists in
   data/mps-coverage, not the dispatch table): an OpInfo listed in UNIMPLEMENTED_XFAILLIST or
   ON_MPS_XFAILLIST for float32 (or every dtype), unconditionally, does not run on MPS; one in no
   forward list for float32 runs. Listed only in a skip list, under a macOS condition, or as an
   undefined-behaviour mismatch: not verifiable. The database's verdict for the API named after the
   OpInfo is "runs" when every operator it reaches runs on MPS or falls back to the CPU (the test passes
   either way), "fails" when one has no MPS path, and not verifiable for partial or unknown composites.
2. **Public PyTorch / torchvision pull requests and issues** (REFERENCES below): the release from which an
   API runs on MPS, each with its reference. Some of these facts are also manual corrections; they are
   counted separately, so the figure from source 1 stands on its own.

Every API in APIS is checked in every release of RELEASES; a check is verifiable when both sides give a
verdict. Prints the checks that disagree with the reason the test list gives.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from cudalint.coverage import CoverageDB  # noqa: E402
from cudalint.coverage.api_ops import api_ops, load_api_ops  # noqa: E402
from cudalint.coverage.status import CODE_ABSENT, CODE_COMPOSITE_FALLBACK, CODE_CPU_FALLBACK, RUNS_ON_MPS  # noqa: E402

RELEASES = ("2.2.2", "2.8.0", "2.10.0", "2.12.1", "2.13.0", "2.15.0")
FAILING_LISTS = ("UNIMPLEMENTED_XFAILLIST", "ON_MPS_XFAILLIST")
# 70 APIs named after their OpInfo: common ones and ones whose MPS support changed between releases.
APIS = (
    "torch.abs", "torch.add", "torch.addmm", "torch.amax", "torch.angle", "torch.argsort", "torch.bincount",
    "torch.bitwise_left_shift", "torch.bmm", "torch.bucketize", "torch.cdist", "torch.cholesky_inverse",
    "torch.cummax", "torch.cumprod", "torch.cumsum", "torch.diag", "torch.erfc", "torch.erfinv", "torch.exp",
    "torch.gcd", "torch.heaviside", "torch.histc", "torch.i0", "torch.igamma", "torch.index_add",
    "torch.index_copy", "torch.index_reduce", "torch.kthvalue", "torch.lcm", "torch.lerp",
    "torch.linalg.cholesky", "torch.linalg.det", "torch.linalg.eig", "torch.linalg.eigh",
    "torch.linalg.householder_product", "torch.linalg.inv", "torch.linalg.lu", "torch.linalg.lu_factor",
    "torch.linalg.lu_solve", "torch.linalg.qr", "torch.linalg.slogdet", "torch.linalg.solve",
    "torch.linalg.solve_triangular", "torch.linalg.svdvals", "torch.logcumsumexp", "torch.logdet",
    "torch.lu_unpack", "torch.matrix_exp", "torch.median", "torch.mode", "torch.multinomial",
    "torch.nanmedian", "torch.nn.functional.avg_pool3d", "torch.nn.functional.grid_sample",
    "torch.nn.functional.hardshrink", "torch.nn.functional.max_pool3d", "torch.nn.functional.pdist",
    "torch.nn.functional.unfold", "torch.nonzero", "torch.polar", "torch.put", "torch.roll",
    "torch.searchsorted", "torch.sort", "torch.special.i1", "torch.special.zeta", "torch.take", "torch.topk",
    "torch.tril_indices", "torch.vdot",
)
# (API, first release that runs it on MPS or None for "no release", the last that does not, reference)
REFERENCES = (
    ("torch.nn.functional.conv3d", "2.2.2", "2.1.2", "pytorch/pytorch#114183, #117027"),
    ("torch.nn.functional.conv_transpose3d", "2.8.0", "2.7.1", "pytorch/pytorch#154696, #130256"),
    ("torch.linalg.lu_solve", "2.10.0", "2.9.1", "pytorch/pytorch#167569, #167238"),
    ("torch.var_mean", "2.0.1", "1.13.1", "torch/backends/mps/__init__.py _init() (2.0-2.2)"),
    ("torchvision.ops.nms", "2.1.2", "2.0.1", "pytorch/vision#7643 (torchvision 0.16)"),
    ("torchvision.ops.roi_align", "2.1.2", "2.0.1", "pytorch/vision#7643, #6986"),
    ("torchvision.ops.deform_conv2d", "2.8.0", "2.7.1", "pytorch/vision#9017, #9164 (torchvision 0.23)"),
    ("torch.nn.functional.grid_sample", "2.9.1", "2.8.0", "5-D input: grid_sampler_3d, pytorch/pytorch#77764"),
    ("torch.Tensor.put_", "2.15.0", "2.14.1", "pytorch/pytorch#94231 (1.13 listed MPS without a kernel)"),
)


def db_verdict(db: CoverageDB, api: str, release: str, ndim: Optional[int] = None) -> Optional[str]:
    """"runs", "fails" or None (undecided: a partial or unknown composite, or no operators)."""
    entries, reached = api_ops(api, ndim=ndim)
    codes = [db.code(op, release) for op in (*entries, *reached)]
    if not codes or any(code == CODE_ABSENT for code in codes):
        return None
    if any(code in "EGX" for code in codes):
        return "fails"
    if all(code in RUNS_ON_MPS or code in (CODE_CPU_FALLBACK, CODE_COMPOSITE_FALLBACK) for code in codes):
        return "runs"
    return None


def test_list_verdict(db: CoverageDB, opinfo: str, release: str) -> Tuple[Optional[str], str]:
    """("runs" | "fails" | None, the reason) from the release's MPS OpInfo test lists, for float32."""
    if db.release_info(release).get("xfail") == "absent":
        return None, "no test list for this release"
    relevant = [f for f in db.known_failures(opinfo, release)
                if not f.grad and (f.dtypes is None or "float32" in f.dtypes)]
    if not relevant:
        return "runs", "not listed for float32"
    failing = [f for f in relevant if f.list_name in FAILING_LISTS and not f.condition]
    if failing:
        return "fails", f"{failing[0].list_name}: {failing[0].reason}"
    return None, f"only in {relevant[0].list_name}" + (f" ({relevant[0].condition})" if relevant[0].condition else "")


def test_lists_verdict(db: CoverageDB, api: str, release: str) -> Tuple[Optional[str], str]:
    """The verdict of every OpInfo of the API (variants such as index_reduceprod included) when they agree."""
    keys = load_api_ops()["apis"][api].get("opinfo") or [api[len("torch."):]]
    verdicts = [test_list_verdict(db, key, release) for key in keys]
    if len({verdict for verdict, _ in verdicts}) == 1:
        reason = verdicts[0][1]
        if db.release_info(release).get("xfail") == "approximate":
            reason += " (approximate main-branch list)"
        return verdicts[0][0], reason
    return None, "the OpInfo variants disagree"


def run_checks(db: CoverageDB):
    rows = []
    for api in APIS:
        for release in RELEASES:
            ndim = 4 if api.endswith("grid_sample") else None  # the OpInfo samples are 4-D
            ours = db_verdict(db, api, release, ndim)
            theirs, reason = test_lists_verdict(db, api, release)
            rows.append(("test list", api, release, ours, theirs, reason))
    for api, first, last_failing, reference in REFERENCES:
        ndim = 5 if api.endswith("grid_sample") else None
        for release, expected in ((first, "runs"), (last_failing, "fails")):
            rows.append(("reference", api, release, db_verdict(db, api, release, ndim), expected, reference))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="print every check, not only the disagreements")
    args = parser.parse_args(argv)
    db = CoverageDB.load()
    rows = run_checks(db)
    summary: Dict[str, List[int]] = {}
    for source, api, release, ours, theirs, reason in rows:
        verifiable = ours is not None and theirs is not None
        agree = verifiable and ours == theirs
        counts = summary.setdefault(source, [0, 0, 0])
        counts[0] += 1
        counts[1] += verifiable
        counts[2] += agree
        if args.all or (verifiable and not agree):
            mark = "agree" if agree else ("DISAGREE" if verifiable else "n/a")
            print(f"{mark:8}  {source:9}  {api:40} {release:7}  database: {ours or '-':5}  source: "
                  f"{theirs or '-':5}  {reason}")
    print()
    for source, (total, verifiable, agree) in summary.items():
        share = 100.0 * agree / verifiable if verifiable else 0.0
        print(f"{source}: {total} checks, {verifiable} verifiable, {agree} agree ({share:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
