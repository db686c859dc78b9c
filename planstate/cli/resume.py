"""The `resume` command: the brief a returning agent reads first, and `--activate` to resume a stopped initiative."""

from __future__ import annotations

import argparse

from planstate.cli import Registrar, out, print_json, workspace
from planstate.errors import EXIT_OK, UsageError

MIN_BUDGET = 200


def cmd_resume(args: argparse.Namespace) -> int:
    """Print the resume brief; with --activate, first resume a paused, suspended or abandoned initiative."""
    from planstate import display
    from planstate.resume import fit, render_text

    if args.budget is not None and args.budget < MIN_BUDGET:
        raise UsageError(f"--budget must be at least {MIN_BUDGET} characters, not {args.budget}")
    if args.reason is not None and not args.activate:
        raise UsageError("resume --reason records why it was resumed: add --activate to resume")
    ws = workspace(args)
    moved = ws.resume(reason=args.reason) if args.activate else None
    b = ws.brief()
    if args.budget is not None:
        b, text = fit(ws, b, args.budget)
    elif not args.json:
        text = render_text(ws, b)
    if args.json:
        data = b.to_dict()
        if moved is not None:
            data["activated"] = moved.to_dict()
        print_json(data)
        return EXIT_OK
    if moved is not None:
        from planstate.cli.lifecycle import transition_line

        out(transition_line(moved))
    if display.use_rich():
        display.print_brief_rich(text)
    else:
        out(text)
    return EXIT_OK


def register(cli: Registrar) -> None:
    """Add the resume command."""
    p = cli.add("resume", cmd_resume, "the resume brief: where you are, what was being done, what is next")
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
