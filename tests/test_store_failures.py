"""The four ways the caches of planstate 0.x answered wrongly or crashed (issue 27), each as a named test.

The oracle of each: the same command on a copy of the project with `.planning/.local/` removed (the machine-local
heartbeats carried over: they are state, not cache). The store may only cost time: whatever it holds, or however
damaged or missing it is, every read answers as the oracle does, and a write that cannot take its lock refuses in
one line with nothing written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import decision, write_record
from conftest import Run, json_envelope, refused, state_file
from test_cache import same_size_edit

from planstate import Workspace
from planstate.store import cache

READS = (("check",), ("resume",), ("validate",), ("render", "--check"), ("status",), ("decision", "list"))


def answer(run: Run, project: Path, *args: str) -> tuple[int, Any]:
    """A command's exit code and `--json` answer, with the project's own path made neutral."""
    result = run(*args, "--json", cwd=project)
    assert "Traceback" not in result.stderr and result.returncode in (0, 1), (args, result.stderr)
    text = result.stdout.replace(str(project), "<project>")
    import json

    return result.returncode, json.loads(text)


def oracle(run: Run, project: Path, tmp_path: Path, *args: str) -> tuple[int, Any]:
    """The answer of the same command on a copy without `.planning/.local/` (its heartbeats carried over)."""
    copy = tmp_path / "oracle" / project.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(project, copy, symlinks=True, ignore=shutil.ignore_patterns(".local"))
    beats = project / ".planning" / ".local" / "heartbeats"
    if beats.is_dir():
        shutil.copytree(beats, copy / ".planning" / ".local" / "heartbeats")
    found = answer(run, copy, *args)
    return found[0], _neutral(found[1], copy, project)


def _neutral(value: Any, copy: Path, project: Path) -> Any:
    """An answer of the copy with its path put back to the project's (both neutral)."""
    import json

    return json.loads(json.dumps(value).replace(str(copy), "<project>"))


def same_as_oracle(run: Run, project: Path, tmp_path: Path) -> None:
    """Every read command answers as it does on a copy without `.planning/.local/`."""
    for args in READS:
        assert answer(run, project, *args) == oracle(run, project, tmp_path, *args), args


def decisions(project: Path, count: int) -> list[Path]:
    """`count` decisions written by hand, rendered into STATE.md."""
    paths = [write_record(project, "decision", decision(i)) for i in range(count)]
    Workspace.find(project).render()
    return paths


def test_an_edit_through_a_second_hard_link_is_seen_with_a_watcher_running(
    run: Run, project: Path, tmp_path: Path, watch: Any
) -> None:
    """A record edited through another name of its file (a hard link outside `.planning/`) after every read command
    ran once: with a watcher running, each command and `check --fix` see it (the journal of 0.x did not)."""
    paths = decisions(project, 12)
    watch()
    same_as_oracle(run, project, tmp_path)
    other = tmp_path / "elsewhere.md"
    os.link(paths[-1], other)  # the newest: the region shows it
    same_as_oracle(run, project, tmp_path)  # the store vouches for the folder with the link in place
    same_size_edit(other, "accepted", "proposed")  # through the other name: this folder's watch sees no event
    assert answer(run, project, "render", "--check")[0] == 1  # the decisions region no longer shows it as it is
    same_as_oracle(run, project, tmp_path)
    fixed = run("check", "--fix", cwd=project)
    assert fixed.returncode == 0, fixed.stdout
    assert "proposed" in state_file(project).read_text(encoding="utf-8")
    same_as_oracle(run, project, tmp_path)


def test_a_store_of_corrupted_bytes_costs_only_time(run: Run, project: Path, tmp_path: Path) -> None:
    """Every byte of the store overwritten (and then the store cut short): every read answers as without it, and the
    next write rebuilds it (0.x crashed with `OverflowError` on a corrupted kept listing)."""
    decisions(project, 6)
    same_as_oracle(run, project, tmp_path)
    store = project / ".planning" / ".local" / "cache" / f"{cache.NAME}-v{cache.VERSION}.sqlite"
    size = store.stat().st_size
    store.write_bytes(bytes((i * 131 + 7) % 256 for i in range(size)))
    same_as_oracle(run, project, tmp_path)
    store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 84)  # a header that promises what is not there
    same_as_oracle(run, project, tmp_path)
    assert run("decision", "add", "--context", "c", "--decision", "After", "--reason", "r", cwd=project).returncode == 0
    same_as_oracle(run, project, tmp_path)


def test_a_restore_from_a_copy_under_a_running_watcher_is_answered_as_without_one(
    run: Run, project: Path, tmp_path: Path, watch: Any
) -> None:
    """`.planning/` restored from a `cp -a` backup (same folder, same inode) while a watcher runs: every command
    answers as without a store, and none of them asks the watcher anything (0.x waited two seconds on its journal
    on every command until the watcher restarted)."""
    decisions(project, 8)
    backup = tmp_path / "backup"
    subprocess.run(["cp", "-a", str(project / ".planning"), str(backup)], check=True)
    watch()
    run("decision", "add", "--context", "c", "--decision", "Made after the backup", "--reason", "r", cwd=project)
    same_as_oracle(run, project, tmp_path)
    for entry in (project / ".planning").iterdir():
        if entry.name != ".local":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    subprocess.run(["cp", "-a", f"{backup}/.", str(project / ".planning")], check=True)
    same_as_oracle(run, project, tmp_path)
    assert "Made after the backup" not in state_file(project).read_text(encoding="utf-8")
    probe = "import sys; from planstate.cli.main import main\ntry: main()\nexcept SystemExit: pass\n"
    probe += "print('socket' in sys.modules, file=sys.stderr)"
    env = {**os.environ, "PLANSTATE_ACTOR": "tester"}
    for args in (["check"], ["resume"], ["decision", "list"], ["status"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], cwd=project, capture_output=True, text=True, env=env, check=False
        )
        # `sys.argv[1:]` is the command: the interpreter's `-c` makes argv[0] "-c"
        assert done.stderr.strip().endswith("False"), (args, done.stderr)  # no socket: no watcher is asked


@pytest.mark.parametrize("shape", ["file", "unwritable"])
def test_a_local_folder_that_is_no_folder_or_cannot_be_written(
    run: Run, project: Path, tmp_path: Path, shape: str
) -> None:
    """`.planning/.local` a regular file, or a folder that cannot be written (immutable, which holds for root too):
    every read answers as without it, and every write refuses in one line naming it, with nothing written (0.x
    crashed with exit 4)."""
    decisions(project, 5)
    local = project / ".planning" / ".local"
    shutil.rmtree(local)
    if shape == "file":
        local.write_text("not a folder\n")
    else:
        local.mkdir()
        made = subprocess.run(["chattr", "+i", str(local)], capture_output=True, check=False)
        if made.returncode != 0:
            pytest.skip(f"this filesystem cannot make a folder immutable: {made.stderr.decode().strip()}")
    try:
        same_as_oracle(run, project, tmp_path)
        before = {
            p: p.read_bytes() for p in (project / ".planning").rglob("*") if p.is_file() and ".local" not in p.parts
        }
        for args in (
            ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
            ("set", "next_action", "Something else"),
            ("session", "start", "--agent", "a"),
        ):
            line = refused(run(*args, cwd=project), "cannot take the workspace lock", ".planning/.local")
            assert ("not a folder" in line) == (shape == "file"), line
        after = {
            p: p.read_bytes() for p in (project / ".planning").rglob("*") if p.is_file() and ".local" not in p.parts
        }
        assert after == before
        assert json_envelope(run("check", "--json", cwd=project))["exit"] == 0
    finally:
        if shape == "unwritable":
            subprocess.run(["chattr", "-i", str(local)], check=False)
