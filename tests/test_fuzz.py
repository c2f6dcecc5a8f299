"""A bounded fuzz run of `check` and `check --fix` (issue 14): generated programs (hypothesmith) and
byte-level mutations of the project's own Python fixtures. Every case goes through the real runner,
in its worker process under its per-file time limit, then through the fixer writing to disk. It fails
on any traceback, on a file that ran past the time limit, on an internal-error CDL000, and on changed
bytes in a file that must not change (one that does not decode or parse), or a fix that does not parse
or does not settle."""

import tempfile
import warnings
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import FIXTURES
from cudalint import fixes, runner
from cudalint.catalog import load_catalog
from cudalint.config import Settings
from cudalint.discover import SourceFile
from cudalint.source import decode_python

SEEDS = sorted(path for path in FIXTURES.rglob("*.py") if path.stat().st_size < 20_000)
SEED_BYTES = [path.read_bytes() for path in SEEDS]
NEVER = ("internal error", "worker failed", "crashed", "took longer than")
BOUNDED = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz_settings(root: Path) -> Settings:
    codes = frozenset(rule.code for rule in load_catalog())  # every rule, not only the default set
    return Settings(select=codes, root=root, file_timeout=60.0)


def check_and_fix(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / "case.py"
        path.write_bytes(data)
        config = fuzz_settings(root)
        result = runner.run([str(path)], config, jobs=1)
        bad = [f.message for f in result.findings if f.code == "CDL000" and any(word in f.message for word in NEVER)]
        assert not bad, bad
        unparsable = any(f.code == "CDL000" for f in result.findings)
        source = SourceFile(path, "case.py", "python")
        outcome = fixes.fix_file(source, config, result.torch_version, unsafe=True, write=True)
        written = path.read_bytes()
        if unparsable or decode_python(data).text is None:
            assert written == data  # a file that is not valid Python is never rewritten
            return
        if written != data:
            text = decode_python(written).text
            assert text is not None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(text, "case.py", "exec", dont_inherit=True)
            again = fixes.fix_file(source, config, result.torch_version, unsafe=True, write=False)
            assert again is None or not again.changed, again.diff()
        else:
            assert outcome is None or not outcome.changed or outcome.error


@BOUNDED
@given(hypothesmith.from_grammar())
def test_generated_programs(program):
    check_and_fix(("import torch\n" + program).encode("utf-8", "surrogatepass"))


MUTATION = st.tuples(st.sampled_from(["flip", "insert", "delete", "duplicate"]),
                     st.floats(0, 1, allow_nan=False), st.binary(min_size=1, max_size=8))


def mutate(data: bytes, steps) -> bytes:
    for kind, where, chunk in steps:
        at = int(where * len(data))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ chunk[0]]) + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + chunk + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + len(chunk) :]
        else:
            data = data[:at] + data[at : at + 64] * 2 + data[at + 64 :]
    return data


@BOUNDED
@given(st.sampled_from(range(len(SEED_BYTES))), st.lists(MUTATION, min_size=1, max_size=6))
def test_byte_mutations_of_real_files(seed, steps):
    check_and_fix(mutate(SEED_BYTES[seed], steps))
