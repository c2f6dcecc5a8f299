"""`cudalint check|rules|explain|trace|report|compare|server`. Exit codes: 0 clean, 1 findings, 2 usage or configuration error."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

from cudalint import __version__
from cudalint.catalog import FAMILIES, load_catalog
from cudalint.config import ConfigError, find_pyproject, resolve, split_codes
from cudalint.discover import MissingPath
from cudalint.report import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cudalint",
        description="Find what stops a CUDA-first PyTorch project from running on Apple's MPS backend or on CPU.",
    )
    parser.add_argument("--version", action="version", version=f"cudalint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="lint files and folders (default: .)")
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
    check.add_argument("--format", choices=sorted(FORMATS), default="text")
    check.add_argument("--statistics", action="store_true", help="count findings per code")
    check.add_argument("-q", "--quiet", action="store_true", help="findings only, no summary line")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--fix", action="store_true", help="apply safe fixes, then report what is left")
    check.add_argument("--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--no-color", action="store_true", help="never colour the text output")
    check.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write .cudalint_cache/")

    sub.add_parser("rules", help="list every rule")
    coverage = sub.add_parser("coverage", help="an API's or ATen operator's MPS status in every torch release")
    coverage.add_argument("query", help="e.g. torch.nn.functional.grid_sample, grid_sample, nn.Conv3d, aten::grid_sampler_3d")
    coverage.add_argument("--torch-version", help="the release to mark as the target (default: the newest)")
    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    sub.add_parser("server", help="a language server (LSP) over standard input and output, for editors")

    trace = sub.add_parser("trace", help="run Python code and check the operators it reaches (needs torch)",
                           usage="cudalint trace [options] (-- python script.py ARGS | -m module ARGS | script.py ARGS)")
    trace.add_argument("--torch-version", help="the torch release to check against (default: the installed one)")
    trace.add_argument("--output", help="write the report to this file (JSON when it ends in .json)")
    trace.add_argument("--format", choices=["text", "json"], default=None)
    trace.add_argument("-m", dest="module", nargs=argparse.REMAINDER, help="run a module, as python -m does")
    trace.add_argument("program", nargs=argparse.REMAINDER, help="python script.py ARGS, after --")

    report = sub.add_parser("report", help="one portability report: findings, coverage, acceptance checklist")
    report.add_argument("path", nargs="?", default=".", metavar="PATH")
    report.add_argument("--trace", type=Path, help="a trace.json from `cudalint trace --output`")
    report.add_argument("--format", choices=["markdown", "html", "json"], default="markdown")
    report.add_argument("--output", type=Path, help="write the report to this file")
    report.add_argument("--torch-version", help="the torch release the project targets (default: from its manifests)")
    report.add_argument("--compare", type=Path, help="a compare.json from `cudalint compare --format json --output`")

    compare = sub.add_parser("compare", help="numerical agreement of two torch.save files, tensor by tensor (needs torch)")
    compare.add_argument("a", type=Path, metavar="A.pt", help="e.g. saved on the CUDA baseline")
    compare.add_argument("b", type=Path, metavar="B.pt", help="e.g. saved on MPS or the CPU")
    compare.add_argument("--rtol", type=float, default=1e-5, help="relative tolerance, as torch.allclose (default 1e-5)")
    compare.add_argument("--atol", type=float, default=1e-8, help="absolute tolerance, as torch.allclose (default 1e-8)")
    compare.add_argument("--format", choices=["text", "json"], default="text")
    compare.add_argument("--output", type=Path, help="write the comparison to this file")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "coverage":
            return _coverage(args.query, args.torch_version)
        if args.command == "rules":
            sys.stdout.write(rules_table())
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
                                  compare_path=args.compare)
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

    catalog = load_catalog()
    config_path = args.config
    if config_path is not None and not config_path.is_file():
        raise ConfigError(f"--config {config_path}: no such file")
    stdin = _reads_stdin(args)
    if config_path is None:
        first = Path(args.stdin_filename or ".") if stdin else Path(args.paths[0]) if args.paths else Path.cwd()
        config_path = find_pyproject(first if first.exists() or stdin else Path.cwd())
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
    )
    settings.unsafe_fixes = args.unsafe_fixes
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
    if args.fix or args.diff:
        from cudalint.fixes import fix_all, refresh

        outcomes = fix_all(result, settings, unsafe=args.unsafe_fixes, write=not args.diff, jobs=args.jobs)
        for outcome in outcomes:
            if outcome.error:
                print(f"cudalint: {outcome.display}: not fixed: {outcome.error}", file=sys.stderr)
        if args.diff:
            sys.stdout.write("".join(outcome.diff() for outcome in outcomes if outcome.changed))
            changed = sum(1 for outcome in outcomes if outcome.changed)
            applied = sum(outcome.applied for outcome in outcomes if outcome.changed)
            print(f"Would fix {applied} problem{'s' if applied != 1 else ''} in {changed} file{'s' if changed != 1 else ''}.", file=sys.stderr)
            return EXIT_FINDINGS if changed else EXIT_CLEAN
        refresh(result, outcomes, settings)
    sys.stdout.write(_render(args, result, sys.stdout))
    return EXIT_FINDINGS if result.findings and not args.exit_zero else EXIT_CLEAN


def _render(args: argparse.Namespace, result, stream) -> str:
    colour = args.format == "text" and not args.no_color and not os.environ.get("NO_COLOR") and stream.isatty()
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


def _coverage(query: str, torch_version: Optional[str]) -> int:
    from cudalint.coverage.query import coverage_table

    try:
        sys.stdout.write(coverage_table(query, torch_version))
    except LookupError as exc:
        raise ConfigError(str(exc.args[0])) from None
    except ValueError as exc:
        raise ConfigError(f"--torch-version: {exc}") from None
    return EXIT_CLEAN


def _explain(code: str) -> int:
    catalog = load_catalog()
    code = code.upper()
    if code not in catalog:
        raise ConfigError(f"unknown rule code {code!r}; `cudalint rules` lists them")
    sys.stdout.write(catalog[code].explain())
    return EXIT_CLEAN


def rules_table(markdown: bool = False) -> str:
    catalog = load_catalog()
    rows: List[str] = []
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
