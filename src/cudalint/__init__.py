"""cudalint: find what stops a CUDA-first PyTorch project from running on MPS or CPU."""

__version__ = "0.1.0"
