"""Symlinks and special files in every folder planstate reads or writes: a write never lands outside the
workspace, and a read reports what it cannot use instead of skipping it or hanging on it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import Run

CREATES = {
    "decisions": ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
    "blockers": ("blocker", "add", "--description", "x"),
    "sessions": ("session", "start", "--agent", "a"),
}


@pytest.mark.parametrize("folder", sorted(CREATES))
def test_a_record_folder_symlinked_out_of_the_workspace_is_never_written(
    run: Run, project: Path, tmp_path: Path, folder: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planning = project / ".planning"
    shutil.rmtree(planning / folder)
    (planning / folder).symlink_to(elsewhere)
    done = run(*CREATES[folder], cwd=project, timeout=30)
    assert done.returncode == 2
    assert f".planning/{folder}: {folder} is a symlink to" in done.stderr and "outside the workspace" in done.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("folder", sorted(CREATES))
def test_a_record_folder_symlinked_inside_the_workspace_works(run: Run, project: Path, folder: str) -> None:
    planning = project / ".planning"
    moved = planning / f"{folder}-real"
    (planning / folder).rename(moved)
    (planning / folder).symlink_to(moved)
    done = run(*CREATES[folder], cwd=project, timeout=30)
    assert done.returncode == 0, done.stderr
    assert len(list(moved.glob("*.md"))) == 1


@pytest.mark.parametrize("what", ["fifo", "folder"])
@pytest.mark.parametrize("folder", sorted(CREATES))
def test_a_special_file_named_like_a_record_is_reported(run: Run, project: Path, folder: str, what: str) -> None:
    prefix = {"decisions": "dec", "blockers": "blk", "sessions": "ses"}[folder]
    odd = project / ".planning" / folder / f"{prefix}-x-odd.md"
    if what == "fifo":
        os.mkfifo(odd)
    else:
        odd.mkdir()
    shown = f".planning/{folder}/{odd.name}"
    validate = run("validate", cwd=project, timeout=30)  # a hang on the FIFO fails with TimeoutExpired
    assert validate.returncode == 1
    assert f"{shown}: not a regular file" in validate.stdout
    check = run("check", cwd=project, timeout=30)
    assert check.returncode == 1
    assert f"{shown}: error parse-error: not a regular file" in check.stdout
    listing = run(folder.removesuffix("s"), "list", cwd=project, timeout=30)
    assert listing.returncode == 0
    assert f"skipped {shown}: not a regular file" in listing.stderr
