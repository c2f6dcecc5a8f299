"""Download and unpack the benchmark corpus (bench/corpus.toml) into a cache outside the repository.

    python bench/fetch.py                 # sdists + unpacked trees
    python bench/fetch.py --tools         # also the TorchFix venv (TorchFix pins libcst<1.6,
                                          # so it cannot share cudalint's environment)
    python bench/fetch.py --cache-dir DIR # default: $CUDALINT_BENCH_CACHE or ~/.cache/cudalint-bench

Idempotent: a project whose unpacked tree carries a marker matching its corpus entry is
left alone. Layout of the cache:

    sdists/              the downloaded archives
    src/NAME-VERSION/    each project's files (filtered; see corpus.toml)
    torchfix-venv/       TorchFix and its own libcst (with --tools)
    work/                scratch space for bench/run.py (copies for the fix check)
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

BENCH = Path(__file__).resolve().parent
CORPUS = BENCH / "corpus.toml"
MARKER = ".cudalint-bench.json"
MAX_MEMBER_BYTES = 2 * 1024 * 1024
BINARY_SUFFIXES = {
    ".so", ".dll", ".dylib", ".a", ".o", ".obj", ".lib", ".whl", ".egg", ".bin", ".pt", ".pth",
    ".ckpt", ".safetensors", ".npy", ".npz", ".pkl", ".png", ".jpg", ".jpeg", ".gif", ".pdf",
    ".zip", ".gz", ".tgz", ".xz", ".bz2", ".jar", ".exe", ".pyc", ".fatbin", ".cubin", ".ptx",
}
ROOT_MANIFESTS = ("setup.py", "setup.cfg", "pyproject.toml", "environment.yml", "environment.yaml", "Pipfile")


def default_cache() -> Path:
    return Path(os.environ.get("CUDALINT_BENCH_CACHE") or Path.home() / ".cache" / "cudalint-bench")


def load_corpus(path: Path = CORPUS) -> dict:
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def project_dir(cache: Path, project: dict) -> Path:
    return cache / "src" / f"{project['name']}-{project['version']}"


def entry_digest(corpus: dict, project: dict) -> str:
    payload = json.dumps({"corpus": corpus["version"], "project": project}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def is_fetched(cache: Path, corpus: dict, project: dict) -> bool:
    marker = project_dir(cache, project) / MARKER
    try:
        return json.loads(marker.read_text())["digest"] == entry_digest(corpus, project)
    except (OSError, ValueError, KeyError):
        return False


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def find_sdist(folder: Path, project: dict) -> Optional[Path]:
    want = _norm(f"{project['name']}-{project['version']}")
    for path in sorted(folder.glob("*")):
        stem = path.name
        for ext in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
            if stem.endswith(ext):
                stem = stem[: -len(ext)]
                if _norm(stem) == want:
                    return path
    return None


def download(project: dict, sdists: Path) -> Path:
    existing = find_sdist(sdists, project)
    if existing:
        return existing
    spec = f"{project['name']}=={project['version']}"
    env = dict(os.environ)
    env.update({k: str(v) for k, v in project.get("env", {}).items()})
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", spec, "-d", tmp]
        if project.get("no_build_isolation"):
            command.insert(5, "--no-build-isolation")
        if project.get("constraints"):
            constraint = Path(tmp) / "constraints.txt"
            constraint.write_text("\n".join(project["constraints"]) + "\n")
            env["PIP_CONSTRAINT"] = str(constraint)
        print(f"fetch: {' '.join(command[1:-2])}", flush=True)
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        found = find_sdist(Path(tmp), project)
        if found is None:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise SystemExit(f"fetch: could not download {spec} (pip exit {done.returncode}):\n{tail}")
        sdists.mkdir(parents=True, exist_ok=True)
        target = sdists / found.name
        shutil.move(str(found), target)
        return target


def _wanted(rel: str, project: dict) -> bool:
    """Is this member (path relative to the sdist's top folder) part of the corpus?"""
    if "/" not in rel and (rel in ROOT_MANIFESTS or (rel.startswith("requirements") and rel.endswith(".txt"))):
        return True
    if rel.startswith("requirements/"):
        return True
    suffix = Path(rel).suffix.lower()
    if suffix in BINARY_SUFFIXES:
        return False
    include = project.get("include")
    if include and not any(fnmatch.fnmatchcase(rel, pattern) for pattern in include):
        return False
    if any(fnmatch.fnmatchcase(rel, pattern) for pattern in project.get("exclude", ())):
        return any(fnmatch.fnmatchcase(rel, pattern) for pattern in project.get("keep", ()))
    return True


def _members(archive: Path):
    """(relative name, size, reader) for each regular file of a tar or zip sdist, without its top folder."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                parts = info.filename.split("/", 1)
                if len(parts) == 2:
                    yield parts[1], info.file_size, lambda info=info: zf.read(info)
        return
    with tarfile.open(archive) as tf:
        for member in tf:
            if not member.isfile():
                continue
            parts = member.name.split("/", 1)
            if len(parts) == 2:
                yield parts[1], member.size, lambda member=member: tf.extractfile(member).read()


def unpack(archive: Path, project: dict, target: Path) -> Dict[str, int]:
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    kept = skipped = 0
    for rel, size, read in _members(archive):
        if ".." in Path(rel).parts or rel.startswith("/"):
            skipped += 1
            continue
        if size > MAX_MEMBER_BYTES or not _wanted(rel, project):
            skipped += 1
            continue
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(read())
        kept += 1
    staging.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return {"kept": kept, "skipped": skipped}


def fetch(cache: Path, corpus: dict, names: Optional[Iterable[str]] = None) -> List[Path]:
    wanted = set(names or ())
    dirs = []
    for project in corpus["project"]:
        if wanted and project["name"] not in wanted:
            continue
        target = project_dir(cache, project)
        if not is_fetched(cache, corpus, project):
            archive = download(project, cache / "sdists")
            counts = unpack(archive, project, target)
            (target / MARKER).write_text(
                json.dumps({"digest": entry_digest(corpus, project), "sdist": archive.name, **counts}) + "\n"
            )
            print(f"fetch: {target.name}: {counts['kept']} files kept, {counts['skipped']} skipped", flush=True)
        dirs.append(target)
    return dirs


def ensure_torchfix(cache: Path) -> Path:
    venv = cache / "torchfix-venv"
    exe = venv / "bin" / "torchfix"
    if exe.exists():
        return exe
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-r", str(BENCH / "requirements-torchfix.txt")],
        check=True,
    )
    return exe


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--tools", action="store_true", help="also create the TorchFix venv")
    parser.add_argument("projects", nargs="*", help="only these projects (default: all)")
    args = parser.parse_args(argv)
    cache = (args.cache_dir or default_cache()).expanduser()
    corpus = load_corpus()
    for folder in fetch(cache, corpus, args.projects):
        print(folder)
    if args.tools:
        print(ensure_torchfix(cache))
    return 0


if __name__ == "__main__":
    sys.exit(main())
