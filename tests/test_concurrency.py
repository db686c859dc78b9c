"""Many writers at once: the workspace lock serialises them, a held lock times out, outside edits conflict."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest
from conftest import Run, planstate_command, state_file

from planstate.core.errors import ConflictError, LockTimeout
from planstate.store import recordfiles
from planstate.store.transaction import Transaction
from planstate.workspace import Workspace

pytestmark = pytest.mark.real_cli  # processes contending for the lock, each started as a user starts it

WRITERS = 8
APPENDS = 8  # each writer's turns interleave with the seven others' from the first: more adds nothing but time
# Seconds: a guard against a hang, never a deadline a loaded machine could miss; the work is a fixed count.
HANG = 1800
GUARD = 120

# Each writer waits for the `go` file, then runs the real console script APPENDS times.
WRITER_LOOP = """
import os, subprocess, sys, time
command, go, writer, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
while not os.path.exists(go):
    time.sleep(0.002)
for i in range(count):
    done = subprocess.run(
        [command, "append", "resume_context.files_modified", f"item-{writer}-{i}"],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"writer {writer} item {i}: exit {done.returncode}: {done.stderr}")
"""

HOLDER = """
import sys
from planstate.workspace import Workspace
ws = Workspace(sys.argv[1])
ws.ctx.lock.acquire()
print("locked", flush=True)
sys.stdin.read()  # hold until the test ends (and closes stdin or kills it), however long that takes
"""


def test_parallel_appends_all_land(project: Path, run: Run) -> None:
    command = planstate_command()
    assert len(command) == 1, "the console script is needed for this test"
    go = project / "go"
    env = {**os.environ, "PLANSTATE_ACTOR": "tester", "PLANSTATE_LOCK_TIMEOUT": str(HANG)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER_LOOP, command[0], str(go), str(n), str(APPENDS)],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    try:
        go.touch()  # start them all at once
        for writer in writers:
            _out, err = writer.communicate(timeout=HANG)
            assert writer.returncode == 0, err
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    items = Workspace.find(project).get("resume_context.files_modified")
    expected = {f"item-{w}-{i}" for w in range(WRITERS) for i in range(APPENDS)}
    assert len(items) == WRITERS * APPENDS
    assert set(items) == expected
    for w in range(WRITERS):  # each writer's items keep their order
        mine = [item for item in items if item.startswith(f"item-{w}-")]
        assert mine == [f"item-{w}-{i}" for i in range(APPENDS)]
    result = run("validate", cwd=project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [p for p in (project / ".planning").iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def lock_holder(project: Path) -> Iterator[subprocess.Popen[str]]:
    """A helper process that holds the workspace lock until the test ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(project / ".planning")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    yield holder
    holder.kill()
    holder.wait()
    for stream in (holder.stdin, holder.stdout, holder.stderr):
        if stream is not None:
            stream.close()


@pytest.mark.parametrize(
    "args",
    [
        ("set", "position.task", "blocked"),
        ("append", "resume_context.files_modified", "x"),
        ("unset", "position.wave"),
    ],
)
def test_held_lock_times_out_naming_the_holder(
    project: Path, run: Run, lock_holder: subprocess.Popen[str], args: tuple[str, ...]
) -> None:
    path = state_file(project)
    before = path.read_bytes()
    result = run("--lock-timeout", "0.5", *args, cwd=project, timeout=GUARD)  # the timeout guards against a hang
    assert result.returncode == 3
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("planstate: .planning/.local/lock: workspace is locked by ")
    assert f"pid {lock_holder.pid}" in lines[0]
    assert "gave up after 0.5s" in lines[0]
    assert path.read_bytes() == before


def test_check_fix_waits_for_the_lock_like_any_write(
    project: Path, run: Run, lock_holder: subprocess.Popen[str]
) -> None:
    edit = state_file(project).read_text().replace("  percent: 0\n", "  percent: 13\n")
    state_file(project).write_text(edit)
    result = run("--lock-timeout", "0.3", "check", "--fix", cwd=project, timeout=GUARD)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert result.stderr.startswith("planstate: .planning/.local/lock: workspace is locked by ")
    assert state_file(project).read_text() == edit


def test_held_lock_does_not_block_readers(project: Path, run: Run, lock_holder: subprocess.Popen[str]) -> None:
    for args in (("get", "title"), ("status",), ("validate",)):
        result = run(*args, cwd=project, timeout=GUARD)
        assert result.returncode == 0, result.stderr


def test_lock_timeout_from_environment(project: Path, run: Run, lock_holder: subprocess.Popen[str]) -> None:
    result = run("set", "position.task", "x", cwd=project, env={"PLANSTATE_LOCK_TIMEOUT": "0.2"}, timeout=GUARD)
    assert result.returncode == 3
    assert f"pid {lock_holder.pid}" in result.stderr


def test_writer_proceeds_once_the_lock_is_released(project: Path, run: Run) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLDER.replace("sys.stdin.read()", "__import__('time').sleep(0.5)"),
            str(project / ".planning"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        result = run("--lock-timeout", str(GUARD), "set", "position.task", "after", cwd=project, timeout=HANG)
        assert result.returncode == 0, result.stderr
    finally:
        holder.kill()
        holder.wait()
    assert Workspace.find(project).get("position.task") == "after"


def test_lock_held_by_a_killed_process_is_free(project: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(project / ".planning")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    holder.kill()
    holder.wait()
    Workspace(project / ".planning", lock_timeout=2).set({"position.task": "free"})
    assert Workspace(project / ".planning").get("position.task") == "free"


def test_outside_change_during_a_transaction_conflicts(project: Path) -> None:
    ws = Workspace.find(project)
    path = ws.state_path
    with pytest.raises(ConflictError) as caught, ws.edit() as state:
        state.position.task = "planstate's change"
        edited = path.read_text().replace("title: Demo\n", "title: Edited in an editor\n")
        path.write_text(edited)
    assert caught.value.exit_code == 3
    assert "changed on disk" in str(caught.value)
    assert path.read_text() == edited  # the editor's version stays; planstate wrote nothing
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    ws.set({"position.task": "retried"})  # the lock was released: the next transaction works
    assert ws.get("title") == "Edited in an editor"
    assert ws.get("position.task") == "retried"


def new_decision(ws: Workspace, tx: Transaction) -> Path:
    """Stage a new decision record in a transaction, the way `decision add` does; return its path."""
    record_id, path = recordfiles.new_path(ws.target, "decision", "Use jose")
    data = {
        "schema_version": 1,
        "id": record_id,
        "title": "Use jose",
        "date": date(2026, 1, 1),
        "status": "accepted",
        "context": "JWT library",
        "decision": "jose",
        "reason": "Web Crypto",
    }
    tx.create("decision", path, data, "# Use jose\n")
    return path


def test_outside_change_is_found_before_a_new_record_is_written(project: Path) -> None:
    """A record and STATE.md in one transaction, STATE.md edited meanwhile: neither is written, so a retry is safe."""
    ws = Workspace.find(project)
    path = ws.state_path
    with pytest.raises(ConflictError) as caught, ws.transaction() as tx:
        record = new_decision(ws, tx)
        tx.state().next_action = "review the decision"
        edited = path.read_text().replace("title: Demo\n", "title: Edited in an editor\n")
        path.write_text(edited)  # an editor saves STATE.md between the read and the commit
    assert caught.value.exit_code == 3
    assert "nothing was written" in str(caught.value)
    assert not record.exists()
    assert list(record.parent.glob("dec-*")) == []
    assert path.read_text() == edited


def test_a_change_racing_the_writes_names_what_was_written(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor saving in the instant between the final re-read and the write: the error lists the written files.

    That instant cannot be hit from outside on purpose, so the real `atomic_write` is wrapped to save the editor's
    version (for real, on disk) just before planstate's write of STATE.md, as a racing editor would.
    """
    from planstate.store import transaction

    ws = Workspace.find(project)
    path = ws.state_path
    edited = path.read_text().replace("title: Demo\n", "title: Edited in an editor\n")
    real_write = transaction.atomic_write

    def editor_saves_first(target: Path, data: bytes, **options: object) -> None:
        if target == path.resolve():
            path.write_text(edited)
        real_write(target, data, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(transaction, "atomic_write", editor_saves_first)
    with pytest.raises(ConflictError) as caught, ws.transaction() as tx:
        record = new_decision(ws, tx)
        tx.state().next_action = "review the decision"
    message = str(caught.value)
    shown = ws.ctx.display(record)
    assert f"already written: {shown}" in message
    assert "not written: .planning/STATE.md" in message
    assert "nothing was written" not in message
    assert record.exists()  # written before the race, as the message says
    assert path.read_text() == edited


def test_file_removed_during_a_transaction_conflicts(project: Path) -> None:
    ws = Workspace.find(project)
    with pytest.raises(ConflictError), ws.edit() as state:
        state.position.task = "x"
        ws.state_path.unlink()
    assert not ws.state_path.exists()


def test_error_in_a_transaction_writes_nothing(project: Path) -> None:
    ws = Workspace.find(project)
    before = ws.state_path.read_bytes()
    with pytest.raises(RuntimeError), ws.edit() as state:
        state.position.task = "never written"
        raise RuntimeError("stop")
    assert ws.state_path.read_bytes() == before
    ws.set({"position.task": "next"})  # and the lock was released


def test_threads_sharing_one_workspace_are_serialised(project: Path) -> None:
    ws = Workspace.find(project, lock_timeout=30)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(10):
                ws.append("resume_context.key_implementations", f"thread-{n}-{i}")
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    items = ws.get("resume_context.key_implementations")
    assert sorted(items) == sorted(f"thread-{n}-{i}" for n in range(4) for i in range(10))


def test_lock_is_reentrant_in_one_thread(project: Path) -> None:
    ws = Workspace.find(project, lock_timeout=1)
    with ws.ctx.lock, ws.ctx.lock:
        ws.set({"position.task": "inside"})
    assert ws.get("position.task") == "inside"
    other = Workspace.find(project, lock_timeout=0.1)
    other.set({"position.task": "released"})  # fully released after the outer exit


def test_another_thread_times_out_while_the_lock_is_held(project: Path) -> None:
    ws = Workspace.find(project, lock_timeout=0.2)
    caught: list[BaseException] = []
    with ws.ctx.lock:
        thread = threading.Thread(target=lambda: _collect(caught, lambda: ws.set({"position.task": "t"})))
        thread.start()
        thread.join(10)
    assert len(caught) == 1
    assert isinstance(caught[0], LockTimeout)
    assert ws.get("position.task") is None


def _collect(into: list[BaseException], action: Callable[[], object]) -> None:
    try:
        action()
    except BaseException as exc:  # handed to the test thread
        into.append(exc)
