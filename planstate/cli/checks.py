"""Generated regions, drift checks and the watcher: render, check, watch."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from planstate.cli.output import out, print_json
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError

FORMATS = ("text", "json", "github")


def _format(args: argparse.Namespace) -> str:
    """The output format: `--format`, or json when `--json` is given (the two must not disagree)."""
    chosen = getattr(args, "format", None)
    if getattr(args, "json", False):
        if chosen not in (None, "json"):
            raise UsageError(f"--json and --format {chosen} ask for two formats; give one of them")
        return "json"
    return str(chosen or "text")


def _stale_after(args: argparse.Namespace) -> float:
    """`--stale-after` in seconds (the duration grammar of durations.py, like `session reap`)."""
    from planstate.core.durations import parse

    return parse(args.stale_after, "--stale-after").total_seconds()


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


def _count(number: int, noun: str) -> str:
    """`1 error`, `2 errors`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def cmd_render(args: argparse.Namespace) -> int:
    """Re-render the generated regions of STATE.md."""
    report = workspace(args).render(check=args.check, force=args.force)
    if args.json:
        data: dict[str, Any] = report.to_dict()
        if args.diff:
            data["diff"] = report.diff()
        print_json(data)
    else:
        if args.diff and report.diff():
            out(report.diff())
        for rendered in report.files:
            names = [o.name for o in rendered.plan.changed] if rendered.plan is not None else []
            if rendered.changed:
                verb = "would render" if args.check else "rendered"
                out(f"{rendered.shown}: {verb} {', '.join(names)}")
            elif not rendered.problems:
                out(f"{rendered.shown}: up to date")
            for line, message in rendered.problems:
                _err(f"planstate: {rendered.shown}:{line}: {message}")
    if args.check:
        return EXIT_OK if report.clean else EXIT_FINDINGS
    return EXIT_FINDINGS if any(f.problems for f in report.files) else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Check the workspace for drift; exit 1 on errors (and on warnings with --strict)."""
    fmt = _format(args)
    ws = workspace(args)
    report = ws.check(fix=args.fix, diff=args.diff, stale_after=_stale_after(args))
    diff = "".join(change.diff() for change in report.changes)
    if fmt == "json":
        data = report.to_dict()
        if args.diff:
            data["diff"] = diff
        print_json(data)
    else:
        if args.diff and diff:
            out(diff)
        for failure in report.failures:
            _err(f"planstate: could not fix: {failure}")
        if fmt == "github":
            path_of = _github_paths(ws)
            for finding in report.findings:
                out(finding.github(path_of(finding.file)))
        else:
            for finding in report.fixed:
                out(f"fixed: {finding.text()}")
            for finding in report.findings:
                out(finding.text())
            summary = f"{_count(report.files, 'file')} checked: "
            summary += f"{_count(len(report.errors), 'error')}, {_count(len(report.warnings), 'warning')}"
            if args.fix:
                summary += f", {len(report.fixed)} fixed"
            out(summary)
    failed = report.errors or (args.strict and report.warnings)
    return EXIT_FINDINGS if failed else EXIT_OK


def event_text(event: dict[str, Any]) -> str:
    """One watcher event as a line of text."""
    kind = event["event"]
    if kind == "ready":
        return f"watching {event['workspace']} ({_count(event['errors'], 'error')}, " + (
            f"{_count(event['warnings'], 'warning')}); Ctrl-C stops"
        )
    if kind == "stopped":
        return "stopped"
    if kind in ("error", "fix-failed"):
        return f"{kind}: {event['message']}"
    location = ":".join(str(event[k]) for k in ("file", "line", "column") if event.get(k) is not None)
    text = f"{kind:<7} {location}: {event['severity']} {event['code']}: {event['message']}"
    return text + (f" ({event['hint']})" if kind == "found" else "")


def cmd_watch(args: argparse.Namespace) -> int:
    """Watch the workspace and report findings as they appear and clear, until Ctrl-C."""
    import json
    import signal
    import threading

    as_json = _format(args) == "json"
    ws = workspace(args)
    stale_after = _stale_after(args)
    if args.interval <= 0 or args.debounce < 0:
        raise UsageError("--interval must be > 0 and --debounce >= 0")
    stop = threading.Event()

    def request_stop(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    def emit(event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False) if as_json else event_text(event)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    debounce = args.debounce / 1000
    ws.watch(emit, fix=args.fix, stale_after=stale_after, interval=args.interval, debounce=debounce, stop=stop)
    return EXIT_OK


def register(cli: Registrar) -> None:
    """Add the render, check and watch commands."""
    p = cli.add("render", cmd_render, "re-render the generated regions of STATE.md")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a region is stale or edited")
    p.add_argument("--diff", action="store_true", help="print the unified diff of what changes")
    p.add_argument("--force", action="store_true", help="also overwrite regions that were edited by hand")

    p = cli.add("check", cmd_check, "check the workspace for drift (exit 1 on errors)")
    p.add_argument(
        "--format", choices=FORMATS, default=None, help="output format: text (default), json or github annotations"
    )
    p.add_argument("--fix", action="store_true", help="apply the safe fixes, then check again")
    p.add_argument("--diff", action="store_true", help="print the unified diff of what --fix changes (or would)")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument(
        "--stale-after", default="30m", metavar="DURATION", help="when an active session is stale (default 30m)"
    )

    p = cli.add(
        "watch",
        cmd_watch,
        "watch the workspace and report drift as it appears and clears (--json: one JSON object per line)",
    )
    p.add_argument("--format", choices=FORMATS[:2], default=None, help="text (default), or json: the same as --json")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes as soon as they are needed")
    p.add_argument(
        "--stale-after", default="30m", metavar="DURATION", help="when an active session is stale (default 30m)"
    )
    p.add_argument(
        "--interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="look at stale sessions this often when no file changes (default 30)",
    )
    p.add_argument("--debounce", type=float, default=50.0, metavar="MS", help="quiet time before checking (default 50)")
