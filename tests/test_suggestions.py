"""A mistyped command, subcommand or field path is answered with the closest known one, in one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run

from planstate import __version__


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("stauts",), "unknown command 'stauts'; did you mean 'status'? (see `planstate --help`)"),
        (("decison", "list"), "unknown command 'decison'; did you mean 'decision'?"),
        (("decision", "lst"), "decision: unknown subcommand 'lst'; did you mean 'list'?"),
        (("zzzz",), "unknown command 'zzzz' (see `planstate --help`)"),
        (("position", "--status", "don"), "invalid choice: 'don'; did you mean 'done'? (choose from"),
        (("get", "nxt_action"), "no value at nxt_action; did you mean 'next_action'?"),
        (("get", "position.phse"), "no value at position.phse; did you mean 'position.phase'?"),
        (("set", "nxt_action", "x"), "nxt_action: is not a field of STATE.md; did you mean 'next_action'?"),
        (("set", "resume_context.files_modifed", "[a]"), "did you mean 'resume_context.files_modified'?"),
        (("unset", "position.tsk"), "did you mean 'position.task'?"),
        (("set", "zzz", "1"), "zzz: is not a field of STATE.md (see"),
    ],
)
def test_a_typo_gets_the_closest_known_name(run: Run, project: Path, arguments: tuple[str, ...], words: str) -> None:
    before = (project / ".planning" / "STATE.md").read_bytes()
    result = run(*arguments, cwd=project)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert words in line
    assert (project / ".planning" / "STATE.md").read_bytes() == before


@pytest.mark.parametrize("option", ["-V", "--version"])
def test_version(run: Run, option: str) -> None:
    result = run(option)
    assert (result.returncode, result.stdout) == (0, f"planstate {__version__}\n")
