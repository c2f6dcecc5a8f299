"""The only ways cudalint reads a file of the linted tree and writes into it.

Reading: `read_regular` opens without blocking, checks on the open descriptor that it is a
regular file (never a FIFO, a device or a socket: `mkfifo x.py` must not hang a run, a link to
/dev/zero must not fill memory) and reads at most `limit` bytes. Every refusal is an
`UnreadableFile` (an OSError) whose message says why, for a CDL000.

Writing: `replace_file` writes a temporary file of our own naming beside the target and renames
it over the target, but only when the target stays inside the project root (a symlink out of the
tree is never written through) and, when the caller says what it read, only when the file is
still that file with those bytes (an edit saved meanwhile is never overwritten). Temporary files
left by a killed run are swept by `sweep_temporaries`.
"""

from __future__ import annotations

import os
import stat
import time
from collections import namedtuple

from cudalint.digests import sha256

DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # well above any real source or manifest file
TEMP_PREFIX = ".cudalint-"
TEMP_SUFFIX = ".tmp"
STALE_AFTER_S = 24 * 3600  # a temporary file this old belongs to no running cudalint

PathLike = "str | os.PathLike[str]"  # for annotations only


class UnreadableFile(OSError):
    """A file cudalint will not read; str() is the reason, for a message."""

    def __str__(self) -> str:
        return self.args[0] if self.args else "cannot read"


class UnsafeWrite(OSError):
    """A write cudalint refused (outside the project, or the file changed); str() is the reason."""

    def __str__(self) -> str:
        return self.args[0] if self.args else "not written"


def kind_of_mode(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def is_regular(path: PathLike) -> bool:
    """A regular file, following symlinks; False for anything that cannot be stat'ed."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


class Snapshot(namedtuple("Snapshot", "data device inode mode")):
    """What was read (bytes), and from which file (its device, inode and mode, ints): a write based on it
    checks both are still so. (A namedtuple: made at every start; see findings.py.)"""

    __slots__ = ()


def read_regular(path: PathLike, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or UnreadableFile saying why not."""
    return read_snapshot(path, limit).data


def read_snapshot(path: PathLike, limit: int = DEFAULT_MAX_BYTES) -> Snapshot:
    """read_regular, with the identity of the file the bytes came from."""
    try:
        before = os.stat(path)
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from None
    except ValueError as exc:  # an embedded NUL in the name
        raise UnreadableFile(str(exc)) from None
    if not stat.S_ISREG(before.st_mode):
        raise UnreadableFile(f"{kind_of_mode(before.st_mode)}, not a regular file; not read")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from None
    try:
        opened = os.fstat(fd)  # what was opened, not what the name meant a moment before
        if not stat.S_ISREG(opened.st_mode):
            raise UnreadableFile(f"{kind_of_mode(opened.st_mode)}, not a regular file; not read")
        if opened.st_size > limit:
            raise UnreadableFile(_too_large(opened.st_size, limit))
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while being read
                raise UnreadableFile(_too_large(size, limit))
        return Snapshot(b"".join(chunks), opened.st_dev, opened.st_ino, stat.S_IMODE(opened.st_mode))
    except OSError as exc:
        if isinstance(exc, UnreadableFile):
            raise
        raise UnreadableFile(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def read_regular_text(path: PathLike, limit: int = DEFAULT_MAX_BYTES, encoding: str = "utf-8") -> str:
    """read_regular, decoded; a decoding error is an UnreadableFile too."""
    data = read_regular(path, limit)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"cannot decode byte {data[exc.start]:#04x} as {encoding}") from None


def _too_large(size: int, limit: int) -> str:
    return f"larger than the size limit ({size} bytes; max-file-size is {limit}); not read"


def writable_output(path: PathLike) -> str | None:
    """Why a report could not be written to `path` (checked before any work), or None."""
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        return "is a directory"
    if not os.path.isdir(folder):
        return f"no such folder {folder}"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "not writable"
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        return f"folder {folder} is not writable"
    return None


def inside(root: PathLike, path: PathLike) -> bool:
    """Whether `path`, every symlink followed, is `root` or lies under it (root's own links followed too)."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def write_target(path: PathLike, root: PathLike) -> str:
    """The real file a write to `path` lands on, or UnsafeWrite when that is outside the project root.

    A path with no symlink on the way is the user's own choice (a file named on the command line);
    a path through a symlink is written only when the link's target stays inside the root."""
    real = os.path.realpath(path)
    if real != os.path.abspath(path) and not inside(root, real):
        raise UnsafeWrite(f"it is a symlink to {real}, outside the project root {os.path.realpath(root)}; nothing written")
    return real


def replace_file(
    path: PathLike, data: bytes, root: PathLike, expected: Snapshot | None = None, follow_links: bool = True
) -> None:
    """Atomically make `path` hold `data`: temporary file beside it (mode kept), fsync, rename.

    `expected` is what the caller read and edited; if the file is no longer that file or no longer
    holds exactly those bytes just before the rename, nothing is written (mode kept from it).
    `follow_links=False` replaces a symlink at `path` itself rather than what it points to (a cache
    entry), and then the folder it lies in must be inside the root."""
    if follow_links:
        target = write_target(path, root)
    else:
        folder = os.path.dirname(os.path.abspath(path))
        if not inside(root, folder):
            raise UnsafeWrite(f"{folder} leads outside the project root {os.path.realpath(root)}; nothing written")
        target = os.path.join(os.path.realpath(folder), os.path.basename(path))
    folder = os.path.dirname(target)
    handle, temporary = _new_temporary(folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if expected is not None:
            os.chmod(temporary, expected.mode)
            _unchanged(target, expected)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _unchanged(target: str, expected: Snapshot) -> None:
    changed = UnsafeWrite("the file changed during fix (an edit was saved meanwhile); nothing written")
    try:
        current = read_snapshot(target, max(len(expected.data), 1))
    except UnreadableFile:
        raise changed from None
    if (current.device, current.inode, current.data) != (expected.device, expected.inode, expected.data):
        raise changed


def _temp_prefix() -> str:
    return f"{TEMP_PREFIX}{os.getpid()}-"


TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
              | getattr(os, "O_BINARY", 0))


def _new_temporary(folder: str):
    """(descriptor, path) of a new file of our own naming in `folder`, mode 0600, as tempfile.mkstemp
    makes one: created exclusively (never an existing file, never through a link)."""
    for _ in range(100):
        path = os.path.join(folder, f"{_temp_prefix()}{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(path, TEMP_FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary name in {folder}")


def _stale(name: str, modified: float) -> bool:
    """Ours, and its writer is gone: the process named in it no longer exists, or it is very old."""
    middle = name[len(TEMP_PREFIX) : -len(TEMP_SUFFIX)]
    pid_text = middle.split("-", 1)[0]
    if time.time() - modified > STALE_AFTER_S:
        return True
    if not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def sweep_temporaries(folder: PathLike) -> int:
    """Remove the temporary files of our own naming (regular files, never links) that a killed run
    left in `folder`; a run still in progress keeps its own. Returns how many were removed."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not (entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(TEMP_SUFFIX)):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and _stale(entry.name, info.st_mtime):
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def files_fingerprint(top: str, wanted, recurse: bool = True) -> str:
    """A digest of the regular files under `top` that `wanted(name)`: each one's path below `top`,
    size and mtime (symlinked folders are not followed, as rglob does not; __pycache__ folders, which
    hold only what the interpreter derived from the files here, are not entered)."""
    rows = []
    folders = [("", top)]
    while folders:
        relative, folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if recurse and entry.name != "__pycache__":
                        folders.append((relative + entry.name + "/", entry.path))
                    continue
                if not wanted(entry.name):
                    continue
                info = entry.stat()  # follows a link to its file, as os.stat did
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                rows.append(f"{relative}{entry.name}:{info.st_size}:{info.st_mtime_ns}\n")
    return sha256("".join(sorted(rows)).encode("utf-8", "surrogatepass")).hexdigest()
