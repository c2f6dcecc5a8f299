"""Regenerate what is generated from the catalog: the rule table in README.md and one Markdown doc per rule in
docs/rules/ (what the SARIF help and the language server's links show). A test keeps them in sync."""

from pathlib import Path

from cudalint.catalog import docs_dir, load_catalog
from cudalint.cli import rules_table

README = Path(__file__).resolve().parents[1] / "README.md"
START, END = "<!-- rules:start -->\n", "<!-- rules:end -->"


def main() -> None:
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + START + rules_table(markdown=True) + END + tail, encoding="utf-8")
    folder = docs_dir()
    catalog = load_catalog()
    for stale in folder.glob("CDL*.md"):
        if stale.stem not in catalog:
            stale.unlink()
    for rule in catalog:
        (folder / f"{rule.code}.md").write_text(rule.markdown(), encoding="utf-8")


if __name__ == "__main__":
    main()
