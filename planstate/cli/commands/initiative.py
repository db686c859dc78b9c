"""`planstate initiative new|list|switch`: several initiatives in one workspace, at most one of them active."""

from __future__ import annotations

import argparse

from planstate.cli.output import out, reply
from planstate.cli.parser import Registrar, completes, workspace
from planstate.cli.results import transition_line
from planstate.core.errors import EXIT_OK


def register(cli: Registrar) -> None:
    """Add the `initiative` group: new, list, switch."""
    group = cli.group("initiative", "create, list and switch initiatives")
    for subcommand in (_new, _list, _switch):
        subcommand(group)


def _new(group: Registrar) -> None:
    p = group.add(
        "new",
        cmd_new,
        "create an initiative in .planning/initiatives/SLUG/",
        examples=[
            "planstate initiative new billing --title 'Billing v2' --phase Design --phase Build --switch",
            "planstate initiative new --title 'Billing v2'",
        ],
    )
    p.add_argument(
        "slug", metavar="SLUG", nargs="?", help="its id: lowercase letters, digits and '-' (default: from --title)"
    )
    p.add_argument("--title", help="its title (default: from the slug)")
    p.add_argument("--phase", action="append", metavar="NAME", help="a phase name; repeat in order")
    p.add_argument("--first-phase", type=int, choices=(0, 1), default=1, help="number of the first phase (0 or 1)")
    p.add_argument("--switch", action="store_true", help="make it active now, pausing the active one")


def cmd_new(args: argparse.Namespace) -> int:
    """Create an initiative in .planning/initiatives/SLUG/."""
    result = workspace(args).initiative.new(
        args.slug, title=args.title, phases=args.phase or [], first_phase=args.first_phase, switch=args.switch
    )
    if args.json:
        reply(result.to_dict())
        return EXIT_OK
    for paused in result.paused:
        out(transition_line(paused))
    out(f"Created {result.dir}/ for {result.title!r} (initiative {result.initiative}, {result.state}).")
    return EXIT_OK


def _list(group: Registrar) -> None:
    p = group.add("list", cmd_list, "list initiatives; * marks the one commands act on")
    p.add_argument("--all", action="store_true", help="include archived initiatives")


def cmd_list(args: argparse.Namespace) -> int:
    """List the initiatives; `*` marks the one commands act on."""
    from planstate.model.kinds import to_json

    listing = workspace(args).initiative.list(all=args.all)
    if args.json:
        reply(listing.to_dict())
        return EXIT_OK
    rows = listing.initiatives
    slug_width = max((len(r.initiative) for r in rows), default=0)
    state_width = max((len(r.state) for r in rows), default=0)
    title_width = max((len(r.title) for r in rows), default=0)
    for r in rows:
        mark = "*" if r.current else " "
        since = f"since {to_json(r.since)}" if r.since else ""
        line = f"{mark} {r.initiative:<{slug_width}}  {r.state:<{state_width}}  {r.title:<{title_width}}  {since}"
        out(line.rstrip() + (f"  ({r.problem})" if r.problem else ""))
    if listing.hidden:
        plural = "s" if listing.hidden > 1 else ""
        out(f"({listing.hidden} archived initiative{plural} hidden; --all lists {'them' if plural else 'it'})")
    return EXIT_OK


def _switch(group: Registrar) -> None:
    p = group.add("switch", cmd_switch, "pause the active initiative and resume SLUG, in one transaction")
    completes(p.add_argument("slug", metavar="SLUG", help="the initiative to make active"), "initiative")
    p.add_argument("--reason", metavar="R", help="why (kept in both initiatives' history)")


def cmd_switch(args: argparse.Namespace) -> int:
    """Pause the active initiative and make SLUG active."""
    result = workspace(args).initiative.switch(args.slug, reason=args.reason)
    if args.json:
        reply(result.to_dict())
    elif result.already_active:
        out(f"{result.initiative}: already active")
    else:
        for moved in result.transitions:
            out(transition_line(moved))
    return EXIT_OK
