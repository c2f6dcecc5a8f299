#!/usr/bin/env python3
"""Build rules/mps_coverage.json, the MPS operator coverage database cudalint ships.

    python scripts/build_coverage_db.py [FACTS_DIR]           # from the per-release facts
    python scripts/build_coverage_db.py --from-installed-torch  # add/replace the installed torch's release

FACTS_DIR defaults to data/mps-coverage in this repository (the trimmed copy of the
mps-coverage data set, see data/README.md); the full data set's folder works too.
Releases earlier added from an installed torch are kept when rebuilding from the
facts (unless the facts themselves cover that release). See docs/coverage.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from cudalint.coverage.database_format import build_database, dumps, release_from_database  # noqa: E402
from cudalint.coverage.installed_release import installed_python_registrations, read_installed_release  # noqa: E402
from cudalint.coverage.reviewed_facts import (  # noqa: E402
    CORRECTIONS_FILE,
    REGISTRATIONS_FILE,
    TORCHVISION_FILE,
    load_corrections,
    load_registrations,
    load_torchvision,
)
from cudalint.coverage.shared_facts import read_release, release_files  # noqa: E402

DEFAULT_FACTS = REPO / "data" / "mps-coverage"
TORCHVISION = REPO / "data" / "torchvision" / TORCHVISION_FILE
DEFAULT_OUTPUT = REPO / "rules" / "mps_coverage.json"


def reviewed(facts: Path):
    """(Python registrations, manual corrections) of the reviewed data files beside the release facts."""
    registrations = load_registrations(facts / REGISTRATIONS_FILE) if (facts / REGISTRATIONS_FILE).exists() else []
    corrections = load_corrections(facts / CORRECTIONS_FILE) if (facts / CORRECTIONS_FILE).exists() else []
    return registrations, corrections


def rebuild_from_facts(facts: Path, previous: dict | None, reviewed_dir: Path) -> dict:
    files = release_files(facts)
    if not files:
        raise SystemExit(f"no torch-<version>.json files in {facts}")
    releases = [read_release(path) for path in files.values()]
    if previous is not None:
        for version, info in previous["release_info"].items():
            if info.get("source") == "installed torch" and version not in files:
                releases.append(release_from_database(previous, version))
    return build_database(releases, *reviewed(reviewed_dir), load_torchvision(TORCHVISION))


def add_installed_torch(previous: dict, replace: bool, reviewed_dir: Path) -> dict:
    existing = {v: release_from_database(previous, v) for v in previous["releases"]}
    release = read_installed_release(list(existing.values()))
    if release.version in existing and not replace:
        raise SystemExit(f"torch {release.version} is already in the database; pass --replace to overwrite it")
    existing[release.version] = release
    registrations, corrections = reviewed(reviewed_dir)
    found = installed_python_registrations(release.version, registrations)
    for registration in found:
        print(f"note: torch {release.version} registers {registration.op} for MPS in {registration.file}; "
              f"add it to {reviewed_dir / REGISTRATIONS_FILE}")
    return build_database(list(existing.values()), [*registrations, *found], corrections, load_torchvision(TORCHVISION))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("facts", nargs="?", type=Path, default=DEFAULT_FACTS, help="folder of per-release facts")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--from-installed-torch", action="store_true",
                        help="merge the installed torch's native_functions.yaml into the existing database")
    parser.add_argument("--replace", action="store_true", help="with --from-installed-torch: overwrite that release")
    parser.add_argument("--reviewed", type=Path, default=DEFAULT_FACTS,
                        help=f"folder of {REGISTRATIONS_FILE} and {CORRECTIONS_FILE} (default: {DEFAULT_FACTS.name})")
    args = parser.parse_args(argv)

    previous = json.loads(args.output.read_text(encoding="utf-8")) if args.output.exists() else None
    if args.from_installed_torch:
        if previous is None:
            raise SystemExit(f"{args.output} does not exist; build it from the data set first")
        database = add_installed_torch(previous, args.replace, args.reviewed)
    else:
        database = rebuild_from_facts(args.facts, previous, args.reviewed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    data = dumps(database)
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({len(data) / 1e6:.2f} MB, {len(database['ops'])} ops, "
          f"releases {', '.join(database['releases'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
