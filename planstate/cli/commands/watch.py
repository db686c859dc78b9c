"""`planstate watch`: `check` as the files change, reporting findings as they appear and clear, until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from planstate.cli.commands.check import FORMATS, count, output_format, stale_after
from planstate.cli.parser import Registrar, option_error, workspace
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add `watch`."""
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


def cmd_watch(args: argparse.Namespace) -> int:
    """Watch the workspace and report findings as they appear and clear, until Ctrl-C."""
    import json
    import signal
    import threading

    as_json = output_format(args) == "json"
    ws = workspace(args)
    stale = stale_after(args)
    if args.interval <= 0 or args.debounce < 0:
        option_error(args, "--interval must be > 0 and --debounce >= 0")
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
    ws.watch(
        emit,
        fix=args.fix,
        stale_after=stale,
        interval=args.interval,
        debounce=debounce,
        stop=stop,
    )
    return EXIT_OK


def event_text(event: dict[str, Any]) -> str:
    """One watcher event as a line of text."""
    kind = event["event"]
    if kind == "ready":
        return f"watching {event['path']} ({count(event['error_count'], 'error')}, " + (
            f"{count(event['warning_count'], 'warning')}); Ctrl-C stops"
        )
    if kind == "stopped":
        return "stopped"
    if kind in ("error", "fix-failed"):
        return f"{kind}: {event['message']}"
    location = ":".join(str(event[k]) for k in ("path", "line", "column") if event.get(k) is not None)
    text = f"{kind:<7} {location}: {event['severity']} {event['code']}: {event['message']}"
    if kind == "unchecked":
        return f"{text} ({event['reason']})"
    return text + (f" ({event['hint']})" if kind == "found" else "")
