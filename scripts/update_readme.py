"""Regenerate the rule table in README.md from the catalog (a test keeps them in sync)."""

from pathlib import Path

from cudalint.cli import rules_table

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- rules:start -->\n", "<!-- rules:end -->"


def main() -> None:
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + START + rules_table(markdown=True) + END + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
