"""`planstate completion SHELL`: a completion script for bash, zsh or fish; `planstate __complete`: what it offers.

The scripts are small: each asks `planstate __complete -- WORDS…` what may follow the command line typed so far, and
that command finds it in the parser the commands are built with: subcommands, options, an argument's choices (schema
kinds, agent names, shells), and the values of the arguments marked with `completes` (cli/parser.py) from the
workspace: record ids from a listing of their folder's names (none is read), initiative slugs, phase numbers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from planstate.cli.output import out
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK

SHELLS = ("bash", "zsh", "fish")


def register(cli: Registrar) -> None:
    """Add `completion` and `__complete` (its name, as cobra's, is no word a user types: `complete` is a verb)."""
    p = cli.add(
        "completion",
        cmd_completion,
        "print a shell completion script (commands, options and their values: ids, slugs, phases)",
        json=False,
        by=False,
        examples=[
            "planstate completion bash > ~/.local/share/bash-completion/completions/planstate",
            "planstate completion zsh > ~/.zfunc/_planstate",
            "planstate completion fish > ~/.config/fish/completions/planstate.fish",
        ],
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p = cli.add(
        "__complete",
        cmd_complete,
        "print what may complete the last of WORDS, one per line (the completion scripts call it)",
        json=False,
        by=False,
        examples=["planstate __complete -- planstate decision show dec-"],
    )
    p.add_argument("words", nargs="*", metavar="WORD", help="the command line so far, `planstate` to the word typed")


def cmd_completion(args: argparse.Namespace) -> int:
    """Print the completion script for a shell."""
    out({"bash": BASH, "zsh": ZSH, "fish": FISH}[args.shell].rstrip("\n"))
    return EXIT_OK


def cmd_complete(args: argparse.Namespace) -> int:
    """Print the words that may complete the command line `args.words`, one per line."""
    offered = candidates(args.words)
    if offered:
        out("\n".join(offered))
    return EXIT_OK


# ---------------------------------------------------------------------------- what may follow a command line


def candidates(words: list[str]) -> list[str]:
    """The words that may complete the last of `words` (the program, then the words typed, the last one partly)."""
    from planstate.cli.commands import COMMANDS
    from planstate.cli.main import _command_name, build_parser

    if len(words) < 2:
        return []
    typed, current = words[1:-1], words[-1]
    name = _command_name(typed)
    parser = build_parser(only=name if name in COMMANDS else None)
    pending: argparse.Action | None = None  # an option whose value comes next
    given: dict[str, str] = {}  # --dir and --initiative as typed: where the values of ids and phases come from
    positionals = 0
    for word in typed:
        if pending is not None:
            given[pending.dest] = word
            pending = None
        elif word.startswith("-"):
            option, equals, value = word.partition("=")
            action = parser._option_string_actions.get(option)
            if action is not None and equals:
                given[action.dest] = value
            elif action is not None and action.nargs != 0:
                pending = action
        elif (chosen := _subcommands(parser).get(word)) is not None:
            parser, positionals = chosen, 0
        else:
            positionals += 1
    if pending is not None:
        offered = _values(pending, given)
    elif current.startswith("-"):
        offered = _options(parser)
    elif subcommands := _subcommands(parser):
        offered = [word for word in subcommands if not word.startswith("__")]  # `__complete` is the scripts' own
    else:
        argument = _positional(parser, positionals)
        valued = argument is not None and (argument.choices is not None or hasattr(argument, "completes"))
        offered = _values(argument, given) if argument is not None and valued else _options(parser)
    return [word for word in offered if word.startswith(current)]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of a command (or the commands of the top parser), by name; none for a plain command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """The long options of a command, its common ones included."""
    return [option for action in parser._actions for option in action.option_strings if option.startswith("--")]


def _positional(parser: argparse.ArgumentParser, index: int) -> argparse.Action | None:
    """The positional argument that the word after `index` others fills, if any (a repeated last one fills all)."""
    found = [action for action in parser._actions if not action.option_strings]
    if index < len(found):
        return found[index]
    last = found[-1] if found else None
    return last if last is not None and last.nargs in ("*", "+", argparse.REMAINDER) else None


def _values(action: argparse.Action, given: dict[str, str]) -> list[str]:
    """The values an argument takes: its choices, else those of its source in the workspace (none when the workspace
    cannot be found or read: completion stays silent, the command itself will say what is wrong)."""
    if action.choices is not None:
        return [str(choice) for choice in action.choices]
    source = getattr(action, "completes", None)
    if source is None:
        return []
    from planstate.cli.parser import workspace
    from planstate.core.errors import PlanstateError

    try:
        return SOURCES[source](workspace(argparse.Namespace(**given)))
    except (PlanstateError, OSError):
        return []


def _record_ids(kind: str) -> Callable[[Any], list[str]]:
    """The source of the ids of records of `kind`: named by their files in the initiative's folder (none is read)."""

    def ids(ws: Any) -> list[str]:
        from planstate.store.recordfiles import named_ids

        return named_ids(ws.target.folder(kind))

    return ids


def _slugs(ws: Any) -> list[str]:
    """The slugs of every initiative, archived ones too."""
    return [row.initiative for row in ws.initiative.list(all=True).initiatives]


def _phases(ws: Any) -> list[str]:
    """The numbers of the target initiative's phases (none when its STATE.md cannot be read)."""
    from planstate.ops.records import known_phases

    return [str(number) for number in known_phases(ws.ctx) or ()]


# What the arguments marked with `completes(action, SOURCE)` complete from.
SOURCES: dict[str, Callable[[Any], list[str]]] = {
    "decision": _record_ids("decision"),
    "blocker": _record_ids("blocker"),
    "session": _record_ids("session"),
    "task": _record_ids("task"),
    "initiative": _slugs,
    "phase": _phases,
}

# ---------------------------------------------------------------------------- the scripts

# Each passes the command line up to the word being completed to the planstate that is being completed (the word the
# user typed for it: `planstate` on PATH, or a path such as .venv/bin/planstate).
BASH = """# planstate completion for bash: `source <(planstate completion bash)`
_planstate() {
  local IFS=$'\\n'
  COMPREPLY=($("${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null))
}
complete -o default -F _planstate planstate
"""

ZSH = (
    "#compdef planstate\n# planstate completion for zsh: the bash function, through bashcompinit\n"
    "autoload -U +X bashcompinit && bashcompinit\n" + BASH.split("\n", 1)[1]
)

FISH = """# planstate completion for fish
function __planstate_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    $words[1] __complete -- $words "$current" 2>/dev/null
end
complete -c planstate -f -a '(__planstate_complete)'
"""
