"""Bad input gets one CDL000 naming the file and line; the run goes on."""

import time

from conftest import run_cli

CUDA_LINE = "import torch\ntorch.cuda.synchronize()\n"


def lint_dir(tmp_path, *extra):
    result = run_cli("check", "-q", *extra, ".", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    return result


def test_syntax_error_reported_and_run_continues(tmp_path):
    (tmp_path / "broken.py").write_text("import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    (tmp_path / "good.py").write_text(CUDA_LINE)
    result = lint_dir(tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("broken.py:2:7: CDL000 syntax error: ")
    assert lines[1].startswith("good.py:2:1: CDL201")


def test_syntax_error_in_file_without_cuda_is_reported_too(tmp_path):
    """Every unparsable Python file gets its CDL000, whether or not it mentions CUDA (CPython's parse is cheap)."""
    (tmp_path / "broken.py").write_text("def f(:\n")
    result = lint_dir(tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["broken.py:1:7: CDL000 syntax error: invalid syntax; the file was not checked"]


def test_undecodable_bytes(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"import torch\nx = 'caf\xe9'\ntorch.cuda.synchronize()\n")
    assert lint_dir(tmp_path).stdout.splitlines() == [
        "latin.py:2:9: CDL000 cannot decode byte 0xe9 as utf-8; the file was not checked"
    ]


def test_pep263_cookie_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\nimport torch\nx = 'caf\xe9'\ntorch.cuda.synchronize()\n"
    )
    assert [line.split()[:2] for line in lint_dir(tmp_path).stdout.splitlines()] == [["latin.py:4:1:", "CDL201"]]


def test_bom_and_crlf(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfimport torch\r\nx = torch.ones(1).cuda()\r\n")
    assert lint_dir(tmp_path).stdout.splitlines()[0].startswith("bom.py:2:19: CDL102")


def test_binary_file_named_py(tmp_path):
    (tmp_path / "blob.py").write_bytes(b"cuda\x00\x01\x02\xff")
    assert lint_dir(tmp_path).stdout.splitlines() == [
        "blob.py:1:1: CDL000 binary content (NUL byte); not a Python source file; the file was not checked"
    ]


def test_long_chain_is_linted_correctly(tmp_path):
    chain = " + ".join(["a"] * 1000)
    (tmp_path / "long.py").write_text(f"import torch\na = 1\nx = {chain}\ntorch.cuda.synchronize()\n")
    result = lint_dir(tmp_path)
    assert [line.split()[:2] for line in result.stdout.splitlines()] == [["long.py:4:1:", "CDL201"]]


def test_pathological_nesting_is_refused_quickly(tmp_path):
    chain = " + ".join(["a"] * 20000)
    (tmp_path / "deep.py").write_text(f"import torch\nx = {chain}\ntorch.cuda.synchronize()\n")
    (tmp_path / "parens.py").write_text("import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\ntorch.cuda.synchronize()\n")
    (tmp_path / "ok.py").write_text(CUDA_LINE)
    started = time.monotonic()
    result = lint_dir(tmp_path)
    assert time.monotonic() - started < 30
    lines = result.stdout.splitlines()
    assert lines[0] == "deep.py:1:1: CDL000 expression nested too deeply to analyse; the file was not checked"
    assert lines[1].startswith("ok.py:2:1: CDL201")
    assert lines[2].startswith("parens.py:") and " CDL000 " in lines[2]


def test_unreadable_file_in_a_walked_folder(tmp_path):
    (tmp_path / "link.py").symlink_to(tmp_path / "gone.py")
    (tmp_path / "ok.py").write_text(CUDA_LINE)
    lines = lint_dir(tmp_path).stdout.splitlines()
    assert lines[0] == "link.py:1:1: CDL000 cannot read: No such file or directory"
    assert lines[1].startswith("ok.py:2:1: CDL201")
