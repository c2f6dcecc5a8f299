"""Output formats. Each takes the run result and returns the text to print."""

from cudalint.report.github import render_github
from cudalint.report.gitlab import render_gitlab
from cudalint.report.json_format import render_json
from cudalint.report.sarif import render_sarif
from cudalint.report.text import render_text

FORMATS = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "gitlab": render_gitlab,
}

__all__ = ["FORMATS", "render_github", "render_gitlab", "render_json", "render_sarif", "render_text"]
