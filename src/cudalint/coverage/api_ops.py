"""Which ATen operators a public torch API or nn.Module reaches, and their MPS verdicts."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from cudalint.op_cases import UNKNOWN
from .db import CoverageDB, rules_dir
from .module_table import module_cases
from .names import op_key, qualified
from .status import CODE_MISSING_BACKEND, OpStatus, Resolution

API_OPS_FILE = "api_ops.json"
API_CASES_FILE = "api_cases.toml"
TRACED = "cpu trace"
REQUIRED = "?"  # an argument without default in api_cases.toml


@dataclass(frozen=True)
class OpVerdict:
    op: str                          # "aten::grid_sampler_3d"
    release: str                     # covered release the answer is for
    status: OpStatus
    resolution: Optional[Resolution]  # composites only
    runs_on_mps: bool                # native, or a composite whose reachable ops all run on MPS
    first_supported: Optional[str]   # first covered release where it runs on MPS; None: never (so far)
    entry: bool = False              # the API's own composite op (its MPS branch may differ from CPU's)


@functools.lru_cache(maxsize=4)
def load_api_ops(path: Optional[str] = None) -> dict:
    """The API -> operator mapping: the CPU trace (api_ops.json), in-place variants derived from it, and
    the reviewed cases of api_cases.toml on top. Each record says where it came from (``source``);
    ``arguments`` holds, per API, the arguments that choose its case: {name: (position, default)}."""
    file = Path(path) if path else rules_dir() / API_OPS_FILE
    data = json.loads(file.read_text(encoding="utf-8"))
    apis = data["apis"]
    for record in apis.values():
        record.setdefault("source", TRACED)
    _add_inplace_variants(apis)
    data["arguments"] = {}
    with open(file.parent / API_CASES_FILE, "rb") as handle:
        reviewed = tomllib.load(handle)["api"]
    named = [entry["name"] for entry in reviewed]
    repeated = sorted({name for name in named if named.count(name) > 1})
    if repeated:
        raise ValueError(f"{API_CASES_FILE}: more than one entry for {', '.join(repeated)}")
    for entry in reviewed:
        name = entry["name"]
        if "arguments" in entry:
            data["arguments"][name] = {key: (position, _default(value))
                                       for key, (position, value) in entry["arguments"].items()}
        if "ops" not in entry and "case" not in entry:
            continue
        record: Dict[str, object] = {"source": entry["source"]}
        if "opinfo" in apis.get(name, {}):
            record["opinfo"] = apis[name]["opinfo"]
        if "case" in entry:
            record["cases"] = [{"when": case.get("when", {}), "ops": case["ops"], **({} if "when" in case else
                                                                                     {"otherwise": True})}
                               for case in entry["case"]]
            record["ops"] = sorted({op for case in entry["case"] for op in case["ops"]})
        else:
            record["ops"] = list(entry["ops"])
        apis[name] = record
    return data


def _default(value: object) -> object:
    return {"None": None, REQUIRED: UNKNOWN}.get(value, value) if isinstance(value, str) else value


def _add_inplace_variants(apis: Dict[str, dict]) -> None:
    """torch.Tensor.X_ for each traced torch.Tensor.X whose operators have in-place overloads (X_)."""
    db = CoverageDB.load()

    def inplace(op: str) -> str:
        base, dot, overload = op_key(op).partition(".")
        candidate = f"{base}_{dot}{overload}"
        return qualified(candidate) if db.has_op(candidate) else op

    for name in [n for n in apis if n.startswith("torch.Tensor.") and not n.endswith("_")]:
        record = apis[name]
        if name + "_" in apis or all(inplace(op) == op for op in record["ops"]):
            continue
        derived = {"ops": sorted({inplace(op) for op in record["ops"]}), "source": f"in-place form of {name}"}
        if record.get("cases"):
            derived["cases"] = [{"when": case["when"], "ops": sorted({inplace(op) for op in case["ops"]})}
                                for case in record["cases"]]
        apis[name + "_"] = derived


def api_arguments(api: str) -> Dict[str, Tuple[int, object]]:
    """The arguments that choose the API's case: name -> (position, default); -1: keyword only."""
    return load_api_ops()["arguments"].get(api, {})


def _canonical(qualname: str) -> str:
    return qualname if qualname.startswith(("torch.", "torchvision.")) else "torch." + qualname


def _same(expected: object, given: object) -> bool:
    """``true`` in a table means "set to anything but None/False" (e.g. Embedding's max_norm)."""
    if expected is True:
        return given is not None and given is not False
    return expected == given


def _matches(when: Dict[str, object], kwargs: Dict[str, object], ndim: Optional[int],
             defaults: Dict[str, object]) -> bool:
    """A keyword the caller leaves out holds its default, if the API has one, and so does a keyword a case
    does not name; a feature without default that the caller does not know matches any value."""
    for key, value in when.items():
        if key == "ndim":
            if ndim is not None and ndim != value:
                return False
            continue
        given = kwargs.get(key, defaults.get(key, UNKNOWN))
        if given is not UNKNOWN and not _same(value, given):
            return False
    for key, given in kwargs.items():  # a case that does not name a keyword stands for its default
        default = defaults.get(key, UNKNOWN)
        if key not in when and default is not UNKNOWN and not _same(default, given):
            return False
    return True


def _chosen_module_cases(cases: list, kwargs: Dict[str, object], ndim: Optional[int]) -> list:
    """Cases keyed on constructor keywords apply when the caller passes those keywords; otherwise the
    cases without keywords (defaults) apply; when nothing fits, all cases."""
    def keywords(case) -> set:
        return set(case.when) - {"ndim"}

    specific = [c for c in cases if keywords(c) and keywords(c) <= kwargs.keys() and _matches(c.when, kwargs, ndim, {})]
    if specific:
        return specific
    defaults = [c for c in cases if not keywords(c) and _matches(c.when, kwargs, ndim, {})]
    return defaults or cases


def api_ops(qualname: str, *, kwargs: Optional[dict] = None, ndim: Optional[int] = None
            ) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(entry ops, reached ops) of an API or nn.Module, narrowed by known kwargs / input ndim.

    When the data tells cases apart and none matches, every case's operators are returned.
    """
    name = _canonical(qualname)
    kwargs = kwargs or {}
    modules = module_cases(name)
    if modules:
        chosen = _chosen_module_cases(modules, kwargs, ndim)
        entries = _unique(op for case in chosen for op in case.entry)
        return entries, _unique(op for case in chosen for op in case.ops)
    record = load_api_ops()["apis"].get(name)
    if record is None:
        return (), ()
    cases = record.get("cases")
    ops: Iterable[str] = record["ops"]
    if cases:
        defaults = {key: default for key, (_, default) in api_arguments(name).items()}
        matching = [case for case in cases if _matches(case["when"], kwargs, ndim, defaults)]
        if matching:
            ops = [op for case in matching for op in case["ops"]]
    entries = (record["entry"],) if record.get("entry") else ()
    return entries, _unique(ops)


def _unique(ops: Iterable[str]) -> Tuple[str, ...]:
    return tuple(sorted(set(ops)))


def assess_api(qualname: str, version: str, *, kwargs: Optional[dict] = None, ndim: Optional[int] = None,
               db: Optional[CoverageDB] = None) -> List[OpVerdict]:
    """MPS verdict at torch ``version`` for each ATen op that ``qualname`` reaches.

    ``qualname``: a public API ("torch.nn.functional.grid_sample", "torch.Tensor.add", "torch.linalg.eigh")
    or an nn.Module class ("torch.nn.Conv3d"); the "torch." prefix may be left out. ``kwargs`` (known
    keyword arguments, e.g. {"mode": "bicubic"}) and ``ndim`` (input rank) narrow the ops where the data
    distinguishes cases. Unknown APIs give []. When the API has an entry op (its own composite), ops that
    only one other backend implements are left out: on MPS the entry op branches elsewhere.
    """
    db = db or CoverageDB.load()
    release = db.nearest_release(version)
    if release is None:
        return []
    entries, reached = api_ops(qualname, kwargs=kwargs, ndim=ndim)
    verdicts = []
    for op in entries:
        verdicts.append(_verdict(db, op, release, entry=True))
    for op in reached:
        if op in entries:
            continue
        if entries and db.code(op, release) == CODE_MISSING_BACKEND:
            continue
        verdicts.append(_verdict(db, op, release))
    return verdicts


def _verdict(db: CoverageDB, op: str, release: str, entry: bool = False) -> OpVerdict:
    return OpVerdict(
        op=qualified(op_key(op)),
        release=release,
        status=db.status(op, release),
        resolution=db.resolution(op, release),
        runs_on_mps=db.runs_on_mps(op, release),
        first_supported=db.first_supported(op),
        entry=entry,
    )
