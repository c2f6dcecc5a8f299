"""Spelling of ATen operator names.

The database keys operators without the ``aten::`` namespace and names the
default overload by its bare base name: ``grid_sampler_3d``, ``add.Tensor``.
Public functions accept and return the namespaced spelling as well.
"""

from __future__ import annotations

NAMESPACE = "aten::"


def op_key(name: str) -> str:
    """``aten::add.Tensor`` -> ``add.Tensor``; ``aten::relu.default`` -> ``relu``."""
    name = name.strip()
    if name.startswith(NAMESPACE):
        name = name[len(NAMESPACE):]
    if name.endswith(".default"):
        name = name[: -len(".default")]
    return name


def qualified(key: str) -> str:
    """``add.Tensor`` -> ``aten::add.Tensor``; another namespace's operator (``torchvision::nms``) as is."""
    return key if "::" in key else NAMESPACE + key


def base_name(name: str) -> str:
    """``aten::add.Tensor`` -> ``add``."""
    return op_key(name).split(".", 1)[0]
