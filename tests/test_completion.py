"""`planstate completion SHELL` prints a script that completes commands, options and their values (record ids,
initiative slugs, phase numbers, choices), asking `planstate __complete`; tried in real bash."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Run, json_data, ok, planstate_command

from planstate.agents.spec import NAMES
from planstate.model.kinds import KINDS

DECIDE = ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r")
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")


@pytest.fixture
def script(run: Run, tmp_path: Path) -> Path:
    """The bash completion script, as `planstate completion bash` prints it."""
    path = tmp_path / "planstate.bash"
    path.write_text(ok(run("completion", "bash")).stdout)
    return path


def complete(script: Path, *words: str, cwd: Path | None = None, program: str = "planstate") -> list[str]:
    """What bash offers for the last of `words` (the command line typed after `program`) with the script sourced, in
    a shell whose PATH finds this planstate and nothing else of the venv, as in a terminal where it is installed."""
    line = " ".join(f"'{w}'" for w in (program, *words))
    shown = "printf '%s\\n' \"${COMPREPLY[@]}\""
    program_text = f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _planstate; {shown}"
    env = {"PATH": f"{Path(planstate_command()[0]).parent}:/usr/bin:/bin", "HOME": str(script.parent)}
    done = subprocess.run(
        ["bash", "--norc", "-c", program_text], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.split()


@needs_bash
def test_bash_completes_commands_subcommands_and_options(script: Path, tmp_path: Path) -> None:
    assert complete(script, "dec", cwd=tmp_path) == ["decision"]
    assert complete(script, "st", cwd=tmp_path) == ["status"]
    assert complete(script, "--by", "x", "decision", "s", cwd=tmp_path) == ["show", "supersede"]
    assert complete(script, "decision", "add", "--alt", cwd=tmp_path) == ["--alternative"]
    assert complete(script, "phase", "complete", "2", "--ev", cwd=tmp_path) == ["--evidence"]
    assert "--json" in complete(script, "status", "--", cwd=tmp_path)
    assert "__complete" not in complete(script, "", cwd=tmp_path)  # the scripts' own entry point is not offered
    assert complete(script, "records", "archive", "--kind", "b", cwd=tmp_path) == ["blocker"]


@needs_bash
def test_bash_completes_kinds_and_agents_from_what_the_commands_accept(script: Path, tmp_path: Path) -> None:
    assert complete(script, "schema", "", cwd=tmp_path) == list(KINDS)
    assert complete(script, "hooks", "install", "", cwd=tmp_path) == list(NAMES)
    assert complete(script, "hooks", "uninstall", "c", cwd=tmp_path) == [n for n in NAMES if n.startswith("c")]
    assert complete(script, "hooks", "run", "Stop", "--agent", "", cwd=tmp_path) == list(NAMES)
    assert complete(script, "completion", "", cwd=tmp_path) == ["bash", "zsh", "fish"]


@needs_bash
def test_bash_completes_record_ids_slugs_and_phases_from_the_workspace(
    run: Run, script: Path, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    ok(run("init", "--title", "Other", cwd=other))
    decision = json_data(
        run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", "--json", cwd=other)
    )
    blocker = json_data(ok(run("blocker", "add", "--description", "Waiting for keys", "--json", cwd=project)))
    session = json_data(run("session", "start", "--agent", "worker-1", "--json", cwd=project))
    assert complete(script, "decision", "show", "", cwd=project) == []  # the decision is in the other workspace
    ok(run(*DECIDE, cwd=project))
    (dec,) = complete(script, "decision", "show", "", cwd=project)
    assert dec.startswith("dec-") and complete(script, "decision", "accept", dec[:6], cwd=project) == [dec]
    assert complete(script, "--dir", str(other), "decision", "show", "", cwd=project) == [decision["id"]]
    assert complete(script, "decision", "add", "--supersedes", "", cwd=project) == [dec]
    assert complete(script, "blocker", "resolve", "", cwd=project) == [blocker["id"]]
    assert complete(script, "session", "end", "--session", "", cwd=project) == [session["id"]]
    assert complete(script, "session", "show", "ses", cwd=project) == [session["id"]]
    assert complete(script, "phase", "complete", "", cwd=project) == ["1", "2", "3"]
    assert complete(script, "phase", "move", "3", "--to", "", cwd=project) == ["1", "2", "3"]
    assert complete(script, "position", "--phase", "", cwd=project) == ["1", "2", "3"]
    ok(run("initiative", "new", "billing", "--phase", "Design", cwd=project))
    assert complete(script, "initiative", "switch", "", cwd=project) == ["demo", "billing"]
    assert complete(script, "--initiative", "b", cwd=project) == ["billing"]
    assert complete(script, "--initiative", "billing", "phase", "start", "", cwd=project) == ["1"]
    assert complete(script, "--initiative", "billing", "decision", "show", "", cwd=project) == []


@needs_bash
def test_completion_outside_a_workspace_offers_nothing_and_says_nothing(script: Path, tmp_path: Path) -> None:
    """No workspace, or one that cannot be read: no word offered and nothing printed at the prompt (bash then
    completes file names, `-o default`); the command itself says what is wrong when it runs."""
    assert complete(script, "decision", "show", "", cwd=tmp_path) == []
    assert complete(script, "phase", "start", "", cwd=tmp_path) == []
    broken = tmp_path / "broken"
    (broken / ".planning").mkdir(parents=True)
    (broken / ".planning" / "STATE.md").write_text("---\nnot: [closed\n---\n")
    assert complete(script, "phase", "start", "", cwd=broken) == []


@needs_bash
def test_the_script_calls_the_planstate_being_completed(script: Path, tmp_path: Path) -> None:
    """A planstate typed by its path (`.venv/bin/planstate`, not on PATH) completes through itself."""
    line = f"source {script}; COMP_WORDS=({planstate_command()[0]} dec); COMP_CWORD=1; _planstate; echo $COMPREPLY"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(["bash", "--norc", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.stdout, done.stderr) == ("decision\n", "")


def test_complete_answers_through_the_cli(run: Run, project: Path) -> None:
    """`planstate __complete -- WORDS` prints one word per line; the scripts are thin wrappers of it."""
    assert ok(run("__complete", "--", "planstate", "phase", "skip", "", cwd=project)).stdout == "1\n2\n3\n"
    assert ok(run("__complete", "--", "planstate", "decision", "sh", cwd=project)).stdout == "show\n"
    assert ok(run("__complete", "--", "planstate", "decision", "show", "x", cwd=project)).stdout == ""


def test_zsh_and_fish_scripts_ask_planstate(run: Run) -> None:
    zsh = ok(run("completion", "zsh")).stdout
    assert zsh.startswith("#compdef planstate\n") and "bashcompinit" in zsh
    assert '"${COMP_WORDS[0]}" __complete -- "${COMP_WORDS[@]:0:COMP_CWORD+1}"' in zsh
    fish = ok(run("completion", "fish")).stdout
    assert '$words[1] __complete -- $words "$current"' in fish
    assert "complete -c planstate -f -a '(__planstate_complete)'" in fish
    for shell in ("zsh", "fish"):
        if shutil.which(shell):
            checked = subprocess.run([shell, "-n"], input=run("completion", shell).stdout, text=True, timeout=60)
            assert checked.returncode == 0


def test_an_unknown_shell_is_refused(run: Run) -> None:
    result = run("completion", "tcsh")
    assert result.returncode == 2
    assert "invalid choice: 'tcsh'" in result.stderr
