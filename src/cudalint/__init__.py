"""cudalint: find what stops a CUDA-first PyTorch project from running on MPS or CPU."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`cudalint.trace` is loaded on first use, so importing cudalint never imports torch."""
    if name == "trace":
        from cudalint.tracing import trace

        return trace
    raise AttributeError(f"module 'cudalint' has no attribute {name!r}")
