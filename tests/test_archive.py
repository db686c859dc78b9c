"""Bounded record regions ("and N more" lines) and `planstate records archive`, through the real command.

STATE.md stays short however many records there are: each record region shows a few and counts the rest.
Old finished records move to their kind's `archive/` folder, where show, list, check, validate, diff and the
merge driver still find them; after every command `planstate check` is clean.
"""

from __future__ import annotations

from pathlib import Path

import builders
from conftest import Run, json_data, ok, state_file


def clean(run: Run, cwd: Path) -> None:
    """Assert `planstate check` finds nothing at all."""
    result = run("check", "--json", cwd=cwd)
    assert result.returncode == 0 and json_data(result)["findings"] == [], result.stdout


def region(state: Path, name: str) -> str:
    """The text of one generated region of a STATE.md, between its marker lines."""
    text = state.read_text()
    start = text.index("\n", text.index(f"<!-- planstate:begin {name} ")) + 1
    return text[start : text.index(f"<!-- planstate:end {name} -->", start)]


# ---------------------------------------------------------------------------- bounded regions


def test_the_blockers_region_shows_the_ten_oldest_and_counts_the_rest(run: Run, project: Path) -> None:
    for i in range(12):
        builders.write_record(project, "blocker", builders.blocker(i))
    builders.write_record(project, "blocker", builders.blocker(20, status="resolved", resolution="done"))
    ok(run("render", cwd=project))
    shown = region(state_file(project), "blockers")
    assert shown.count("- **[Blocker number") == 10
    assert "Blocker number 9" in shown and "Blocker number 10" not in shown  # oldest first
    assert shown.endswith("\n2 more open blockers in `blockers/`.\n\n1 resolved blocker in `blockers/`.\n")
    clean(run, project)
    ok(run("blocker", "add", "--description", "One more", cwd=project))  # a record command renders the same way
    assert "\n3 more open blockers in `blockers/`.\n" in region(state_file(project), "blockers")
    clean(run, project)


def test_decisions_and_sessions_regions_count_the_older_ones(run: Run, project: Path) -> None:
    for i in range(12):
        builders.write_record(project, "decision", builders.decision(i))
    for i in range(6):
        builders.write_record(project, "session", builders.session(i))
    ok(run("render", cwd=project))
    decisions, sessions = region(state_file(project), "decisions"), region(state_file(project), "sessions")
    assert decisions.count("| [Decision number") == 10 and decisions.endswith("\n2 older decisions in `decisions/`.\n")
    assert sessions.count("| ended |") == 5 and sessions.endswith("\n1 older session in `sessions/`.\n")
    clean(run, project)
