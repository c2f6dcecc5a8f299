"""`cudalint check|rules|explain|trace|report|compare|server`. Exit codes: 0 clean, 1 findings, 2 usage or configuration error."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cudalint import __version__
from cudalint.catalog import FAMILIES, keep_compact_copy, load_catalog
from cudalint.config import (
    ConfigError,
    find_pyproject,
    project_root,
    resolve,
    split_codes,
)
from cudalint.discover import MissingPath
from cudalint.report import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _help_width() -> int:
    """shutil.get_terminal_size's columns (COLUMNS, else the terminal's, else 80), less argparse's margin
    of 2: what argparse would find itself, importing shutil, for every option it adds."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class Parser(argparse.ArgumentParser):
    """argparse, plus "did you mean --statistics?" for a mistyped option or command."""

    partial = False  # built for one command (see build_parser): a suggestion looks at every command's options

    def error(self, message: str):
        import re

        from cudalint.config import did_you_mean

        options = _long_options(build_parser() if self.partial else self)
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if unknown and unknown.group(1).startswith("--"):
            message += did_you_mean(unknown.group(1).split("=")[0], options)
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            message += did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        super().error(message)


def _long_options(parser: argparse.ArgumentParser) -> list[str]:
    found = []
    for action in parser._actions:
        found += [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _long_options(sub)
    return found


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. With `command`, only that command's parser is built (its help and errors are
    the same): a run builds the options of the command it runs, not of all eight."""
    formatter = functools.partial(argparse.HelpFormatter, width=_help_width())  # the terminal asked once
    parser = Parser(
        prog="cudalint",
        description="Find what stops a CUDA-first PyTorch project from running on Apple's MPS backend or on CPU.",
        formatter_class=formatter,
    )
    parser.partial = command is not None
    parser.add_argument("--version", action="version", version=f"cudalint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (options, kwargs) in COMMANDS.items():
        if command is None or command == name:
            options(sub.add_parser(name, formatter_class=formatter, **kwargs))
    return parser


def _check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="*", default=[], metavar="PATH", help="files and folders (default: .); - reads standard input")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="lint standard input as if it were the file PATH (its config, per-file-ignores, target release); "
                       "with --fix, print the fixed text")
    check.add_argument("--select", type=split_codes, help="codes or prefixes to check, replacing the default set")
    check.add_argument("--extend-select", type=split_codes, default=[], help="codes or prefixes to add")
    check.add_argument("--ignore", type=split_codes, default=[], help="codes or prefixes to skip")
    check.add_argument("--per-file-ignores", action="append", default=[], metavar="PATTERN:CODES")
    check.add_argument("--exclude", type=lambda s: [p for p in s.split(",") if p], help="replace the exclude list")
    check.add_argument("--extend-exclude", type=lambda s: [p for p in s.split(",") if p], default=[])
    check.add_argument("--torch-version", help="the torch release the project targets (default: from its manifests)")
    check.add_argument("--config", type=Path, help="pyproject.toml to read [tool.cudalint] from")
    check.add_argument("--format", "--output-format", dest="format", choices=sorted(FORMATS), default="text")
    check.add_argument("--statistics", action="store_true", help="count findings per code")
    check.add_argument("-q", "--quiet", action="store_true", help="findings only, no summary line")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--fix", action="store_true", help="apply safe fixes, then report what is left")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--no-color", action="store_true", help="never colour the text output")
    check.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write .cudalint_cache/")
    check.add_argument("--include-docs", action="store_true",
                       help="also check install commands in the code blocks of Markdown and reST files")
    check.add_argument("--max-file-size", type=_positive(int), metavar="BYTES",
                       help="read no file larger than this (default: max-file-size, else 16 MiB)")
    check.add_argument("--file-timeout", type=_positive(float), metavar="SECONDS",
                       help="a file still being checked after this long gets CDL000 (default: file-timeout, else 60)")
    # Adopting cudalint on a big project: suppressions, a baseline, fix policy, the resolved settings.
    check.add_argument("--add-noqa", action="store_true", help="add `# noqa: CODE` to every line with a finding")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="report only the findings FILE does not record")
    check.add_argument("--write-baseline", type=Path, metavar="FILE", help="record the current findings in FILE")
    check.add_argument("--show-fixes", action="store_true", help="list the fixes applied (with --fix) or available")
    check.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when --fix changed a file")
    check.add_argument("--fixable", type=split_codes, default=None, help="codes or prefixes whose fixes may be applied")
    check.add_argument("--unfixable", type=split_codes, default=[], help="codes or prefixes never fixed")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--show-settings", action="store_true", help="print the resolved settings and exit")


def _rules_options(rules: argparse.ArgumentParser) -> None:
    rules.add_argument("--format", choices=["text", "json"], default="text")


def _coverage_options(coverage: argparse.ArgumentParser) -> None:
    coverage.add_argument("query", nargs="?",
                          help="e.g. torch.nn.functional.grid_sample, grid_sample, nn.Conv3d, aten::grid_sampler_3d")
    coverage.add_argument("--project", metavar="PATH",
                          help="instead of a query: the operators PATH reaches that fail on MPS in a release its torch "
                               "requirement allows, and the lower bound from which they all run")
    coverage.add_argument("--torch-version", help="the release to mark as the target (default: the newest)")
    coverage.add_argument("--why", action="store_true",
                          help="say where each release's answer came from (dispatch table, binary or Python "
                               "registration, manual correction, test list)")


def _explain_options(explain: argparse.ArgumentParser) -> None:
    explain.add_argument("code")


def _no_options(parser: argparse.ArgumentParser) -> None:
    pass


def _trace_options(trace: argparse.ArgumentParser) -> None:
    trace.add_argument("--torch-version", help="the torch release to check against (default: the installed one)")
    trace.add_argument("--output", help="write the report to this file (JSON when it ends in .json)")
    trace.add_argument("--format", choices=["text", "json"], default=None)
    trace.add_argument("-m", dest="module", nargs=argparse.REMAINDER, help="run a module, as python -m does")
    trace.add_argument("program", nargs=argparse.REMAINDER, help="python script.py ARGS, after --")


def _report_options(report: argparse.ArgumentParser) -> None:
    report.add_argument("path", nargs="?", default=".", metavar="PATH")
    report.add_argument("--trace", type=Path, help="a trace.json from `cudalint trace --output`")
    report.add_argument("--format", choices=["markdown", "html", "json"], default="markdown")
    report.add_argument("--output", type=Path, help="write the report to this file")
    report.add_argument("--torch-version", help="the torch release the project targets (default: from its manifests)")
    report.add_argument("--compare", type=Path, help="a compare.json from `cudalint compare --format json --output`")
    report.add_argument("--fail-on", choices=["fail", "warning"], help="exit 1 when the overall verdict is this or worse")


def _compare_options(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("a", type=Path, metavar="A.pt", help="e.g. saved on the CUDA baseline")
    compare.add_argument("b", type=Path, metavar="B.pt", help="e.g. saved on MPS or the CPU")
    compare.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance, as torch.allclose (default 1e-5)")
    compare.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance, as torch.allclose (default 1e-8)")
    compare.add_argument("--format", choices=["text", "json"], default="text")
    compare.add_argument("--output", type=Path, help="write the comparison to this file")


# name -> (what adds its options, add_parser's arguments)
COMMANDS = {
    "check": (_check_options, {"help": "lint files and folders (default: .)"}),
    "rules": (_rules_options, {"help": "list every rule"}),
    "coverage": (_coverage_options, {"help": "an API's or ATen operator's MPS status in every torch release"}),
    "explain": (_explain_options, {"help": "print a rule's documentation"}),
    "server": (_no_options, {"help": "a language server (LSP) over standard input and output, for editors"}),
    "trace": (_trace_options, {"help": "run Python code and check the operators it reaches (needs torch)",
                               "usage": "cudalint trace [options] (-- python script.py ARGS | -m module ARGS | script.py ARGS)"}),
    "report": (_report_options, {"help": "one portability report: findings, coverage, acceptance checklist"}),
    "compare": (_compare_options, {"help": "numerical agreement of two torch.save files, tensor by tensor (needs torch)"}),
}


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be positive")
        return value

    return parse


def write_out(text: str, stream=None) -> None:
    """Write a report whatever the stream's encoding: a file name that is not valid UTF-8 (kept by Python
    as surrogate escapes) or a character the terminal cannot show is escaped, never a traceback."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
    stream.write(text)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(words)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "coverage":
            return _coverage(args.query, args.torch_version, args.why, args.project)
        if args.command == "rules":
            sys.stdout.write(rules_json() if args.format == "json" else rules_table())
            return EXIT_CLEAN
        if args.command == "explain":
            return _explain(args.code)
        if args.command == "server":
            return _server()
        if args.command == "trace":
            from cudalint.tracing.command import trace_command

            return trace_command(args.program, args.module, args.torch_version, args.output, args.format)
        if args.command == "report":
            from cudalint.report.portability import report_command

            return report_command(args.path, args.trace, args.format, args.output, args.torch_version,
                                  compare_path=args.compare, fail_on=args.fail_on)
        if args.command == "compare":
            from cudalint.compare import compare_command

            return compare_command(args.a, args.b, args.rtol, args.atol, args.format, args.output)
    except ConfigError as exc:
        print(f"cudalint: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _check(args: argparse.Namespace) -> int:
    from cudalint.runner import run

    config_path = args.config
    if config_path is not None and not config_path.is_file():
        raise ConfigError(f"--config {config_path}: no such file")
    stdin = _reads_stdin(args)
    if config_path is None and not args.isolated:
        first = Path(args.stdin_filename or ".") if stdin else Path(args.paths[0]) if args.paths else Path.cwd()
        config_path = find_pyproject(first if first.exists() or stdin else Path.cwd())
    # The project root, as resolve() sets it: where the index, the caches and per-file patterns start.
    root = config_path.parent if config_path else project_root(
        [Path(args.stdin_filename)] if stdin and args.stdin_filename else [Path(path) for path in args.paths if Path(path).exists()]
    )
    if not args.no_cache:
        keep_compact_copy(root)
    catalog = load_catalog()
    settings = resolve(
        catalog,
        config_path=config_path,
        select=args.select,
        ignore=args.ignore,
        extend_select=args.extend_select,
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        per_file_ignores=args.per_file_ignores,
        torch_version=args.torch_version,
        max_file_size=args.max_file_size,
        file_timeout=args.file_timeout,
        fixable=args.fixable,
        unfixable=args.unfixable,
        root=root,
    )
    settings.unsafe_fixes = args.unsafe_fixes
    settings.include_docs = args.include_docs
    if args.show_settings:
        from cudalint.show_settings import show_settings

        sys.stdout.write(show_settings(settings, args.paths, catalog))
        return EXIT_CLEAN
    if stdin:
        return _check_stdin(args, settings)
    from cudalint.progress import Progress

    progress = Progress()
    try:
        result = run(args.paths or ["."], settings, jobs=args.jobs, cache=not args.no_cache, progress=progress)
    except MissingPath as exc:
        raise ConfigError(str(exc)) from None
    finally:
        progress.close()
    for note in result.notes:
        write_out(f"cudalint: warning: {note}\n", sys.stderr)
    if result.files == 0:
        print(f"cudalint: warning: no file was checked: {', '.join(args.paths)} holds no Python file or manifest "
              "that is not excluded", file=sys.stderr)
    if args.add_noqa:
        from cudalint.noqa import add_noqa_to_files

        added, files, skipped = add_noqa_to_files(result.findings)
        print(f"Added {added} noqa directive{'s' if added != 1 else ''} to {files} file{'s' if files != 1 else ''}.",
              file=sys.stderr)
        if skipped:
            print(f"cudalint: {skipped} finding{'s' if skipped != 1 else ''} got no noqa directive: the file kind takes "
                  "no end-of-line comment, the file changed or does not parse", file=sys.stderr)
        return EXIT_CLEAN
    fixable_before = _fixable_counts(result.findings, args.unsafe_fixes)
    all_before = _fixable_counts(result.findings, args.unsafe_fixes, all_codes=True)
    if args.fix or args.diff:
        from cudalint.fixes import fix_all, refresh

        outcomes = fix_all(result, settings, unsafe=args.unsafe_fixes, write=not args.diff, jobs=args.jobs)
        for outcome in outcomes:
            if outcome.error:
                write_out(f"cudalint: {outcome.display}: not fixed: {outcome.error}\n", sys.stderr)
        if args.diff:
            write_out("".join(outcome.diff() for outcome in outcomes if outcome.changed))
            changed = sum(1 for outcome in outcomes if outcome.changed)
            applied = sum(outcome.applied for outcome in outcomes if outcome.changed)
            print(f"Would fix {applied} problem{'s' if applied != 1 else ''} in {changed} file{'s' if changed != 1 else ''}.", file=sys.stderr)
            return EXIT_FINDINGS if changed else EXIT_CLEAN
        refresh(result, outcomes, settings)
    shown_fixes = ""
    if args.show_fixes:
        from cudalint.report.text import fixes_section

        if args.fix:
            left = _fixable_counts(result.findings, args.unsafe_fixes, all_codes=True)
            done = {key: count - left.get(key, 0) for key, count in all_before.items() if count > left.get(key, 0)}
            shown_fixes = fixes_section(done, catalog, f"Fixed {sum(done.values())}")
        else:
            shown_fixes = fixes_section(fixable_before, catalog, f"Would fix {sum(fixable_before.values())}")
    if args.write_baseline:
        from cudalint import baseline

        written = baseline.write(args.write_baseline, result.findings)
        print(f"cudalint: wrote {written} finding{'s' if written != 1 else ''} to the baseline {args.write_baseline}",
              file=sys.stderr)
        return EXIT_CLEAN
    if args.baseline:
        from cudalint import baseline

        outcome = baseline.apply(args.baseline, result.findings, result.checked)
        result.findings = outcome.findings
        print(f"cudalint: baseline {args.baseline}: {outcome.matched} finding{'s' if outcome.matched != 1 else ''} "
              f"left out; {outcome.stale} entr{'ies' if outcome.stale != 1 else 'y'} no longer occur"
              f"{'s' if outcome.stale == 1 else ''}", file=sys.stderr)
    no_colour = args.no_color or bool(os.environ.get("NO_COLOR"))
    colour = args.format == "text" and not no_colour and (bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty())
    if args.format == "text":
        options = {"colour": colour, "statistics": args.statistics, "quiet": args.quiet, "fixes": shown_fixes,
                   "catalog": catalog}
        write_out(FORMATS[args.format](result, **options))
    else:
        write_out(FORMATS[args.format](result))
        sys.stderr.write(shown_fixes)
    if args.exit_zero:
        return EXIT_CLEAN
    if result.findings or (args.exit_non_zero_on_fix and result.fixed):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _fixable_counts(findings, unsafe: bool, all_codes: bool = False) -> dict:
    """(path, code) -> how many findings there have a fix --fix would apply (every finding with all_codes)."""
    from cudalint.findings import Safety

    counts: dict = {}
    for f in findings:
        if all_codes or (f.fix is not None and (unsafe or f.fix.safety is Safety.SAFE)):
            counts[(f.path, f.code)] = counts.get((f.path, f.code), 0) + 1
    return counts


def _render(args: argparse.Namespace, result, stream) -> str:
    no_colour = args.no_color or bool(os.environ.get("NO_COLOR"))
    colour = args.format == "text" and not no_colour and (bool(os.environ.get("FORCE_COLOR")) or stream.isatty())
    options = {"colour": colour, "statistics": args.statistics, "quiet": args.quiet} if args.format == "text" else {}
    return FORMATS[args.format](result, **options)


def _reads_stdin(args: argparse.Namespace) -> bool:
    """`-` as the only path, or --stdin-filename with no path: the buffer comes from standard input."""
    if "-" in args.paths and len(args.paths) > 1:
        raise ConfigError("- (standard input) cannot be combined with other paths")
    if args.stdin_filename is not None and args.paths not in ([], ["-"]):
        raise ConfigError("--stdin-filename names standard input; give no other path (or just -)")
    return args.paths == ["-"] or args.stdin_filename is not None


def _check_stdin(args: argparse.Namespace, settings) -> int:
    """Lint standard input as the file --stdin-filename names. With --fix the fixed buffer goes to standard
    output (the buffer unchanged when nothing can be fixed) and what is left is reported on standard error."""
    from cudalint.discover import display_path, kind_of
    from cudalint.fixes import fix_bytes
    from cudalint.python.analyze import unreadable
    from cudalint.runner import RunResult, run_text
    from cudalint.source import decode_python, decode_text

    display = display_path(Path(args.stdin_filename), Path.cwd().resolve()) if args.stdin_filename else "-"
    data = sys.stdin.buffer.read()
    python = (kind_of(Path(display)) or "python") == "python"
    decoded = decode_python(data) if python else decode_text(data)
    if decoded.text is None:
        result = RunResult(findings=[unreadable(display, f"{decoded.error}; the input was not checked",
                                                decoded.error_line, decoded.error_column)], files=1)
    else:
        result = run_text(display, decoded.text, settings)
    if args.fix or args.diff:
        fixed = fix_bytes(display, data, settings, result.torch_version, args.unsafe_fixes) if python else None
        outcome, out = fixed if fixed is not None else (None, data)
        if outcome is not None and outcome.error:
            print(f"cudalint: {display}: not fixed: {outcome.error}", file=sys.stderr)
        if args.diff:
            sys.stdout.write(outcome.diff() if outcome is not None and outcome.changed else "")
            return EXIT_FINDINGS if outcome is not None and outcome.changed else EXIT_CLEAN
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
        if outcome is not None and outcome.changed:
            result = run_text(display, outcome.fixed, settings)
            result.fixed = outcome.applied
        sys.stderr.write(_render(args, result, sys.stderr))
    else:
        sys.stdout.write(_render(args, result, sys.stdout))
    return EXIT_FINDINGS if result.findings and not args.exit_zero else EXIT_CLEAN


def _server() -> int:
    from cudalint.server import missing_dependency, serve

    missing = missing_dependency()
    if missing:
        print(f"cudalint: error: `cudalint server` needs {missing}, which is not installed; "
              "install the server extra: pip install 'cudalint[server]'", file=sys.stderr)
        return EXIT_USAGE
    serve()
    return EXIT_CLEAN


def _coverage(query: str | None, torch_version: str | None, why: bool, project: str | None) -> int:
    from cudalint.coverage.query import coverage_table

    if (query is None) == (project is None):
        raise ConfigError("coverage: give a QUERY or --project PATH")
    try:
        if project is not None:
            from cudalint.coverage.project import project_report

            sys.stdout.write(project_report(project, torch_version))
        else:
            sys.stdout.write(coverage_table(query, torch_version, why))
    except MissingPath as exc:
        raise ConfigError(str(exc)) from None
    except LookupError as exc:
        raise ConfigError(str(exc.args[0])) from None
    except ValueError as exc:
        raise ConfigError(f"--torch-version: {exc}") from None
    return EXIT_CLEAN


def _explain(code: str) -> int:
    catalog = load_catalog()
    code = code.upper()
    if code not in catalog:
        from cudalint.config import did_you_mean

        raise ConfigError(f"unknown rule code {code!r}{did_you_mean(code, catalog.rules)}; `cudalint rules` lists them")
    sys.stdout.write(catalog[code].explain())
    return EXIT_CLEAN


def rules_json() -> str:
    import json

    rules = [
        {"code": r.code, "name": r.name, "family": r.family, "family_name": FAMILIES.get(r.family, ""),
         "severity": r.severity.value, "fix": r.fix, "default": r.default, "summary": r.summary, "why": r.why.strip(),
         "bad": r.bad.strip("\n"), "good": r.good.strip("\n"), "example_file": r.example_file}
        for r in load_catalog()
    ]
    return json.dumps(rules, indent=2, ensure_ascii=False) + "\n"


def rules_table(markdown: bool = False) -> str:
    catalog = load_catalog()
    rows: list[str] = []
    if markdown:
        rows.append("| code | name | severity | fix | default | summary |")
        rows.append("|---|---|---|---|---|---|")
    for rule in catalog:
        default = "yes" if rule.default else "no"
        if markdown:
            rows.append(f"| {rule.code} | {rule.name} | {rule.severity.value} | {rule.fix} | {default} | {rule.summary} |")
        else:
            marker = " " if rule.default else "*"
            rows.append(f"{rule.code}{marker} {rule.name:<34} {rule.severity.value:<8} fix:{rule.fix:<7} {rule.summary}")
    if not markdown:
        rows.append("")
        rows.append("* not in the default set; families: " + "; ".join(f"{k}xx {v}" for k, v in FAMILIES.items()))
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
