"""`planstate render`: re-render the generated regions of STATE.md (`--check` only says whether it would)."""

from __future__ import annotations

import argparse
from typing import Any

from planstate.cli.output import err, out, reply
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK


def register(cli: Registrar) -> None:
    """Add `render`."""
    p = cli.add("render", cmd_render, "re-render the generated regions of STATE.md")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a region is stale or edited")
    p.add_argument("--diff", action="store_true", help="print the unified diff of what changes")
    p.add_argument("--force", action="store_true", help="also overwrite regions that were edited by hand")
    p.add_argument(
        "--exit-code",
        action="store_true",
        help="exit 1 when a file was written, as formatters do in pre-commit (the planstate-render hook)",
    )


def cmd_render(args: argparse.Namespace) -> int:
    """Re-render the generated regions of STATE.md."""
    report = workspace(args).render(check=args.check, force=args.force)
    if args.json:
        data: dict[str, Any] = report.to_dict()
        if args.diff:
            data["diff"] = report.diff()
        reply(data)
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
            for name, where in rendered.kept.items():
                out(f"{rendered.shown}: region {name}: the hand-edited text it replaced is kept in {where}")
            for line, message in rendered.problems:
                err(f"planstate: {rendered.shown}:{line}: {message}")
    if args.check:
        return EXIT_OK if report.clean else EXIT_FINDINGS
    failed = any(f.problems for f in report.files) or (args.exit_code and any(f.written for f in report.files))
    return EXIT_FINDINGS if failed else EXIT_OK
