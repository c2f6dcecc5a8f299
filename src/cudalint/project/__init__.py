"""The project index: what a porting reviewer knows about the whole repository before reading
any one file — module names and paths, the project's own packages, CUDA extension modules it
builds, which of its modules import CUDA-only libraries at import time, helper functions that
are CUDA guards, parameters that default to "cuda", module constants. Built from one cheap
pass per file, cached by content hash, read by the semantic model and the project rules.

The index and its fact readers are imported when an index is first built or read (a run whose
files need none, e.g. one clean file, never loads them); `cudalint.project.paths` is light."""

__all__ = ["ProjectIndex", "build_index"]


def __getattr__(name: str):
    if name in __all__:
        from cudalint.project import index

        return getattr(index, name)
    raise AttributeError(f"module 'cudalint.project' has no attribute {name!r}")
