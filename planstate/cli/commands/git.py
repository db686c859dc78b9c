"""`planstate git …`: git as the distributed engine: textconv for readable diffs, the field-level merge driver,
and installing or removing both in this clone."""

from __future__ import annotations

import argparse
import sys

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, workspace
from planstate.core.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def register(cli: Registrar) -> None:
    """Add the `git` group: textconv, merge-driver, install, uninstall, status."""
    group = cli.group(
        "git", "git integration: readable diffs, a field-level merge driver, install, uninstall and status"
    )
    for subcommand in (_textconv, _merge_driver, _install, _uninstall, _status):
        subcommand(group)


def _textconv(group: Registrar) -> None:
    p = group.add(
        "textconv",
        cmd_textconv,
        "print a planning file as one line per field (git's diff.planstate.textconv runs this)",
        json=False,
        by=False,
    )
    p.add_argument("file", metavar="FILE", help="the file to print")


def cmd_textconv(args: argparse.Namespace) -> int:
    """Print the canonical one-line-per-field view of a planning file, for `git diff` (never fails on bad input)."""
    from planstate.vcs.textconv import textconv

    try:
        with open(args.file, "rb") as handle:
            data = handle.read()
    except OSError as exc:  # git always passes a file it wrote; a person may not
        raise UsageError(f"cannot be read: {exc.strerror or exc}", file=args.file) from None
    sys.stdout.buffer.write(textconv(data, args.file).encode("utf-8", errors="surrogateescape"))
    sys.stdout.flush()
    return EXIT_OK


def _merge_driver(group: Registrar) -> None:
    p = group.add(
        "merge-driver",
        cmd_merge_driver,
        "merge a planning file field by field (git's merge.planstate.driver runs this: %%O %%A %%B %%L %%P)",
        json=False,
        by=False,
    )
    p.add_argument("base", metavar="BASE", help="the common ancestor's version (%%O)")
    p.add_argument("ours", metavar="OURS", help="our version; the result is written here (%%A)")
    p.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")
    p.add_argument(
        "marker_size", nargs="?", type=int, default=7, metavar="SIZE", help="conflict marker length (%%L, default 7)"
    )
    p.add_argument("path", nargs="?", default=None, metavar="PATH", help="the file's path in the repository (%%P)")
    p.add_argument("--ours-label", default="ours", metavar="LABEL", help="label of our side in conflict markers")
    p.add_argument("--theirs-label", default="theirs", metavar="LABEL", help="label of their side in conflict markers")


def cmd_merge_driver(args: argparse.Namespace) -> int:
    """Merge one planning file three ways, field by field; exit 1 (with conflict markers) on a true conflict."""
    from planstate.vcs.driver import merge_driver

    return merge_driver(
        args.base,
        args.ours,
        args.theirs,
        marker_size=args.marker_size,
        path=args.path,
        ours_label=args.ours_label,
        theirs_label=args.theirs_label,
    )


def _install(group: Registrar) -> None:
    group.add(
        "install",
        cmd_install,
        "configure this clone: .gitattributes lines for .planning/ and the git config for the merge driver and diff",
        by=False,
    )


def cmd_install(args: argparse.Namespace) -> int:
    """Write the .gitattributes lines and this clone's git config for the merge driver and the textconv."""
    report = workspace(args).git_install()
    if args.json:
        reply(report.to_dict())
    else:
        out(report.to_text())
    return EXIT_OK


def _uninstall(group: Registrar) -> None:
    group.add("uninstall", cmd_uninstall, "remove what `planstate git install` wrote", by=False)


def cmd_uninstall(args: argparse.Namespace) -> int:
    """Remove what `planstate git install` wrote, and nothing else."""
    report = workspace(args).git_uninstall()
    if args.json:
        reply(report.to_dict())
    else:
        out(report.to_text())
    return EXIT_OK


def _status(group: Registrar) -> None:
    group.add(
        "status",
        cmd_status,
        "whether this clone is installed, and whether the configured commands run planstate from a plain shell",
        by=False,
    )


def cmd_status(args: argparse.Namespace) -> int:
    """Report what `install` wrote and whether git can run it from any shell; exit 1 when something is wrong."""
    found = workspace(args).git_status()
    if args.json:
        reply(found.to_dict())
    else:
        out(found.to_text())
    return EXIT_FINDINGS if found.problems else EXIT_OK
