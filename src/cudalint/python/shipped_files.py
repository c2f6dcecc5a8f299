"""Files a project ships beside its code, as `torch.load` reads them.

    Jd = torch.load(os.path.join(os.path.dirname(__file__), "Jd.pt"))
    tensors = torch.load(str(Path(os.path.abspath(__file__)).parent) + "/hadamard_tensors.pt")
    TF_GAMMAS = torch.load(str(Path(__file__).parents[0] / "precomputed" / "tf_gammas.pt"))

A path built from `__file__` names a file of the project itself; so does a relative path that names one
from the project's root or the module's own folder (`torch.load("tests/input_data.pt")` in a test run from
the root), where only one of the two holds such a file. When that file is a torch archive (the
zip format `torch.save` writes since torch 1.6, and TorchScript's) whose pickles record the device of
every storage as "cpu", it loads onto the CPU on any machine, so a load without `map_location` is no
porting problem (CDL109). The pickles are read as opcodes (`pickletools.genops`), never unpickled: each
storage's persistent id holds its location as a string ('storage', type, key, "cpu", numel). Any string
that names another device, anywhere in the pickle, keeps the load reported, as does a file the run
cannot read or judge (too large, not a zip archive, a folder or FIFO, outside the project through `..`
or a symbolic link). The result cache keys a module's findings by its own text: an archive replaced
later by one saved on CUDA is judged again only when the module changes or the cache is cleared.
"""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING, Dict, Optional, Tuple

import libcst as cst

from cudalint.python.names import string_value

if TYPE_CHECKING:  # pragma: no cover
    from cudalint.python.semantic import SemanticModel

MAX_DEPTH = 6  # names and calls followed to evaluate a path
MAX_ARCHIVE_BYTES = 1 << 30  # a larger file is not opened
MAX_PICKLE_BYTES = 16 << 20  # one pickle of the archive read, at most
MAX_PICKLES = 8  # pickles of one archive read (data.pkl, constants.pkl, ...)
MAX_OPCODES = 2_000_000  # opcodes of one pickle walked
# Storage locations of devices other than the CPU (c10's DeviceType names, as torch.save writes them)
OTHER_DEVICE = re.compile(r"(cuda|mps|xpu|hpu|npu|mtia|meta|xla|lazy|ipu|ve|vulkan|metal|maia|fpga|hip|privateuseone)(:\d+)?")

# calls that give their first argument's path unchanged, or its folder
SAME_PATH = frozenset({"os.path.abspath", "os.path.realpath", "os.path.normpath", "os.fspath", "str", "pathlib.Path",
                       "pathlib.PurePath", "pathlib.PosixPath"})
SAME_PATH_METHODS = frozenset({"resolve", "absolute", "expanduser"})

_judged: Dict[Tuple[str, int, int], bool] = {}  # (real path, size, mtime) -> holds CPU storages only


def shipped_path(node: cst.BaseExpression, model: "SemanticModel", here: str, root: str) -> Optional[str]:
    """The real path of the project's file that a path expression names (built from `__file__`, or relative:
    from the project's root or the module's folder), when it is a regular file inside `root`; None otherwise."""
    if not here or not root:
        return None
    text = _path(node, model, os.path.abspath(here), 0)
    if text is None:
        return None
    top = os.path.realpath(root)
    if os.path.isabs(text):
        return _regular_file_inside(text, top)
    # A relative path is read from where the program runs: the project's root (pytest, a script run from
    # the top) or the module's own folder. A file there is the one it names; two different ones, neither.
    found = {_regular_file_inside(os.path.join(folder, text), top) for folder in (top, os.path.dirname(os.path.abspath(here)))}
    found.discard(None)
    return found.pop() if len(found) == 1 else None


def _regular_file_inside(text: str, top: str) -> Optional[str]:
    """The real path of a regular file of at most MAX_ARCHIVE_BYTES inside the folder `top`, else None."""
    real = os.path.realpath(text)
    if not real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    try:
        info = os.stat(real)
    except OSError:
        return None
    return real if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_ARCHIVE_BYTES else None


def _path(node: cst.BaseExpression, model: "SemanticModel", here: str, depth: int) -> Optional[str]:
    if depth > MAX_DEPTH:
        return None
    literal = string_value(node)
    if literal is not None:
        return literal
    if type(node) is cst.Name:
        if node.value == "__file__" and not model.lookup("__file__"):
            return here
        bindings = model.lookup(node.value)
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
            return None
        return _path(bindings[0].value, model, here, depth + 1)
    if type(node) is cst.Attribute and node.attr.value == "parent":
        inner = _path(node.value, model, here, depth + 1)
        return os.path.dirname(inner) if inner is not None else None
    if type(node) is cst.Subscript and type(node.value) is cst.Attribute and node.value.attr.value == "parents":
        # `Path(__file__).parents[1]`: the folder that many levels above the path's own
        levels = _index(node)
        inner = _path(node.value.value, model, here, depth + 1) if levels is not None else None
        if inner is None:
            return None
        for _ in range(levels + 1):
            inner = os.path.dirname(inner)
        return inner
    if type(node) is cst.BinaryOperation and isinstance(node.operator, (cst.Divide, cst.Add)):
        left, right = _path(node.left, model, here, depth + 1), _path(node.right, model, here, depth + 1)
        if left is None or right is None:
            return None
        return os.path.join(left, right) if isinstance(node.operator, cst.Divide) else left + right
    if type(node) is not cst.Call or any(arg.keyword is not None or arg.star for arg in node.args):
        return None
    parts = [_path(arg.value, model, here, depth + 1) for arg in node.args]
    if any(part is None for part in parts):
        return None
    func = node.func
    if type(func) is cst.Attribute and not model.is_module_ref(func.value):
        owner = _path(func.value, model, here, depth + 1)
        if owner is None:
            return None
        if func.attr.value in SAME_PATH_METHODS and not parts:
            return owner
        return os.path.join(owner, *parts) if func.attr.value == "joinpath" and parts else None
    qualified = model.resolve(func) or (func.value if type(func) is cst.Name and not model.lookup(func.value) else None)
    if qualified == "os.path.dirname" and len(parts) == 1:
        return os.path.dirname(parts[0])
    if qualified == "os.path.join" and parts:
        return os.path.join(*parts)
    if qualified in SAME_PATH and len(parts) == 1:
        return parts[0]
    if qualified in ("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath") and len(parts) > 1:
        return os.path.join(*parts)
    return None


def _index(node: cst.Subscript) -> Optional[int]:
    """The small non-negative integer a one-element subscript names, else None."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return None
    value = node.slice[0].slice.value
    if type(value) is not cst.Integer:
        return None
    number = int(value.value, 0)
    return number if 0 <= number <= MAX_DEPTH else None


def holds_cpu_storages_only(path: str) -> bool:
    """The torch archive at `path` records at least one storage, every one on the CPU, as its pickles
    say (read once per file version)."""
    try:
        info = os.stat(path)
    except OSError:
        return False
    key = (path, info.st_size, info.st_mtime_ns)
    if key not in _judged:
        _judged[key] = _judge(path)
    return _judged[key]


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C  # torch/serialization.py: MAGIC_NUMBER, the first pickle of a pre-1.6 file


def _judge(path: str) -> bool:
    import zipfile  # only where a load names a shipped file: the start-up of every run does without it

    try:
        if not zipfile.is_zipfile(path):
            return _judge_legacy(path)
        with zipfile.ZipFile(path) as archive:
            pickles = [entry for entry in archive.infolist() if entry.filename.endswith(".pkl")]
            if not pickles or len(pickles) > MAX_PICKLES or any(entry.file_size > MAX_PICKLE_BYTES for entry in pickles):
                return False
            on_cpu = False
            for entry in pickles:
                found = _locations(archive.read(entry))
                if found is None:
                    return False
                on_cpu = on_cpu or found
            return on_cpu
    except (OSError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, ValueError, EOFError):
        return False


def _judge_legacy(path: str) -> bool:
    """A file saved in torch's format before 1.6 (`_use_new_zipfile_serialization=False`): pickles one
    after another, the magic number, the protocol version, the system's facts, then the object, whose
    storages name their locations; the raw storage bytes follow. Those four pickles are walked."""
    import io
    import pickletools

    with open(path, "rb") as handle:
        stream = io.BytesIO(handle.read(MAX_PICKLE_BYTES))
    try:
        magic = [argument for _opcode, argument, _position in pickletools.genops(stream)]
    except (ValueError, EOFError, UnicodeDecodeError, TypeError, KeyError, IndexError):
        return False
    if LEGACY_MAGIC not in magic:
        return False  # not a torch file: its first pickle holds the magic number alone
    found = [_pickle_locations(stream) for _ in range(3)]
    return None not in found and any(found)


def _locations(data: bytes) -> Optional[bool]:
    """None when a string of the pickle names a device other than the CPU (or the pickle cannot be
    walked); else whether one names the CPU."""
    import io

    return _pickle_locations(io.BytesIO(data))


def _pickle_locations(stream) -> Optional[bool]:
    """`_locations` of the one pickle that starts where `stream` stands (which it leaves after its end)."""
    import pickletools

    cpu = False
    try:
        for count, (_opcode, argument, _position) in enumerate(pickletools.genops(stream)):
            if count > MAX_OPCODES:
                return None
            if type(argument) is str:
                if argument == "cpu":
                    cpu = True
                elif OTHER_DEVICE.fullmatch(argument):
                    return None
    except (ValueError, EOFError, UnicodeDecodeError, TypeError, KeyError, IndexError):
        return None
    return cpu
