"""A parameter's values from the calls of its function, for a module-level function of a program (a
module with `if __name__ == "__main__":`) that no other module of the project imports: every call is in
sight, so `optimize(use_cuda, model)` called only with `use_cuda = torch.cuda.is_available() and not
args.cpu` makes `if use_cuda: model.cuda()` a CUDA-only branch. Once another module imports the
program, its functions may be called from there, and the branch is reported again."""

from conftest import findings_of, triples

PROGRAM = '''import argparse

import torch


def optimize(use_cuda, model):
    if use_cuda:
        model.cuda()
    return model


def main(args, model):
    use_cuda = torch.cuda.is_available() and not args.cpu
    return optimize(use_cuda, model)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    main(parser.parse_args(), None)
'''


def test_a_program_s_own_calls_decide_its_flags():
    assert triples(findings_of(PROGRAM, path="infer.py", select={"CDL102"}, project_files={"other.py": "x = 1\n"})) == []


def test_a_program_another_module_imports_is_library_code():
    found = findings_of(PROGRAM, path="infer.py", select={"CDL102"}, project_files={"other.py": "import infer\n"})
    assert triples(found) == [("CDL102", 8, 15)]
