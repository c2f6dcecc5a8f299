"""Output formats. Each takes the run result and returns the text to print."""

from cudalint.report.json_format import render_json
from cudalint.report.text import render_text

FORMATS = {"text": render_text, "json": render_json}

__all__ = ["FORMATS", "render_json", "render_text"]
