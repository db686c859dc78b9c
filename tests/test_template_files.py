"""Template overrides are read only as regular files inside the workspace: a repository may commit a symlink to
any file of the machine (or a FIFO) under `.planning/templates/`, and no command may copy what it points at
into STATE.md, hang on it, or crash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Run, state_file

SECRET = "SECRET-4711"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the workspace holding a secret."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


def regions(project: Path) -> Path:
    """The folder of region template overrides."""
    folder = project / ".planning" / "templates" / "regions"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_an_override_symlinked_out_of_the_workspace_is_refused(run: Run, project: Path, outside: Path) -> None:
    (regions(project) / "next.md.j2").symlink_to(outside)
    done = run("set", "next_action", "q", cwd=project, timeout=30)
    assert done.returncode == 0, done.stderr  # the front matter is written; the region is not rendered from it
    assert "outside the workspace" in done.stderr
    assert SECRET not in state_file(project).read_text()
    check = run("check", cwd=project, timeout=30)
    assert check.returncode == 1
    assert "template-error" in check.stdout and "outside the workspace" in check.stdout
    render = run("render", cwd=project, timeout=30)
    assert SECRET not in render.stdout + render.stderr + state_file(project).read_text()


def test_an_include_of_a_symlink_out_of_the_workspace_is_refused(run: Run, project: Path, outside: Path) -> None:
    folder = regions(project)
    (folder / "next.md.j2").write_text('{% include "regions/part.j2" %}\n')
    (folder / "part.j2").symlink_to(outside)
    done = run("set", "next_action", "q", cwd=project, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "part.j2 is a symlink" in done.stderr and "outside the workspace" in done.stderr
    assert SECRET not in state_file(project).read_text()


def test_a_symlink_inside_the_workspace_is_followed(run: Run, project: Path) -> None:
    folder = regions(project)
    (folder / "mine.j2").write_text("Next up: {{ next_action }}\n")
    (folder / "next.md.j2").symlink_to(folder / "mine.j2")
    done = run("set", "next_action", "ship it", cwd=project, timeout=30)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "Next up: ship it" in state_file(project).read_text()


def test_a_fifo_named_like_a_template_does_not_hang(run: Run, project: Path) -> None:
    os.mkfifo(regions(project) / "next.md.j2")
    done = run("set", "next_action", "q", cwd=project, timeout=30)  # a hang fails here with TimeoutExpired
    assert done.returncode == 0
    assert "not a regular file" in done.stderr
    assert run("check", cwd=project, timeout=30).returncode == 1
