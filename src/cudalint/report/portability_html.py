"""The portability report as one self-contained HTML file: inline CSS, no script, nothing fetched.

The verdict first, then the blockers, a chart of the work left per top-level folder, the per-file table,
the checklist and every finding; each rule code links to that rule's documentation, embedded at the end.
It reads on a 390 px phone (wide tables scroll inside their own box, long paths wrap) and follows the
reader's light or dark colour scheme (prefers-color-scheme)."""

from __future__ import annotations

import re
from html import escape
from typing import Dict, List, Optional

from cudalint.report.portability import torch_lines

CSS = """
:root { color-scheme: light dark; --fg: #1d2330; --bg: #ffffff; --muted: #5b6475; --line: #d5d9e0; --panel: #f1f3f6;
        --accent: #2f5fc4; --bar: #3b6fd4; --bar-fixed: #9db6e8;
        --pass-bg: #d9f2e0; --pass-fg: #14532d; --warning-bg: #fdf0c8; --warning-fg: #6b4e00;
        --fail-bg: #fbdad7; --fail-fg: #7f1d1d; --pending-bg: #e3e8f0; --pending-fg: #334155; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e8ef; --bg: #14171c; --muted: #a3acba; --line: #394150; --panel: #1f242c; --accent: #8fb3ff;
          --bar: #6b93e6; --bar-fixed: #34507f;
          --pass-bg: #123d24; --pass-fg: #b7ebc8; --warning-bg: #45370b; --warning-fg: #f7df93;
          --fail-bg: #4a1715; --fail-fg: #ffc9c4; --pending-bg: #2a3240; --pending-fg: #cbd5e1; }
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px;
       color: var(--fg); background: var(--bg); line-height: 1.45; padding: 1rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
h1 { font-size: 1.5rem; } h2 { margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
code { background: var(--panel); padding: 0 .25em; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: var(--panel); padding: .6rem; border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
.verdict-line { font-size: 1.15rem; font-weight: 600; padding: .6rem .8rem; border-radius: 6px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; width: 100%; }
caption { text-align: left; }
th, td { border: 1px solid var(--line); padding: .35rem .55rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
table.check th { width: 12rem; }
td.num, th.num { text-align: right; white-space: nowrap; }
.verdict { font-weight: 600; border-radius: 4px; padding: .05rem .5rem; white-space: nowrap; }
.v-pass { background: var(--pass-bg); color: var(--pass-fg); }
.v-warning { background: var(--warning-bg); color: var(--warning-fg); }
.v-fail { background: var(--fail-bg); color: var(--fail-fg); }
.v-pending { background: var(--pending-bg); color: var(--pending-fg); }
ol.blockers li, ul.findings li { margin: .35rem 0; }
.todo { color: var(--muted); }
.chart { display: grid; grid-template-columns: minmax(5rem, 14rem) 1fr 3.5rem; gap: .35rem .6rem; align-items: center; }
.bar-track { background: var(--panel); border-radius: 3px; height: 1.2rem; display: flex; overflow: hidden; }
.bar { background: var(--bar); height: 100%; }
.bar.fixable { background: var(--bar-fixed); }
.legend { color: var(--muted); font-size: .9rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; vertical-align: middle; }
details.rule { border: 1px solid var(--line); border-radius: 4px; padding: .3rem .6rem; margin: .4rem 0; }
details.rule:target { outline: 2px solid var(--accent); }
@media (max-width: 600px) {
  body { padding: .6rem; } h1 { font-size: 1.25rem; }
  table.check th { width: 6.5rem; }
  .chart { grid-template-columns: minmax(4rem, 8rem) 1fr 2.5rem; }
  th, td { padding: .3rem .35rem; }
}
"""

_CODE = re.compile(r"\bCDL\d{3}\b")


def _verdict(verdict: str) -> str:
    return f'<span class="verdict v-{escape(verdict)}">{escape(verdict)}</span>'


def _linked(text: str, rules: Dict[str, dict]) -> str:
    """Escaped text whose rule codes link to the rule documentation embedded in the page."""
    return _CODE.sub(lambda m: f'<a class="rule-link" href="#rule-{m.group()}">{m.group()}</a>'
                     if m.group() in rules else m.group(), escape(text))


def _inline(text: str) -> str:
    """Escaped text with `backticked` spans as code."""
    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escape(text, quote=False))


def _chart(folders: List[dict]) -> str:
    if not folders:
        return "<p>No finding: nothing left to do.</p>"
    widest = max(f["findings"] for f in folders) or 1
    rows = []
    for folder in folders:
        left = 100 * folder["work_left"] / widest
        fixable = 100 * folder["fixable"] / widest
        label = "(top level)" if folder["folder"] == "." else folder["folder"] + "/"
        rows.append(
            f'<div class="bar-label"><code>{escape(label)}</code></div>'
            f'<div class="bar-track" role="img" aria-label="{escape(label)}: {folder["work_left"]} left by hand, '
            f'{folder["fixable"]} fixable with --fix">'
            f'<span class="bar" data-folder="{escape(folder["folder"])}" data-work-left="{folder["work_left"]}" '
            f'style="width:{left:.1f}%"></span>'
            f'<span class="bar fixable" data-fixable="{folder["fixable"]}" style="width:{fixable:.1f}%"></span></div>'
            f'<div class="num">{folder["work_left"]}</div>')
    legend = ('<p class="legend"><span class="swatch" style="background:var(--bar)"></span> left to do by hand '
              '&nbsp; <span class="swatch" style="background:var(--bar-fixed)"></span> fixed by <code>--fix</code>; '
              'the number is what is left by hand</p>')
    return f'<div class="chart">{"".join(rows)}</div>{legend}'


def _blockers(blockers: List[dict], rules: Dict[str, dict]) -> str:
    if not blockers:
        return "<p>None: no dependency, native build or import stops the project from installing or importing on a Mac.</p>"
    items = "".join(
        f'<li class="blocker" data-kind="{escape(b["kind"])}"><code>{escape(b["path"])}:{b["line"]}</code> '
        f'({escape(b["kind"])}, {_linked(b["code"], rules)}): {_inline(b["what"])}'
        f'<div class="todo">To do: {_inline(b["remedy"])}</div></li>' for b in blockers)
    return f'<ol class="blockers">{items}</ol>'


def _files(doc: dict) -> str:
    if not doc["files"]:
        return "<p>No file has a finding.</p>"
    families = [f["family"] for f in doc["families"] if any(f["family"] in row["families"] for row in doc["files"])]
    head = ("<tr><th>file</th>" + "".join(f'<th class="num">{escape(f)}xx</th>' for f in families)
            + '<th class="num">findings</th><th class="num">fixable with --fix</th><th class="num">left</th></tr>')
    rows = "".join(
        f'<tr class="file-row" data-work-left="{row["work_left"]}"><td><a href="#file-{index}"><code>'
        f'{escape(row["relative"])}</code></a></td>'
        + "".join(f'<td class="num">{row["families"].get(family, "") or ""}</td>' for family in families)
        + f'<td class="num">{row["findings"]}</td><td class="num">{row["fixable"]}</td>'
          f'<td class="num">{row["work_left"]}</td></tr>'
        for index, row in enumerate(doc["files"]))
    return f'<div class="scroll"><table id="per-file">{head}{rows}</table></div>'


def _findings(doc: dict, rules: Dict[str, dict]) -> str:
    by_path: Dict[str, List[dict]] = {}
    for f in doc["findings"]:
        by_path.setdefault(f["path"], []).append(f)
    parts = []
    for index, row in enumerate(doc["files"]):
        items = "".join(
            f'<li class="finding"><code>{f["line"]}:{f["column"]}</code> '
            f'<a class="rule-link" href="#rule-{escape(f["code"])}">{escape(f["code"])}</a> {escape(f["message"])}'
            + (" <em>(fixable with --fix)</em>" if f["fix"] == "safe" else
               " <em>(fixable with --unsafe-fixes)</em>" if f["fix"] == "unsafe" else "") + "</li>"
            for f in by_path.get(row["path"], []))
        parts.append(f'<h3 id="file-{index}"><code>{escape(row["path"])}</code></h3><ul class="findings">{items}</ul>')
    return "".join(parts) or "<p>No finding.</p>"


def _rules(rules: Dict[str, dict]) -> str:
    return "".join(
        f'<details class="rule" id="rule-{escape(code)}"><summary><code>{escape(code)}</code> {escape(rule["name"])}: '
        f'{escape(rule["summary"])}</summary><pre>{escape(rule["doc"])}</pre></details>'
        for code, rule in sorted(rules.items())) or "<p>No rule to document.</p>"


def _site(site: Optional[dict]) -> str:
    return f"{site['path']}:{site['line']} in {site['function']}" if site else "-"


def _traced(traced: Optional[dict]) -> str:
    if not traced:
        return "<p>No trace given.</p>"
    rows = "".join(
        f"<tr><td><code>{escape(op['op'])}</code></td><td>{op['count']}</td><td>{escape(op['mps'])}</td>"
        f"<td>{escape(op['first_supported'] or '-')}</td><td>{escape(_site(op['site']))}</td></tr>"
        for op in traced["would_raise"] + traced["cpu_fallbacks"])
    head = (f"<p><code>{escape(traced['ran']['command'])}</code>: {traced['operators']} operators, "
            f"{traced['calls']} calls, checked against torch {escape(traced['release'])}.</p>")
    if not rows:
        return head + "<p>Every operator the run reached runs on MPS.</p>"
    return (head + '<div class="scroll"><table class="traced"><tr><th>operator</th><th>calls</th><th>on MPS</th>'
            f"<th>runs on MPS from</th><th>first from</th></tr>{rows}</table></div>")


def _check_table(item: dict, rules: Dict[str, dict]) -> str:
    evidence = "".join(f'<tr class="evidence"><th>evidence</th><td>{_linked(line, rules)}</td></tr>'
                       for line in item["evidence"])
    return (f'<table class="check" id="check-{escape(item["id"])}" data-verdict="{escape(item["verdict"])}">'
            f'<caption><h3>{escape(item["item"])}</h3></caption>'
            f'<tr class="verdict-row"><th>verdict</th><td>{_verdict(item["verdict"])}</td></tr>'
            f'<tr class="release-row"><th>checked against</th><td>{escape(item["checked_against"])}</td></tr>'
            f"{evidence}</table>")


def render_html(doc: dict) -> str:
    rules = doc["rules"]
    families = doc["families"]
    family_rows = "".join(f"<tr><td>{escape(f['family'])}xx</td><td>{escape(f['name'])}</td>"
                          f"<td class=\"num\">{f['findings']}</td><td class=\"num\">{f['fixable']}</td></tr>"
                          for f in families)
    summary_rows = "".join(f'<tr class="checklist-row" data-id="{escape(item["id"])}"><td>'
                           f'<a href="#check-{escape(item["id"])}">{escape(item["item"])}</a></td>'
                           f'<td>{_verdict(item["verdict"])}</td><td>{escape(item["checked_against"])}</td></tr>'
                           for item in doc["checklist"])
    intro = "".join(f"<p>{escape(line)}</p>" for line in torch_lines(doc))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Portability report: {escape(doc['project'])}</title>
<style>{CSS}</style>
</head>
<body>
<h1>Portability report: <code>{escape(doc['project'])}</code></h1>
<p class="verdict-line v-{escape(doc['overall'])}" id="verdict">{_inline(doc['verdict'])}</p>
<section id="torch" data-target-release="{escape(doc['torch']['database_release'])}">{intro}
<p>Checklist: {_verdict(doc['overall'])}; {doc['files_checked']} files checked, {doc['findings_total']} findings,
{doc['fixable_total']} auto-fixable ({doc['fixable_with_fix']} with <code>--fix</code>).</p></section>
<h2>Blockers</h2>
<section id="blockers">{_blockers(doc['blockers'], rules)}</section>
<h2>Work left per top-level folder</h2>
<figure id="folder-chart">{_chart(doc['folders'])}</figure>
<h2>Work left per file</h2>
{_files(doc)}
<h2>Acceptance checklist</h2>
<div class="scroll"><table id="checklist"><tr><th>item</th><th>verdict</th><th>checked against</th></tr>{summary_rows}</table></div>
<h2>Findings by family</h2>
<div class="scroll"><table id="families"><tr><th>family</th><th>name</th><th class="num">findings</th>
<th class="num">auto-fixable</th></tr>{family_rows}</table></div>
<h2>Operator coverage</h2>
<section id="op-coverage">
<h3>Static (torch {escape(doc['torch']['database_release'])})</h3>
<ul class="findings">{''.join(f'<li><code>{escape(f["path"])}:{f["line"]}:{f["column"]}</code> {_linked(f["code"], rules)} '
                              f'{escape(f["message"])}</li>' for f in doc['op_coverage']['static'])
                      or '<li>No static operator-coverage finding.</li>'}</ul>
<h3>Traced</h3>
{_traced(doc['op_coverage']['traced'])}
</section>
<h2>Checklist items</h2>
<section id="checklist-items">{''.join(_check_table(item, rules) for item in doc['checklist'])}</section>
<h2>Findings</h2>
<section id="findings">{_findings(doc, rules)}</section>
<h2>Rules</h2>
<section id="rules">{_rules(rules)}</section>
</body>
</html>
"""
