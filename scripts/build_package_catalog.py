"""Build rules/packages.toml from the shared reference on CUDA-only packages.

    python scripts/build_package_catalog.py [REFERENCE.toml] [--output PATH] [--check]

The reference describes each package in prose. This script keeps its facts
(kind, the release that brought non-CUDA backends) and adds what the checks
need: which distribution names (globs allowed, `name[extra-glob]` for extras)
and repository names match each row, the rule that reports it, and a short
alternative written for cudalint's messages. Every name listed here must occur
in the reference row it belongs to, and every reference row must be listed, so
a new row in the reference stops the build until someone classifies it.
Output is deterministic: the same reference gives the same file, byte for byte.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "cuda-only-packages.toml"
DEFAULT_OUTPUT = ROOT / "rules" / "packages.toml"

# Rules: CDL501 nothing runs without CUDA, CDL502 CUDA build of a portable package,
# CDL503 NVIDIA runtime wheels, CDL504 installs but its kernels are CUDA-only,
# CDL505 multi-backend package pinned to CUDA-only releases.
PACKAGES = {
    "flash-attn": {
        "rule": "CDL501",
        "names": ["flash-attn"],
        "repos": ["flash-attention"],
        "alternative": "torch.nn.functional.scaled_dot_product_attention "
        "(attn_implementation='sdpa' in transformers)",
        "alternative_torch": "2.0",
    },
    "xformers": {
        "rule": "CDL501",
        "names": ["xformers"],
        "repos": ["xformers"],
        "alternative": "torch.nn.functional.scaled_dot_product_attention",
        "alternative_torch": "2.0",
    },
    "apex (NVIDIA)": {
        "rule": "CDL501",
        "names": ["apex"],
        "repos": ["apex"],
        "alternative": "torch.amp (autocast, GradScaler), torch.optim.AdamW(fused=True), "
        "torch.nn.LayerNorm and torch.nn.RMSNorm",
    },
    "bitsandbytes": {
        "rule": "CDL505",
        "names": ["bitsandbytes"],
        "repos": [],
        "alternative": "a newer bitsandbytes, or torchao / optimum-quanto quantization",
        "portable_backend": "MPS",
    },
    "deepspeed": {
        "rule": "CDL504",
        "names": ["deepspeed"],
        "repos": ["DeepSpeed"],
        "alternative": "torch FSDP2 (torch.distributed.fsdp.fully_shard) or DDP, or Hugging Face accelerate",
        "alternative_torch": "2.6",
    },
    "triton": {
        "rule": "CDL501",
        "names": ["triton", "pytorch-triton"],
        "repos": ["triton"],
        "alternative": "torch.compile (it needs no Triton on CPU or MPS) and an eager PyTorch path; "
        "torch brings the triton it needs on Linux",
    },
    "cupy-cuda11x / cupy-cuda12x / cupy-cuda13x / cupy": {
        "rule": "CDL502",
        "names": ["cupy", "cupy-cuda*"],
        "repos": ["cupy"],
        "alternative": "numpy on CPU, or torch tensors on the selected device",
    },
    "nvidia-* runtime wheels and CUDA meta-packages": {
        "rule": "CDL503",
        "names": [
            "nvidia-*-cu1?",
            "nvidia-cuda-*",
            "nvidia-cu*",
            "nvidia-nccl*",
            "nvidia-nvjitlink*",
            "nvidia-nvtx*",
            "nvidia-nvshmem*",
            "nvidia-pyindex",
            "cuda-toolkit",
            "cuda-bindings",
            "cuda-python",
            "cuda-pathfinder",
        ],
        "repos": [],
        "alternative": "the Linux torch wheel already depends on the CUDA libraries it needs, "
        "behind Linux-only markers",
    },
    "pycuda": {
        "rule": "CDL501",
        "names": ["pycuda"],
        "repos": ["pycuda"],
        "alternative": "torch operations, or torch.library.custom_op with a kernel per device",
    },
    "tensorrt / torch-tensorrt": {
        "rule": "CDL501",
        "names": ["tensorrt", "tensorrt-cu*", "tensorrt-llm", "torch-tensorrt"],
        "repos": ["TensorRT", "TensorRT-LLM"],
        "alternative": "torch.compile for speed; torch.export with ExecuTorch, or ONNX with onnxruntime, "
        "to deploy",
    },
    "onnxruntime-gpu": {
        "rule": "CDL502",
        "names": ["onnxruntime-gpu"],
        "repos": [],
        "alternative": "onnxruntime (CPU everywhere, Core ML provider on macOS)",
    },
    "faiss-gpu": {
        "rule": "CDL502",
        "names": ["faiss-gpu", "faiss-gpu-cu*"],
        "repos": [],
        "alternative": "faiss-cpu (same import name)",
    },
    "jax[cuda12] / jax[cuda13]": {
        "rule": "CDL502",
        "names": ["jax[cuda*]", "jax-cuda*-plugin", "jax-cuda*-pjrt"],
        "repos": [],
        "alternative": "plain jax (CPU), with the CUDA extra behind a marker or an optional extra",
    },
    "tensorflow[and-cuda] / tensorflow-gpu": {
        "rule": "CDL502",
        "names": ["tensorflow[and-cuda]", "tensorflow-gpu"],
        "repos": [],
        "alternative": "tensorflow, plus tensorflow-metal on macOS",
    },
    "nvidia-dali": {
        "rule": "CDL501",
        "names": ["nvidia-dali", "nvidia-dali-*"],
        "repos": ["DALI"],
        "alternative": "torchvision.io decoding and torchvision.transforms.v2 in DataLoader workers",
    },
    "mamba-ssm / causal-conv1d": {
        "rule": "CDL501",
        "names": ["mamba-ssm", "causal-conv1d"],
        "repos": ["mamba", "causal-conv1d"],
        "alternative": "the pure-PyTorch Mamba path in transformers, or mlx-lm on Apple silicon",
    },
    "vllm": {
        "rule": "CDL501",
        "names": ["vllm"],
        "repos": ["vllm"],
        "alternative": "transformers on MPS or CPU, llama-cpp-python or mlx-lm on a Mac",
    },
    "auto-gptq": {
        "rule": "CDL501",
        "names": ["auto-gptq"],
        "repos": ["AutoGPTQ"],
        "alternative": "gptqmodel, which has CPU kernels",
    },
    "exllama / exllamav2 / exllamav3": {
        "rule": "CDL501",
        "names": ["exllama", "exllamav2", "exllamav3"],
        "repos": ["exllama", "exllamav2", "exllamav3"],
        "alternative": "llama-cpp-python or mlx-lm on a Mac, transformers elsewhere",
    },
    "autoawq": {
        "rule": "CDL501",
        "names": ["autoawq"],
        "repos": ["AutoAWQ"],
        "alternative": "llm-compressor, gptqmodel or torchao",
    },
    "RAPIDS (cudf, cuml, cugraph, rmm, dask-cuda)": {
        "rule": "CDL501",
        "names": ["cudf", "cudf-cu*", "cuml", "cuml-cu*", "cugraph", "cugraph-cu*", "rmm", "rmm-cu*", "dask-cuda"],
        "repos": [],
        "alternative": "pandas or polars, scikit-learn, networkx",
    },
    "PyG extension libraries": {
        "rule": "CDL504",
        "names": ["torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib"],
        "repos": ["pytorch_scatter", "pytorch_sparse", "pytorch_cluster", "pytorch_spline_conv", "pyg-lib"],
        "alternative": "torch_geometric on its own (it runs without them since 2.3) and "
        "torch.Tensor.scatter_reduce / index_add",
    },
    "spconv": {
        "rule": "CDL502",
        "names": ["spconv-cu*", "cumm-cu*"],
        "repos": [],
        "alternative": "plain spconv (CPU, Linux only) or a dense torch.nn.Conv3d path",
    },
    "mmcv (full ops)": {
        "rule": "CDL504",
        "names": ["mmcv", "mmcv-full"],
        "repos": ["mmcv"],
        "alternative": "mmcv-lite and torchvision.ops (nms, roi_align, deform_conv2d)",
    },
    "detectron2": {
        "rule": "CDL504",
        "names": ["detectron2"],
        "repos": ["detectron2"],
        "alternative": "torchvision.models.detection",
    },
    "NVML-based monitoring": {
        "rule": "CDL504",
        "names": ["nvidia-ml-py", "pynvml", "gpustat", "nvitop", "gputil"],
        "repos": [],
        "alternative": "torch.accelerator memory statistics and psutil for host memory",
        "alternative_torch": "2.9",
    },
    "other CUDA-only kernels": {
        "rule": "CDL501",
        "names": [
            "flashinfer-python",
            "sageattention",
            "transformer-engine",
            "megatron-core",
            "liger-kernel",
            "unsloth",
            "nvidia-modelopt",
        ],
        "repos": ["flashinfer", "SageAttention", "TransformerEngine", "Liger-Kernel", "unsloth"],
        "alternative": "scaled_dot_product_attention, plain PyTorch modules and torch.compile",
    },
}

# Conda rows: CDL508 for packages, CDL509 for channels.
CONDA = {
    "cudatoolkit": {
        "names": ["cudatoolkit"],
        "alternative": "remove it; conda-forge pytorch picks its CUDA build by itself on machines that have one",
    },
    "pytorch-cuda=X.Y and cpuonly": {
        "names": ["pytorch-cuda"],
        "alternative": "remove it and take pytorch from conda-forge (or torch from pip)",
    },
    "cuda-toolkit, cuda-runtime, cuda-nvcc, cuda-libraries, cuda-cudart, cuda": {
        "names": ["cuda", "cuda-*"],
        "alternative": "remove it, or move it to a Linux-only environment file",
    },
    "cuda-version, __cuda, build-string selectors such as pytorch=*=*cuda*, jaxlib=*=*cuda*, pytorch-gpu": {
        "names": ["cuda-version", "__cuda", "pytorch-gpu"],
        "alternative": "remove it and leave pytorch or jaxlib unconstrained; conda-forge picks the build per machine",
    },
    "cudnn, nccl, cutensor, libcublas, magma-cuda1XY, faiss-gpu, cupy (CUDA build), tensorflow-gpu, cudf, cuml": {
        "names": [
            "cudnn",
            "nccl",
            "cutensor",
            "libcublas",
            "magma-cuda*",
            "faiss-gpu",
            "cupy",
            "tensorflow-gpu",
            "cudf",
            "cuml",
        ],
        "alternative": "use the CPU counterpart (faiss-cpu, numpy, tensorflow) or remove it",
    },
}
CHANNEL_ROW = "channels: pytorch, nvidia, rapidsai, pytorch-nightly (and 'pytorch::', 'nvidia::' prefixes)"
# The pytorch channels also served macOS builds, so only these two count as CUDA channels.
CUDA_CHANNELS = ["nvidia", "rapidsai"]


def _literal(name: str) -> str:
    """The part of a name glob that the reference text must contain."""
    return re.split(r"[*?\[]", name)[0].rstrip("-")


def _check_names(row_name: str, row_text: str, names) -> None:
    text = row_text.lower()
    for name in names:
        if _literal(name).lower() not in text:
            raise SystemExit(f"{name!r} is not in the reference row {row_name!r}")


def _backends(since: str):
    """'CPU 0.46.0; XPU/HPU 0.48.0' -> [('CPU', '0.46.0'), ('XPU/HPU', '0.48.0')]."""
    result = []
    for part in since.split(";"):
        match = re.fullmatch(r"\s*(.+?)\s+(\d+(?:\.\d+)+)\s*", part)
        if not match:
            raise SystemExit(f"cannot read the release in {part!r}")
        result.append(match.groups())
    return result


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_list(values) -> str:
    return "[" + ", ".join(_toml_string(value) for value in values) + "]"


def build(reference: dict) -> str:
    rows = {row["name"]: row for row in reference.get("package", [])}
    missing = sorted(set(rows) ^ set(PACKAGES))
    if missing:
        raise SystemExit(f"reference rows and this script's table differ: {missing}")
    conda_rows = {row["name"]: row for row in reference.get("conda", [])}
    missing = sorted(set(conda_rows) ^ (set(CONDA) | {CHANNEL_ROW}))
    if missing:
        raise SystemExit(f"reference conda rows and this script's table differ: {missing}")

    out = [
        "# The packages cudalint's dependency rules (CDL5xx) recognise.",
        "# Generated by scripts/build_package_catalog.py from the shared reference",
        f"# (generated {reference.get('meta', {}).get('generated', 'unknown')}); edit the script, not this file.",
        "",
    ]
    seen = set()
    for row_name, row in rows.items():
        entry = PACKAGES[row_name]
        _check_names(row_name, row_name + " " + row["aliases"], entry["names"])
        for name in entry["names"]:
            if name in seen:
                raise SystemExit(f"{name!r} is listed twice")
            seen.add(name)
        out += [
            "[[package]]",
            f"group = {_toml_string(row_name)}",
            f"kind = {_toml_string(row['kind'])}",
            f"rule = {_toml_string(entry['rule'])}",
            f"names = {_toml_list(entry['names'])}",
            f"repos = {_toml_list(entry['repos'])}",
            f"alternative = {_toml_string(entry['alternative'])}",
        ]
        if "alternative_torch" in entry:
            out.append(f"alternative_torch = {_toml_string(entry['alternative_torch'])}")
        if "portable_backend" in entry:
            backends = _backends(row["non_cuda_since"])
            wanted = dict(backends)[entry["portable_backend"]]
            out.append(f"portable_since = {_toml_string(wanted)}")
            out.append(
                "backends = ["
                + ", ".join(f"{{ backend = {_toml_string(b)}, since = {_toml_string(v)} }}" for b, v in backends)
                + "]"
            )
        out.append("")
    for row_name, entry in CONDA.items():
        _check_names(row_name, row_name, entry["names"])
        out += [
            "[[conda]]",
            f"group = {_toml_string(row_name)}",
            'rule = "CDL508"',
            f"names = {_toml_list(entry['names'])}",
            f"alternative = {_toml_string(entry['alternative'])}",
            "",
        ]
    _check_names(CHANNEL_ROW, CHANNEL_ROW, CUDA_CHANNELS)
    out += [
        "[channels]",
        'rule = "CDL509"',
        f"cuda = {_toml_list(CUDA_CHANNELS)}",
        "",
    ]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", nargs="?", default=str(DEFAULT_REFERENCE))
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    args = parser.parse_args(argv)
    with open(args.reference, "rb") as handle:
        text = build(tomllib.load(handle))
    output = Path(args.output)
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current != text:
            print(f"{output} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    output.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
