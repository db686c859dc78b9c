"""Status, resume and check agree: each verdict (blocked, stalled, checkpoint, silent session) has one function.

Also what the brief carries beyond the front matter's position (key implementations, people's notes, keys that
look misspelt), `phase complete --next`, and the rule that work moves only while the initiative is active.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, exits, json_data, json_envelope, state_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planstate.core.errors import PlanstateError
from planstate.model import verdicts
from planstate.workspace import Workspace

Run = Callable[..., Completed]


# ---------------------------------------------------------------------------- agreement on generated states

STEPS = st.lists(
    st.sampled_from(
        ["complete", "checkpoint-failed", "fail", "retry", "skip", "block", "block-next", "resolve", "pause", "resume"]
    ),
    max_size=8,
)


def _step(ws: Workspace, step: str, made: list[str]) -> None:
    """One command through the API; a refusal (a move the state does not allow) is skipped, as an agent would."""
    current = ws.status().current_phase or 1
    try:
        if step == "complete":
            ws.phase.complete(current)
        elif step == "checkpoint-failed":
            ws.phase.complete(current, checkpoint="failed")
        elif step == "fail":
            ws.phase.fail(current, reason="flaky")
        elif step == "retry":
            ws.phase.retry(current)
        elif step == "skip":
            ws.phase.skip(current, reason="not needed")
        elif step in ("block", "block-next"):
            phase = current if step == "block" else current + 1
            made.append(ws.blocker.add(description=f"waiting {len(made)}", affects=[f"phase {phase}"]).id)
        elif step == "resolve" and made:
            ws.blocker.resolve(made.pop(0), resolution="done")
        elif step == "pause":
            ws.pause(reason="lunch")
        elif step == "resume":
            ws.resume(reason="back")
    except PlanstateError:
        pass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_status_and_resume_give_the_same_verdicts(steps: list[str], tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("verdicts")
    ws = Workspace.init(folder, title="Auth", phases=["Schema", "JWT", "OAuth"], actor="tester")
    made: list[str] = []
    for step in steps:
        _step(ws, step, made)
    status = ws.status().to_dict()
    brief = ws.brief().to_dict()
    assert status["status"] == brief["status"]
    assert status["possibly_stalled"] == brief["timing"]["possibly_stalled"]
    current = brief["current_phase"]
    here = status["current_phase"]
    assert (here["checkpoint"] if here else None) == (current["checkpoint"] if current else None)
    blocked_here = [item["blockers"] for item in brief["blocked_phases"] if item["current"]]
    assert [b["id"] for b in status["blockers"]] == ([b["id"] for b in blocked_here[0]] if blocked_here else [])
    failed = {item["number"] for item in brief["checkpoints"]}
    for number, phase in enumerate(ws.get("phases"), start=1):
        assert (number in failed) == (phase["status"] == "failed" or phase["checkpoint"] == "failed")
    check = ws.check().to_dict()
    assert check["error_count"] == 0, check  # every command above left the workspace check-clean


# ---------------------------------------------------------------------------- each verdict


def test_a_phase_is_not_stalled_after_a_minute_because_another_took_38_seconds() -> None:
    assert not verdicts.stalled(61, [38.0])
    assert not verdicts.stalled(3000, [38.0])  # under the floor: agent work is measured in hours
    assert verdicts.stalled(3 * 3600, [3600.0])
    assert not verdicts.stalled(None, [3600.0]) and not verdicts.stalled(9999, [])


def test_a_failed_phase_has_a_failed_checkpoint_in_every_view(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    exits(run("phase", "fail", "1", "--reason", "flaky tests"))
    text = exits(run("resume")).stdout
    assert "Status: checkpoint failed" in text and "checkpoint pending" not in text
    assert "phase 1 Schema: failed, checkpoint failed; flaky tests" in text
    status = json_data(exits(run("status", "--json")))
    assert status["status"] == "checkpoint_failed" and status["current_phase"]["checkpoint"] == "failed"


def test_status_shows_the_blocker_of_the_current_phase(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    made = json_data(
        exits(run("blocker", "add", "--description", "Waiting for keys", "--affects", "phase 1", "--json"))
    )
    text = exits(run("status")).stdout
    assert "  status     blocked\n" in text and f"  blocked by {made['id']}: Waiting for keys\n" in text
    status = json_data(exits(run("status", "--json")))
    assert status["status"] == "blocked" and status["blockers"] == [{"id": made["id"], "title": "Waiting for keys"}]
    assert json_data(exits(run("resume", "--json")))["status"] == "blocked"


def test_a_blocker_that_does_not_validate_blocks_in_no_view(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    made = json_data(exits(run("blocker", "add", "--description", "Waiting", "--affects", "phase 1", "--json")))
    path = tmp_path / made["path"]
    path.write_text(path.read_text().replace(f"identified: {made['identified']}", "identified: someday"))
    status = json_data(exits(run("status", "--json")))
    brief = json_data(exits(run("resume", "--json"), 1))  # exit 1: an untrusted brief
    assert status["status"] == brief["status"] == "active" and status["blockers"] == []
    assert not brief["trusted"] and brief["blockers"]["unreadable"] == 1
    assert "schema-error" in exits(run("check"), 1).stdout  # and check names it


def test_status_takes_the_blocking_blockers_from_the_store_which_hand_edits_never_make_stale(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status takes the blockers that block from the store (store/folders.head) and reads only the files changed; after
    same-size hand edits (mtime set back), a new blocker, a blocker that stops validating and a deletion, it gives
    the status a copy of the workspace without a cache gives, and agrees with the resume brief."""
    import shutil

    from test_cache import same_size_edit

    from planstate.store import cache, folders

    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: files just written are trusted by identity at once
    monkeypatch.setenv("PLANSTATE_NOW", "2026-03-01T10:00:00Z")  # both briefs at the same time
    project = tmp_path / "project"
    project.mkdir()
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", cwd=project))

    def add(phase: int) -> Path:
        words = ("--description", f"Waiting {phase}", "--affects", f"phase {phase}", "--json")
        return project / json_data(exits(run("blocker", "add", *words, cwd=project)))["path"]

    views: list[object] = []
    head = folders.head

    def counted(*args: Any, **kwargs: Any) -> Any:
        views.append(found := head(*args, **kwargs))
        return found

    monkeypatch.setattr(folders, "head", counted)

    def same_as_without_cache() -> dict[str, Any]:
        """The status in this process (where the tick is nothing), and the same of a copy with no cache."""
        kept, brief = Workspace.find(project).status().to_dict(), Workspace.find(project).brief().to_dict()
        copy = tmp_path / "copy"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".local"))
        assert kept == Workspace.find(copy).status().to_dict()
        assert brief == Workspace.find(copy).brief().to_dict() and brief["status"] == kept["status"]
        return kept

    first, second = add(1), add(2)
    assert same_as_without_cache()["status"] == "blocked"
    same_size_edit(first, "phase 1", "phase 2")  # it blocks the next phase instead
    assert same_as_without_cache()["status"] == "active"
    third = add(1)
    assert same_as_without_cache()["status"] == "blocked"
    same_size_edit(third, "status: new", "status: nix")  # it does not validate: every summary is taken
    assert same_as_without_cache()["status"] == "active"
    third.unlink()
    exits(run("phase", "complete", "1", cwd=project))  # phase 2 is current: the first two blockers name it
    found = same_as_without_cache()
    assert found["status"] == "blocked" and len(found["blockers"]) == 2
    second.unlink()
    assert len(same_as_without_cache()["blockers"]) == 1
    assert sum(view is not None for view in views) >= 4  # answered from the store, not only from every summary


def test_a_silent_session_is_stale_in_check_over_in_resume_and_reaped_alike(run: Run, tmp_path: Path) -> None:
    start = "2026-03-01T10:00:00Z"
    exits(run("init", "--title", "Auth", "--phase", "Schema", env={"PLANSTATE_NOW": start}))
    session = json_data(exits(run("session", "start", "--json", env={"PLANSTATE_NOW": start})))["id"]
    for minutes, silent in ((29, False), (31, True)):
        at = {"PLANSTATE_NOW": f"2026-03-01T10:{minutes:02d}:00Z"}
        check = json_data(run("check", "--json", env=at))
        stale = [f for f in check["findings"] if f["code"] == "stale-session"]
        brief = json_data(exits(run("resume", "--json", env=at)))
        over = brief["last_session"] is not None and brief["last_session"]["id"] == session
        reap = json_data(exits(run("session", "reap", "--dry-run", "--json", env=at)))
        assert bool(stale) == over == silent == (session in json.dumps(reap)), (minutes, stale, brief, reap)


# ---------------------------------------------------------------------------- what the brief carries


def test_resume_carries_key_implementations_peoples_notes_and_likely_typos(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    exits(run("append", "resume_context.key_implementations", "JWT signing with jose"))
    state = state_file(tmp_path)
    text = state.read_text()
    text = text.replace("## Where we are\n", "Ann: staging is flaky on Mondays; rerun once.\n\n## Where we are\n")
    state.write_text(text.replace("\nnext_action:", "\nnxt_action:"))
    brief = json_data(run("resume", "--json"))
    assert brief["key_implementations"] == ["JWT signing with jose"]
    assert brief["notes"] == "Ann: staging is flaky on Mondays; rerun once."
    (typo,) = [v for v in brief["verification"] if v["kind"] == "unknown_key"]
    assert "nxt_action is not a field" in typo["message"] and "did you mean next_action?" in typo["message"]
    shown = run("resume").stdout
    assert "Key implementations:\n  - JWT signing with jose\n" in shown
    assert "Notes in STATE.md (outside the generated regions):\n  Ann: staging is flaky" in shown
    check = run("check").stdout
    assert "warning unknown-key: nxt_action is not a field of the format; planstate keeps it (did you mean" in check


def test_a_blocker_on_a_phase_the_initiative_does_not_have_is_refused(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT"))
    refused = run("blocker", "add", "--description", "later", "--affects", "phase 4")
    assert refused.returncode == 2
    assert refused.stderr == "planstate: affects: names phase 4, but phases are numbered 1 to 2\n"
    assert not list((tmp_path / ".planning" / "blockers").glob("*.md"))


def test_a_fresh_state_md_has_no_notes(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    assert json_data(exits(run("resume", "--json")))["notes"] is None


# ---------------------------------------------------------------------------- phase complete --next


def test_phase_complete_sets_the_next_action_or_warns_that_it_was_written_before(run: Run, tmp_path: Path) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema", "--phase", "JWT", "--phase", "OAuth"))
    exits(run("next", "write the migration"))
    done = exits(run("phase", "complete", "1"))
    assert done.stderr == (
        "planstate: warning: the next action was written before phase 1 completed: 'write the migration'; "
        "if it is done, set the next one (`planstate next TEXT`)\n"
    )
    done = exits(run("phase", "complete", "2", "--next", "Register the Google OAuth app", "--json"))
    assert json_envelope(done)["warnings"] == []
    assert exits(run("get", "next_action")).stdout == "Register the Google OAuth app\n"
    assert run("phase", "complete", "3", "--next", "  ").returncode == 2
    assert exits(run("check")).returncode == 0


# ---------------------------------------------------------------------------- work moves only while active


@pytest.mark.parametrize(
    ("args", "doing"), [(("task", "start", "x"), "start a task"), (("task", "done"), "finish a task")]
)
def test_task_commands_are_refused_while_paused(run: Run, tmp_path: Path, args: tuple[str, ...], doing: str) -> None:
    exits(run("init", "--title", "Auth", "--phase", "Schema"))
    exits(run("task", "start", "first"))
    exits(run("pause", "--reason", "lunch"))
    before = state_file(tmp_path).read_bytes()
    refused = run(*args)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"planstate: .planning/STATE.md:{_line(tmp_path, '  state: paused')}:3: lifecycle.state: cannot {doing}: "
        "the initiative is paused; work moves only while it is active (`planstate resume --activate` makes it "
        "active)\n"
    )
    assert state_file(tmp_path).read_bytes() == before
    exits(run("next", "pick up the schema"))  # intent and notes are recorded while paused
    exits(run("context", "--file", "schema.sql"))
    assert exits(run("check")).returncode == 0


def _line(folder: Path, text: str) -> int:
    """The number of the first line of STATE.md that is `text`."""
    lines = state_file(folder).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line == text)
