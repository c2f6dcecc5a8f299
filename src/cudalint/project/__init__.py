"""The project index: what a porting reviewer knows about the whole repository before reading
any one file — module names and paths, the project's own packages, CUDA extension modules it
builds, which of its modules import CUDA-only libraries at import time, helper functions that
are CUDA guards, parameters that default to "cuda", module constants. Built from one cheap
pass per file, cached by content hash, read by the semantic model and the project rules."""

from cudalint.project.index import ProjectIndex, build_index

__all__ = ["ProjectIndex", "build_index"]
