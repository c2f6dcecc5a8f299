"""A device picked in one module and used in another (project/device_flow.py): what a project function returns
and what the project's calls pass for a parameter. A CUDA-or-CPU selection is the CPU wherever the host is a
Mac, so a non-blocking copy (CDL304) or a float64 tensor (CDL608) on it, in a module that only receives the
device, is no finding there; CDL104 reports the selection where it is written. A caller passing anything
else (MPS, an option, a device the calls of its own function do not settle) keeps the finding."""

import textwrap

from conftest import findings_of, triples

SELECT = {"CDL104", "CDL304", "CDL608"}
# engine.py's findings in the functions a test's callers leave alone: evaluate's copy and float64 zeros,
# Trainer.step's and Trainer.fit's copies
UNCALLED = [("CDL304", 12, 28), ("CDL608", 13, 9), ("CDL304", 22, 45), ("CDL304", 26, 37)]

DIST = '''
import torch


def init_device(rank):
    if torch.cuda.is_available():
        device = "cuda:%d" % rank
        torch.cuda.set_device(device)
    else:
        device = "cpu"
    device = torch.device(device)
    return device


def pick():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def accelerator():
    return "mps" if torch.backends.mps.is_available() else "cpu"
'''

ENGINE = '''
import torch


def train_one_epoch(model, loader, device):
    for x in loader:
        x = x.to(device, non_blocking=True)
        model(x)


def evaluate(model, loader, *, device):
    for x in loader:
        model(x.to(device, non_blocking=True))
        torch.zeros(3, dtype=torch.float64, device=device)


class Trainer:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def step(self, x):
        return self.model(x.to(self.device, non_blocking=True))

    def fit(self, loader, device):
        for x in loader:
            self.model(x.to(device, non_blocking=True))
'''


def lint(main: str, engine: str = ENGINE, path: str = "pkg/engine.py"):
    files = {"pkg/__init__.py": "", "pkg/dist.py": textwrap.dedent(DIST).lstrip("\n"),
             "pkg/main.py": textwrap.dedent(main).lstrip("\n"), "pkg/engine.py": textwrap.dedent(engine).lstrip("\n")}
    text = files.pop(path)
    return triples(findings_of(text, path=path, select=SELECT, project_files=files))


def test_a_device_every_caller_gets_from_a_cuda_or_cpu_selection_elsewhere_is_the_cpu_on_a_mac():
    # open-flamingo's shape: the selection in one module, the calls in a second, the copies in a third
    main = '''
    from pkg.dist import init_device, pick
    from pkg.engine import Trainer, evaluate, train_one_epoch


    def main(model, loader, rank):
        device = init_device(rank)
        train_one_epoch(model, loader, device=device)
        train_one_epoch(model, loader, device)
        evaluate(model, loader, device=pick())
        trainer = Trainer(model, device=device)
        trainer.fit(loader, device)
    '''
    assert lint(main) == []


def test_a_copy_to_what_another_modules_selection_returns_is_the_cpu_on_a_mac():
    main = '''
    from pkg.dist import init_device


    def main(loader, rank):
        device = init_device(rank)
        for x in loader:
            x = x.to(device, non_blocking=True)
    '''
    assert lint(main, path="pkg/main.py") == []


def test_a_device_handed_on_through_a_parameter_follows_its_own_callers():
    main = '''
    from pkg.dist import init_device
    from pkg.engine import train_one_epoch


    def run(model, loader, device):
        train_one_epoch(model, loader, device)


    def main(model, loader):
        run(model, loader, init_device(0))
    '''
    assert lint(main) == UNCALLED  # evaluate, Trainer.step and Trainer.fit: no call passes them a device


def test_one_caller_that_may_pass_mps_keeps_the_findings():
    main = '''
    from pkg.dist import accelerator, init_device
    from pkg.engine import train_one_epoch


    def main(model, loader, args):
        train_one_epoch(model, loader, device=init_device(0))
        train_one_epoch(model, loader, device=accelerator())
        train_one_epoch(model, loader, device=args.device)
    '''
    assert lint(main) == [("CDL304", 6, 26), *UNCALLED]


def test_a_caller_passing_an_option_or_a_device_nobody_settles_keeps_the_findings():
    main = '''
    from pkg.dist import init_device
    from pkg.engine import Trainer, train_one_epoch


    def main(model, loader, device):
        train_one_epoch(model, loader, device)
        Trainer(model, device=device)


    def entry(model, loader, args):
        main(model, loader, args.device)
    '''
    assert lint(main) == [("CDL304", 6, 26), *UNCALLED]


def test_a_call_of_another_librarys_function_of_the_same_name_is_no_call_of_the_projects():
    main = '''
    from pkg.dist import init_device
    from pkg.engine import train_one_epoch
    from timm.engine import train_one_epoch as timm_epoch


    def main(model, loader):
        train_one_epoch(model, loader, init_device(0))
    '''
    other = '''
    from timm.engine import train_one_epoch


    def other(model, loader):
        train_one_epoch(model, loader, device="mps")
    '''
    files = {"pkg/__init__.py": "", "pkg/dist.py": textwrap.dedent(DIST).lstrip("\n"),
             "pkg/main.py": textwrap.dedent(main).lstrip("\n"), "pkg/other.py": textwrap.dedent(other).lstrip("\n")}
    found = triples(findings_of(textwrap.dedent(ENGINE).lstrip("\n"), path="pkg/engine.py", select=SELECT, project_files=files))
    assert found == UNCALLED


def test_a_device_only_ever_cuda_is_no_cpu_and_the_copies_stay_reported():
    main = '''
    from pkg.engine import train_one_epoch


    def main(model, loader):
        train_one_epoch(model, loader, device="cuda")
    '''
    assert lint(main) == [("CDL304", 6, 26), *UNCALLED]


def test_the_selection_itself_is_still_cdl104s_finding():
    main = '''
    from pkg.engine import train_one_epoch
    '''
    files = {"pkg/__init__.py": "", "pkg/main.py": textwrap.dedent(main).lstrip("\n"),
             "pkg/engine.py": textwrap.dedent(ENGINE).lstrip("\n")}
    found = triples(findings_of(textwrap.dedent(DIST).lstrip("\n"), path="pkg/dist.py", select=SELECT, project_files=files))
    assert found == [("CDL104", 5, 5), ("CDL104", 15, 25)]


def test_a_program_in_a_packages_folder_imports_the_modules_beside_it_by_their_bare_names():
    # `python pkg/main.py` puts pkg/ first on sys.path: `from dist import ...` is pkg/dist.py
    main = '''
    from dist import init_device
    from engine import train_one_epoch


    def main(model, loader):
        train_one_epoch(model, loader, init_device(0))


    if __name__ == "__main__":
        main(None, [])
    '''
    assert lint(main) == UNCALLED
    imported = main.partition("    if __name__")[0]  # no program: the bare names are other libraries'
    assert lint(imported) == [("CDL304", 6, 26), *UNCALLED]


def test_a_functions_own_binding_of_the_name_is_not_the_modules():
    main = '''
    from pkg.dist import init_device
    from pkg.engine import train_one_epoch
    from settings import device


    def chosen():
        device = init_device(0)
        return device


    train_one_epoch(None, [], device)
    '''
    assert lint(main) == [("CDL304", 6, 26), *UNCALLED]
