"""List commands show a page of the newest records: `--limit`, the "N more" line, `total` and `more` in JSON,
and a page chosen from cached summaries that never answers from stale data."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import Run, json_data, ok, refused

from planstate.cli import results
from planstate.ops import records

TEMPLATE = """---
schema_version: 1
id: {id}
title: "Decision {n}"
date: {date}
status: {status}
context: Case {n}
decision: Use approach {n}
reason: Simplest
alternatives: []
reversible: true
supersedes: null
superseded_by: null
phase: 1
by: tester
---
# Decision {n}
"""


def write_decisions(project: Path, count: int, status: str = "accepted") -> list[str]:
    """Hand-write `count` decisions dated one day apart (oldest first); their ids, in that order."""
    folder = project / ".planning" / "decisions"
    folder.mkdir(exist_ok=True)
    made = []
    for n in range(count):
        record_id = f"dec-1n{n:010d}"
        date = f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}"
        path = folder / f"{record_id}-decision-{n}.md"
        path.write_text(TEMPLATE.format(id=record_id, n=n, date=date, status=status), encoding="utf-8")
        made.append(record_id)
    return made


def listed(run: Run, project: Path, *args: str) -> dict[str, object]:
    """The JSON data of `planstate decision list ARGS`."""
    return json_data(ok(run("decision", "list", *args, "--json", cwd=project)))  # type: ignore[no-any-return]


def ids(data: dict[str, object], kind: str = "decisions") -> list[str]:
    """The ids of a list's records, in order."""
    return [item["id"] for item in data[kind]]  # type: ignore[attr-defined]


def test_the_default_page_is_the_newest_records_oldest_first(run: Run, project: Path) -> None:
    made = write_decisions(project, records.PAGE + 3)
    data = listed(run, project)
    assert ids(data) == made[3:]
    assert (data["total"], data["more"]) == (records.PAGE + 3, 3)
    text = ok(run("decision", "list", cwd=project)).stdout.splitlines()
    shown = f"the newest {records.PAGE} of {records.PAGE + 3} decisions are shown"
    assert text[0] == f"… 3 more: {shown} (use --limit 0 for all)"
    assert [line.split()[0] for line in text[1:]] == made[3:]


def test_limit_chooses_the_page_and_zero_lists_all(run: Run, project: Path) -> None:
    made = write_decisions(project, 5)
    assert ids(listed(run, project, "--limit", "2")) == made[3:]
    everything = listed(run, project, "--limit", "0")
    assert ids(everything) == made and (everything["total"], everything["more"]) == (5, 0)
    assert "more" not in ok(run("decision", "list", "--limit", "5", cwd=project)).stdout
    assert refused(run("decision", "list", "--limit", "-1", cwd=project), "--limit", "limit must be 0 or more")


def test_filters_count_before_the_page(run: Run, project: Path) -> None:
    made = write_decisions(project, 6)
    old = project / ".planning" / "decisions" / f"{made[5]}-decision-5.md"
    old.write_text(old.read_text().replace("status: accepted", "status: proposed"), encoding="utf-8")
    data = listed(run, project, "--status", "accepted", "--limit", "2")
    assert ids(data) == made[3:5] and (data["total"], data["more"]) == (5, 3)
    assert ids(listed(run, project, "--since", "2026-01-05", "--limit", "0")) == made[4:]


def test_a_hand_edit_behind_the_cache_moves_a_record_out_of_the_page(run: Run, project: Path) -> None:
    made = write_decisions(project, 4)
    assert ids(listed(run, project, "--limit", "2")) == made[2:]  # the summaries are cached now
    newest = project / ".planning" / "decisions" / f"{made[3]}-decision-3.md"
    info = newest.stat()
    newest.write_text(newest.read_text().replace("date: 2026-01-04", "date: 2025-12-31"), encoding="utf-8")
    os.utime(newest, ns=(info.st_atime_ns, info.st_mtime_ns))  # same size, same mtime: only ctime tells
    assert ids(listed(run, project, "--limit", "2")) == [made[1], made[2]]
    for cache in (project / ".planning" / ".local" / "cache").iterdir():
        cache.unlink()
    assert ids(listed(run, project, "--limit", "0")) == [made[3], *made[:3]]


def test_an_invalid_record_outside_the_page_is_still_warned_about(run: Run, project: Path) -> None:
    made = write_decisions(project, 3)
    oldest = project / ".planning" / "decisions" / f"{made[0]}-decision-0.md"
    oldest.write_text(oldest.read_text().replace("reversible: true", "reversible: maybe"), encoding="utf-8")
    result = run("decision", "list", "--limit", "1", cwd=project)
    assert result.returncode == 0
    assert result.stderr.startswith("planstate: warning: listed as it is, but it does not validate: ")
    assert f"{made[0]}-decision-0.md:11:1: reversible" in result.stderr
    assert result.stdout.splitlines()[1].startswith(made[2])


def test_blockers_and_sessions_page_alike(run: Run, project: Path) -> None:
    for n in range(3):
        when = {"PLANSTATE_NOW": f"2026-01-0{n + 2}T00:00:00Z"}
        ok(run("blocker", "add", "--description", f"Waiting {n}", cwd=project, env=when))
    data = json_data(ok(run("blocker", "list", "--limit", "1", "--json", cwd=project)))
    assert len(data["blockers"]) == 1 and (data["total"], data["more"]) == (3, 2)
    assert data["blockers"][0]["title"] == "Waiting 2"
    ok(run("session", "start", cwd=project))
    data = json_data(ok(run("session", "list", "--limit", "0", "--json", cwd=project)))
    assert len(data["sessions"]) == 1 and (data["total"], data["more"]) == (1, 0)


def test_the_help_names_the_library_page(run: Run, project: Path) -> None:
    assert results.PAGE == records.PAGE
    assert f"default {records.PAGE}" in ok(run("decision", "list", "--help", cwd=project)).stdout


def test_a_cached_summary_of_another_shape_is_read_from_its_file(run: Run, project: Path) -> None:
    import sqlite3

    made = write_decisions(project, 3)
    assert ids(listed(run, project, "--limit", "0")) == made  # the summaries are cached now
    (database,) = (project / ".planning" / ".local" / "cache").glob("*.sqlite")
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT key FROM files WHERE key LIKE 'decisions/%' ORDER BY key").fetchall()
        db.execute("UPDATE files SET summary = '[1, 2' WHERE key = ?", rows[0])
        db.execute("UPDATE files SET summary = '{\"id\": 1}' WHERE key = ?", rows[1])
    db.close()
    data = listed(run, project, "--limit", "0")
    assert ids(data) == made and data["total"] == 3
