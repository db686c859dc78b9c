"""Time the agent hooks as an agent runs them: whole `planstate hooks run` processes fed an event on stdin.

Issue 16 wants a hook to finish well under a second, every time, since an agent waits for it. Measured, each
against `planstate --version` (the cost of starting the console script at all):

- `SessionStart` of a new agent session: starts a planstate session and prints the fitted brief;
- `SessionStart` again (a second install, or `/clear`): reuses the session, prints nothing;
- `Stop` (the most frequent event): heartbeats the session;
- `Stop` of an agent session planstate never started: returns before reading any file.

    python benchmarks/hook_latency.py [--runs 15] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_latency import ENV, compile_package, make_example, planstate_command


def timed(args: list[str], cwd: Path, event: dict[str, str]) -> float:
    """Seconds one process takes, fed `event` as JSON on stdin."""
    start = time.perf_counter()
    subprocess.run(
        [*planstate_command(), *args],
        cwd=cwd,
        input=json.dumps(event),
        text=True,
        check=True,
        capture_output=True,
        env=ENV,
    )
    return time.perf_counter() - start


def main() -> int:
    """Print the median of each case over `--runs` interleaved runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compile_package()
    times: dict[str, list[float]] = {"floor": [], "start": [], "start again": [], "beat": [], "no session": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_example(folder)
        hook = ["hooks", "run"]
        for n in range(args.runs):
            base = {"cwd": str(folder), "source": "startup", "session_id": f"bench-{n}"}
            times["floor"].append(timed(["--version"], folder, base))
            times["start"].append(timed([*hook, "SessionStart", "--agent", "claude"], folder, base))
            times["start again"].append(timed([*hook, "SessionStart", "--agent", "claude"], folder, base))
            times["beat"].append(timed([*hook, "Stop", "--agent", "claude"], folder, base))
            times["no session"].append(timed([*hook, "Stop", "--agent", "claude"], folder, {**base, "session_id": "x"}))
            timed([*hook, "SessionEnd", "--agent", "claude"], folder, base)  # one active session at a time
    medians = {name: statistics.median(values) for name, values in times.items()}
    if args.json:
        print(json.dumps({name: round(value * 1000, 1) for name, value in medians.items()}))
        return 0
    for name, value in medians.items():
        print(f"{name:12} {value * 1000:7.1f} ms  ({value / medians['floor']:.1f}x the floor)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
