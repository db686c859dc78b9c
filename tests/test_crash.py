"""Writers killed with SIGKILL at random moments never leave a torn STATE.md; their temp files are cleaned up."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import state_file

from planstate.core.files import atomic_write, remove_stale_temp_files
from planstate.text import markers as regions
from planstate.text.document import Document
from planstate.workspace import Workspace

KILLS = 50
RAW_KILLS = 20

# Sets fields in a loop through the Python API. It imports first (the write path too: rendering
# regions imports Jinja) and says "imported", waits for a line on stdin, then writes, saying
# "wrote" after each write so the test can wait for the first one on a slow, loaded machine.
WRITER = """
import sys
import jinja2, planstate.store.transaction, planstate.render.regions, planstate.render.sources
from planstate.workspace import Workspace
ws = Workspace(sys.argv[1], lock_timeout=30)
print("imported", flush=True)
sys.stdin.readline()
i = int(sys.argv[2])  # numbered on from the writers before: any write shows as a new task
while True:
    ws.set({"position.task": f"t{i}", "next_action": f"step {i} " * (1 + i % 7)})
    print("wrote", flush=True)
    i += 1
"""

# Replaces STATE.md in a tight loop with one of two large, complete versions: almost every kill
# lands inside atomic_write, between creating the temp file and renaming it.
RAW_WRITER = """
import sys
from pathlib import Path
from planstate.core.files import atomic_write
path = Path(sys.argv[1])
versions = [Path(sys.argv[2]).read_bytes(), Path(sys.argv[3]).read_bytes()]
print("imported", flush=True)
sys.stdin.readline()
i = 0
while True:
    atomic_write(path, versions[i % 2])
    i += 1
"""


def temp_files(folder: Path) -> list[Path]:
    """Temp files left in a folder by writers."""
    return sorted(p for p in folder.iterdir() if p.name.endswith(".tmp"))


def outside_regions(body: str) -> list[str]:
    """The lines of a body outside its generated regions (marker lines without their hashes); no marker problems."""
    layout = regions.parse(body)
    assert layout.troubles == []
    inside = {i for r in layout.regions for i in range(r.begin + 1, r.end)}
    return [line.split(" sha=")[0] for i, line in enumerate(layout.lines) if i not in inside]


def dead_pid() -> int:
    """The id of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def start_writer(*args: str) -> subprocess.Popen[str]:
    """Start a writer child and wait until it has imported planstate."""
    child = subprocess.Popen(
        [sys.executable, "-c", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "imported\n", child.stderr.read() if child.stderr else ""
    return child


def kill_at_random(child: subprocess.Popen[str], rng: random.Random, longest: float, *, after_a_write: bool) -> None:
    """Let a started writer go, then SIGKILL it after a random pause: counted from the start (the kill may
    land in the first write) or, with `after_a_write`, from its first finished write (landing in a later one)."""
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write("go\n")
        child.stdin.flush()
        if after_a_write:
            assert child.stdout.readline() == "wrote\n"
        time.sleep(rng.uniform(0, longest))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL


def test_sigkill_never_tears_the_file(project: Path) -> None:
    planning = project / ".planning"
    path = state_file(project)
    outside = outside_regions(Document.from_bytes(path.read_bytes()).body)
    ws = Workspace(planning)
    rng = random.Random(20260101)
    tasks = set()
    killed: set[int] = set()
    for round in range(KILLS):
        writer = start_writer(WRITER, str(planning), str(round * 1_000_000))
        kill_at_random(writer, rng, 0.1, after_a_write=rng.random() < 0.5)
        killed.add(writer.pid)
        doc = Document.from_bytes(path.read_bytes(), ".planning/STATE.md")  # parses: never torn
        assert outside_regions(doc.body) == outside  # only generated regions change, and stay well-formed
        task = doc.get("position.task")
        assert task is None or task.startswith("t")
        tasks.add(task)
        _count, problems = ws.validate()
        assert not problems, [str(p) for p in problems]
        # A killed writer may leave its temp file; every write first removes those of dead writers,
        # so there is at most one (not necessarily the last writer's: it may have died before writing).
        leftovers = temp_files(planning)
        assert len(leftovers) <= 1
        assert all(int(p.name.split(".")[-3]) in killed for p in leftovers), leftovers
    assert len(tasks) > 1  # the writers did write between kills (each after_a_write round wrote at least once)
    ws.set({"position.task": "after the crashes"})
    assert temp_files(planning) == []
    assert Workspace(planning).get("position.task") == "after the crashes"


def test_sigkill_inside_atomic_write(project: Path, tmp_path: Path) -> None:
    planning = project / ".planning"
    path = state_file(project)
    original = path.read_bytes()
    versions = []
    for n, task in enumerate(("first", "second")):
        text = original.replace(b"  task: null\n", f"  task: {task}\n".encode())
        version = tmp_path / f"v{n}.md"
        version.write_bytes(text + (f"padding {n} ".encode() * 200_000))  # a few MB: writes take a while
        versions.append(version.read_bytes())
    ws = Workspace(planning)
    rng = random.Random(7)
    left_temp = 0
    path.write_bytes(versions[0])  # the old content: a writer killed before it wrote leaves it whole
    for n in range(RAW_KILLS):
        writer = start_writer(RAW_WRITER, str(path), str(tmp_path / "v0.md"), str(tmp_path / "v1.md"))
        kill_at_random(writer, rng, 0.05, after_a_write=False)
        assert path.read_bytes() in versions  # whole, old or new: never a mix or a prefix
        leftovers = temp_files(planning)
        assert all(f".{writer.pid}." in p.name for p in leftovers)
        left_temp += len(leftovers)
        ws.set({"next_action": f"check {n}"})  # a planstate write removes the dead writer's temp file
        assert temp_files(planning) == []
        _count, problems = ws.validate()
        assert not problems, [str(p) for p in problems]
        path.write_bytes(versions[0])
    assert left_temp > 0  # the kills did hit writes in progress


def test_next_write_removes_stale_temp_files(project: Path) -> None:
    planning = project / ".planning"
    gone = dead_pid()
    stale = planning / f".STATE.md.{gone}.0badc0de.tmp"
    stale.write_bytes(b"---\ntitle: half writ")
    alive = planning / f".STATE.md.{os.getppid()}.0badc0de.tmp"  # a live writer's file is left alone
    alive.write_bytes(b"in progress")
    unrelated = [planning / ".notes.tmp", planning / f".notes.{gone}.tmp", planning / f"x.{gone}.0badc0de.tmp"]
    for path in unrelated:
        path.write_bytes(b"mine")
    Workspace(planning).set({"position.task": "cleaned"})
    assert not stale.exists()
    assert alive.exists()
    assert all(path.exists() for path in unrelated)


def test_no_op_write_leaves_temp_files_alone(project: Path) -> None:
    planning = project / ".planning"
    stale = planning / f".STATE.md.{dead_pid()}.0badc0de.tmp"
    stale.write_bytes(b"x")
    Workspace(planning).set({"title": "Demo"})  # nothing changes, so nothing is written or cleaned
    assert stale.exists()


def test_remove_stale_temp_files_ignores_a_missing_folder(tmp_path: Path) -> None:
    stale = tmp_path / ".STATE.md.999999999.0123abcd.tmp"  # a temp name of a process that cannot exist
    stale.write_bytes(b"left by a crash")
    remove_stale_temp_files(tmp_path / "missing")  # no error, and nothing else is touched
    assert not (tmp_path / "missing").exists()
    assert stale.exists()
    remove_stale_temp_files(tmp_path)
    assert not stale.exists()


def test_atomic_write_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic_write(target, b"new" * 100_000, expected=b"old")
    assert target.read_bytes() == b"new" * 100_000
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)
    assert temp_files(tmp_path) == []
