"""A well-formed date or timestamp that does not exist (`2026-02-30`, `T25:00:00Z`) is a value problem at its field:
every command answers with one line or a finding, never an internal error (exit 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run, state_file

READS = [("status",), ("get", "title"), ("validate",), ("check",), ("resume",), ("render",), ("decision", "list")]


@pytest.mark.parametrize(
    "edit", ["updated: 2026-02-30T00:00:00Z", "created: 2026-13-45T99:99:99Z", "updated: 2026-01-01T25:00:00Z"]
)
def test_no_such_timestamp_in_state(run: Run, project: Path, edit: str) -> None:
    field = edit.split(":")[0]
    path = state_file(project)
    lines = [edit if line.startswith(f"{field}:") else line for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
    for args in READS:
        done = run(*args, cwd=project, timeout=30)
        assert done.returncode in (0, 1, 2), (args, done.stderr)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
        if done.returncode == 2:
            assert done.stderr.startswith(f"planstate: .planning/STATE.md:{8 if field == 'updated' else 7}:1: {field}:")


def test_no_such_date_in_a_decision(run: Run, project: Path) -> None:
    assert run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project).returncode == 0
    (record,) = (project / ".planning" / "decisions").glob("*.md")
    record.write_text(
        "\n".join("date: 2026-02-30" if x.startswith("date:") else x for x in record.read_text().splitlines()) + "\n"
    )
    for args in READS:
        done = run(*args, cwd=project, timeout=30)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert "internal error" not in done.stderr
    validate = run("validate", cwd=project)
    assert f"{record.relative_to(project)}:5:1: date: expected a date (YYYY-MM-DD)" in validate.stdout
    assert "(day is out of range for month)" in validate.stdout
