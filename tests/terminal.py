"""Run a command with one of its streams on a pseudo-terminal, and read what the terminal showed."""

import os
import pty
import select
import subprocess
import time


def run_on_terminal(command, *, stream="stdout", timeout=60, **popen):
    """(returncode, bytes shown on the terminal, the other stream's bytes). Reading stops when the
    process has exited and the terminal has nothing more, so a lingering grandchild cannot hang it."""
    master, slave = pty.openpty()
    other = "stderr" if stream == "stdout" else "stdout"
    process = subprocess.Popen(command, **{stream: slave, other: subprocess.PIPE}, **popen)
    os.close(slave)
    shown = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not data:
                    break
                shown += data
            elif process.poll() is not None:
                break
        rest = process.communicate(timeout=max(deadline - time.monotonic(), 1))[0]
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    return process.returncode, bytes(shown), rest
