"""`check --fix` leaves a file alone while an editor has it open: saving there would undo the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Run, ok, refused, state_file


@pytest.mark.parametrize("lock", [".STATE.md.swp", ".STATE.md.swo", ".#STATE.md"], ids=["vim", "vim-second", "emacs"])
def test_check_fix_leaves_a_file_open_in_an_editor_alone(run: Run, project: Path, lock: str) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    held = path.with_name(lock)
    if lock.startswith(".#"):
        os.symlink("tester@host.1234:1700000000", held)  # emacs's lock is a dangling link naming its owner
    else:
        held.write_bytes(b"b0VIM 9.0")
    before = path.read_bytes()
    result = run("check", "--fix", cwd=project)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line == (
        f"planstate: could not fix: .planning/STATE.md: not fixed while an editor has it open ({lock}): "
        "saving there would undo the fix; close it, then check again"
    )
    assert "error derived-mismatch" in result.stdout
    assert path.read_bytes() == before
    held.unlink()
    fixed = run("check", "--fix", cwd=project)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "  percent: 0\n" in path.read_text()


def test_a_swap_file_of_another_file_does_not_stop_the_fix(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    (path.parent / ".notes.md.swp").write_bytes(b"b0VIM 9.0")
    assert run("check", "--fix", cwd=project).returncode == 0


@pytest.mark.parametrize("lock", [".STATE.md.swp", ".#STATE.md"], ids=["vim", "emacs"])
def test_next_follows_the_rule_of_check_fix_while_an_editor_has_state_md_open(
    run: Run, project: Path, lock: str
) -> None:
    path = state_file(project)
    held = path.with_name(lock)
    if lock.startswith(".#"):
        os.symlink("tester@host.1234:1700000000", held)
    else:
        held.write_bytes(b"b0VIM 9.0")
    before = path.read_bytes()
    line = refused(run("next", "Write the index", cwd=project))
    assert line == (
        f"planstate: .planning/STATE.md: not written while an editor has it open ({lock}): "
        "saving there would undo this change; close it, then run it again"
    )
    assert path.read_bytes() == before
    assert ok(run("next", cwd=project)).stdout == "Start phase 1: Design\n"  # reading it is no write
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    fixing = run("check", "--fix", cwd=project)  # the same rule, in the same words
    assert f"not fixed while an editor has it open ({lock}): saving there would undo the fix" in fixing.stderr
    held.unlink()
    ok(run("next", "Write the index", cwd=project))
    assert ok(run("next", cwd=project)).stdout == "Write the index\n"
