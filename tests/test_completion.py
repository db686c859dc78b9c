"""`planstate completion SHELL` prints a script that completes commands, subcommands and options, tried in real bash."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Run


def complete(script: Path, *words: str) -> list[str]:
    """What bash offers for the last of `words` (the command line typed so far) with the script sourced."""
    line = " ".join(f"'{w}'" for w in words)
    shown = "printf '%s\\n' \"${COMPREPLY[@]}\""
    program = f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _planstate; {shown}"
    done = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_subcommands_and_options(run: Run, tmp_path: Path) -> None:
    script = tmp_path / "planstate.bash"
    result = run("completion", "bash")
    assert result.returncode == 0, result.stderr
    script.write_text(result.stdout)
    assert complete(script, "planstate", "dec") == ["decision"]
    assert complete(script, "planstate", "st") == ["status"]
    assert complete(script, "planstate", "--by", "x", "decision", "s") == ["show", "supersede"]
    assert complete(script, "planstate", "decision", "add", "--alt") == ["--alternative"]
    assert complete(script, "planstate", "phase", "complete", "2", "--ev") == ["--evidence"]
    assert "--json" in complete(script, "planstate", "status", "--")


def test_zsh_and_fish_scripts_cover_every_command(run: Run) -> None:
    zsh = run("completion", "zsh").stdout
    assert zsh.startswith("#compdef planstate\n") and "bashcompinit" in zsh and "'decision add')" in zsh
    fish = run("completion", "fish").stdout
    assert "complete -c planstate -n __fish_use_subcommand -a decision" in fish
    assert "-n '__fish_seen_subcommand_from decision && __fish_seen_subcommand_from add' -l alternative" in fish
    for shell in ("zsh", "fish"):
        if shutil.which(shell):
            checked = subprocess.run([shell, "-n"], input=run("completion", shell).stdout, text=True, timeout=60)
            assert checked.returncode == 0


def test_an_unknown_shell_is_refused(run: Run) -> None:
    result = run("completion", "tcsh")
    assert result.returncode == 2
    assert "invalid choice: 'tcsh'" in result.stderr
