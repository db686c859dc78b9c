"""Temp files left by a write that was killed are reported, ignored by git in new workspaces, and deleted by --fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import Run


def dead_pid() -> int:
    """The pid of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temp_files_of_killed_writes_are_found_and_fixed(run: Run, project: Path) -> None:
    planning = project / ".planning"
    pid = dead_pid()
    left = [
        planning / "decisions" / f".dec-1ng9h0a3b4c5-use-jose.md.{pid}.9f2c01ab.tmp",
        planning / f".STATE.md.{pid}.00ff00ff.tmp",
        planning / "blockers" / f".blk-1ng9h0a3b4c5-x.md.{pid}.0badcafe.tmp",
    ]
    for path in left:
        path.write_text("half a file")
    live = planning / "sessions" / f".ses-1ng9h0a3b4c5-x.md.{os.getpid()}.12345678.tmp"  # a write under way
    live.write_text("being written")
    found = run("check", cwd=project)
    assert found.returncode == 1
    shown = sorted(line.split(":")[0] for line in found.stdout.splitlines() if "stale-temp-file" in line)
    assert shown == sorted(str(p.relative_to(project)) for p in left)
    fixed = run("check", "--fix", cwd=project)
    assert fixed.returncode == 0 and "3 fixed" in fixed.stdout
    assert not any(p.exists() for p in left)
    assert live.exists()  # its process is alive: not touched
    assert "stale-temp-file" not in run("check", cwd=project).stdout


def test_git_ignores_temp_files_in_a_new_workspace(run: Run, tmp_path: Path) -> None:
    assert run("init", "--title", "T", "--phase", "A", cwd=tmp_path).returncode == 0
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".planning" / "decisions" / f".dec-x.md.{dead_pid()}.9f2c01ab.tmp").write_text("x")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        text=True,
        capture_output=True,
        check=True,
    )
    assert ".tmp" not in status.stdout
    assert ".planning/STATE.md" in status.stdout
