"""`planstate resume`: the brief a returning agent reads first, and `--activate` to resume a stopped initiative."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, option_error, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def register(cli: Registrar) -> None:
    """Add `resume`."""
    p = cli.add(
        "resume",
        cmd_resume,
        "the resume brief: where you are, what was being done, what is next",
        examples=["planstate resume", "planstate resume --json"],
    )
    p.add_argument(
        "--activate",
        action="store_true",
        help="first resume the initiative (paused, suspended or abandoned → active), then print the brief",
    )
    p.add_argument("--reason", metavar="TEXT", help="why it is resumed (with --activate; kept in the history)")
    p.add_argument(
        "--budget",
        type=int,
        metavar="CHARS",
        help="keep the brief under CHARS characters, dropping the least important parts first",
    )


def cmd_resume(args: argparse.Namespace) -> int:
    """Print the resume brief (exit 1 when the state cannot be trusted); with --activate, first resume a paused,
    suspended or abandoned initiative."""
    from planstate.cli import display
    from planstate.cli.results import activate, activation_line
    from planstate.report.budget import DEFAULT_BUDGET, MIN_BUDGET, fit

    if args.budget is not None and args.budget < MIN_BUDGET:
        option_error(args, f"--budget must be at least {MIN_BUDGET} characters, not {args.budget}")
    if args.reason is not None and not args.activate:
        raise UsageError("resume --reason records why it was resumed: add --activate to resume")
    ws = workspace(args)
    activated: dict[str, Any] | None = None
    moved = None
    if args.activate:
        activated, moved = activate(ws, args.reason)
    b = ws.brief()
    text = ""
    first = activation_line(activated, moved) if activated is not None and not args.json else None
    budget = DEFAULT_BUDGET if args.budget is None else args.budget
    if first is not None:
        budget -= len(first) + 1  # the line above the brief counts toward the budget too
    if args.budget is not None or not args.json:  # --json is complete unless a budget is asked for
        b, text = fit(ws, b, budget)
    code = EXIT_FINDINGS if b.trust else EXIT_OK  # agents can branch on an untrusted state
    if args.json:
        data = b.to_dict()
        if activated is not None:
            data["activated"] = activated
        reply(data)
        return code
    if first is not None:
        out(first)
    if display.use_rich():
        display.print_brief_rich(text)
    else:
        out(text)
    return code
