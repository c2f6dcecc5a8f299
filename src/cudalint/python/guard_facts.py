"""rules/guards.toml as data: read by the guard evaluator and by the project index (which needs no libcst)."""

from __future__ import annotations

import functools
from typing import FrozenSet, NamedTuple, Optional

from cudalint.catalog import rules_sets


class GuardFacts(NamedTuple):  # a NamedTuple, not a dataclass: see findings.py on start-up cost
    """rules/guards.toml: the APIs whose answer tells a host that is not a Mac."""

    queries: FrozenSet[str]  # calls: true only on a CUDA/ROCm host
    flags: FrozenSet[str]  # attributes: truthy only on a CUDA/ROCm build
    platforms: FrozenSet[str]  # values naming the platform (sys.platform, platform.system())
    mac_platforms: FrozenSet[str]  # the platform strings that are macOS
    enum_members: FrozenSet[str]  # enum member names that mean CUDA (RNGType.CUDA)
    skip_if: FrozenSet[str]  # decorators that skip when their condition is true
    skip_unless: FrozenSet[str]  # decorators that skip when their condition is false
    skip_params: FrozenSet[str] = frozenset()  # parameter sets whose `marks=` may skip them (pytest.param)
    marker_keywords: FrozenSet[str] = frozenset()  # keywords of a test marker that require CUDA
    marker_reasons: FrozenSet[str] = frozenset()  # functions that read those keywords (a marker forwards to one)
    off_mac_device_types: FrozenSet[str] = frozenset({"cuda"})  # device types no Mac has
    mac_device_types: FrozenSet[str] = frozenset({"cpu", "mps"})  # every device type a Mac has
    off_mac_libraries: FrozenSet[str] = frozenset()  # the packages that add other device types (torch_xla): Linux only
    cuda_extension_suffixes: FrozenSet[str] = frozenset()  # the last name of an extension's compiled CUDA module
    absence_queries: FrozenSet[str] = frozenset()  # calls: true on every host without CUDA
    off_mac_queries: FrozenSet[str] = frozenset()  # calls: true only on a host of another device type no Mac has (XPU)
    mac_queries: FrozenSet[str] = frozenset()  # calls: true on every Mac, false on a CUDA host (MPS is there)
    off_mac_backends: FrozenSet[str] = frozenset()  # communication backends no Mac has (nccl)
    off_mac_backend_members: FrozenSet[str] = frozenset()  # torch's names for them (Backend.NCCL)
    mac_backends: FrozenSet[str] = frozenset()  # the communication backends a Mac has (gloo)
    cuda_environment: FrozenSet[str] = frozenset()  # environment variables only a CUDA setup reads
    skip_reason_words: FrozenSet[str] = frozenset()  # words of a skip's reason that say the test needs CUDA
    cuda_only_results: FrozenSet[str] = frozenset()  # calls that raise off CUDA: their result never exists on a Mac
    cuda_scatters: FrozenSet[str] = frozenset()  # calls that scatter their first argument over CUDA devices
    off_mac_programs: FrozenSet[str] = frozenset()  # programs no Mac has (nvidia-smi)
    program_runners: FrozenSet[str] = frozenset()  # calls that raise when the program they start is missing
    checked_runners: FrozenSet[str] = frozenset()  # those that raise for a failed exit status too (through a shell)
    program_lookups: FrozenSet[str] = frozenset()  # calls that answer None (falsy) for a program that is not installed
    off_mac_attributes: FrozenSet[str] = frozenset()  # attributes only CUDA memory has (__cuda_array_interface__)
    kernel_registrations: FrozenSet[str] = frozenset()  # decorators that register a function as an operator's kernel
    kernel_methods: FrozenSet[str] = frozenset()  # methods that do (a custom op's `.register_kernel`)
    dispatch_prefixes: FrozenSet[str] = frozenset()  # dispatch keys that are a device's variant (AutocastCUDA)
    kernel_builders: FrozenSet[str] = frozenset()  # calls that build native kernels (cpp_extension.load)
    mock_factories: FrozenSet[str] = frozenset()  # calls that make a mock (unittest.mock.Mock)
    query_patchers: FrozenSet[str] = frozenset()  # calls that patch a name given as text (unittest.mock.patch)
    object_patchers: FrozenSet[str] = frozenset()  # calls that patch an object's attribute (patch.object)
    mocked_moves: FrozenSet[str] = frozenset()  # methods a test replaces with one so nothing moves (`.to`)
    autograd_functions: FrozenSet[str] = frozenset()  # the base classes of a custom autograd operation
    after_forward: FrozenSet[str] = frozenset()  # its methods autograd calls only after its forward returned

    @property
    def host_queries(self) -> FrozenSet[str]:
        """The calls true only off a Mac: CUDA's availability queries and those of other devices no Mac has."""
        return self.queries | self.off_mac_queries

    def names_cuda_member(self, owner: Optional[str], member: str) -> bool:
        """`RNGType.CUDA`, or `Device.cuda` of an enum-like class (a CapWords name): a member named for CUDA."""
        return member in self.enum_members or (member.upper() in self.enum_members and bool(owner) and owner[:1].isupper())

    def off_mac_dispatch(self, key) -> bool:
        """"cuda", "CUDA", "AutocastCUDA", "SparseCUDA": a device type or dispatch key no Mac has."""
        if not isinstance(key, str) or not key:
            return False
        for prefix in self.dispatch_prefixes:
            if key.startswith(prefix) and key[len(prefix):].isupper():
                key = key[len(prefix):]
                break
        return key.lower() in self.off_mac_device_types

    def run_fails_on_mac(self, qualified, program, shell: bool) -> bool:
        """`subprocess.check_output(["nvidia-smi", ...])`: starting a program no Mac has raises there
        (the program's first word given; through a shell only a runner that checks the exit status raises)."""
        if not isinstance(program, str) or program.split(" ", 1)[0] not in self.off_mac_programs:
            return False
        return qualified in (self.checked_runners if shell else self.program_runners)

    @property
    def failing_words(self) -> FrozenSet[bytes]:
        """The last names of cuda_only_results, as bytes: a module's text that holds none makes no such call."""
        return _last_names(self.cuda_only_results)

    def fails_on_mac(self, qualified) -> bool:
        """A call whose result never exists on a Mac: it raises there."""
        return qualified in self.cuda_only_results

    def cuda_extension(self, module, own: str = "") -> bool:
        """`fast_transformers.causal_product.causal_product_cuda`: another package's compiled CUDA module
        (not one of the package `own`, whose modules are judged by what they hold)."""
        if not isinstance(module, str) or not module:
            return False
        last = module.rpartition(".")[2]
        return any(last.endswith(suffix) and last != suffix for suffix in self.cuda_extension_suffixes) and (
            not own or module.split(".")[0] != own.split(".")[0])

    def names_off_mac_device(self, text) -> bool:
        """"cuda", "cuda:1", "hpu", "nccl": a device (type) or communication backend string no Mac has."""
        if not isinstance(text, str):
            return False
        if text in self.off_mac_backends:
            return True
        kind, _, index = text.partition(":")
        return kind in self.off_mac_device_types and (not index or index.isdigit())

    @property
    def skip_param_names(self) -> FrozenSet[str]:
        """The last part of each skip_params name: a cheap test before resolving a call."""
        return frozenset(name.rpartition(".")[2] for name in self.skip_params)


@functools.lru_cache(maxsize=4)
def _last_names(names: FrozenSet[str]) -> FrozenSet[bytes]:
    return frozenset(name.rpartition(".")[2].encode() for name in names)


@functools.lru_cache(maxsize=1)
def guard_facts() -> GuardFacts:
    return GuardFacts(**rules_sets("guards.toml"))
