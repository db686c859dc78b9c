"""The `planstate` command: parses arguments, calls the Workspace API, prints results, maps errors to exit codes."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from planstate.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, PlanstateError

EXIT_INTERNAL = 4

Handler = Callable[[argparse.Namespace], int]


def _workspace(args: argparse.Namespace) -> Any:
    from planstate.workspace import Workspace

    return Workspace.find(explicit=getattr(args, "dir", None), lock_timeout=getattr(args, "lock_timeout", None))


def _out(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


def _print_changes(args: argparse.Namespace, changes: list[Any], file: str) -> int:
    from planstate.display import dump_json, short

    if args.json:
        _out(dump_json({"file": file, "changed": bool(changes), "changes": [c.to_dict() for c in changes]}))
        return EXIT_OK
    if not changes:
        _out(f"{file}: no change")
    for change in changes:
        new = "(removed)" if change.removed else short(change.new)
        _out(f"{file}: {change.path}: {short(change.old)} → {new}")
    return EXIT_OK


# ---------------------------------------------------------------------------- commands


def cmd_init(args: argparse.Namespace) -> int:
    """Create .planning/ with STATE.md, record folders and a .gitignore."""
    import os

    from planstate.workspace import PLANNING, Workspace, absolute

    project = absolute(getattr(args, "dir", None) or os.environ.get("PLANSTATE_DIR") or ".")
    if project.name == PLANNING:  # --dir names the workspace itself, not its project
        project = project.parent
    ws = Workspace.init(
        project,
        title=args.title,
        phases=args.phase or [],
        first_phase=args.first_phase,
        initiative=args.initiative,
        actor=args.by,
        next_action=args.next,
    )
    state = ws.state()
    if args.json:
        from planstate.display import dump_json

        _out(dump_json({"workspace": str(ws.root), "initiative": state.initiative, "title": state.title}))
    else:
        _out(f"Created {ws.display(ws.root)}/ for {state.title!r} (initiative {state.initiative}).")
        _out("Next: `planstate status` shows where it stands; `planstate set PATH VALUE` changes it.")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Show where the initiative is."""
    from planstate import display

    status = _workspace(args).status()
    if args.json:
        _out(display.dump_json(status))
    elif display.use_rich():
        display.print_status_rich(status)
    else:
        _out(display.status_plain(status))
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    """Print the value at a dotted path of STATE.md's front matter."""
    from planstate.display import dump_json, value_text

    value = _workspace(args).get(args.path)
    _out(dump_json(value) if args.json else value_text(value))
    return EXIT_OK


def cmd_set(args: argparse.Namespace) -> int:
    """Set one or more fields in one transaction."""
    from planstate.models import State
    from planstate.plain import parse_path
    from planstate.schema import lookup
    from planstate.values import from_text

    pairs = args.pairs
    if len(pairs) % 2:
        raise PlanstateError(f"set takes PATH VALUE pairs; {pairs[-1]!r} has no value")
    ws = _workspace(args)
    values: dict[str, Any] = {}
    for path, text in zip(pairs[::2], pairs[1::2], strict=True):
        values[path] = from_text(text, lookup(State, tuple(parse_path(path)))[1])
    changes = ws.set(values)
    return _print_changes(args, changes, ws.display(ws.state_path))


def cmd_append(args: argparse.Namespace) -> int:
    """Append an item to a list field."""
    from planstate.models import State
    from planstate.plain import parse_path
    from planstate.schema import ListOf, lookup
    from planstate.values import from_text

    ws = _workspace(args)
    kind = lookup(State, tuple(parse_path(args.path)))[1]
    item_kind = kind.item if isinstance(kind, ListOf) else None
    changes = ws.append(args.path, from_text(args.value, item_kind))
    return _print_changes(args, changes, ws.display(ws.state_path))


def cmd_unset(args: argparse.Namespace) -> int:
    """Remove an optional field or a list item."""
    ws = _workspace(args)
    changes = ws.unset(args.path)
    return _print_changes(args, changes, ws.display(ws.state_path))


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate every file of the workspace."""
    from planstate.display import dump_json

    count, problems = _workspace(args).validate()
    if args.json:
        _out(dump_json({"ok": not problems, "files": count, "problems": [p.to_dict() for p in problems]}))
    else:
        for problem in problems:
            _out(str(problem))
        if not problems:
            _out(f"{count} file{'s' if count != 1 else ''} valid")
    return EXIT_FINDINGS if problems else EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the JSON Schema of a file kind (or of all kinds)."""
    from planstate.display import dump_json
    from planstate.models import KINDS

    def schema_of(name: str) -> dict[str, Any]:
        model = KINDS[name]
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"planstate {name}",
            **model.json_schema(),
        }

    if args.name:
        _out(dump_json(schema_of(args.name)))
    else:
        _out(dump_json({name: schema_of(name) for name in KINDS}))
    return EXIT_OK


# ---------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr, like every other planstate error."""

    def error(self, message: str) -> NoReturn:
        """Print `planstate: <command>: <message>` and a pointer to --help, then exit 2."""
        command = self.prog.removeprefix("planstate").strip()
        where = f"{command}: " if command else ""
        self.exit(EXIT_USAGE, f"planstate: {where}{message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every command."""
    from planstate import __version__

    common: argparse.ArgumentParser = _Parser(add_help=False)
    common.add_argument(
        "--dir",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="the .planning/ folder or the project that holds it (default: search upward; env PLANSTATE_DIR)",
    )
    common.add_argument(
        "--lock-timeout",
        type=float,
        default=argparse.SUPPRESS,
        metavar="SECONDS",
        help="how long a write waits for the workspace lock (default 10; env PLANSTATE_LOCK_TIMEOUT)",
    )
    json_flag = _Parser(add_help=False)
    json_flag.add_argument("--json", action="store_true", help="print JSON for programs and agents")

    parser: argparse.ArgumentParser = _Parser(
        prog="planstate",
        description="Keep the execution state of software work in plain files under .planning/.",
        epilog="Exit codes: 0 ok, 1 findings, 2 usage/validation/parse error, 3 lock timeout or "
        "concurrent change, 4 internal error. See docs/cli.md.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"planstate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text, parents=[common, *parents])
        p.set_defaults(handler=handler)
        return p

    p = add("init", cmd_init, "create .planning/ with STATE.md, decisions/, blockers/, sessions/", json_flag)
    p.add_argument("--title", help="title of the initiative (default: the folder name)")
    p.add_argument("--phase", action="append", metavar="NAME", help="a phase name; repeat in order")
    p.add_argument("--first-phase", type=int, choices=(0, 1), default=1, help="number of the first phase (0 or 1)")
    p.add_argument("--initiative", metavar="SLUG", help="id of the initiative (default: from the title)")
    p.add_argument("--by", metavar="NAME", help="who is creating it (default: PLANSTATE_ACTOR or $USER)")
    p.add_argument("--next", metavar="TEXT", help="the first next action")

    add("status", cmd_status, "show where the initiative is", json_flag)

    p = add("get", cmd_get, "print the value at a dotted path of STATE.md's front matter", json_flag)
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.task or phases.0.status")

    p = add("set", cmd_set, "set fields of STATE.md (all pairs in one transaction)", json_flag)
    p.add_argument("pairs", nargs="+", metavar="PATH VALUE", help="dotted path and value (read as YAML)")

    p = add("append", cmd_append, "append an item to a list field", json_flag)
    p.add_argument("path", metavar="PATH", help="dotted path of a list, e.g. resume_context.files_modified")
    p.add_argument("value", metavar="VALUE", help="the item (read as YAML)")

    p = add("unset", cmd_unset, "remove an optional field or a list item", json_flag)
    p.add_argument("path", metavar="PATH", help="dotted path, e.g. position.wave")

    add("validate", cmd_validate, "validate every file of the workspace", json_flag)

    p = add("schema", cmd_schema, "print the JSON Schema of a file kind", json_flag)
    p.add_argument("name", nargs="?", choices=("state", "decision", "blocker", "session"), help="file kind")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    _tolerant_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except PlanstateError as exc:
        if getattr(args, "json", False):
            import json

            sys.stderr.write(json.dumps(exc.to_dict(), ensure_ascii=False) + "\n")  # one line, like text errors
        else:
            sys.stderr.write(f"planstate: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("planstate: interrupted\n")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:  # an unexpected error is a bug: say so in one line, keep the trace
        log = _save_traceback()
        sys.stderr.write(f"planstate: internal error: {type(exc).__name__}: {exc} (traceback: {log})\n")
        return EXIT_INTERNAL


def _tolerant_streams() -> None:
    """Never fail on output a terminal's encoding cannot show: escape it (the work is already done)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    """After the reader of stdout went away, point stdout at /dev/null so the exit flush cannot fail."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _save_traceback() -> str:
    """Write the current traceback to a temp file and return its path."""
    import os
    import tempfile
    import traceback

    fd, path = tempfile.mkstemp(prefix="planstate-crash-", suffix=".log")
    with os.fdopen(fd, "w") as handle:
        traceback.print_exc(file=handle)
    return path


if __name__ == "__main__":
    sys.exit(main())
