"""No verdict depends on today's date: time comes from the clock seam (core/clock.py, PLANSTATE_NOW).

Every test runs at conftest.NOW (an autouse fixture pins PLANSTATE_NOW for the test and every command it starts),
so a record a command writes today carries the same date on every day the suite runs. The product reads the date
only through `clock.now()`. A test that must see real time pass (a watcher finding a session going stale) takes
the `real_clock` fixture and says `real clock` on each line that reads the machine's clock.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from conftest import NOW, REPO, Run, json_data, newest_date

from planstate.core import clock

# What reads the machine's date or time of day rather than the clock seam.
MACHINE_CLOCK = re.compile(r"\bdatetime\.now\(|\bdatetime\.utcnow\(|\bdate\.today\(|\btime\.time\(\)|\btime\.time\(")


def _lines(folder: Path) -> list[tuple[Path, int, str]]:
    return [
        (path, number, line)
        for path in sorted(folder.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE_CLOCK.search(line)
    ]


def test_every_test_runs_at_the_fixed_instant() -> None:
    assert os.environ["PLANSTATE_NOW"] == NOW
    assert clock.now().isoformat() == "2026-11-20T12:00:00+00:00"
    assert newest_date() == "2026-11-21"


def test_the_product_reads_the_date_only_through_the_clock() -> None:
    # File times (a heartbeat's mtime, the racy window, ids) are the filesystem's clock, not a date a verdict
    # shows: `time.time()` is allowed in the product; a date or a time of day comes from clock.now().
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path, number, line in _lines(REPO / "planstate")
        if "time.time" not in line and path.name != "clock.py"
    ]
    assert found == []


def test_a_test_reads_the_machine_clock_only_where_it_says_why() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path, number, line in _lines(REPO / "tests")
        if path.name != "test_clock_seam.py" and "real clock" not in line
    ]
    assert found == []


def test_a_record_a_command_writes_today_carries_the_fixed_date(run: Run, project: Path) -> None:
    added = json_data(
        run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", "--json", cwd=project)
    )
    assert added["date"] == "2026-11-20" < newest_date()
