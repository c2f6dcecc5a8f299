"""The portability report as one self-contained HTML file: inline CSS, an inline SVG chart of findings per
family, a table per checklist item. Nothing is fetched: no scripts, fonts or images from elsewhere."""

from __future__ import annotations

from html import escape
from typing import List, Optional

from cudalint.report.portability import torch_lines

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d2330; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #d5d9e0; padding-bottom: .2rem; }
code { background: #f1f3f6; padding: 0 .25em; border-radius: 3px; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; width: 100%; }
caption { text-align: left; }
th, td { border: 1px solid #d5d9e0; padding: .35rem .55rem; text-align: left; vertical-align: top; }
th { background: #f1f3f6; width: 14rem; }
.verdict { font-weight: 600; border-radius: 4px; padding: .05rem .5rem; }
.v-pass { background: #d9f2e0; color: #14532d; } .v-warning { background: #fdf0c8; color: #6b4e00; }
.v-fail { background: #fbdad7; color: #7f1d1d; } .v-pending { background: #e3e8f0; color: #334155; }
.chart text { font-size: 13px; fill: #1d2330; } .bar { fill: #3b6fd4; } .bar.empty { fill: #c7cfdc; }
"""

BAR_HEIGHT, BAR_GAP, LABEL_WIDTH, BAR_SPACE = 22, 8, 320, 560


def _verdict(verdict: str) -> str:
    return f'<span class="verdict v-{escape(verdict)}">{escape(verdict)}</span>'


def _chart(families: List[dict]) -> str:
    widest = max([f["findings"] for f in families] + [1])
    height = len(families) * (BAR_HEIGHT + BAR_GAP) + BAR_GAP
    parts = [f'<svg class="chart" role="img" aria-label="findings per family" width="{LABEL_WIDTH + BAR_SPACE + 60}" '
             f'height="{height}" xmlns="http://www.w3.org/2000/svg">']
    for index, family in enumerate(families):
        y = BAR_GAP + index * (BAR_HEIGHT + BAR_GAP)
        width = max(2, round(BAR_SPACE * family["findings"] / widest))
        empty = " empty" if not family["findings"] else ""
        label = f"{family['family']}xx {family['name']}"
        parts.append(
            f'<text x="0" y="{y + 16}">{escape(label)}</text>'
            f'<rect class="bar{empty}" data-family="{escape(family["family"])}" data-count="{family["findings"]}" '
            f'x="{LABEL_WIDTH}" y="{y}" width="{width}" height="{BAR_HEIGHT}"><title>{escape(label)}: '
            f'{family["findings"]} findings</title></rect>'
            f'<text x="{LABEL_WIDTH + width + 6}" y="{y + 16}">{family["findings"]}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _finding_list(findings: List[dict], empty: str) -> str:
    if not findings:
        return f"<p>{escape(empty)}</p>"
    rows = "".join(f"<li><code>{escape(f['path'])}:{f['line']}:{f['column']}</code> {escape(f['code'])} "
                   f"{escape(f['message'])}</li>" for f in findings)
    return f"<ul>{rows}</ul>"


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
    return (head + '<table class="traced"><tr><th>operator</th><th>calls</th><th>on MPS</th>'
            f"<th>runs on MPS from</th><th>first from</th></tr>{rows}</table>")


def _check_table(item: dict) -> str:
    evidence = "".join(f'<tr class="evidence"><th>evidence</th><td>{escape(line)}</td></tr>'
                       for line in item["evidence"])
    return (f'<table class="check" id="check-{escape(item["id"])}" data-verdict="{escape(item["verdict"])}">'
            f'<caption><h3>{escape(item["item"])}</h3></caption>'
            f'<tr class="verdict-row"><th>verdict</th><td>{_verdict(item["verdict"])}</td></tr>'
            f'<tr class="release-row"><th>checked against</th><td>{escape(item["checked_against"])}</td></tr>'
            f"{evidence}</table>")


def render_html(doc: dict) -> str:
    families = doc["families"]
    family_rows = "".join(f"<tr><td>{escape(f['family'])}xx</td><td>{escape(f['name'])}</td><td>{f['findings']}</td>"
                          f"<td>{f['fixable']}</td></tr>" for f in families)
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
<title>Portability report: {escape(doc['project'])}</title>
<style>{CSS}</style>
</head>
<body>
<h1>Portability report: <code>{escape(doc['project'])}</code></h1>
<section id="torch" data-target-release="{escape(doc['torch']['database_release'])}">{intro}
<p>Overall: {_verdict(doc['overall'])}; {doc['files_checked']} files checked, {doc['findings_total']} findings,
{doc['fixable_total']} auto-fixable.</p></section>
<h2>Acceptance checklist</h2>
<table id="checklist"><tr><th>item</th><th>verdict</th><th>checked against</th></tr>{summary_rows}</table>
<h2>Findings by family</h2>
<figure id="family-chart">{_chart(families)}</figure>
<table id="families"><tr><th>family</th><th>name</th><th>findings</th><th>auto-fixable</th></tr>{family_rows}</table>
<h2>Dependency blockers</h2>
<section id="dependency-blockers">{_finding_list(doc['dependency_blockers'], 'None found.')}</section>
<h2>Operator coverage</h2>
<section id="op-coverage">
<h3>Static (torch {escape(doc['torch']['database_release'])})</h3>
{_finding_list(doc['op_coverage']['static'], 'No static operator-coverage finding.')}
<h3>Traced</h3>
{_traced(doc['op_coverage']['traced'])}
</section>
<h2>Checklist items</h2>
<section id="checklist-items">{''.join(_check_table(item) for item in doc['checklist'])}</section>
</body>
</html>
"""
