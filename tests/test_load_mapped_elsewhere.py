"""CDL109 and the other loads of a function: one that maps the loads holding tensors leaves the rest
on purpose (host-side state), but a load mapped only in the arm a host without CUDA takes
(`if torch.cuda.is_available(): torch.load(f)` / `else: torch.load(f, map_location="cpu")`) says its
checkpoints hold CUDA tensors, and the function's other unmapped loads are reported."""

import textwrap

from conftest import findings_of, triples


def lint(source):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL109"}))


def test_a_load_mapped_only_without_cuda_is_no_sign_the_others_hold_host_state():
    # bayesian-torch's examples: --resume unmapped, the test mode mapped only off CUDA
    assert lint(
        """
        import torch


        def main(args, model):
            if args.resume:
                checkpoint = torch.load(args.resume)
                model.load_state_dict(checkpoint["state_dict"])
            if args.mode == "test":
                if torch.cuda.is_available():
                    checkpoint = torch.load(args.checkpoint)
                else:
                    checkpoint = torch.load(args.checkpoint, map_location=torch.device("cpu"))


        def mapped(args, model, scheduler, device):
            model.load_state_dict(torch.load(args.weights, map_location=device))
            scheduler.load_state_dict(torch.load(args.sched))
        """
    ) == [("CDL109", 6, 22)]
