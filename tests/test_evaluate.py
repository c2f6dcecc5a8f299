"""The scorer of bench/evaluate.py on synthetic labels and findings (no network, no fetched corpus)."""

import hashlib
import importlib.util
import io
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("cudalint_bench_evaluate", ROOT / "bench" / "evaluate.py")
evaluate = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = evaluate
_spec.loader.exec_module(evaluate)

Label, Finding = evaluate.Label, evaluate.Finding

HEADER = '[project]\nname = "demo"\nversion = "1.0"\nsha256 = "00"\nkind = "training scripts"\n'


def label(path, line, verdict, family, phase=1):
    return Label(path, line, verdict, family, "why", phase)


LABELS = [
    label("a.py", 1, "flag", "CDL1"),
    label("a.py", 2, "ok", "CDL2"),
    label("a.py", 3, "flag", "CDL3"),  # missed
    label("a.py", 4, "flag", "CDL1"),
    label("a.py", 4, "ok", "CDL3"),  # the same line, another family
    label("a.py", 5, "ok", "CDL6", phase=2),
    label("req.txt", 1, "flag", "CDL5"),
]
FINDINGS = [
    Finding("CDL101", "a.py", 1, "device"),
    Finding("CDL102", "a.py", 1, ".cuda()"),  # two rules on one flagged line: both true positives
    Finding("CDL201", "a.py", 2, "sync"),  # ok line, same family
    Finding("CDL304", "a.py", 4, "non_blocking"),  # ok in its family although the line is flagged for CDL1
    Finding("CDL701", "a.py", 2, "nccl"),  # other family on an all-ok line: false positive
    Finding("CDL601", "a.py", 5, "float64"),
    Finding("CDL205", "a.py", 1, "amp"),  # other family on a flagged line: unjudged
    Finding("CDL501", "req.txt", 1, "flash-attn"),
    Finding("CDL101", "b.py", 9, "device"),  # no label at all
    Finding("CDL000", "c.py", 1, "syntax error"),
]


def codes(pairs):
    return [(item.code, item.path, item.line) for _, item in pairs]


def places(pairs):
    return [(item.family, item.path, item.line) for _, item in pairs]


def test_match_sorts_findings_into_outcomes():
    score = evaluate.match("demo", LABELS, FINDINGS)
    assert codes(score.tp) == [("CDL101", "a.py", 1), ("CDL102", "a.py", 1), ("CDL501", "req.txt", 1)]
    assert codes(score.fp) == [("CDL201", "a.py", 2), ("CDL304", "a.py", 4), ("CDL701", "a.py", 2), ("CDL601", "a.py", 5)]
    assert codes(score.unjudged) == [("CDL205", "a.py", 1), ("CDL101", "b.py", 9)]
    assert codes(score.unreadable) == [("CDL000", "c.py", 1)]
    assert places(score.found) == [("CDL1", "a.py", 1), ("CDL5", "req.txt", 1)]
    assert places(score.fn) == [("CDL3", "a.py", 3), ("CDL1", "a.py", 4)]


def test_phase_one_labels_leave_phase_two_lines_unjudged():
    first = [item for item in LABELS if item.phase == 1]
    score = evaluate.match("demo", first, FINDINGS)
    assert ("CDL601", "a.py", 5) in codes(score.unjudged)
    assert ("CDL601", "a.py", 5) not in codes(score.fp)


def test_summary_per_rule_family_and_overall():
    summary = evaluate.summarize(evaluate.match("demo", LABELS, FINDINGS))
    assert summary["overall"] == {
        "tp": 3, "fp": 4, "unjudged": 2, "precision": 3 / 7,
        "found": 2, "fn": 2, "recall": 0.5, "unreadable": 1,
    }
    assert summary["rules"]["CDL101"] == {"tp": 1, "fp": 0, "unjudged": 1, "precision": 1.0}
    assert summary["rules"]["CDL201"] == {"tp": 0, "fp": 1, "unjudged": 0, "precision": 0.0}
    assert summary["rules"]["CDL205"] == {"tp": 0, "fp": 0, "unjudged": 1, "precision": None}
    assert summary["families"]["CDL1"] == {
        "tp": 2, "fp": 0, "unjudged": 1, "precision": 1.0, "found": 1, "fn": 1, "recall": 0.5,
    }
    assert summary["families"]["CDL3"] == {
        "tp": 0, "fp": 1, "unjudged": 0, "precision": 0.0, "found": 0, "fn": 1, "recall": 0.0,
    }
    assert "CDL0" not in summary["families"]
    assert summary["projects"] == {"demo": {
        "tp": 3, "fp": 4, "unjudged": 2, "precision": 3 / 7, "found": 2, "fn": 2, "recall": 0.5,
    }}


def test_parse_labels_reads_the_format():
    text = HEADER + 'no_build_isolation = true\n[[label]]\npath = "a.py"\nline = 3\nverdict = "ok"\nfamily = "CDL2"\nwhy = "guarded"\nphase = 2\n'
    project = evaluate.parse_labels(text, "demo.toml")
    assert (project.name, project.version, project.kind) == ("demo", "1.0", "training scripts")
    assert project.fetch_options == {"no_build_isolation": True}
    assert project.labels == [Label("a.py", 3, "ok", "CDL2", "guarded", 2)]


@pytest.mark.parametrize(
    "entry, message",
    [
        ('path = "a.py"\nline = 0\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 1', "demo.toml label 1 (a.py:0): line must be 1 or more"),
        ('path = "a.py"\nline = 2\nverdict = "maybe"\nfamily = "CDL2"\nwhy = ""\nphase = 1', "verdict must be one of"),
        ('path = "a.py"\nline = 2\nverdict = "ok"\nfamily = "CDL9"\nwhy = ""\nphase = 1', "family must be one of CDL1..CDL7"),
        ('path = "a.py"\nline = 2\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 3', "phase must be 1 or 2"),
        ('path = "../x.py"\nline = 2\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 1', "path must be relative"),
        ('path = "a.py"\nline = true\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 1', "demo.toml label 1: `line` must be a int"),
        ('path = "a.py"\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 1', "`line` must be a int, got None"),
    ],
)
def test_parse_labels_names_the_bad_entry(entry, message):
    with pytest.raises(evaluate.LabelError) as error:
        evaluate.parse_labels(HEADER + "[[label]]\n" + entry + "\n", "demo.toml")
    assert message in str(error.value)


def test_parse_labels_reads_the_heldout_flag():
    assert evaluate.parse_labels(HEADER, "demo.toml").heldout is False
    assert evaluate.parse_labels(HEADER + "heldout = true\n", "demo.toml").heldout is True
    with pytest.raises(evaluate.LabelError, match=r"demo.toml \[project\]: `heldout` must be a bool, got 'yes'"):
        evaluate.parse_labels(HEADER + 'heldout = "yes"\n', "demo.toml")


def test_parse_labels_rejects_duplicates_and_unknown_kinds():
    entry = '[[label]]\npath = "a.py"\nline = 2\nverdict = "ok"\nfamily = "CDL2"\nwhy = ""\nphase = 1\n'
    with pytest.raises(evaluate.LabelError, match=r"demo.toml label 2 \(a.py:2\): same path, line and family as label 1"):
        evaluate.parse_labels(HEADER + entry + entry, "demo.toml")
    with pytest.raises(evaluate.LabelError, match="kind 'misc' is not one of"):
        evaluate.parse_labels(HEADER.replace("training scripts", "misc"), "demo.toml")


def test_check_lines_reports_labels_outside_the_tree(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    project = evaluate.Project("demo", "1.0", "00", "training scripts",
                               [label("a.py", 2, "ok", "CDL1"), label("a.py", 3, "ok", "CDL1"), label("b.py", 1, "ok", "CDL1")],
                               source="demo.toml")
    assert evaluate.check_lines(project, tmp_path) == [
        "demo.toml: a.py:3: the file has 2 lines",
        "demo.toml: b.py: no such file in the sdist",
    ]


def _sdist(folder: Path, files: dict, stem: str = "demo-1.0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"{stem}.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{stem}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return archive


SOURCE = 'import torch\n\ndevice = torch.device("cuda")\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\ntorch.cuda.synchronize()\n'


def test_end_to_end_on_a_local_sdist(tmp_path):
    archive = _sdist(tmp_path / "cache" / "sdists", {"pkg/train.py": SOURCE})
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    labels = [
        label("pkg/train.py", 3, "flag", "CDL1"),
        label("pkg/train.py", 5, "ok", "CDL2"),
        label("pkg/train.py", 6, "flag", "CDL2"),
    ]
    project = evaluate.Project("demo", "1.0", digest, "training scripts", labels, source="demo.toml")
    tree = evaluate.ensure_tree(tmp_path / "cache", project, download=False)
    assert tree == tmp_path / "cache" / "src" / "demo-1.0"
    assert (tree / "pkg" / "train.py").read_text() == SOURCE
    findings = evaluate.run_cudalint(tree)
    assert [(f.code, f.path, f.line) for f in findings] == [("CDL101", "pkg/train.py", 3), ("CDL201", "pkg/train.py", 6)]
    summary = evaluate.summarize(evaluate.match("demo", labels, findings))
    assert summary["overall"]["precision"] == 1.0 and summary["overall"]["recall"] == 1.0


def test_a_sdist_with_another_hash_is_refused(tmp_path):
    _sdist(tmp_path / "cache" / "sdists", {"a.py": "x = 1\n"})
    project = evaluate.Project("demo", "1.0", "0" * 64, "training scripts", [], source="demo.toml")
    with pytest.raises(SystemExit, match="demo-1.0.tar.gz: sha256 .* does not match demo.toml"):
        evaluate.ensure_tree(tmp_path / "cache", project, download=False)
    assert not (tmp_path / "cache" / "src" / "demo-1.0").exists()


def test_a_missing_sdist_without_fetch_says_how_to_get_it(tmp_path):
    project = evaluate.Project("demo", "1.0", "0" * 64, "training scripts", [], source="demo.toml")
    with pytest.raises(SystemExit, match="demo 1.0 is not in .*; run with --fetch"):
        evaluate.ensure_tree(tmp_path / "cache", project, download=False)


def test_render_writes_the_tables():
    score = evaluate.match("demo", LABELS, FINDINGS)
    project = evaluate.Project("demo", "1.0", "00", "training scripts", LABELS)
    text = evaluate.render({"all labels": evaluate.summarize(score)}, [project], score.unjudged, "2.9.0")
    assert "| demo | 1.0 | training scripts | 7 | 4 | 3 | 6 | 1 |" in text
    assert "| CDL1 | 2 | 0 | 1 | 1.00 | 1 | 1 | 0.50 |" in text
    assert "| CDL205 | 0 | 0 | 1 | — |" in text
    assert "| demo | 3 | 4 | 2 | 0.43 | 2 | 2 | 0.50 |" in text
    assert "- demo `b.py:9` CDL101 device" in text
    assert "Overall: precision **0.43** (3 TP, 4 FP, 2 unjudged), recall **0.50** (2 of 4 flagged lines); 1 unreadable-file findings not scored." in text


def test_write_report_keeps_what_follows_the_keep_line(tmp_path):
    report = tmp_path / "EVAL.md"
    evaluate.write_report(report, "# first\n")
    assert report.read_text() == "# first\n\n" + evaluate.KEEP + "\n"
    report.write_text(report.read_text() + "## Before\n\nhand-kept figures\n")
    evaluate.write_report(report, "# second\n")
    assert report.read_text() == "# second\n\n" + evaluate.KEEP + "\n## Before\n\nhand-kept figures\n"


def test_main_refuses_a_bad_label_file_with_its_name(tmp_path, capsys):
    (tmp_path / "demo.toml").write_text(HEADER + '[[label]]\npath = "a.py"\nline = 1\nverdict = "flag"\nfamily = "CDL8"\nwhy = ""\nphase = 1\n')
    assert evaluate.main(["--labels", str(tmp_path), "--cache-dir", str(tmp_path / "cache"), "--report", str(tmp_path / "EVAL.md")]) == 2
    assert capsys.readouterr().err == "evaluate: demo.toml label 1 (a.py:1): family must be one of CDL1..CDL7, got 'CDL8'\n"
    assert not (tmp_path / "EVAL.md").exists()


def test_main_scores_a_local_sdist_and_writes_the_report(tmp_path, capsys):
    archive = _sdist(tmp_path / "cache" / "sdists", {"pkg/train.py": SOURCE})
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "demo.toml").write_text(
        HEADER.replace('"00"', f'"{digest}"')
        + '[[label]]\npath = "pkg/train.py"\nline = 3\nverdict = "flag"\nfamily = "CDL1"\nwhy = "cuda"\nphase = 1\n'
        + '[[label]]\npath = "pkg/train.py"\nline = 9\nverdict = "ok"\nfamily = "CDL1"\nwhy = "past the end"\nphase = 1\n'
    )
    report = tmp_path / "EVAL.md"
    code = evaluate.main(["--labels", str(labels), "--cache-dir", str(tmp_path / "cache"), "--report", str(report), "--phase", "1"])
    out, err = capsys.readouterr()
    assert code == 1  # a label points past the end of its file
    assert err == "evaluate: demo.toml: pkg/train.py:9: the file has 6 lines\n"
    assert out.splitlines()[-1] == "phase 1 labels: precision 1.00 (1 TP, 0 FP, 1 unjudged), recall 1.00 (1/1)"
    text = report.read_text()
    assert "- demo `pkg/train.py:6` CDL201 " in text
    assert text.endswith(evaluate.KEEP + "\n")


def test_main_scores_heldout_projects_in_sections_of_their_own(tmp_path, capsys):
    cache = tmp_path / "cache"
    tuned = _sdist(cache / "sdists", {"pkg/train.py": SOURCE})
    held = _sdist(cache / "sdists", {"pkg/train.py": SOURCE, "pkg/other.py": SOURCE}, stem="held-2.0")
    labels = tmp_path / "labels"
    labels.mkdir()
    flag_line_3 = '[[label]]\npath = "pkg/train.py"\nline = 3\nverdict = "flag"\nfamily = "CDL1"\nwhy = "cuda"\nphase = 1\n'
    (labels / "demo.toml").write_text(HEADER.replace('"00"', f'"{hashlib.sha256(tuned.read_bytes()).hexdigest()}"') + flag_line_3)
    (labels / "held.toml").write_text(
        HEADER.replace('"demo"', '"held"').replace('"1.0"', '"2.0"')
        .replace('"00"', f'"{hashlib.sha256(held.read_bytes()).hexdigest()}"')
        + "heldout = true\n"
        + flag_line_3
        + '[[label]]\npath = "pkg/train.py"\nline = 6\nverdict = "ok"\nfamily = "CDL2"\nwhy = "judged ok"\nphase = 2\n'
    )
    report = tmp_path / "EVAL.md"
    assert evaluate.main(["--labels", str(labels), "--cache-dir", str(cache), "--report", str(report)]) == 0
    assert capsys.readouterr().out.splitlines()[-4:] == [
        "phase 1 labels: precision 1.00 (1 TP, 0 FP, 1 unjudged), recall 1.00 (1/1)",
        "all labels: precision 1.00 (1 TP, 0 FP, 1 unjudged), recall 1.00 (1/1)",
        "phase 1 labels (held-out projects): precision 1.00 (1 TP, 0 FP, 3 unjudged), recall 1.00 (1/1)",
        "all labels (held-out projects): precision 0.50 (1 TP, 1 FP, 2 unjudged), recall 1.00 (1/1)",
    ]
    text = report.read_text()
    corpus, heldout = text.index("## Corpus"), text.index("## Held-out corpus")
    assert "| demo | 1.0 | training scripts | 1 | 1 | 0 | 1 | 0 |" in text[corpus:heldout]
    assert "| held | 2.0 | training scripts | 2 | 1 | 1 | 1 | 1 |" in text[heldout:text.index("## phase 1 labels")]
    assert "## all labels (held-out projects)" in text
    assert "Held-out held: 2 more findings in files that carry no label, not listed." in text
    assert "- demo `pkg/train.py:6` CDL201 " in text
    assert "- held `pkg/other.py" not in text
