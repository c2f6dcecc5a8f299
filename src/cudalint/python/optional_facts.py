"""rules/optional_code.toml as data: read by the optional-import handling of CDL404 and by the
project index (which needs no libcst)."""

from __future__ import annotations

import functools
import re
from typing import FrozenSet, Mapping, NamedTuple, Optional, Tuple

from cudalint.catalog import rules_sets, rules_table


class NarrowException(NamedTuple):
    """An exception only some CUDA work raises where torch has no CUDA (optional_code.toml narrow_exceptions)."""

    names: FrozenSet[str]  # it and its subclasses, as a handler may name them
    apis: FrozenSet[str]  # the torch APIs (and their submodules) that raise it there
    methods: FrozenSet[str]  # the tensor methods that do
    imports: bool  # an import raises it too (a missing library's failure is its own matter)
    shell: bool = False  # only calls of `apis` that run through a shell (`shell=True`) raise it


class OptionalFacts(NamedTuple):  # a NamedTuple, not a dataclass: see findings.py on start-up cost
    queries: FrozenSet[str]  # calls truthy only where a package imports
    never_true: FrozenSet[str]  # names false whenever the program runs (TYPE_CHECKING)
    always_skip: FrozenSet[str]  # decorators that skip a test on every host
    skip_calls: FrozenSet[str]  # calls that skip the rest of a test
    skip_exceptions: FrozenSet[str]  # exceptions whose raise skips the rest of a test
    never_raise: FrozenSet[str] = frozenset()  # calls that never raise without CUDA: no try guards them
    library_queries: Mapping[str, str] = {}  # other libraries' helpers true only where one library imports
    unrelated_exceptions: FrozenSet[str] = frozenset()  # exceptions CUDA work does not raise off CUDA
    narrow_exceptions: Tuple["NarrowException", ...] = ()  # exceptions only some CUDA work raises off CUDA
    library_query_roots: FrozenSet[str] = frozenset()  # libraries whose is_<name>_available() tests package <name>

    @property
    def words(self) -> FrozenSet[str]:
        """The last part of each query: a file naming none of them has no availability helper."""
        return frozenset(name.rpartition(".")[2] for name in (*self.queries, *self.library_queries)) | (
            {"_available"} if self.library_query_roots else set())

    def library_tested(self, qualified: Optional[str]) -> Optional[str]:
        """The library another library's helper is true only where it imports: transformers'
        `is_flash_attn_2_available` (the table) or `is_apex_available` (its name, under library_query_roots)."""
        if qualified is None:
            return None
        found = self.library_queries.get(qualified)
        if found is None and qualified.partition(".")[0] in self.library_query_roots:
            named = _HELPER_NAME.match(qualified.rpartition(".")[2])
            if named is not None and squeezed(named.group(1)) in _listed_packages():
                found = named.group(1)  # a package of packages.toml: `is_torch_available()` guards no CUDA library
        return found


@functools.lru_cache(maxsize=1)
def optional_facts() -> OptionalFacts:
    data = rules_table("optional_code.toml")
    narrow = tuple(NarrowException(frozenset(kind["names"]), frozenset(kind["apis"]), frozenset(kind["methods"]), bool(kind["imports"]),
                                   bool(kind.get("shell", False)))
                   for kind in data.get("narrow_exceptions", {}).values())
    return OptionalFacts(**rules_sets("optional_code.toml"), library_queries=dict(data.get("library_queries", {})),
                         narrow_exceptions=narrow)


def squeezed(name: str) -> str:
    """A package's name as its spellings share it: lower case, without `-`, `_` and `.` (autoawq, auto_awq)."""
    return name.lower().replace("-", "").replace("_", "").replace(".", "")


@functools.lru_cache(maxsize=1)
def _listed_packages() -> FrozenSet[str]:
    """The CUDA-only (and CUDA-first) packages of packages.toml, by their distribution and import names squeezed
    (`autoawq`, `awq`, `apex`): the packages an `is_<name>_available()` helper may be read as testing."""
    from cudalint.manifests.packages import load_packages

    return frozenset(squeezed(name) for group in load_packages().groups if group.kind in ("cuda-only", "cuda-first")
                     for name in (*group.names, *group.imports) if "*" not in name)


_HELPER_NAME = re.compile(r"is_([a-z0-9_]+?)_available$")
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_module(text: Optional[str]) -> str:
    """The top-level module a query's argument names: "triton.language" -> "triton",
    "transformer-engine>=0.11" -> "transformer_engine"; "" when there is none."""
    match = _REQUIREMENT_NAME.match(text) if isinstance(text, str) else None
    if match is None:
        return ""
    return match.group(1).split(".")[0].replace("-", "_").lower()
