"""`cudalint server`, driven over stdio by a real LSP client (pygls's): open -> diagnostics -> code action ->
edit applied -> diagnostics cleared; the workspace's configuration; position encodings; stale work dropped."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from conftest import run_cli
from cudalint.catalog import load_catalog
from lsp_client import SRC, Editor, apply_edits

TRAIN = "import torch\n\ntorch.cuda.synchronize()\nx = torch.ones(1).cuda()\n"


def span(r):
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def rng(line, character, end_line, end_character):
    return types.Range(
        start=types.Position(line=line, character=character), end=types.Position(line=end_line, character=end_character)
    )


def session(root, scenario, **options):
    """Start a server for the folder `root`, run `scenario(editor)`, shut the server down cleanly."""

    async def main():
        editor = Editor(root, **options)
        await editor.start()
        try:
            return await scenario(editor)
        finally:
            await editor.stop()

    return asyncio.run(main())


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.cudalint]\ntorch-version = "2.7"\n')
    (root / "train.py").write_text(TRAIN)
    return root


def test_open_diagnose_fix_and_noqa_until_the_diagnostics_are_cleared(project):
    catalog = load_catalog()

    async def scenario(editor):
        uri = editor.open("train.py")
        first = await editor.diagnostics(uri)
        assert [(d.code, span(d.range), d.severity, d.source) for d in first] == [
            ("CDL201", (2, 0, 2, 22), types.DiagnosticSeverity.Error, "cudalint"),
            ("CDL102", (3, 18, 3, 22), types.DiagnosticSeverity.Error, "cudalint"),
        ]
        assert first[0].message == (
            "torch.cuda.synchronize raises without CUDA; use torch.accelerator.synchronize() (torch >= 2.6)"
        )
        for d in first:  # the link opens the rule's whole doc, a file cudalint ships
            doc = Path(d.code_description.href.removeprefix("file://"))
            assert doc.name == f"{d.code}.md"
            assert doc.read_text(encoding="utf-8") == catalog[d.code].markdown()

        actions = await editor.code_actions(uri, first[0].range, [first[0]])
        assert [(a.title, a.kind, a.is_preferred) for a in actions] == [
            ("Fix CDL201: use torch.accelerator.synchronize, guarded by torch.accelerator.is_available()",
             types.CodeActionKind.QuickFix, True),
            ("Silence CDL201 on this line (# noqa: CDL201)", types.CodeActionKind.QuickFix, False),
            ("Fix all safe cudalint problems (1)", "source.fixAll.cudalint", None),
        ]
        assert list(actions[0].diagnostics) == [first[0]]
        text = editor.apply(actions[0].edit)
        assert text == (
            "import torch\n\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()\n"
            "x = torch.ones(1).cuda()\n"
        )
        second = await editor.diagnostics(uri)
        assert [(d.code, span(d.range)) for d in second] == [("CDL102", (4, 18, 4, 22))]

        actions = await editor.code_actions(uri, rng(4, 19, 4, 19))  # a cursor inside the finding
        assert [(a.title, a.is_preferred) for a in actions] == [
            ("Fix CDL102 (unsafe: review the change): use .to(device)", False),
            ("Silence CDL102 on this line (# noqa: CDL102)", False),
        ]
        text = editor.apply(actions[1].edit)
        assert text.splitlines()[4] == "x = torch.ones(1).cuda()  # noqa: CDL102"
        assert list(await editor.diagnostics(uri)) == []
        assert await editor.code_actions(uri, rng(0, 0, 5, 0)) == []

    session(project, scenario)


def test_the_server_reports_what_the_command_line_reports(project):
    (project / "requirements.txt").write_text("torch==2.7.1\nflash-attn==2.5.0\n")
    (project / "model.py").write_text(
        'import torch\n\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\nm = torch.nn.Linear(2, 2).to("cuda")\n'
        "torch.backends.cudnn.deterministic = True\ny = torch.zeros(3, dtype=torch.float64)\n"
    )
    cli = json.loads(run_cli("check", "--no-cache", "--format", "json", ".", cwd=project).stdout)

    async def scenario(editor):
        found = []
        for name, language in (("model.py", "python"), ("requirements.txt", "pip-requirements"), ("train.py", "python")):
            uri = editor.open(name, language=language)
            for d in await editor.diagnostics(uri):
                found.append((name, d.code, d.range.start.line + 1, d.range.start.character + 1, d.message))
        return found

    assert session(project, scenario) == [(f["path"], f["code"], f["line"], f["column"], f["message"]) for f in cli]


def test_configuration_comes_from_the_workspace_pyproject_and_follows_its_saves(project):
    (project / "tests").mkdir()
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.cudalint]\ntorch-version = "2.4"\nper-file-ignores = { "tests/*" = ["CDL1"] }\n')
    buffer = "import torch\nx = torch.ones(1).cuda()\nopt = torch.optim.Adam([], fused=True)\n"

    async def scenario(editor):
        in_tests = editor.open("tests/test_x.py", buffer)  # not on disk: linted as if it were there
        elsewhere = editor.open("x.py", buffer)
        assert [d.code for d in await editor.diagnostics(in_tests)] == ["CDL705"]
        assert [d.code for d in await editor.diagnostics(elsewhere)] == ["CDL102", "CDL705"]
        # the user retargets torch 2.6 in pyproject.toml and saves it: every open document is linted again
        config = editor.open("pyproject.toml", language="toml")
        await editor.diagnostics(config)
        mark = len(editor.published)
        pyproject.write_text('[tool.cudalint]\ntorch-version = "2.6"\nper-file-ignores = { "tests/*" = ["CDL1"] }\n')
        editor.save(config)
        assert list(await editor.diagnostics(in_tests, after=mark)) == []
        assert [d.code for d in await editor.diagnostics(elsewhere, after=mark)] == ["CDL102"]

    session(project, scenario)


def test_a_bad_configuration_is_shown_and_the_defaults_are_used(project):
    (project / "pyproject.toml").write_text('[tool.cudalint]\ntorch-versoin = "2.4"\n')

    async def scenario(editor):
        uri = editor.open("train.py")
        assert [d.code for d in await editor.diagnostics(uri)] == ["CDL201", "CDL102"]
        (message,) = editor.messages
        assert message.type == types.MessageType.Error
        assert "unknown key [tool.cudalint] 'torch-versoin'" in message.message
        assert message.message.endswith("; using the default settings")

    session(project, scenario)


@pytest.mark.parametrize(
    "encoding, start, end",
    [(types.PositionEncodingKind.Utf16, 26, 30), (types.PositionEncodingKind.Utf8, 29, 33),
     (types.PositionEncodingKind.Utf32, 25, 29)],
)
def test_columns_in_the_position_encoding_the_client_asked_for(project, encoding, start, end):
    text = 'import torch\nm = {"😀é": torch.ones(1).cuda()}\n'

    async def scenario(editor):
        uri = editor.open("emoji.py", text)
        (found,) = await editor.diagnostics(uri)
        assert (found.code, span(found.range)) == ("CDL102", (1, start, 1, end))
        fix, noqa = await editor.code_actions(uri, found.range, [found])
        assert editor.apply(fix.edit) == (
            'import torch\nm = {"😀é": torch.ones(1).to(\n'
            '    torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu"),\n'
            ')}\n'
        )
        assert editor.apply(noqa.edit) is None  # refused: it was made for the version before the fix

    session(project, scenario, encodings=(encoding,))


def test_stale_results_are_never_published_after_newer_ones(project):
    async def scenario(editor):
        uri = editor.open("train.py")
        await editor.diagnostics(uri)
        mark = len(editor.published)
        for n in range(6):  # typing: each change makes the last one's lint stale
            editor.change(uri, TRAIN + "y = 1\n" * n + ("z = torch.ones(1).cuda()\n" if n % 2 else ""))
        final = editor.change(uri, "import torch\n")
        assert list(await editor.diagnostics(uri, final, after=mark)) == []
        await editor.code_actions(uri, rng(0, 0, 0, 0))  # a round trip: whatever was in flight has arrived
        versions = [p.version for p in editor.published[mark:] if p.uri == uri]
        assert versions == sorted(versions) and versions[-1] == final

    session(project, scenario)


def test_close_clears_and_other_files_are_left_alone(project):
    (project / "notes.md").write_text('torch.device("cuda")\n')

    async def scenario(editor):
        notes = editor.open("notes.md", language="markdown")
        uri = editor.open("train.py")
        assert len(await editor.diagnostics(uri)) == 2
        mark = len(editor.published)
        editor.save(uri)  # a save lints again (what is on disk beside the file may have changed)
        assert [d.code for d in await editor.diagnostics(uri, after=mark)] == ["CDL201", "CDL102"]
        assert await editor.code_actions(notes, rng(0, 0, 1, 0)) == []
        editor.close(uri)
        await editor.cleared(uri)
        assert not any(p.uri == notes for p in editor.published)

    session(project, scenario)


def test_fix_all_is_what_check_fix_writes(project):
    (project / "many.py").write_text(
        "import torch\n\ntorch.cuda.synchronize()\ntorch.cuda.empty_cache()\n"
        "scaler = torch.cuda.amp.GradScaler()\nx = torch.ones(1).cuda()\n"
    )
    stdin = subprocess.run(
        [sys.executable, "-m", "cudalint", "check", "--fix", "--stdin-filename", "many.py"],
        input=(project / "many.py").read_bytes(), cwd=project, capture_output=True, timeout=120,
    )

    async def scenario(editor):
        uri = editor.open("many.py")
        await editor.diagnostics(uri)
        (fix_all,) = await editor.code_actions(uri, rng(0, 0, 0, 0), only=["source.fixAll"])
        assert fix_all.title == "Fix all safe cudalint problems (2)"
        text = editor.apply(fix_all.edit)
        # torch 2.7: torch.accelerator.empty_cache (2.9) is not there yet, and .cuda()'s fix is unsafe
        assert [d.code for d in await editor.diagnostics(uri)] == ["CDL202", "CDL102"]
        return text

    fixed = stdin.stdout.decode()
    assert session(project, scenario) == fixed
    assert "torch.accelerator.synchronize()" in fixed and "torch.amp.GradScaler(" in fixed


def test_fix_all_is_resolved_when_chosen_by_a_client_that_resolves(project):
    async def scenario(editor):
        uri = editor.open("train.py")
        await editor.diagnostics(uri)
        offered = await editor.code_actions(uri, rng(2, 0, 2, 0))
        assert [(a.title, a.edit is None) for a in offered] == [
            ("Fix CDL201: use torch.accelerator.synchronize, guarded by torch.accelerator.is_available()", False),
            ("Silence CDL201 on this line (# noqa: CDL201)", False),
            ("Fix all safe cudalint problems", True),  # no whole-file fix on every cursor move
        ]
        resolved = await editor.resolve_action(offered[2])
        assert resolved.title == "Fix all safe cudalint problems (1)"
        (eager,) = await editor.code_actions(uri, rng(0, 0, 0, 0), only=["source.fixAll"])  # asked for: computed
        assert resolved.edit == eager.edit
        editor.change(uri, TRAIN + "\n")
        stale = await editor.resolve_action(offered[2])  # chosen after the text changed: nothing to apply
        assert stale.edit is None
        assert editor.apply(resolved.edit) is None

    session(project, scenario, resolve=True)


def test_without_pygls_the_server_says_what_to_install(tmp_path):
    hide = "import sys; sys.modules['pygls'] = None; from cudalint.cli import main; sys.exit(main(['server']))"
    result = subprocess.run([sys.executable, "-c", hide], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    assert result.stderr == (
        "cudalint: error: `cudalint server` needs pygls, which is not installed; "
        "install the server extra: pip install 'cudalint[server]'\n"
    )


def test_apply_edits_counts_units_like_the_protocol():
    # the test client's own splice, checked once: UTF-16 counts an astral character as two units
    edit = types.TextEdit(range=rng(0, 3, 0, 4), new_text="X")
    assert apply_edits("😀ab\n", [edit]) == "😀aX\n"
    assert apply_edits("😀ab\n", [edit], types.PositionEncodingKind.Utf32) == "😀abX"


@pytest.mark.parametrize(
    "kind, text, line, expected",
    [
        ("python", "x = a.cuda()\n", 1, (1, 13, 1, 13, "  # noqa: CDL102")),
        ("python", "x = a.cuda()   \n", 1, (1, 13, 1, 16, "  # noqa: CDL102")),  # trailing blanks replaced
        ("python", "x = a.cuda()  # noqa: CDL3\n", 1, (1, 27, 1, 27, ", CDL102")),  # joins the list
        ("python", "x = a.cuda()  # NOQA:CDL3,E501\n", 1, (1, 31, 1, 31, ", CDL102")),
        ("python", "x = a.cuda()  # noqa\n", 1, None),  # already silenced
        ("python", 'x = f(a.cuda(), """\n""")\n', 1, None),  # the line ends inside a string
        ("requirements", "torch\nflash-attn\n", 2, (2, 11, 2, 11, "  # noqa: CDL102")),
        ("dockerfile", "FROM nvidia/cuda:12.1\n", 1, None),  # no trailing comments in a Dockerfile
        ("python", "x = 1\n", 5, None),
    ],
)
def test_noqa_edit(kind, text, line, expected):
    from cudalint.server.actions import noqa_edit

    edit = noqa_edit(text, line, "CDL102", kind)
    assert (None if edit is None else (edit.line, edit.column, edit.end_line, edit.end_column, edit.content)) == expected


def test_related_places_of_a_finding_and_of_its_fix_become_related_information():
    from types import SimpleNamespace

    from pygls.workspace.position_codec import PositionCodec

    from cudalint.findings import Edit, Fix, Safety, Severity
    from cudalint.server.lsp import Lines, diagnostic

    place = SimpleNamespace(line=1, column=10, end_line=1, end_column=16, message="the value reaches this device argument")
    finding = SimpleNamespace(
        code="CDL101", line=3, column=5, end_line=3, end_column=11, message="cuda", severity=Severity.ERROR,
        fix=Fix(Safety.SAFE, "use the device", (Edit(3, 5, 3, 11, "DEVICE"), Edit(1, 1, 1, 1, "import torch\n"))),
        related=(place, SimpleNamespace(line=3, column=1, end_line=3, end_column=4, message="defined here",
                                        path="/p/devices.py")),
    )
    lines = Lines('x = f(a, "cuda")\n\ny = g("cuda")\n', PositionCodec())
    found = diagnostic(finding, lines, "file:///p/a.py", {"CDL101": "file:///docs/CDL101.md"})
    assert [(r.location.uri, span(r.location.range), r.message) for r in found.related_information] == [
        ("file:///p/a.py", (0, 9, 0, 15), "the value reaches this device argument"),
        ("file:///p/devices.py", (2, 0, 2, 3), "defined here"),  # a place in another file of the project
        ("file:///p/a.py", (0, 0, 0, 0), "the safe fix also inserts `import torch` here"),
    ]
    assert found.code_description.href == "file:///docs/CDL101.md"
