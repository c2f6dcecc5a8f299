"""CDL706: "nccl" as a default, in each of the three places a default is written."""

import textwrap

from conftest import findings_of, triples

SOURCE = textwrap.dedent(
    """
    import argparse
    import torch.distributed as dist


    def init_dist(launcher, backend="nccl", **kwargs):
        dist.init_process_group(backend=backend, **kwargs)


    class Config:
        comm_backend_name: str = "nccl"
        fallback = "gloo"


    def build(parser: argparse.ArgumentParser, kind="nccl_like"):
        parser.add_argument("--backend", default="nccl")
        parser.add_argument("--other", default="gloo")
    """
).lstrip("\n")


def test_nccl_defaults_are_reported_where_written():
    assert triples(findings_of(SOURCE, select={"CDL706"})) == [("CDL706", 5, 33), ("CDL706", 10, 30), ("CDL706", 15, 46)]


def test_the_message_names_the_place_and_the_backend():
    messages = [f.message for f in findings_of(SOURCE, select={"CDL706"})]
    assert messages == [
        "parameter 'backend' defaults to the 'nccl' backend, which needs NVIDIA GPUs",
        "class attribute defaults to the 'nccl' backend, which needs NVIDIA GPUs",
        "option defaults to the 'nccl' backend, which needs NVIDIA GPUs",
    ]
