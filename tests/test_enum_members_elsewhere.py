"""CDL108: `CUDA = "cuda"` in an enum names a member, not a default, also where the enum base comes from
the project's own module (a compatibility `StrEnum` that re-exports enum's or defines one)."""

from conftest import findings_of, triples

COMPAT = '''try:
    from enum import StrEnum
except ImportError:
    from enum import Enum

    class StrEnum(str, Enum):
        pass
'''
LOCAL = '''from enum import Enum


class StrEnum(str, Enum):
    pass
'''
SOURCE = '''from dataclasses import dataclass

from pkg.compat import StrEnum


class DeviceType(StrEnum):
    CPU = "cpu"
    CUDA = "cuda"


@dataclass
class JobConfig:
    device: str = "cuda"
'''


def test_a_member_of_an_enum_derived_in_another_module_is_no_default():
    for compat in (COMPAT, LOCAL):
        files = {"pkg/__init__.py": "", "pkg/compat.py": compat}
        found = findings_of(SOURCE, path="pkg/api.py", select={"CDL108"}, project_files=files)
        assert triples(found) == [("CDL108", 13, 19)]
