"""`planstate hooks …`: install agent hooks that brief every session (Claude Code, Codex, Gemini; Cursor gets a
rule), remove them, inspect them, and `hooks run`, the one entry point every installed hook calls."""

from __future__ import annotations

import argparse
import sys

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK

AGENTS = ("claude", "codex", "gemini", "cursor")  # planstate.agents.spec.NAMES, spelled here to keep --help cheap


def register(cli: Registrar) -> None:
    """Add the `hooks` group: install, uninstall, status, run."""
    group = cli.group("hooks", "agent hooks: brief every agent session, heartbeat it and end it")
    for subcommand in (_install, _uninstall, _status, _run):
        subcommand(group)


def _install(group: Registrar) -> None:
    p = group.add(
        "install",
        cmd_install,
        "add planstate's hooks to an agent's settings (Cursor: a rule file), other hooks kept; needs `planstate` "
        "on PATH",
        by=False,
        examples=["planstate hooks install claude", "planstate hooks install codex --dry-run"],
    )
    p.add_argument("agent", choices=AGENTS, metavar="AGENT", help=f"one of {', '.join(AGENTS)}")
    p.add_argument("--global", dest="global_", action="store_true", help="the user's settings, not the project's")
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    p.add_argument(
        "--instructions",
        action="store_true",
        help="also put a short planstate block in CLAUDE.md, AGENTS.md or GEMINI.md (uninstall removes it)",
    )


def cmd_install(args: argparse.Namespace) -> int:
    """Install the hooks of one agent, idempotently."""
    from pathlib import Path

    from planstate.agents.install import install, project_root
    from planstate.core.files import absolute

    root = project_root(absolute(Path.cwd()))
    change = install(args.agent, root, global_=args.global_, dry_run=args.dry_run, instructions=args.instructions)
    if args.json:
        reply(change.to_dict())
    else:
        out(change.to_text())
    return EXIT_OK


def _uninstall(group: Registrar) -> None:
    p = group.add(
        "uninstall",
        cmd_uninstall,
        "remove planstate's hooks from an agent's settings, and nothing else",
        by=False,
        examples=["planstate hooks uninstall claude"],
    )
    p.add_argument("agent", choices=AGENTS, metavar="AGENT", help=f"one of {', '.join(AGENTS)}")
    p.add_argument("--global", dest="global_", action="store_true", help="the user's settings, not the project's")
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")


def cmd_uninstall(args: argparse.Namespace) -> int:
    """Remove the hooks of one agent."""
    from pathlib import Path

    from planstate.agents.install import project_root, uninstall
    from planstate.core.files import absolute

    change = uninstall(args.agent, project_root(absolute(Path.cwd())), global_=args.global_, dry_run=args.dry_run)
    if args.json:
        reply(change.to_dict())
    else:
        out(change.to_text())
    return EXIT_OK


def _status(group: Registrar) -> None:
    group.add(
        "status",
        cmd_status,
        "planstate's hooks in every agent's settings, with duplicates, outdated or untrusted hooks and a `planstate` "
        "not on PATH",
        by=False,
    )


def cmd_status(args: argparse.Namespace) -> int:
    """Report the installed hooks; exit 1 when something is wrong with them."""
    from pathlib import Path

    from planstate.agents.install import project_root, status
    from planstate.core.errors import EXIT_FINDINGS
    from planstate.core.files import absolute

    found = status(project_root(absolute(Path.cwd())))
    if args.json:
        reply(found.to_dict())
    else:
        out(found.to_text())
    return EXIT_FINDINGS if found.problems else EXIT_OK


def _run(group: Registrar) -> None:
    p = group.add(
        "run",
        cmd_run,
        "what an installed hook runs: read the agent's event on stdin, print what the agent expects (always exit 0)",
        json=False,
        by=False,
    )
    p.add_argument("event", metavar="EVENT", help="the agent's name of the event (SessionStart, Stop, …)")
    p.add_argument("--agent", required=True, choices=AGENTS, metavar="AGENT", help=f"one of {', '.join(AGENTS)}")


def cmd_run(args: argparse.Namespace) -> int:
    """Run one hook: never fails, prints only what the agent reads."""
    from planstate.agents.runner import MAX_STDIN, run
    from planstate.agents.spec import agent

    try:
        data = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read(MAX_STDIN + 1)
    except (OSError, ValueError):
        data = b""
    text = run(agent(args.agent), args.event, data)
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
    return EXIT_OK
