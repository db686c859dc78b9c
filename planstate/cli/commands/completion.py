"""`planstate completion SHELL`: print a completion script for bash, zsh or fish, made from the commands themselves."""

from __future__ import annotations

import argparse
import shlex

from planstate.cli.output import out
from planstate.cli.parser import Registrar
from planstate.core.errors import EXIT_OK

SHELLS = ("bash", "zsh", "fish")


def register(cli: Registrar) -> None:
    """Add `completion`."""
    p = cli.add(
        "completion",
        cmd_completion,
        "print a shell completion script (commands, subcommands, options)",
        json=False,
        by=False,
        examples=[
            "planstate completion bash > ~/.local/share/bash-completion/completions/planstate",
            "planstate completion zsh > ~/.zfunc/_planstate",
            "planstate completion fish > ~/.config/fish/completions/planstate.fish",
        ],
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def cmd_completion(args: argparse.Namespace) -> int:
    """Print the completion script for a shell."""
    table = _words()
    script = {"bash": _bash, "zsh": _zsh, "fish": _fish}[args.shell](table)
    out(script.rstrip("\n"))
    return EXIT_OK


def _words() -> dict[str, list[str]]:
    """What may follow each command path: "" (the top), "decision", "decision add" … → subcommands and options."""
    from planstate.cli.main import build_parser

    table: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        words: list[str] = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    words.append(name)
                    walk(sub, f"{path} {name}".strip())
            else:
                words.extend(o for o in action.option_strings if o.startswith("--"))
        table[path] = words

    walk(build_parser(), "")
    return table


def _bash(table: dict[str, list[str]]) -> str:
    """A bash completion function: the longest known command path among the words typed so far picks the words."""
    arms = [f"    {shlex.quote(path)}) words={shlex.quote(' '.join(words))} ;;" for path, words in table.items()]
    cases = "\n".join(arms)
    return f"""# planstate completion for bash: `source <(planstate completion bash)`
_planstate() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} path="" word i words
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${{COMP_WORDS[i]}}
    [[ $word == -* ]] && continue
    case "${{path:+$path }}$word" in
{_bash_paths(table)}
    esac
  done
  case "$path" in
{cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _planstate planstate
"""


def _bash_paths(table: dict[str, list[str]]) -> str:
    """The case arms that extend the command path by one typed word when the longer path is a known one."""
    longer = [path for path in table if path]
    return "\n".join(f"      {shlex.quote(path)}) path={shlex.quote(path)} ;;" for path in longer)


def _zsh(table: dict[str, list[str]]) -> str:
    """zsh runs the bash function through bashcompinit."""
    return (
        "#compdef planstate\n# planstate completion for zsh\nautoload -U +X bashcompinit && bashcompinit\n"
        + _bash(table).split("\n", 1)[1]
    )


def _fish(table: dict[str, list[str]]) -> str:
    """fish completions: each word offered after the command path it belongs to."""
    lines = ["# planstate completion for fish", "complete -c planstate -f"]
    for path, words in table.items():
        parts = path.split()
        if not parts:
            condition = "__fish_use_subcommand"
        else:
            condition = " && ".join(f"__fish_seen_subcommand_from {p}" for p in parts)
            children = [w for w in table if w.startswith(path + " ")]
            if children:  # a group: its subcommands only until one is typed
                seen = " ".join(c.split()[-1] for c in children)
                condition += f" && not __fish_seen_subcommand_from {seen}"
        for word in words:
            if word.startswith("--"):
                lines.append(f"complete -c planstate -n {shlex.quote(condition)} -l {word[2:]}")
            else:
                lines.append(f"complete -c planstate -n {shlex.quote(condition)} -a {shlex.quote(word)}")
    return "\n".join(lines) + "\n"
