"""Any YAML file, read for what it is: a conda environment, a cog.yaml, a Compose file, or a CI configuration.

What a YAML file is comes from its content (and, for CI, where it lives), not from
its name: `conda.yaml` or `env/gpu.yml` with a `dependencies` list is an environment.
A YAML file that is none of these gives nothing, not even for a syntax error, since
nothing says it was meant for cudalint; files whose names say what they are
(environment*.yml, cog.yaml, workflow files) do get a CDL000 when they do not parse.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import List, NamedTuple, Tuple

import yaml

from cudalint.catalog import load_catalog
from cudalint.device_text import CUDA_DEVICE_RE, DEVICE_KEY_RE
from cudalint.findings import Finding
from cudalint.manifests import conda
from cudalint.manifests.base import Parsed
from cudalint.manifests.checks import platform_named
from cudalint.manifests.commands import scan_text
from cudalint.manifests.yaml_nodes import Document, compose, get, mapping, scalar, scalar_source, sequence

# Words one of the readers needs; a YAML file without any of them is not composed at all.
_WORTH_READING = re.compile(r"dependencies|channels|install|python_packages|cuda|gpu|nccl|nvidia", re.IGNORECASE)
_SCRIPT_KEYS = {"run", "script", "before_script", "after_script", "command", "commands", "pre_install",
                "install", "setup"}
MAX_VISITS = 100_000


def _named_for_us(path: str) -> bool:
    name = PurePath(path).name.lower()
    return name.startswith("environment") or name == "cog.yaml" or _is_ci(path)


def _is_ci(path: str) -> bool:
    pure = PurePath(path.replace("\\", "/"))
    parts = [part.lower() for part in pure.parts]
    return (len(parts) >= 3 and parts[-3:-1] == [".github", "workflows"]) or pure.name.lower() in (
        ".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".drone.yml",
        "appveyor.yml", ".cirrus.yml") or "circleci" in parts


def read(path: str, text: str) -> Tuple[List[Finding], Parsed]:
    parsed = Parsed()
    named = _named_for_us(path)
    if not named and not _WORTH_READING.search(text):
        return [], parsed
    document = compose(path, text, parsed if named else None)
    if document is None:
        return [], parsed
    if conda.is_environment(document.root) or PurePath(path).name.lower().startswith("environment"):
        conda.read_document(document, parsed)
        return [], parsed
    if get(document.root, "build") is not None and (PurePath(path).name.lower() == "cog.yaml"
                                                    or get(document.root, "predict") is not None):
        return _cog(document, parsed), parsed
    _scripts(document, parsed)
    if _is_ci(path) or platform_named(PurePath(path).stem):
        return [], parsed  # a workflow, or a configuration named for CUDA hosts (`cuda_llama.yaml`, `compose.gpu.yaml`)
    return _device_defaults(document) + _compose_gpus(document), parsed


def _compose_gpus(document: Document) -> List[Finding]:
    """CDL455 for each service of a Compose file that asks Docker for NVIDIA GPUs: `runtime: nvidia`,
    `gpus:`, or a device reservation with `driver: nvidia` or the `gpu` capability. Docker on a Mac has
    no NVIDIA runtime: `docker compose up` cannot start the service. An override file named for GPU
    hosts (`compose.gpu.yaml`) is where such a request belongs, and is not reported."""
    services = get(document.root, "services")
    if not isinstance(services, yaml.MappingNode):
        return []
    rule = load_catalog()["CDL455"]
    findings = []
    for name, service in mapping(services):
        for node, what in _service_gpus(service):
            span = document.span(node)
            findings.append(Finding(
                rule.code, document.path, span.line, span.column, span.end_line, span.end_column,
                f"service {name!r} {what}: Docker on a Mac has no NVIDIA runtime, so the service does not start"
                " there. Move the GPU request to an override file for GPU hosts (compose.gpu.yaml, used with"
                " `-f`)", rule.severity,
            ))
    return findings


def _service_gpus(service: yaml.Node) -> List[Tuple[yaml.Node, str]]:
    found = []
    runtime = get(service, "runtime")
    if (scalar(runtime) or "").strip().lower() == "nvidia":
        found.append((runtime, "runs on the NVIDIA runtime (runtime: nvidia)"))
    gpus = get(service, "gpus")
    if gpus is not None and scalar(gpus) not in ("", "0", "null", "~"):
        found.append((gpus, "asks for GPUs (gpus:)"))
    reservations = get(get(get(service, "deploy"), "resources"), "reservations")
    for device in sequence(get(reservations, "devices")):
        driver = get(device, "driver")
        capabilities = [item for item in sequence(get(device, "capabilities")) if (scalar(item) or "").lower() == "gpu"]
        if (scalar(driver) or "").strip().lower() == "nvidia":
            found.append((driver, "reserves NVIDIA GPUs (driver: nvidia)"))
        elif capabilities:
            found.append((capabilities[0], "reserves GPUs (capabilities: [gpu])"))
    return found


# A configuration's settings that every run gets unless it overrides them: a device (the keys of a Python
# config literal's, device_text.DEVICE_KEY_RE, and a Lightning-style trainer's `accelerator`, where
# "gpu" picks CUDA or MPS and "cuda" only CUDA) naming CUDA, and a distributed backend that is NCCL.
class _Default(NamedTuple):
    key: "re.Pattern[str]"
    value: "re.Pattern[str]"
    code: str
    says: str


_DEFAULTS = (
    _Default(re.compile(DEVICE_KEY_RE.pattern + r"|^accelerator$", re.IGNORECASE), CUDA_DEVICE_RE, "CDL108",
             "defaults to a CUDA device; every run that does not override it asks for CUDA, which a Mac does not have"),
    _Default(re.compile(r"(^|_)backend$", re.IGNORECASE), re.compile(r"^nccl$"), "CDL706",
             "defaults to the 'nccl' backend, which needs NVIDIA GPUs; a Mac has gloo"),
)


def _device_defaults(document: Document) -> List[Finding]:
    """CDL108 for each device entry of a configuration whose value is a CUDA device, CDL706 for each
    backend entry that is NCCL: every run that does not override it (`python train.py device=mps`)
    asks for CUDA. A configuration whose file name is for CUDA hosts (`cuda_pytorch_bert.yaml` beside
    `mps_pytorch_bert.yaml`) is not read for them: CUDA is what it is for."""
    catalog = load_catalog()
    findings = []
    visited = 0
    stack: List[yaml.Node] = [document.root]
    while stack and visited < MAX_VISITS:
        node = stack.pop()
        visited += 1
        if isinstance(node, yaml.MappingNode):
            for key, child in mapping(node):
                value = scalar(child) if isinstance(child, yaml.ScalarNode) and child.tag.endswith(":str") else None
                found = next((default for default in _DEFAULTS if value is not None and default.key.search(key)
                              and default.value.match(value.strip())), None)
                if found is not None:
                    rule, span = catalog[found.code], document.span(child)
                    findings.append(Finding(
                        rule.code, document.path, span.line, span.column, span.end_line, span.end_column,
                        f"config value {key}: {value} {found.says}", rule.severity,
                    ))
                else:
                    stack.append(child)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return findings


def _cog(document: Document, parsed: Parsed) -> List[Finding]:
    """cog.yaml: build.python_packages, build.run commands, and build.cuda / build.gpu, which make
    cog build the image on an NVIDIA CUDA base (CDL454)."""
    build = get(document.root, "build")
    conda.pip_list(document, get(build, "python_packages"), "build.python_packages", parsed)
    for item in sequence(get(build, "run")):
        command = get(item, "command") if isinstance(item, yaml.MappingNode) else item
        if isinstance(command, yaml.ScalarNode):
            _shell(document, command, "build.run", parsed)
    rule = load_catalog()["CDL454"]
    findings = []
    for key in ("cuda", "gpu"):
        node = get(build, key)
        value = scalar(node)
        if value is None or value.lower() in ("false", "no", "off", "null", "~", ""):
            continue
        span = document.span(node)
        what = f"CUDA {value}" if key == "cuda" else "CUDA (gpu: true)"
        findings.append(Finding(
            rule.code, document.path, span.line, span.column, span.end_line, span.end_column,
            f"cog builds this model's image on an NVIDIA {what} base image; on a Mac (and on CPU-only hosts)"
            " the container has no GPU to use. Set `gpu: false` for a CPU image, or keep the GPU build in"
            " a separate cog.yaml", rule.severity,
        ))
        break
    return findings


def _shell(document: Document, node: yaml.ScalarNode, section: str, parsed: Parsed, off_mac: bool = False) -> None:
    text, offsets = scalar_source(document, node)
    if text:
        scan_text(document.path, text, section, parsed, index=document.index, offsets=offsets, off_mac=off_mac)


def _runs_off_mac(job: yaml.Node) -> bool:
    """A job whose `runs-on` is a fixed runner that is not macOS (an expression or a matrix may be), a
    build whose `os` is one (Read the Docs' `build: os: ubuntu-22.04`, beside its `jobs`), or a job that
    runs in a container image (`image:`, `container:` or `container: {image: ...}`: GitLab CI, GitHub
    Actions, Lightning's workflows, a Compose service): a container is Linux, on a Mac too."""
    container = get(job, "container")
    if scalar(get(job, "image")) or scalar(container) or (container is not None and scalar(get(container, "image"))):
        return True
    runner = get(job, "runs-on")
    names = [scalar(runner)] if scalar(runner) is not None else [scalar(item) for item in sequence(runner)]
    names = [name for name in names if name is not None]
    system = scalar(get(job, "os"))
    if not names and system is not None and get(job, "jobs") is not None:
        names = [system]
    return bool(names) and not any("mac" in name.lower() or "${{" in name for name in names)


def _scripts(document: Document, parsed: Parsed) -> None:
    """Every `run:`/`script:`/`command:` value of a CI configuration, each job's runner taken into account."""
    visited = set()
    stack: List[Tuple[yaml.Node, str, bool]] = [(document.root, "", False)]
    while stack and len(visited) < MAX_VISITS:
        node, key, off_mac = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            job_off_mac = off_mac or _runs_off_mac(node)
            for child_key, child in reversed(list(mapping(node))):
                stack.append((child, child_key, job_off_mac))
        elif isinstance(node, yaml.SequenceNode):
            for child in reversed(node.value):
                stack.append((child, key, off_mac))
        elif isinstance(node, yaml.ScalarNode) and key in _SCRIPT_KEYS and node.tag.endswith(":str"):
            _shell(document, node, key, parsed, off_mac)

