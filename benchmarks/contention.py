"""Many writers on one workspace: throughput, latency and refusals, and how long each write holds the lock.

Writers are real processes, each running the console script for a mix of `set next_action`, `append`
and `decision add`, all released at once. For 8 and 32 writers the script prints the throughput
(operations per second), the p50/p99 latency of one command, how many were refused (exit 3, the
lock wait ran out) and, as the floor measured in the same run, the latency of the same commands
with a single writer. The lock-held time of `set` and `decision add` is measured in-process: the
time between taking and releasing the workspace lock, the part of a command other writers wait for.

    python benchmarks/contention.py [--ops 10] [--writers 8,32] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# As an installed tool runs: PYTHONDONTWRITEBYTECODE would make every writer compile planstate's modules again.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
sys.path.insert(0, str(HERE.parent))

WRITER = """
import json, os, subprocess, sys, time
command, go, writer, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
mix = [
    ["set", "next_action", "next by {w} #{i}"],
    ["append", "resume_context.open_questions", "question {w}-{i}"],
    ["decision", "add", "--context", "c {w}", "--decision", "d {w}-{i}", "--reason", "r"],
]
while not os.path.exists(go):
    time.sleep(0.001)
out = []
for i in range(count):
    args = [a.format(w=writer, i=i) for a in mix[(int(writer) + i) % len(mix)]]
    start = time.perf_counter()
    done = subprocess.run([command, *args], capture_output=True)
    out.append([args[0], done.returncode, time.perf_counter() - start])
print(json.dumps(out))
"""


def planstate_command() -> str:
    """The installed console script next to this Python."""
    script = Path(sys.executable).parent / "planstate"
    if not script.is_file():
        sys.exit("install planstate into this Python first (make test does)")
    return str(script)


def make_workspace(folder: Path) -> None:
    """A fresh workspace with three phases."""
    subprocess.run(
        [planstate_command(), "init", "--title", "Contention", "--phase", "A", "--phase", "B", "--phase", "C"],
        cwd=folder,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def run_writers(writers: int, ops: int, timeout: float) -> dict[str, float]:
    """Start `writers` processes of `ops` commands each at once; return throughput, latencies and refusals."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_workspace(folder)
        go = folder / "go"
        env = {**ENV, "PLANSTATE_ACTOR": "bench", "PLANSTATE_LOCK_TIMEOUT": str(timeout)}
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, planstate_command(), str(go), str(n), str(ops)],
                cwd=folder,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            for n in range(writers)
        ]
        time.sleep(0.5)  # let every writer start its interpreter before the race begins
        start = time.perf_counter()
        go.touch()
        results = [json.loads(p.communicate()[0]) for p in procs]
        elapsed = time.perf_counter() - start
    flat = [item for result in results for item in result]
    latencies = sorted(seconds for _cmd, _code, seconds in flat)
    return {
        "writers": writers,
        "operations": len(flat),
        "seconds": elapsed,
        "ops_per_second": len(flat) / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "refused": sum(1 for _cmd, code, _s in flat if code == 3),
        "failed": sum(1 for _cmd, code, _s in flat if code not in (0, 3)),
    }


def lock_held(runs: int) -> dict[str, float]:
    """Median milliseconds the workspace lock is held by one `set next_action` and one `decision add`."""
    from planstate.core.lock import WorkspaceLock
    from planstate.workspace import Workspace

    held: list[float] = []
    taken: list[float] = []
    acquire, release = WorkspaceLock.acquire, WorkspaceLock.release

    def timed_acquire(self: WorkspaceLock) -> None:
        acquire(self)
        if self._depth == 1:
            taken.append(time.perf_counter())

    def timed_release(self: WorkspaceLock) -> None:
        outermost = self._depth == 1
        release(self)
        if outermost:
            held.append(time.perf_counter() - taken.pop())

    WorkspaceLock.acquire = timed_acquire  # type: ignore[method-assign]
    WorkspaceLock.release = timed_release  # type: ignore[method-assign]
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_workspace(folder)
        ws = Workspace.find(folder, actor="bench")
        for name, action in (
            ("set", lambda i: ws.set_text({"next_action": f"next #{i}"})),
            ("decision add", lambda i: ws.decision.add(context="c", decision=f"d {i}", reason="r")),
        ):
            held.clear()
            for i in range(runs):
                action(i)
            out[name] = 1000 * statistics.median(held)
    WorkspaceLock.acquire, WorkspaceLock.release = acquire, release  # type: ignore[method-assign]
    return out


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10, help="commands per writer")
    parser.add_argument("--writers", default="8,32", help="writer counts to run, comma-separated")
    parser.add_argument("--timeout", type=float, default=None, help="lock timeout (default: planstate's)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    from planstate.core.lock import DEFAULT_TIMEOUT

    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    floor = run_writers(1, args.ops * 3, timeout)
    rows = [run_writers(int(n), args.ops, timeout) for n in args.writers.split(",")]
    held = lock_held(30)
    if args.json:
        print(json.dumps({"floor": floor, "contention": rows, "lock_held_ms": held, "timeout": timeout}, indent=2))
        return 0
    rate = f"{floor['ops_per_second']:.1f} ops/s"
    print(f"lock timeout {timeout:g}s; floor, one writer: p50 {floor['p50_ms']:.0f} ms, {rate}")
    columns = ("writers", "ops", "ops/s", "p50 ms", "p99 ms", "p50/floor", "refused", "failed")
    print(" ".join(f"{c:>9}" for c in columns))
    for row in rows:
        ratio = f"{row['p50_ms'] / floor['p50_ms']:.1f}x"
        print(
            f"{row['writers']:>9} {row['operations']:>9} {row['ops_per_second']:>9.1f} {row['p50_ms']:>9.0f} "
            f"{row['p99_ms']:>9.0f} {ratio:>9} {row['refused']:>9} {row['failed']:>9}"
        )
    print("lock held (median, in-process): " + ", ".join(f"{k} {v:.1f} ms" for k, v in held.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
