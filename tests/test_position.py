"""Position, next action, resume context and tasks through the real CLI; managed fields; layout kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, Run, front, json_data, ok, refused, state_file

from planstate.cli.main import build_parser
from planstate.core.errors import UsageError
from planstate.workspace import Workspace


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) pairs of lines that differ between two texts with the same number of lines."""
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


# ---------------------------------------------------------------------------- position


def test_position_sets_fields_and_prints_changes(run: Run, project: Path) -> None:
    out = ok(run("position", "--task", "Write the parser", "--status", "in_progress", "--plan", "3", cwd=project))
    assert out.stdout.splitlines() == [
        ".planning/STATE.md: position.plan: null → 3",
        ".planning/STATE.md: position.task: null → Write the parser",
        ".planning/STATE.md: position.status: pending → in_progress",
    ]
    result = json_data(ok(run("position", "--wave", "2", "--plan", "auth", "--step", "tuning", "--json", cwd=project)))
    assert result == {
        "path": ".planning/STATE.md",
        "changed": True,
        "changes": [
            {"field": "position.plan", "old": 3, "new": "auth"},
            {"field": "position.wave", "old": None, "new": 2},
            {"field": "position.step", "old": None, "new": "tuning"},
        ],
    }
    shown = ok(run("position", cwd=project)).stdout
    assert "task: Write the parser\n" in shown
    assert json_data(ok(run("position", "--json", cwd=project)))["wave"] == 2
    ok(run("position", "--task", "", "--wave", "", cwd=project))
    position = front(project)["position"]
    assert (position["task"], position["wave"]) == (None, None)
    assert ok(run("position", "--wave", "", cwd=project)).stdout == ".planning/STATE.md: no change\n"


def test_position_refuses_bad_input_and_writes_nothing(run: Run, project: Path) -> None:
    before = state_file(project).read_bytes()
    refused(
        run("position", "--phase", "7", cwd=project), "position.phase: 7 is not a phase; phases are numbered 1 to 3"
    )
    refused(run("position", "--phase", "x", cwd=project), "invalid int value")
    refused(run("position", "--status", "sleeping", cwd=project), "invalid choice: 'sleeping'")
    refused(run("position", "--wave", "soon", cwd=project), "position.wave: expected a whole number")
    refused(run("position", "--wave", "-1", cwd=project), "position.wave: expected a whole number >= 0")
    refused(run("position", "--phase", "2", cwd=project), "cannot move to phase 2: phase 1 (Design) is active")
    refused(run("next", "  ", cwd=project), "next_action: must not be empty")
    assert state_file(project).read_bytes() == before


def test_position_phase_moves_the_pointer_when_no_phase_is_active(run: Run, project: Path) -> None:
    for number in ("1", "2", "3"):
        ok(run("phase", "complete", number, cwd=project))
    ok(run("reopen", cwd=project))
    ok(run("position", "--phase", "1", cwd=project))
    assert front(project)["position"]["phase_name"] == "Design"
    ok(run("phase", "start", "1", cwd=project))
    assert front(project)["phases"][0]["status"] == "active"


def test_position_api_none_clears_and_omitted_stays(project: Path) -> None:
    ws = Workspace.find(project)
    ws.position(task="t1", wave=1, status="in_progress")
    edited = ws.position(task=None)
    assert [(c.path, c.old, c.new) for c in edited.changes] == [("position.task", "t1", None)]
    state = ws.state()
    assert (state.position.task, state.position.wave, state.position.status) == (None, 1, "in_progress")
    with pytest.raises(UsageError) as caught:
        ws.position(status="bogus")
    assert caught.value.field == "position.status"
    assert caught.value.line is not None


# ---------------------------------------------------------------------------- next


def test_next_keeps_several_lines(run: Run, project: Path) -> None:
    text = "Finish the refresh endpoint.\nThen run the phase 2 checks."
    out = ok(run("next", text, cwd=project)).stdout
    assert out == (
        '.planning/STATE.md: next_action: "Start phase 1: Design" → '
        '"Finish the refresh endpoint.\\nThen run the phase 2 checks."\n'
    )
    assert front(project)["next_action"] == text
    assert ok(run("next", cwd=project)).stdout == text + "\n"
    assert json_data(ok(run("next", "--json", cwd=project))) == text
    assert Workspace.find(project).next("One line").changes[0].new == "One line"


# ---------------------------------------------------------------------------- context


def test_context_appends_without_duplicates_and_answers_questions(run: Run, project: Path) -> None:
    ok(run("context", "--file", "src/a.py", "--file", "src/b.py", "--file", "src/a.py", cwd=project))
    ok(run("context", "--file", "src/b.py", "--implementation", "Tokens stored in SQLite", cwd=project))
    ok(run("context", "--question", "Which JWT library?", "--question", "Cookie or header?", cwd=project))
    context = front(project)["resume_context"]
    assert context == {
        "files_modified": ["src/a.py", "src/b.py"],
        "key_implementations": ["Tokens stored in SQLite"],
        "open_questions": ["Which JWT library?", "Cookie or header?"],
    }
    result = json_data(ok(run("context", "--answered", "Which JWT library?", "--json", cwd=project)))
    assert result["changes"] == [
        {
            "field": "resume_context.open_questions",
            "old": ["Which JWT library?", "Cookie or header?"],
            "new": ["Cookie or header?"],
        }
    ]
    before = state_file(project).read_bytes()
    refused(
        run("context", "--answered", "Is it Friday?", cwd=project),
        "resume_context.open_questions: 'Is it Friday?' is not an open question (open questions: Cookie or header?)",
    )
    assert state_file(project).read_bytes() == before
    ok(run("context", "--clear-files", "--file", "src/c.py", cwd=project))
    assert front(project)["resume_context"]["files_modified"] == ["src/c.py"]
    shown = ok(run("context", cwd=project)).stdout
    assert "files_modified:\n  - src/c.py\n" in shown
    ws = Workspace.find(project)
    ws.context(clear_implementations=True, clear_questions=True, questions=["New?"])
    assert ws.state().resume_context.open_questions == ["New?"]
    assert ws.state().resume_context.key_implementations == []


# ---------------------------------------------------------------------------- tasks


def test_task_start_and_done(run: Run, project: Path) -> None:
    refused(run("task", "done", cwd=project), "no task is in progress")
    out = ok(run("task", "start", "Write the parser", "--plan", "2", "--wave", "1", cwd=project)).stdout
    assert ".planning/STATE.md: position.task: null → Write the parser\n" in out
    position = front(project)["position"]
    assert (position["task"], position["status"], position["plan"], position["wave"]) == (
        "Write the parser",
        "in_progress",
        2,
        1,
    )
    ok(run("task", "done", "--next", "Test the parser", cwd=project))
    data = front(project)
    assert (data["position"]["task"], data["position"]["status"]) == ("Test the parser", "in_progress")
    assert data["progress"]["current_phase_completed"] == 1
    result = json_data(ok(run("task", "done", "--json", cwd=project)))
    assert {"field": "position.status", "old": "in_progress", "new": "done"} in result["changes"]
    assert {"field": "progress.current_phase_completed", "old": 1, "new": 2} in result["changes"]
    before = state_file(project).read_bytes()
    refused(run("task", "done", cwd=project), "task 'Test the parser' is already done")
    assert state_file(project).read_bytes() == before  # a retried `done` never counts twice
    ws = Workspace.find(project)
    ws.task.start("API task")
    ws.task.done()
    assert ws.state().progress.current_phase_completed == 3


def test_seed_003_update_table_is_covered(run: Run) -> None:
    """docs/cli.md maps every row of seed 003's table to a command; the phase and task ones exist here."""
    cli = (REPO / "docs" / "cli.md").read_text()
    events = [
        "Task started",
        "Task completed",
        "Decision made",
        "Blocker encountered",
        "Blocker resolved",
        "Session start",
        "Session end",
        "Phase completed",
    ]
    rows = dict(re.findall(r"^\| ([A-Z][a-z]+ [a-z]+) \| .*? \| `planstate ([a-z ]+)", cli, re.MULTILINE))
    assert sorted(rows) == sorted(events)
    parser = build_parser()
    for event in ("Task started", "Task completed", "Phase completed"):
        words = rows[event].split()[:2]
        assert ok(run(*words, "--help")).stdout.startswith(f"usage: planstate {' '.join(words)}"), event
    assert parser.prog == "planstate"


# ---------------------------------------------------------------------------- managed fields

MANAGED = [
    ("set", "lifecycle.state", "paused"),
    ("set", "lifecycle", "{state: paused}"),
    ("set", "lifecycle.reason", "because"),
    ("set", "lifecycle.error.message", "x"),
    ("unset", "lifecycle.since"),
    ("set", "phases.1.status", "completed"),
    ("set", "phases.1.started", "2026-01-01T00:00:00Z"),
    ("set", "phases.1.completed", "2026-01-01T00:00:00Z"),
    ("set", "phases.2.attempts", "3"),
    ("set", "phases.2.checkpoint", "passed"),
    ("set", "phases.2.failure", "x"),
    ("unset", "phases.1.attempts"),
    ("set", "phases.3", "{name: Ship, status: completed}"),
    ("append", "phases", "{name: Extra}"),
    ("unset", "phases.3"),
]


@pytest.mark.parametrize("args", MANAGED, ids=[" ".join(a[:2]) for a in MANAGED])
def test_managed_fields_are_refused_by_set_append_unset(run: Run, project: Path, args: tuple[str, ...]) -> None:
    before = state_file(project).read_bytes()
    line = refused(run(*args, cwd=project), ".planning/STATE.md:", "changed only by commands: planstate ")
    commands = "planstate pause|resume --activate" if args[1].startswith("lifecycle") else "planstate phase start|"
    assert commands in line
    assert state_file(project).read_bytes() == before


FIXED = [
    (("set", "position.phase", "2"), "changed only by commands: planstate position --phase N|phase start N"),
    (("set", "position", "{phase: 2}"), "holds position.phase, which is changed only by commands: planstate position"),
    (("unset", "position"), "holds position.phase"),
    (("set", "structure.first_phase", "0"), "planstate init|initiative new|phase add|remove|move (phases_total"),
    (
        ("set", "structure.phases_total", "4"),
        "phase add|remove|move (phases_total counts the phases; the rest is fixed",
    ),
    (("unset", "structure"), "structure: is changed only by commands: planstate init|initiative new|phase add"),
    (("set", "structure", "{phases_total: 3, first_phase: 0}"), "the rest is fixed at creation"),
    (("set", "initiative", "other"), "initiative: is changed only by commands: planstate init|initiative new"),
    (("set", "phases.1.previous", "[]"), "planstate phase start|"),
    (("append", "phases.1.previous", "{checkpoint: passed}"), "planstate phase start|"),
    (("set", "phases.1.failed_at", "2026-01-01T00:00:00Z"), "planstate phase start|"),
    (("set", "lifecycle.total_duration_seconds", "60"), "planstate pause|"),
]


@pytest.mark.parametrize(("args", "hint"), FIXED, ids=[" ".join(a[:2]) for a, _ in FIXED])
def test_pointer_snapshot_and_slug_are_not_set_by_hand(
    run: Run, project: Path, args: tuple[str, ...], hint: str
) -> None:
    """`set position.phase` would bypass the phase rules; the structure snapshot and the slug are fixed at creation."""
    before = state_file(project).read_bytes()
    refused(run(*args, cwd=project), ".planning/STATE.md:", hint)
    assert state_file(project).read_bytes() == before


def test_an_active_phase_that_is_not_current_is_a_problem_position_repairs(run: Run, project: Path) -> None:
    """A hand edit that moves position.phase off the active phase is caught by validate and check, the phase
    commands refuse to guess, and `position --phase` puts the pointer back."""
    path = state_file(project)
    path.write_text(path.read_text().replace("  phase: 1\n", "  phase: 2\n", 1))
    problem = "position.phase: is 2 but phase 1 (Design) is active; the active phase is always the current one"
    validated = run("validate", cwd=project)
    assert validated.returncode == 1
    assert re.search(r"^\.planning/STATE\.md:\d+:\d+: " + re.escape(problem), validated.stdout, re.MULTILINE)
    checked = run("check", cwd=project)
    assert checked.returncode == 1 and problem in checked.stdout
    broken = path.read_bytes()
    for command in (("phase", "complete", "1"), ("phase", "complete", "2"), ("phase", "start", "2")):
        result = run(*command, cwd=project)
        assert result.returncode == 2 and problem in result.stderr, result.stderr
    refused(run("position", "--phase", "3", cwd=project), "cannot move to phase 3: phase 1 (Design) is active")
    assert path.read_bytes() == broken
    ok(run("position", "--phase", "1", cwd=project))
    ok(run("validate", cwd=project))
    ok(run("phase", "complete", "1", cwd=project))
    assert front(project)["position"]["phase"] == 2


def test_position_repairs_a_pointer_out_of_range(run: Run, project: Path) -> None:
    """`check` reports a hand-edited position.phase outside the phases; `set` refuses it, `position` repairs it."""
    path = state_file(project)
    path.write_text(path.read_text().replace("  phase: 1\n", "  phase: 9\n", 1))
    assert run("phase", "complete", "1", cwd=project).returncode == 2
    ok(run("position", "--phase", "1", cwd=project))
    assert front(project)["position"] == front(project)["position"] | {"phase": 1, "phase_name": "Design"}
    ok(run("validate", cwd=project))


def test_unmanaged_phase_fields_stay_writable(run: Run, project: Path) -> None:
    ok(run("set", "phases.1.name", "Design and plan", "phases.1.evidence.reviewed", "true", cwd=project))
    phase = front(project)["phases"][0]
    assert (phase["name"], phase["evidence"]) == ("Design and plan", {"reviewed": True})


# ---------------------------------------------------------------------------- layout


def front_text(text: str) -> str:
    """The front matter of a file's text (the body's generated regions change with it, by design)."""
    return text.split("---\n", 2)[1]


def test_comments_and_layout_survive_around_the_edited_lines(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    text = text.replace("  task: null\n", "  task: null      # what the agent does now\n")
    text = text.replace("  wave: null\n", "  wave: null   # parallel waves\n  x_owner: ana\n")
    text = text.replace("next_action:", "# what comes next, in words\nnext_action:")
    text += "\n## Log\n\n- kept by people\n"
    path.write_text(text)
    env = {"PLANSTATE_NOW": "2026-02-01T00:00:00Z"}
    ok(run("task", "start", "Write tests", cwd=project, env=env))
    after = path.read_text()
    assert changed_lines(front_text(text), front_text(after)) == [
        ("updated: 2026-01-01T00:00:00Z", "updated: 2026-02-01T00:00:00Z"),
        ("  task: null      # what the agent does now", "  task: Write tests      # what the agent does now"),
        ("  status: pending", "  status: in_progress"),
    ]
    ok(run("next", "Review the tests", cwd=project, env=env))
    assert changed_lines(front_text(after), front_text(path.read_text())) == [
        ('next_action: "Start phase 1: Design"', 'next_action: "Review the tests"'),  # its quoting style kept
    ]
    before = path.read_text()
    ok(run("context", "--file", "tests/test_x.py", cwd=project, env=env))
    new = path.read_text()
    assert front_text(new).replace(
        "  files_modified:\n    - tests/test_x.py\n", "  files_modified: []\n"
    ) == front_text(before)
    assert new.endswith("\n## Log\n\n- kept by people\n")
    assert "  wave: null   # parallel waves\n  x_owner: ana\n" in new
