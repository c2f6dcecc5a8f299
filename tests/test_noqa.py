"""Suppression: `# noqa` matching, `--add-noqa`, the unused-noqa rule (CDL001) and its fix, file-level
`# cudalint: noqa`, case-insensitive codes in the command line and the flake8 plugin."""

import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, findings_of, run_cli, triples
from cudalint.noqa import scan

ADDED = '''"""Suppression targets: a line with a comment, one with another tool's noqa, a multi-line string."""

import torch

x = torch.ones(1).cuda()  # noqa: CDL102
torch.cuda.synchronize()  # wait for the kernel  # noqa: CDL201
y = torch.ones(1).cuda()  # noqa: E501, CDL102
z = torch.ones(1, device="cuda").cuda()  # noqa: CDL101, CDL102
message = """# noqa: CDL102 is text here
""" + str(torch.ones(1).cuda())  # noqa: CDL102
total = sum([
    torch.ones(1).cuda(),  # noqa: CDL102
    torch.ones(1),
])
w = torch.ones(1) + \\
    torch.ones(1).cuda()  # noqa: CDL102
template = f"""{torch.ones(1).cuda()
}"""  # noqa: CDL102
v = torch.ones(1).cuda() + \\
    torch.ones(1)  # noqa: CDL102
'''


@pytest.fixture
def noqa_project(tmp_path):
    shutil.copytree(FIXTURES / "noqa", tmp_path / "p")
    return tmp_path / "p"


def test_add_noqa_writes_each_code_once_per_line_where_a_comment_can_go(noqa_project):
    before = run_cli("check", "--no-cache", "--select", "CDL", ".", cwd=noqa_project)
    assert before.returncode == 1 and before.stdout.count("\n") == 13  # 12 findings and the summary
    result = run_cli("check", "--add-noqa", "--no-cache", ".", cwd=noqa_project)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "Added 11 noqa directives to 2 files.\n"
    assert (noqa_project / "train.py").read_text() == ADDED
    assert (noqa_project / "requirements.txt").read_text() == (
        "torch>=2.1\nflash-attn==2.5.0  # noqa: CDL501\nxformers  # attention kernels  # noqa: CDL501\n"
    )
    after = run_cli("check", "--no-cache", ".", cwd=noqa_project)
    assert after.returncode == 0
    assert after.stdout == "All clear: 2 files checked, target torch 2.15 (the newest release torch>=2.1 in requirements.txt allows).\n"


def test_add_noqa_is_idempotent(noqa_project):
    run_cli("check", "--add-noqa", "--no-cache", ".", cwd=noqa_project)
    again = run_cli("check", "--add-noqa", "--no-cache", ".", cwd=noqa_project)
    assert again.stderr == "Added 0 noqa directives to 0 files.\n"
    assert (noqa_project / "train.py").read_text() == ADDED


def test_add_noqa_keeps_crlf_and_leaves_dockerfiles_alone(tmp_path):
    (tmp_path / "a.py").write_bytes(b"import torch\r\nx = torch.ones(1).cuda()\r\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n")
    result = run_cli("check", "--add-noqa", "--no-cache", ".", cwd=tmp_path)
    assert result.stderr == (
        "Added 1 noqa directive to 1 file.\n"
        "cudalint: 1 finding got no noqa directive: the file kind takes no end-of-line comment, the file changed "
        "or does not parse\n"
    )
    assert (tmp_path / "a.py").read_bytes() == b"import torch\r\nx = torch.ones(1).cuda()  # noqa: CDL102\r\n"
    assert (tmp_path / "Dockerfile").read_text() == "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"


def test_noqa_inside_a_string_is_text_and_the_statement_end_counts():
    text = (
        "import torch\n"
        's = """# noqa\n'
        '""" + str(torch.ones(1).cuda())\n'
        "t = [torch.ones(1).cuda(),\n"
        "     1]  # noqa: CDL102\n"
    )
    assert triples(findings_of(text, select={"CDL102"})) == [("CDL102", 3, 25)]
    comments = scan(text)
    assert sorted(comments.directives) == [5]
    assert comments.anchor(2) == 3 and comments.anchor(4) == 4


@pytest.mark.parametrize(
    "line, expected",
    [
        ("x = torch.ones(3)  # noqa: CDL102\n", "x = torch.ones(3)\n"),
        ("x = torch.ones(3)  # noqa: cdl102, E501\n", "x = torch.ones(3)  # noqa: E501\n"),
        ("x = torch.ones(3).cuda()  # noqa: CDL102, CDL999\n", "x = torch.ones(3).cuda()  # noqa: CDL102\n"),
        ("x = torch.ones(3)  # type: ignore  # noqa: CDL6\n", "x = torch.ones(3)  # type: ignore\n"),
        ("x = torch.ones(3)  # noqa: CDL102 moved to a helper\n", "x = torch.ones(3)  # moved to a helper\n"),
    ],
)
def test_unused_noqa_and_its_fix(tmp_path, line, expected):
    (tmp_path / "a.py").write_text("import torch\n" + line)
    found = run_cli("check", "--extend-select", "CDL001", "--no-cache", "-q", "a.py", cwd=tmp_path)
    assert found.returncode == 1
    assert [row.split(": CDL001 ")[0] for row in found.stdout.splitlines()] == [f"a.py:2:{line.index('# noqa') + 1}"]
    fixed = run_cli("check", "--extend-select", "CDL001", "--fix", "--no-cache", "-q", "a.py", cwd=tmp_path)
    assert (tmp_path / "a.py").read_text() == "import torch\n" + expected
    assert "CDL001" not in fixed.stdout


def test_unused_noqa_messages():
    text = (
        "import torch\n"
        "a = 1  # noqa: CDL102\n"
        "b = torch.ones(1).cuda()  # noqa: CDL102, CDL201, CDL999\n"
        "c = 1  # noqa\n"  # bare: may be another tool's
        "d = 1  # noqa: E501, BLE001\n"  # other tools' codes
        "e = 1  # noqa: CDL210\n"  # a rule that did not run is not judged
    )
    everything_but_210 = {rule for rule in ("CDL001", "CDL102", "CDL201")}
    found = findings_of(text, select=everything_but_210)
    assert [(f.code, f.line, f.column, f.message) for f in found] == [
        ("CDL001", 2, 8, "noqa directive silences nothing here (unused: CDL102)"),
        ("CDL001", 3, 27, "noqa directive silences nothing here (unused: CDL201; unknown: CDL999)"),
    ]
    assert all(f.fix.safety.value == "safe" for f in found)


def test_file_level_noqa(tmp_path):
    body = "import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
    (tmp_path / "all.py").write_text("# cudalint: noqa\n" + body)
    (tmp_path / "some.py").write_text(body + "# CUDALINT: NOQA: cdl1\n")
    (tmp_path / "text.py").write_text(body + 's = "# cudalint: noqa"\n')
    result = run_cli("check", "-q", "--no-cache", ".", cwd=tmp_path)
    assert [line.split(" ")[0] + line.split(" ")[1] for line in result.stdout.splitlines()] == [
        "some.py:3:1:CDL201",
        "text.py:2:19:CDL102",
        "text.py:3:1:CDL201",
    ]


def test_codes_are_case_insensitive_on_the_command_line(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\nx = torch.ones(1).cuda()  # noqa: cdl102\ny = torch.ones(1).cuda()  # NoQA:Cdl1\n"
    )
    result = run_cli("check", "--no-cache", "a.py", cwd=tmp_path)
    assert result.returncode == 0


def test_codes_are_case_insensitive_in_flake8_and_disable_noqa_still_works(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\nx = torch.ones(1).cuda()  # noqa: cdl102\ny = torch.ones(1).cuda()  # noqa: E501\n"
    )

    def flake8(*args):
        return subprocess.run([sys.executable, "-m", "flake8", "--isolated", *args, "a.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    assert flake8().stdout.splitlines() == ["a.py:3:19: CDL102 .cuda() moves data to CUDA only; use .to(device)"]
    assert [line.split(":")[1] for line in flake8("--disable-noqa").stdout.splitlines()] == ["2", "3"]


def test_add_noqa_never_silences_an_unused_noqa_finding():
    from cudalint.noqa import add_noqa

    text = "import torch\nx = torch.ones(3)  # noqa: CDL102\n"
    found = findings_of(text, select={"CDL001", "CDL102"})
    assert [f.code for f in found] == ["CDL001"]
    assert add_noqa(text, found, "python") == (text, 0, 0)
