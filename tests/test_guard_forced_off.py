"""A flag the code before turned off on a Mac: set to a false constant under a test that holds on every
Mac (unless the flag is already false), or left through an early exit under such a test. What it enables
(`GradScaler(enabled=flag)`, `if flag:`) then does nothing there, for the rest of the enclosing block."""

import textwrap

from conftest import findings_of, triples

SOURCE = '''
import torch


def init_amp(enabled, device_config):
    if enabled and not device_config.is_cuda:
        enabled = False
    scaler = torch.cuda.amp.GradScaler(enabled=enabled)
    if enabled:
        torch.cuda.empty_cache()
    return scaler


def train(args):
    if not torch.cuda.is_available():
        args.amp = False
    with torch.cuda.amp.autocast(enabled=args.amp):
        pass
    if args.amp:
        torch.cuda.empty_cache()


def strict(args, device):
    if args.fp16 and device.type in ("cpu", "mps"):
        raise ValueError("fp16 needs CUDA")
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)


def not_forced(args, other):
    if other:
        args.amp = False
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    if args.amp and not torch.cuda.is_available():
        print("no")
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)


def before_and_else(args):
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    if not torch.cuda.is_available():
        args.amp = False
    else:
        args.amp = True
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)


def in_a_nested_block(args, ok):
    if ok:
        if not torch.cuda.is_available():
            args.amp = False
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)


def bound_again(args, amp):
    if not torch.cuda.is_available():
        amp = False
    amp = args.amp
    scaler = torch.cuda.amp.GradScaler(enabled=amp)
'''


def lint(source: str):
    return triples(findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL202", "CDL205"}, torch_version="2.9.1"))


def test_flags_turned_off_on_a_mac_before_their_use():
    # not_forced: `other` says nothing about the host, nor does a test without an exit or assignment;
    # before_and_else: a use before the assignment, and an else that may set it again; in_a_nested_block:
    # the assignment is in a block that ends before the use; bound_again: a later assignment binds it again
    assert lint(SOURCE) == [
        ("CDL205", 31, 14),
        ("CDL205", 34, 14),
        ("CDL205", 38, 14),
        ("CDL205", 43, 14),
        ("CDL205", 50, 14),
        ("CDL205", 57, 14),
    ]


def test_a_flag_turned_off_by_a_project_objects_is_cuda():
    # `device_config.is_cuda` of a module-level object of another module: read as a tensor's `.is_cuda`
    config = "class DeviceConfig:\n    @property\n    def is_cuda(self):\n        return 'cuda' in self._device\n\n\ndevice_config = DeviceConfig()\n"
    source = """
    import torch
    from pkg.config import device_config


    def init_amp(enabled):
        if enabled and not device_config.is_cuda:
            enabled = False
        return torch.cuda.amp.GradScaler(enabled=enabled)


    def other(enabled):
        if enabled and not device_config.ready:
            enabled = False
        return torch.cuda.amp.GradScaler(enabled=enabled)
    """
    files = {"setup.py": "from setuptools import setup\nsetup(name='pkg')\n", "pkg/__init__.py": "", "pkg/config.py": config}
    found = findings_of(textwrap.dedent(source).lstrip("\n"), select={"CDL205"}, torch_version="2.9.1", project_files=files, path="pkg/train.py")
    assert triples(found) == [("CDL205", 14, 12)]
