"""Time planstate against the real GSD tool (get-shit-done-cc's gsd-tools) in one interleaved run (issue 14).

GSD is installed from npm into a temporary folder (as scripts/make_gsd_fixture.sh does) and given a
`.planning/` of comparable content: GSD's own STATE.md template filled in, a roadmap of three phases,
a decision, a blocker and a session recorded by `gsd-tools` itself. planstate gets the 11-record
workspace of benchmarks/build_scale.py (3 phases, decisions, a blocker, sessions). Then each pair runs
in turn, every round, so machine noise hits both tools alike:

| planstate | GSD | goal |
|---|---|---|
| `get next_action` | `state get` | at most 0.7x of GSD |
| `status` | `state json` | at most 0.7x of GSD |
| `set next_action` | `state update Status` | at most 1.0x |
| `decision add` | `state add-decision` | at most 1.0x |

Figures are medians of wall-clock milliseconds (a person or an agent waits for the wall clock), with
the medians of CPU time (user + system, from os.wait4) beside them, which a busy machine disturbs less.
Without npm (or when the install fails) it says so and exits 0: the figures need the real tool.

    python benchmarks/gsd_side_by_side.py [--runs 15] [--gsd FOLDER] [--json]

`--gsd FOLDER` reuses an installed `node_modules/get-shit-done-cc` under FOLDER instead of installing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_scale import NOW, build  # noqa: E402
from cli_latency import ENV, compile_package, planstate_command  # noqa: E402

VERSION = "1.32.0"
PACKAGE = Path("node_modules") / "get-shit-done-cc" / "get-shit-done"
# (our name, GSD's name, goal: our time at most this many times GSD's)
PAIRS = [
    ("get next_action", "state get", 0.7),
    ("status", "state json", 0.7),
    ("set next_action", "state update", 1.0),
    ("decision add", "state add-decision", 1.0),
]
ROADMAP = """# Roadmap: Demo Shop

## Overview

A small web shop, from the data model to a deployed checkout.

## Phases

- [ ] **Phase 1: Foundation** - Data model and project skeleton
- [ ] **Phase 2: Checkout API** - Cart and checkout endpoints
- [ ] **Phase 3: Deploy** - Hosting and release

## Phase Details

### Phase 1: Foundation
**Goal**: A running skeleton with the data model
**Depends on**: Nothing (first phase)
**Plans**: 1 plan

### Phase 2: Checkout API
**Goal**: Customers can pay
**Depends on**: Phase 1
**Plans**: TBD

### Phase 3: Deploy
**Goal**: The shop is online
**Depends on**: Phase 2
**Plans**: TBD

## Progress

| Phase | Plans Complete | Status | Completed |
|-------|----------------|--------|-----------|
| 1. Foundation | 0/1 | Not started | - |
| 2. Checkout API | 0/? | Not started | - |
| 3. Deploy | 0/? | Not started | - |
"""


def install_gsd(folder: Path) -> Path | None:
    """Install get-shit-done-cc into `folder` with npm; the package folder, or None (said why on stderr)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        print("skipped: npm and node are needed to install GSD (get-shit-done-cc); none found", file=sys.stderr)
        return None
    done = subprocess.run(
        [npm, "install", "--silent", "--no-audit", "--no-fund", f"get-shit-done-cc@{VERSION}"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not (folder / PACKAGE).is_dir():
        print(f"skipped: npm install get-shit-done-cc@{VERSION} failed: {done.stderr.strip()[:300]}", file=sys.stderr)
        return None
    return folder / PACKAGE


def gsd_project(package: Path, project: Path) -> list[str]:
    """Make a GSD `.planning/` in `project` as an agent following GSD's prompts would, and return the command
    that runs gsd-tools there."""
    tool = ["node", str(package / "bin" / "gsd-tools.cjs")]
    template = (package / "templates" / "state.md").read_text(encoding="utf-8")
    found = re.search(r"```markdown\n(.*?)\n```", template, re.S)
    state = found.group(1) if found else "# Project State\n\nStatus: Ready to plan\n"
    replacements = [
        (r"^Phase: \[X\] of \[Y\] \(\[Phase name\]\)", "Phase: 1 of 3 (Foundation)"),
        (r"^Plan: \[A\] of \[B\] in current phase", "Plan: 0 of 1 in current phase"),
        (r"^Status: \[.*\]", "Status: Ready to plan"),
        (r"^- \[Phase [XY]\]: \[Decision summary\]$", ""),
        (r"^Last session: .*", "Last session: 2026-11-20 10:00"),
        (r"^Stopped at: .*", "Stopped at: Roadmap created"),
        (r"^Resume file: .*", "Resume file: None"),
    ]
    for pattern, value in replacements:
        state = re.sub(pattern, value, state, flags=re.M)
    planning = project / ".planning"
    for phase in ("01-foundation", "02-checkout-api", "03-deploy"):
        (planning / "phases" / phase).mkdir(parents=True)
    (planning / "ROADMAP.md").write_text(ROADMAP, encoding="utf-8")
    (planning / "STATE.md").write_text(state, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    for args in (
        ["state", "begin-phase", "--phase", "1", "--name", "Foundation", "--plans", "1"],
        ["state", "add-decision", "--phase", "1", "--summary", "Use SQLite first", "--rationale", "no server"],
        ["state", "add-blocker", "--text", "Phase 3: waiting for hosting credentials"],
        ["state", "record-session", "--stopped-at", "Planned phase 1"],
    ):
        subprocess.run([*tool, *args], cwd=project, check=True, stdout=subprocess.DEVNULL)
    return tool


def run_once(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) milliseconds of one process run; a failing run stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} in {cwd} failed: {err}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def commands(ours: list[str], tool: list[str], step: int) -> dict[str, list[str]]:
    """Every command of both tools for round `step` (writes write a new value each round)."""
    text = f"Step {step} of the side-by-side run"
    return {
        "get next_action": [*ours, "get", "next_action"],
        "status": [*ours, "status"],
        "set next_action": [*ours, "set", "next_action", text],
        "decision add": [*ours, "decision", "add", "--context", "bench", "--decision", text, "--reason", "timing"],
        "state get": [*tool, "state", "get", "Status"],
        "state json": [*tool, "state", "json"],
        "state update": [*tool, "state", "update", "Status", text],
        "state add-decision": [*tool, "state", "add-decision", "--phase", "1", "--summary", text, "--rationale", "x"],
    }


def measure(ours: Path, theirs: Path, tool: list[str], runs: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU milliseconds of every command, the two tools interleaved pair by pair."""
    planstate = planstate_command()
    samples: dict[str, list[tuple[float, float]]] = {}
    for cmd in commands(planstate, tool, 0).values():  # warm the disk cache and the bytecode
        run_once(cmd, ours if cmd[0] != "node" else theirs)
    for step in range(1, runs + 1):
        table = commands(planstate, tool, step)
        for mine, gsd, _goal in PAIRS:
            samples.setdefault(mine, []).append(run_once(table[mine], ours))
            samples.setdefault(gsd, []).append(run_once(table[gsd], theirs))
    return {
        name: (statistics.median(s[0] for s in rows), statistics.median(s[1] for s in rows))
        for name, rows in samples.items()
    }


def report(figures: dict[str, tuple[float, float]]) -> tuple[str, bool]:
    """The figures as a markdown table with each ratio and goal; and whether every goal is met (on wall time)."""
    lines = [
        "| planstate | ms (CPU) | GSD | ms (CPU) | ratio | goal | met |",
        "|---|---|---|---|---|---|---|",
    ]
    met_all = True
    for mine, gsd, goal in PAIRS:
        (wall, cpu), (gsd_wall, gsd_cpu) = figures[mine], figures[gsd]
        ratio = wall / gsd_wall
        met = ratio <= goal
        met_all &= met
        lines.append(
            f"| {mine} | {wall:.0f} ({cpu:.0f}) | {gsd} | {gsd_wall:.0f} ({gsd_cpu:.0f}) | {ratio:.2f}x "
            f"(CPU {cpu / gsd_cpu:.2f}x) | <= {goal}x | {'yes' if met else 'NO'} |"
        )
    return "\n".join(lines), met_all


def main() -> int:
    """Install GSD, make both workspaces, measure and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--gsd", type=Path, help="a folder where get-shit-done-cc is installed already")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="planstate-gsd-"))
    try:
        package = (args.gsd / PACKAGE) if args.gsd is not None else install_gsd(folder)
        if package is None or not package.is_dir():
            if package is not None:
                print(f"skipped: no GSD installed under {args.gsd}", file=sys.stderr)
            return 0
        ENV.update({"PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": "bench"})
        os.environ.update({"PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": "bench"})
        ours, theirs = folder / "planstate", folder / "gsd"
        theirs.mkdir()
        build(ours, 11)
        tool = gsd_project(package, theirs)
        compile_package()
        figures = measure(ours, theirs, tool, args.runs)
        table, met = report(figures)
        if args.json:
            print(json.dumps({"runs": args.runs, "median_ms": figures, "met": met}, indent=2))
        else:
            print(f"planstate vs GSD get-shit-done-cc {VERSION}, {args.runs} interleaved rounds, medians")
            print(table)
        return 0 if met else 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
