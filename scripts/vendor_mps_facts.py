#!/usr/bin/env python3
"""Copy the per-release MPS facts the coverage database is built from into data/mps-coverage/.

    python scripts/vendor_mps_facts.py DATA_SET_DIR [--output data/mps-coverage]

DATA_SET_DIR holds the mps-coverage data set (``torch-<version>.json``, one per release,
described by its README). Each file is trimmed to the fields scripts/build_coverage_db.py
reads and written as ``torch-<version>.json.gz`` (sorted keys, one operator per line,
gzip without a timestamp), so a copy of the same facts is byte-identical and the
repository carries well under 1 MB instead of the data set's 21 MB. The builder reads the
full files and the trimmed ones alike.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from cudalint.coverage.shared_facts import OP_FIELDS, RELEASE_FIELDS, release_files  # noqa: E402

DEFAULT_OUTPUT = REPO / "data" / "mps-coverage"


def trim(data: dict) -> dict:
    """The fields of one release file that the builder reads (``basis`` only for operators without MPS
    path, where it names the other backends' dispatch keys)."""
    kept = {key: data[key] for key in RELEASE_FIELDS if key in data}
    kept["ops"] = {name: {key: entry[key] for key in OP_FIELDS if key in entry and (key != "basis" or
                                                                         entry["on_mps"] == "error")}
                   for name, entry in data["ops"].items()}
    return kept


def dumps(data: dict) -> bytes:
    """Sorted keys, one operator per line (readable with zcat, small diffs between releases)."""
    head = {key: value for key, value in data.items() if key != "ops"}
    lines = [json.dumps(head, sort_keys=True, ensure_ascii=False)[:-1] + ', "ops": {']
    ops = sorted(data["ops"].items())
    for index, (name, entry) in enumerate(ops):
        comma = "," if index < len(ops) - 1 else ""
        lines.append(f"{json.dumps(name)}: {json.dumps(entry, sort_keys=True, ensure_ascii=False)}{comma}")
    lines.append("}}")
    text = "\n".join(lines) + "\n"
    assert json.loads(text) == data
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_set", type=Path, help="folder with the data set's torch-<version>.json files")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    files = release_files(args.data_set)
    if not files:
        raise SystemExit(f"no torch-<version>.json files in {args.data_set}")
    args.output.mkdir(parents=True, exist_ok=True)
    total = 0
    for version, path in files.items():
        data = json.loads(path.read_text(encoding="utf-8"))
        payload = dumps(trim(data))
        (args.output / f"torch-{version}.json.gz").write_bytes(payload)
        total += len(payload)
    print(f"wrote {len(files)} releases to {args.output} ({total / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
