"""`planstate validate`: validate every file of the workspace against the schema (exit 1 on problems)."""

from __future__ import annotations

import argparse

from planstate.cli.output import out
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK


def register(cli: Registrar) -> None:
    """Add `validate`."""
    cli.add("validate", cmd_validate, "validate every file of the workspace")


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every file of the workspace."""
    from planstate.cli.output import reply

    result = workspace(args).validate()
    count, problems = result
    if args.json:
        reply(result.to_dict())
    else:
        for problem in problems:
            out(str(problem))
        if not problems:
            out(f"{count} file{'s' if count != 1 else ''} valid")
    return EXIT_FINDINGS if problems else EXIT_OK
