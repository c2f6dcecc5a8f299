"""Environment markers false on every Mac: pip never installs the entry there, so no CDL5xx finding
on it, in every format that carries a PEP 508 marker (and setuptools' `extra:marker` keys)."""

from cudalint.manifests import check_manifest

DARWIN_EXCLUDED = 'platform_system != "Windows" and platform_system != "Darwin"'


def found(path, text):
    return [(f.code, f.line, f.column) for f in check_manifest(path, text)]


def test_requirements_file_with_comment_after_the_marker():
    text = (
        f"deepspeed >=0.8.2, <=0.9.3; {DARWIN_EXCLUDED}  # strict\n"
        "deepspeed-kernels ; sys_platform == 'linux'\n"
        "deepspeed >=0.8.2\n"
        "xformers; sys_platform == 'linux' or sys_platform == 'darwin'\n"
    )
    assert found("requirements/strategies.txt", text) == [("CDL504", 3, 1), ("CDL501", 4, 1)]


def test_pyproject_dependencies_and_optional_dependencies():
    text = (
        "[project]\nname = 'x'\nversion = '1'\n"
        "dependencies = [\n  'flash-attn; sys_platform == \"linux\"',\n  'xformers',\n]\n"
        "[project.optional-dependencies]\n"
        f"train = [\n  'deepspeed; {DARWIN_EXCLUDED}',\n  'deepspeed; os_name == \"posix\"',\n]\n"
    )
    assert found("pyproject.toml", text) == [("CDL501", 6, 3), ("CDL504", 11, 3)]


def test_setup_py_install_requires_and_extras_require_keys():
    text = (
        "from setuptools import setup\n"
        "setup(\n"
        "    install_requires=['triton; platform_system == \"Linux\"', 'xformers'],\n"
        "    extras_require={\n"
        "        ':sys_platform == \"linux\"': ['flash-attn'],\n"
        "        'train:platform_system != \"Darwin\"': ['deepspeed'],\n"
        "        'train': ['deepspeed'],\n"
        "        'both:sys_platform == \"darwin\"': ['apex; sys_platform == \"linux\"', 'apex'],\n"
        "    },\n"
        ")\n"
    )
    assert found("setup.py", text) == [("CDL501", 3, 61), ("CDL504", 7, 19), ("CDL501", 8, 76)]


def test_setup_py_extras_key_with_a_bad_marker_is_cdl000_and_the_entries_still_count():
    text = "from setuptools import setup\nsetup(extras_require={'fast:sys_platform = \"linux\"': ['flash-attn']})\n"
    findings = check_manifest("setup.py", text)
    assert [(f.code, f.line, f.column) for f in findings] == [("CDL000", 2, 23), ("CDL501", 2, 55)]
    assert findings[0].message == "line 2: unexpected '= \"linux\"' in marker"
