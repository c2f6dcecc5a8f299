"""Time `cudalint check` cold (empty cache) against warm (every file cached).

    python bench/cache_bench.py                 # generate 300 files in a temporary folder
    python bench/cache_bench.py --files 600     # more files
    python bench/cache_bench.py path/to/project # a folder of your own (its cache is cleared first)

Generated files average about 330 lines (the 251 modules of timm 1.0.9 average 354): half are
CUDA-first training scripts, half ordinary helpers, each followed by model blocks.
Each figure is the median of --repeat runs of the real command line in a subprocess,
with the project folder as working directory (so the cache lives in its
.cudalint_cache/). "cold" starts from an empty cache and fills it, "no cache" is
`--no-cache`, "warm" finds every file in the cache. The target is warm < 5% of cold.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TRAIN = '''\
"""Training script {index}: a CUDA-first loop of the kind cudalint is for."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

os.environ["CUDA_VISIBLE_DEVICES"] = "0"


class Block{index}(torch.nn.Module):
    def __init__(self, width: int = {width}):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.proj = torch.nn.Linear(width, width * 4)
        self.out = torch.nn.Linear(width * 4, width)

    def forward(self, x):
        return x + self.out(torch.nn.functional.gelu(self.proj(self.norm(x))))


def make_loader(batch_size: int = 32):
    data = torch.randn(1024, {width}, dtype=torch.float64)
    labels = torch.randint(0, 10, (1024,))
    return DataLoader(TensorDataset(data, labels), batch_size=batch_size, pin_memory=True, num_workers=2)


def train(args):
    device = torch.device("cuda")
    dist.init_process_group("nccl")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.cuda.manual_seed_all(args.seed)
    model = torch.nn.Sequential(*[Block{index}() for _ in range(4)]).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(make_loader()):
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.cuda.amp.autocast():
                loss = torch.nn.functional.cross_entropy(model(x.float())[:, :10], y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if step % 50 == 0:
                torch.cuda.synchronize()
                print(epoch, step, loss.item(), torch.cuda.max_memory_allocated() / 2**20)
    torch.save(model.state_dict(), f"checkpoint-{{args.seed}}.pt")
    return torch.load(f"checkpoint-{{args.seed}}.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default={index})
    train(parser.parse_args())
'''

UTIL = '''\
"""Helpers {index}: ordinary Python with nothing CUDA-specific in it."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Dict, Iterable, List


@dataclasses.dataclass
class Record{index}:
    name: str
    values: List[float]

    def mean(self) -> float:
        return sum(self.values) / max(len(self.values), 1)

    def spread(self) -> float:
        centre = self.mean()
        return math.sqrt(sum((v - centre) ** 2 for v in self.values) / max(len(self.values), 1))


def load(path: Path) -> Dict[str, Record{index}]:
    raw = json.loads(path.read_text())
    return {{name: Record{index}(name, [float(v) for v in values]) for name, values in raw.items()}}


def summarise(records: Iterable[Record{index}]) -> str:
    lines = []
    for record in sorted(records, key=lambda r: r.name):
        lines.append(f"{{record.name:<20}} {{record.mean():10.4f}} {{record.spread():10.4f}}")
    return "\\n".join(lines)


def chunks(items: List[int], size: int = {width}) -> List[List[int]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
'''


BLOCK = '''

class Attention{index}_{block}(torch.nn.Module):
    """Multi-head self-attention, block {block} of module {index}."""

    def __init__(self, dim: int = {width}, heads: int = 8, dropout: float = 0.1):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = torch.nn.Linear(dim, dim * 3, bias=False)
        self.proj = torch.nn.Linear(dim, dim)
        self.drop = torch.nn.Dropout(dropout)

    def forward(self, x, mask=None):
        batch, tokens, dim = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, dim // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        if mask is not None:
            scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        attention = self.drop(scores.softmax(dim=-1))
        return self.proj((attention @ v).transpose(1, 2).reshape(batch, tokens, dim))


class Mlp{index}_{block}(torch.nn.Module):
    def __init__(self, dim: int = {width}, ratio: float = 4.0):
        super().__init__()
        hidden = int(dim * ratio)
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.act = torch.nn.GELU()
        self.fc2 = torch.nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def init_weights_{block}(module: torch.nn.Module) -> None:
    for name, parameter in module.named_parameters():
        if parameter.dim() > 1:
            torch.nn.init.trunc_normal_(parameter, std=0.02)
        elif "bias" in name:
            torch.nn.init.zeros_(parameter)


def count_parameters_{block}(module: torch.nn.Module, trainable: bool = True) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable)
'''


def generate(folder: Path, count: int) -> None:
    for index in range(count):
        package = folder / f"pkg{index // 50:02d}"
        package.mkdir(parents=True, exist_ok=True)
        width = 64 + index % 7 * 32
        template = TRAIN if index % 2 == 0 else UTIL
        text = template.format(index=index, width=width)
        if template is UTIL:
            text = "import torch\n" + text
        text += "".join(BLOCK.format(index=index, block=block, width=width) for block in range(4 + index % 5))
        (package / f"module_{index:04d}.py").write_text(text)
    (folder / "requirements.txt").write_text("torch>=2.3\nnumpy\n")


def timed(folder: Path, *extra: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "-q", "--exit-zero", *extra, "."],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"cudalint failed ({done.returncode}): {done.stderr}")
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", type=Path, help="lint this folder instead of generated files")
    parser.add_argument("--files", type=int, default=300, help="how many files to generate (default 300)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is reported")
    args = parser.parse_args(argv)

    scratch = None
    if args.folder is None:
        scratch = Path(tempfile.mkdtemp(prefix="cudalint-bench-"))
        folder = scratch
        generate(folder, args.files)
    else:
        folder = args.folder.resolve()
    cache = folder / ".cudalint_cache"
    try:
        sources = list(folder.rglob("*.py"))
        python_files = len(sources)
        lines = sum(path.read_bytes().count(b"\n") for path in sources)
        cold, uncached, warm = [], [], []
        for _ in range(args.repeat):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(folder))
            warm.append(timed(folder))
            uncached.append(timed(folder, "--no-cache"))
        cold_s, warm_s, uncached_s = (statistics.median(x) for x in (cold, warm, uncached))
        print(textwrap.dedent(
            f"""\
            folder:   {'(generated) ' if scratch else ''}{python_files} Python files, {lines} lines, {os.cpu_count()} cores
            cold:     {cold_s:7.3f} s  (empty cache, filled on the way)
            no cache: {uncached_s:7.3f} s  (--no-cache)
            warm:     {warm_s:7.3f} s  (every file cached)
            warm/cold = {100 * warm_s / cold_s:.1f}%  (target < 5%)"""
        ))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
