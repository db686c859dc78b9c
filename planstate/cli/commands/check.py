"""`planstate check`: the workspace's drift findings as text, JSON or GitHub annotations (exit 1 on errors)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from planstate.cli.output import err, out, reply
from planstate.cli.parser import Registrar, option_error, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK

FORMATS = ("text", "json", "github")


def register(cli: Registrar) -> None:
    """Add `check`."""
    p = cli.add(
        "check",
        cmd_check,
        "check the workspace for drift (exit 1 on errors)",
        examples=["planstate check", "planstate check --fix", "planstate check --json"],
    )
    p.add_argument(
        "--format", choices=FORMATS, default=None, help="output format: text (default), json or github annotations"
    )
    p.add_argument("--fix", action="store_true", help="apply the safe fixes, then check again")
    p.add_argument("--diff", action="store_true", help="print the unified diff of what --fix changes (or would)")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument(
        "--stale-after", default="30m", metavar="DURATION", help="when an active session is stale (default 30m)"
    )


def cmd_check(args: argparse.Namespace) -> int:
    """Check the workspace for drift; exit 1 on errors (and on warnings with --strict)."""
    fmt = output_format(args)
    args.json = fmt == "json"  # `--format json` is `--json`: its errors are envelopes too
    ws = workspace(args)
    report = ws.check(fix=args.fix, diff=args.diff, stale_after=stale_after(args))
    diff = "".join(change.diff() for change in report.changes)
    if fmt == "json":
        data = report.to_dict()
        if args.diff:
            data["diff"] = diff
        reply(data)
    else:
        if args.diff and diff:
            out(diff)
        for failure in report.failures:
            err(f"planstate: could not fix: {failure}")
        if fmt == "github":
            path_of = _github_paths(ws)
            for finding in report.findings:
                out(finding.github(path_of(finding.file)))
        else:
            for finding in report.fixed:
                out(f"fixed: {finding.text()}")
            for finding in report.findings:
                out(finding.text())
            summary = f"{count(report.files, 'file')} checked: "
            summary += f"{count(len(report.errors), 'error')}, {count(len(report.warnings), 'warning')}"
            if args.fix:
                summary += f", {len(report.fixed)} fixed"
            out(summary)
    failed = report.errors or (args.strict and report.warnings)
    return EXIT_FINDINGS if failed else EXIT_OK


def output_format(args: argparse.Namespace) -> str:
    """The output format: `--format`, or json when `--json` is given (the two must not disagree)."""
    chosen = getattr(args, "format", None)
    if getattr(args, "json", False):
        if chosen not in (None, "json"):
            option_error(args, f"--json and --format {chosen} ask for two formats; give one of them")
        return "json"
    return str(chosen or "text")


def stale_after(args: argparse.Namespace) -> float:
    """`--stale-after` in seconds (the duration grammar of durations.py, like `session reap`)."""
    from planstate.core.durations import parse

    return parse(args.stale_after, "stale_after").total_seconds()


def count(number: int, noun: str) -> str:
    """`1 error`, `2 errors`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _github_paths(ws: Any) -> Callable[[str], str]:
    """How annotations name files: GitHub wants paths from the repository root, so relative to the git work tree
    that holds the project (a monorepo's `svc/.planning/STATE.md`), else to the current folder."""
    import os
    from pathlib import Path

    from planstate.core import git

    project = ws.root.parent.resolve()
    top = git.toplevel(project)
    base = top.resolve() if top is not None else Path.cwd().resolve()

    def path_of(file: str) -> str:
        trailing = "/" if file.endswith("/") else ""
        return Path(os.path.relpath(project / file, base)).as_posix() + trailing

    return path_of
