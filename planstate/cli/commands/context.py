"""`planstate context`: show or change the resume context (files, implementations, open questions)."""

from __future__ import annotations

import argparse

from planstate.cli.parser import Registrar, workspace
from planstate.cli.results import print_edited, print_value


def register(cli: Registrar) -> None:
    """Add `context`."""
    p = cli.add("context", cmd_context, "show or change the resume context: files, implementations, questions")
    p.add_argument("--file", action="append", metavar="PATH", help="a file modified (repeat)")
    p.add_argument("--implementation", action="append", metavar="TEXT", help="a key implementation (repeat)")
    p.add_argument("--question", action="append", metavar="TEXT", help="an open question (repeat)")
    p.add_argument("--answered", action="append", metavar="TEXT", help="an open question now answered (repeat)")
    p.add_argument("--clear-files", action="store_true", help="empty files_modified first")
    p.add_argument("--clear-implementations", action="store_true", help="empty key_implementations first")
    p.add_argument("--clear-questions", action="store_true", help="empty open_questions first")


def cmd_context(args: argparse.Namespace) -> int:
    """Show or change the resume context."""
    lists = (args.file, args.implementation, args.question, args.answered)
    clears = (args.clear_files, args.clear_implementations, args.clear_questions)
    ws = workspace(args)
    if not any(lists) and not any(clears):
        return print_value(args, ws.get("resume_context"))
    result = ws.context(
        files=args.file or [],
        implementations=args.implementation or [],
        questions=args.question or [],
        answered=args.answered or [],
        clear_files=args.clear_files,
        clear_implementations=args.clear_implementations,
        clear_questions=args.clear_questions,
    )
    return print_edited(args, result)
