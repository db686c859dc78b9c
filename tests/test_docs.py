"""Docs that tests check: the format spec's examples and tables, the CLI reference, the README."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import planstate_command

from planstate.cli.main import build_parser
from planstate.core.errors import EXIT_CONFLICT, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from planstate.model.validation import problems_for
from planstate.text.document import Document

REPO = Path(__file__).resolve().parent.parent
FORMAT = (REPO / "docs" / "format.md").read_text(encoding="utf-8")
CLI = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```markdown\n(.*?)\n```\n", re.DOTALL)


def examples() -> list[tuple[str, str]]:
    """Every (kind, text) example block of docs/format.md."""
    return [(m.group(1), m.group(2) + "\n") for m in EXAMPLE.finditer(FORMAT)]


def test_format_has_one_example_of_each_file_kind() -> None:
    assert sorted(kind for kind, _ in examples()) == ["blocker", "decision", "session", "state", "task"]


@pytest.mark.parametrize(("kind", "text"), examples(), ids=[k for k, _ in examples()])
def test_format_examples_validate(kind: str, text: str) -> None:
    doc = Document.from_bytes(text.encode("utf-8"), f"docs/format.md example {kind}")
    assert doc.to_bytes() == text.encode("utf-8")
    assert problems_for(kind, doc.data) == []


def test_format_field_tables_match_the_models() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "docgen.py"), "--check"], capture_output=True)
    assert done.returncode == 0, done.stdout.decode()


def test_format_covers_every_lifecycle_state() -> None:
    from planstate.model.kinds import LIFECYCLE_STATES

    for state in LIFECYCLE_STATES:
        assert f"| `{state}` |" in FORMAT


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands() -> list[str]:
    """Every command of the CLI, with groups spelled out (`decision add`, not `decision`)."""
    out = []
    for name, sub in _subcommands(build_parser()).items():
        nested = _subcommands(sub)
        out.extend(f"{name} {child}" for child in nested) if nested else out.append(name)
    return sorted(out)


@pytest.mark.parametrize("name", commands())
def test_every_command_is_documented(name: str) -> None:
    assert f"### planstate {name}\n" in CLI


def test_every_documented_command_exists() -> None:
    documented = re.findall(r"^### planstate (\S+(?: \S+)?)$", CLI, re.MULTILINE)
    assert sorted(documented) == commands()


def test_exit_codes_are_documented() -> None:
    for code in (EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_CONFLICT, 4):
        assert re.search(rf"^\| {code} \|", CLI, re.MULTILINE), code


def test_readme_starts_with_a_two_command_quickstart() -> None:
    assert README.split("\n## ")[1].startswith("Quickstart")
    block = re.search(r"## Quickstart\n.*?```\w*\n(.*?)```", README, re.DOTALL)
    assert block is not None
    lines = [ln for ln in block.group(1).splitlines() if ln.strip()]
    assert lines == ["make demo", "make test"]


def test_ci_runs_the_readme_test_command() -> None:
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python block of README.md runs as written, in an empty folder, and prints what it says."""
    import contextlib
    import io

    block = re.search(r"From Python.*?```python\n(.*?)```", README, re.DOTALL)
    assert block is not None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLANSTATE_ACTOR", "tester")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.group(1), "README.md", "exec"), {})
    assert printed.getvalue() == "paused 50\n"
    assert (tmp_path / ".planning" / "STATE.md").is_file()


# ---------------------------------------------------------------------------- console examples, run as written

CONSOLE = re.compile(r"```console\n(.*?)```", re.DOTALL)
RECORD_ID = re.compile(r"\b(dec|blk|ses|tsk)-[0-9a-hjkmnp-tv-z]{12}\b")


def console_examples(text: str) -> list[tuple[str, str]]:
    """Every (command, output) of the ```console blocks of a document, in order: a command is a `$ ` line and the
    lines it continues with a backslash, its output the lines up to the next command (blank lines at its end left
    out)."""
    found: list[tuple[str, str]] = []
    for block in CONSOLE.findall(text):
        lines = block.splitlines()
        at = 0
        while at < len(lines):
            assert lines[at].startswith("$ "), f"not a command: {lines[at]!r}"
            command = [lines[at][2:]]
            while command[-1].endswith("\\"):
                at += 1
                command.append(lines[at])
            at += 1
            output: list[str] = []
            while at < len(lines) and not lines[at].startswith("$ "):
                output.append(lines[at])
                at += 1
            found.append(("\n".join(command), "\n".join(output).rstrip("\n")))
    return found


def numbered_ids(texts: list[str]) -> list[str]:
    """`texts` with each record id made a name by the order it first appears in them (`dec-1`, `ses-1`): ids are
    made of the time and chance, so a document shows ids that no run makes again."""
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        kind = match.group(1)
        if match.group(0) not in names:
            names[match.group(0)] = f"{kind}-{sum(1 for n in names.values() if n.startswith(kind)) + 1}"
        return names[match.group(0)]

    return [RECORD_ID.sub(name, text) for text in texts]


def replay(examples: list[tuple[str, str]], folder: Path, clock: dict[str, str]) -> list[str]:
    """What each command of `examples` prints (stdout and stderr, in the order a terminal shows them) when they run
    one after the other in one `sh`, in `folder`, with `planstate` on PATH as in an activated venv; `clock` says what
    time it is from the first command that starts with each key on (PLANSTATE_NOW, the clock seam)."""
    mark = "@@@ planstate docs example @@@"
    # the venv's planstate, as if on PATH; stderr where a terminal shows it, beside stdout
    script = [f'planstate() {{ {shlex.join(planstate_command())} "$@"; }}', "exec 2>&1"]
    for command, _output in examples:
        now = next((when for start, when in clock.items() if command.startswith(start)), None)
        if now is not None:
            script.append(f"export PLANSTATE_NOW={now}")
        script += [f"echo '{mark}'", command]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "PLANSTATE_ACTOR": "alice", "NO_COLOR": "1"}
    env["PYTHONUNBUFFERED"] = "1"  # a terminal's order of stdout and stderr lines
    done = subprocess.run(["sh", "-c", "\n".join(script)], cwd=folder, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    outputs = done.stdout.split(mark + "\n")[1:]
    assert len(outputs) == len(examples), done.stdout
    return [output.rstrip("\n") for output in outputs]


def assert_examples_run_as_shown(text: str, folder: Path, clock: dict[str, str]) -> None:
    """The console examples of `text` print what it shows, record ids aside (see `numbered_ids`)."""
    examples = console_examples(text)
    assert examples
    real = replay(examples, folder, clock)
    shown = numbered_ids([output for _command, output in examples])
    for (command, _output), expected, printed in zip(examples, shown, numbered_ids(real), strict=True):
        assert printed == expected, f"$ {command}"


README_CLOCK = {  # when each step of the README's story happens
    "planstate init": "2026-11-20T09:00:00Z",
    "eval": "2026-11-20T09:10:00Z",
    "planstate phase complete": "2026-11-20T11:10:00Z",
    "planstate session end": "2026-11-20T12:40:00Z",
    "planstate resume": "2026-11-22T15:40:00Z",
}


def test_readme_console_examples_print_what_they_show(tmp_path: Path) -> None:
    """README.md's story, run command after command in an empty folder, prints what the README shows."""
    story = README.split("\n## What it does\n", 1)[1].split("\n## ", 1)[0]
    assert_examples_run_as_shown(story, tmp_path, README_CLOCK)


def test_cli_reference_init_example_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/cli.md's `init` example, run in an empty folder, prints what it shows."""
    section = CLI.split("\n### planstate init\n", 1)[1].split("\n### ", 1)[0]
    assert_examples_run_as_shown(section, tmp_path, {"planstate": "2026-11-20T09:00:00Z"})
