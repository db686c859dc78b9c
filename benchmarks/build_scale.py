"""Build workspaces of 11, 2,000 and 17,000 records for benchmarks/scale.py (issue 14).

A year of an agent swarm: 10,000 decisions, 2,000 blockers (one in ten still open) and 5,000 ended
sessions at 17k, the same mix in proportion at the smaller sizes. Records are made through the
library in one process, many per transaction (17,000 CLI calls would take an hour), dated across
the year before the pinned clock, and every workspace passes `validate` and `check`.

    python benchmarks/build_scale.py FOLDER [--sizes 11,2000,17000] [--force]

Each size is built in FOLDER/<size>/ (a project folder holding `.planning/`), once: an existing one
is kept unless --force.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

NOW = "2026-11-22T08:00:00Z"
SIZES = (11, 2000, 17000)
MIX = {"decision": 10, "blocker": 2, "session": 5}  # per 17 records
BATCH = 500  # records per transaction


def counts(size: int) -> dict[str, int]:
    """How many records of each kind a workspace of `size` records holds (decisions take the rounding)."""
    total = sum(MIX.values())
    out = {kind: max(1, round(size * share / total)) for kind, share in MIX.items() if kind != "decision"}
    out["decision"] = size - sum(out.values())
    return out


def _data(kind: str, index: int, record_id: str, when: datetime) -> dict[str, Any]:
    """The front matter of the `index`-th record of `kind`, made at `when`."""
    from planstate.model.kinds import SCHEMA_VERSION

    if kind == "decision":
        return {
            "schema_version": SCHEMA_VERSION,
            "id": record_id,
            "title": f"Decision {index}: use approach {index % 7}",
            "date": when.date(),
            "status": "accepted",
            "context": f"Choosing how to handle case {index} of the request pipeline",
            "decision": f"Use approach {index % 7} for case {index}",
            "reason": "It is the simplest thing that works and keeps the diff small",
            "alternatives": [f"approach {(index + 1) % 7}", "do nothing"],
            "reversible": True,
            "supersedes": None,
            "superseded_by": None,
            "phase": 1 + index % 3,
            "by": "bench",
        }
    if kind == "blocker":
        open_ = index % 10 == 0
        return {
            "schema_version": SCHEMA_VERSION,
            "id": record_id,
            "title": f"Blocker {index}: waiting on service {index % 13}",
            "status": "active" if open_ else "resolved",
            "description": f"Blocker {index}: waiting on service {index % 13}",
            "identified": when,
            "affects": [],
            "blocked_tasks": [],
            "workaround": None,
            "resolution": None if open_ else "The service answered",
            "resolved": None if open_ else when + timedelta(hours=2),
            "by": "bench",
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "id": record_id,
        "agent": f"agent-{index % 17}",
        "status": "ended",
        "started": when,
        "ended": when + timedelta(minutes=40),
        "working_on": f"task {index}",
        "completed": [f"task {index}"],
        "issues": [],
        "handoff_reason": None,
        "notes": None,
        "context_usage": None,
        "resumed_from": None,
    }


def build(project: Path, size: int) -> float:
    """Make a workspace of `size` records in `project`; return the seconds it took."""
    from planstate import Workspace
    from planstate.ops import records
    from planstate.store import recordfiles

    start = time.perf_counter()
    project.mkdir(parents=True)
    ws = Workspace.init(
        project,
        title="Scale benchmark",
        phases=["Design", "Build", "Ship"],
        actor="bench",
        next_action="Keep going",
    )
    end = datetime.fromisoformat(NOW.replace("Z", "+00:00")).astimezone(UTC) - timedelta(days=1)
    year = timedelta(days=365).total_seconds()
    jobs: list[tuple[str, int]] = []
    for kind, count in counts(size).items():
        jobs.extend((kind, index) for index in range(count))
    jobs.sort(key=lambda job: job[1] / counts(size)[job[0]])  # interleave the kinds through the year
    ctx = ws.ctx
    initiative = ctx.target
    for first in range(0, len(jobs), BATCH):
        with ws.transaction() as tx:
            for offset, (kind, index) in enumerate(jobs[first : first + BATCH]):
                position = first + offset
                when = end - timedelta(seconds=year * (1 - position / len(jobs)))
                when = when.replace(microsecond=0)
                name = f"agent-{index % 17}" if kind == "session" else f"{kind} {index}"
                record_id, path = recordfiles.new_path(initiative, kind, name, when.timestamp())
                data = _data(kind, index, record_id, when)
                tx.create(kind, path, data, records.body(ctx, kind, data))
    ctx.save_cache()
    return time.perf_counter() - start


def main() -> int:
    """Build the workspaces that are missing (all of them with --force)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated record counts")
    parser.add_argument("--force", action="store_true", help="rebuild existing workspaces")
    args = parser.parse_args()
    os.environ.setdefault("PLANSTATE_NOW", NOW)
    os.environ.setdefault("PLANSTATE_ACTOR", "bench")
    for size in (int(s) for s in args.sizes.split(",")):
        project = args.folder / str(size)
        if project.exists():
            if not args.force:
                print(f"{project}: kept")
                continue
            shutil.rmtree(project)
        seconds = build(project, size)
        print(f"{project}: {size} records in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
