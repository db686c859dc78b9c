"""Writers take the workspace lock first come, first served: real processes queue behind a holder and get the
lock in the order they asked for it; a queued process that dies leaves no ticket that blocks the others."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from planstate.workspace import Workspace

HOLDER = """
import sys
from planstate.workspace import Workspace
ws = Workspace(sys.argv[1])
ws.ctx.lock.acquire()
print("locked", flush=True)
sys.stdin.readline()  # hold until told to go
ws.ctx.lock.release()
"""

WAITER = """
import sys
from planstate.workspace import Workspace
ws = Workspace(sys.argv[1], lock_timeout=300)
with ws.ctx.lock:
    with open(sys.argv[2], "a") as out:
        out.write(sys.argv[3] + "\\n")
"""


def tickets(planning: Path) -> list[str]:
    """The tickets waiting in the queue, oldest first."""
    folder = planning / ".local" / "queue"
    return sorted(n for n in os.listdir(folder) if not n.startswith(".")) if folder.is_dir() else []


def wait_for_tickets(planning: Path, count: int) -> None:
    """Wait until `count` tickets are queued (a bounded number of short sleeps; a hang fails the test)."""
    for _ in range(30_000):
        if len(tickets(planning)) >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"expected {count} tickets, have {tickets(planning)}")


def test_waiters_get_the_lock_in_the_order_they_asked(project: Path, tmp_path: Path) -> None:
    planning = project / ".planning"
    order = tmp_path / "order.txt"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(planning)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"
    waiters = []
    try:
        for n in range(6):  # each one queues only after the one before it has its ticket: a known arrival order
            waiters.append(subprocess.Popen([sys.executable, "-c", WAITER, str(planning), str(order), str(n)]))
            wait_for_tickets(planning, n + 2)  # the holder's ticket and every waiter's so far
        holder.stdin.write("go\n")
        holder.stdin.flush()
        for waiter in waiters:
            assert waiter.wait(timeout=300) == 0
    finally:
        for proc in [holder, *waiters]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert order.read_text().split() == [str(n) for n in range(6)]
    assert tickets(planning) == []  # every ticket left with its owner


def test_a_queued_process_that_dies_does_not_block_the_queue(project: Path, tmp_path: Path) -> None:
    planning = project / ".planning"
    order = tmp_path / "order.txt"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(planning)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline().strip() == "locked"
    doomed = subprocess.Popen([sys.executable, "-c", WAITER, str(planning), str(order), "doomed"])
    wait_for_tickets(planning, 2)
    later = subprocess.Popen([sys.executable, "-c", WAITER, str(planning), str(order), "later"])
    try:
        wait_for_tickets(planning, 3)
        doomed.send_signal(signal.SIGKILL)  # its ticket stays in the folder, its flock is gone with it
        doomed.wait(timeout=60)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert later.wait(timeout=300) == 0
    finally:
        for proc in (holder, doomed, later):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert order.read_text().split() == ["later"]
    assert tickets(planning) == []
    Workspace.find(project).set({"next_action": "the lock is free"})  # and a writer after them gets it at once
