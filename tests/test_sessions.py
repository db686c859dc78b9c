"""Sessions through the real console script and the API: start, heartbeat, end, list, show, reap, durations."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from conftest import Run, exits, json_data, json_error, ok, outside_regions, planstate_command, refused, state_file

from planstate.core.errors import UsageError
from planstate.render.regions import render_new
from planstate.store.scaffold import initiative_files, materialize
from planstate.workspace import Workspace

NOW = "2026-03-04T05:00:00Z"
ID = re.compile(r"ses-[0-9a-hjkmnp-tv-z]{12}")


def at(when: str, **more: str) -> dict[str, str]:
    """Environment pinning the clock at `when`."""
    return {"PLANSTATE_NOW": when, **more}


def later(minutes: float) -> str:
    """NOW plus some minutes, as an ISO timestamp."""
    moment = datetime.fromisoformat(NOW) + timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch(when: str) -> int:
    """An ISO timestamp as seconds since 1970."""
    return int(datetime.fromisoformat(when).timestamp())


def start(run: Run, project: Path, *extra: str, when: str = NOW, env: dict[str, str] | None = None) -> dict[str, str]:
    """Start a session through the CLI (--json) and return the record (another active session only warns)."""
    result = run("session", "start", *extra, "--json", cwd=project, env={**at(when), **(env or {})})
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" or result.stderr.startswith("planstate: warning: session"), result.stderr
    return json_data(result)  # type: ignore[no-any-return]


def beat_file(project: Path, session_id: str) -> Path:
    """The heartbeat file of a session."""
    return project / ".planning" / ".local" / "heartbeats" / session_id


def sessions(project: Path) -> list[Path]:
    """The session files of the project, by name."""
    return sorted((project / ".planning" / "sessions").glob("*.md"))


def snapshot(project: Path) -> dict[str, tuple[bytes, int]]:
    """Every committed planning file's bytes and modification time (the machine-local .local/ left out)."""
    planning = project / ".planning"
    return {
        str(p.relative_to(planning)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(planning.rglob("*"))
        if p.is_file() and ".local" not in p.parts
    }


# ---------------------------------------------------------------------------- start


def test_start_writes_the_session_and_its_heartbeat(run: Run, project: Path) -> None:
    state_before = outside_regions(state_file(project))
    result = ok(run("session", "start", "--working-on", "phase 1: schema", cwd=project, env=at(NOW)))
    (path,) = sessions(project)
    session_id = path.name[:16]
    assert ID.fullmatch(session_id) and path.name == f"{session_id}-tester.md"
    assert result.stdout == (
        f"Started session {session_id} of tester (.planning/sessions/{path.name})\n"
        f"export PLANSTATE_SESSION={session_id}\n"
    )
    front, body = path.read_text().split("\n---\n", 1)
    assert front.splitlines() == [
        "---",
        "schema_version: 1",
        f"id: {session_id}",
        "agent: tester",
        "status: active",
        f"started: {NOW}",
        "ended: null",
        'working_on: "phase 1: schema"',
        "completed: []",
        "issues: []",
        "handoff_reason: null",
        "notes: null",
        "context_usage: null",
        "resumed_from: null",
    ]
    assert body == f"# Session {session_id} (tester)\n\nWorking on: phase 1: schema\n\n## Notes\n\n"
    beat = beat_file(project, session_id)
    assert beat.stat().st_mtime == epoch(NOW)
    assert f"session {session_id}\n" in beat.read_text()
    assert outside_regions(state_file(project)) == state_before
    assert ".local/" in (project / ".planning" / ".gitignore").read_text()  # heartbeats are never committed
    ok(run("validate", cwd=project))


def test_start_export_is_a_line_a_shell_evaluates(run: Run, project: Path) -> None:
    """`eval "$(planstate session start --export)"` in a real sh sets PLANSTATE_SESSION; the human line is on
    stderr, and the variable reaches the next command, which ends that very session."""
    command = " ".join(shlex.quote(word) for word in planstate_command())
    start = f"{command} session start --export --agent worker-1"
    program = f'eval "$({start})"; echo "$PLANSTATE_SESSION"; {command} session end'
    env = {"PATH": "/usr/bin:/bin", "PLANSTATE_NOW": NOW, "PLANSTATE_ACTOR": "tester", "NO_COLOR": "1"}
    done = subprocess.run(["sh", "-c", program], cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (path,) = sessions(project)
    session_id = path.name[:16]
    assert done.stdout == f"{session_id}\nEnded session {session_id} (.planning/sessions/{path.name})\n"
    assert done.stderr == f"Started session {session_id} of worker-1 (.planning/sessions/{path.name})\n"
    alone = exits(run("session", "start", "--export", cwd=project, env=at(NOW)))
    assert alone.stderr.startswith("Started session ")
    assert re.fullmatch(rf"export PLANSTATE_SESSION={ID.pattern}\n", alone.stdout)
    both = exits(run("session", "start", "--export", "--json", cwd=project), 2)
    assert "--export prints a line for the shell to eval; leave out --json" in json_error(both)["message"]


def test_start_through_the_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project, actor="someone")
    entry = ws.session.start(agent="worker-abc")
    assert entry.shown == f".planning/sessions/{entry.id}-worker-abc.md"
    data = entry.to_dict()
    assert (data["agent"], data["status"], data["started"], data["heartbeat"]) == ("worker-abc", "active", NOW, NOW)
    assert entry.warnings == []
    second = ws.session.start()
    assert second.data["agent"] == "someone"
    assert second.warnings == [
        f"session {entry.id} of worker-abc (last heartbeat {NOW}) is active on this initiative; "
        f"started {second.id} anyway"
    ]
    with pytest.raises(UsageError, match="refusing to start another") as caught:
        ws.session.start(exclusive=True)
    assert f"{entry.id} of worker-abc" in caught.value.message and f"{second.id} of someone" in caught.value.message
    with pytest.raises(UsageError, match="agent: must not be empty"):
        ws.session.start(agent=" ")


def test_a_second_session_warns_and_exclusive_refuses(run: Run, project: Path) -> None:
    first = start(run, project, "--agent", "worker-abc")
    result = run("session", "start", "--agent", "worker-def", cwd=project, env=at(later(5)))
    assert result.returncode == 0
    assert result.stderr == (
        f"planstate: warning: session {first['id']} of worker-abc (last heartbeat {NOW}) is active on this "
        f"initiative; started {result.stdout.split()[2]} anyway\n"
    )
    count = len(sessions(project))
    refused(
        run("session", "start", "--exclusive", cwd=project),
        "refusing to start another (--exclusive)",
        f"{first['id']} of worker-abc",
    )
    assert len(sessions(project)) == count


def test_a_new_session_resumes_from_the_latest_ended_or_crashed_one(run: Run, project: Path) -> None:
    assert start(run, project)["resumed_from"] is None
    ok(run("session", "end", cwd=project, env=at(later(10))))
    crashed = start(run, project, when=later(20))
    ok(run("session", "reap", "--stale-after", "30m", cwd=project, env=at(later(120))))
    resumed = start(run, project, when=later(130))
    assert resumed["resumed_from"] == crashed["id"]
    body = (project / resumed["path"]).read_text().split("\n---\n", 1)[1]
    assert f"Resuming from {crashed['id']} (crashed).\n" in body
    parallel = run("session", "start", cwd=project, env=at(later(131)))  # an active session is no predecessor
    assert parallel.stdout.splitlines()[0].endswith(f", resuming from {crashed['id']}")


# ---------------------------------------------------------------------------- heartbeat and which session


def test_heartbeat_touches_only_the_machine_local_file(run: Run, project: Path) -> None:
    made = start(run, project)
    before = snapshot(project)
    result = ok(run("session", "heartbeat", cwd=project, env=at(later(7))))
    assert result.stdout == f"Session {made['id']} alive at {later(7)}\n"
    assert beat_file(project, made["id"]).stat().st_mtime == epoch(later(7))
    assert snapshot(project) == before
    data = json_data(ok(run("session", "heartbeat", "--json", cwd=project, env=at(later(9)))))
    assert data == {"id": made["id"], "at": later(9), "path": f".planning/.local/heartbeats/{made['id']}"}
    assert beat_file(project, made["id"]).is_file()
    beat_file(project, made["id"]).unlink()  # e.g. another machine: the beat creates it
    Workspace.find(project).session.heartbeat(made["id"][:-2])
    assert beat_file(project, made["id"]).exists()


def test_which_session_a_command_means(run: Run, project: Path) -> None:
    refused(run("session", "heartbeat", cwd=project), "no active session in .planning/sessions/")
    mine = start(run, project)
    theirs = start(run, project, "--agent", "other")
    other = {"PLANSTATE_ACTOR": "third"}
    # The only active session of this agent wins; a third agent sees two candidates.
    assert mine["id"] in ok(run("session", "heartbeat", cwd=project)).stdout
    assert theirs["id"] in ok(run("session", "heartbeat", cwd=project, env={"PLANSTATE_ACTOR": "other"})).stdout
    refused(
        run("session", "heartbeat", cwd=project, env=other),
        "2 sessions are active",
        f"{mine['id']} (tester)",
        f"{theirs['id']} (other)",
        "--session ID or PLANSTATE_SESSION",
    )
    named = {**other, "PLANSTATE_SESSION": theirs["id"]}
    assert theirs["id"] in ok(run("session", "heartbeat", cwd=project, env=named)).stdout
    # A unique prefix: two sessions started in the same second share their time part and, rarely, random characters.
    unique = next(
        mine["id"][:n]
        for n in range(len(mine["id"]) - 2, len(mine["id"]) + 1)
        if not theirs["id"].startswith(mine["id"][:n])
    )
    assert mine["id"] in ok(run("session", "heartbeat", "--session", unique, cwd=project, env=named)).stdout
    refused(
        run("session", "heartbeat", cwd=project, env={"PLANSTATE_SESSION": "ses-nope"}),
        "PLANSTATE_SESSION=ses-nope: no session with id 'ses-nope'",
    )
    refused(run("session", "heartbeat", "--session", "ses-", cwd=project), "is ambiguous")
    # Once one is ended, the only active session of the initiative is meant, whoever asks.
    ok(run("session", "end", "--session", mine["id"], cwd=project))
    assert theirs["id"] in ok(run("session", "heartbeat", cwd=project, env=other)).stdout


def test_heartbeat_refuses_ended_and_crashed_sessions(run: Run, project: Path) -> None:
    ended = start(run, project)
    ok(run("session", "end", cwd=project, env=at(later(1))))
    refused(
        run("session", "heartbeat", "--session", ended["id"], cwd=project),
        f"{ended['path']}:5:1: status: session {ended['id']} is ended since {later(1)}",
        "planstate session start",
    )
    crashed = start(run, project, when=later(2))
    ok(run("session", "reap", cwd=project, env=at(later(60))))
    refused(run("session", "heartbeat", "--session", crashed["id"], cwd=project), "is crashed since")


# ---------------------------------------------------------------------------- end


def test_end_records_what_happened_and_removes_the_heartbeat(run: Run, project: Path) -> None:
    made = start(run, project, "--working-on", "phase 1")
    state_before = outside_regions(state_file(project))
    result = ok(
        run(
            "session",
            "end",
            "--completed",
            "Phase 1, plan 1: schema",
            "--completed",
            "Phase 1, plan 2: user model",
            "--issue",
            "Context exceeded 50%",
            "--handoff-reason",
            "Context limit reached",
            "--notes",
            "Clean hand-off",
            "--context-usage",
            "62%",
            cwd=project,
            env=at(later(90), PLANSTATE_SESSION=made["id"]),
        )
    )
    assert result.stdout == f"Ended session {made['id']} ({made['path']})\n"
    text = (project / made["path"]).read_text()
    for line in (
        "status: ended\n",
        f"ended: {later(90)}\n",
        'completed:\n  - "Phase 1, plan 1: schema"\n  - "Phase 1, plan 2: user model"\n',
        "issues:\n  - Context exceeded 50%\n",
        "handoff_reason: Context limit reached\n",
        "notes: Clean hand-off\n",
        "context_usage: 62%\n",
    ):
        assert line in text
    assert not beat_file(project, made["id"]).exists()
    assert outside_regions(state_file(project)) == state_before
    refused(run("session", "end", "--session", made["id"], cwd=project), f"already ended at {later(90)}")
    ok(run("validate", cwd=project))


def test_end_through_the_api_and_json(run: Run, project: Path) -> None:
    ws = Workspace.find(project)
    made = ws.session.start(agent="tester")
    entry = ws.session.end(made.id, completed=["a"], issues=["b"], context_usage=0.62)
    assert (entry.data["status"], entry.data["completed"], entry.data["context_usage"]) == ("ended", ["a"], 0.62)
    second = start(run, project)
    data = json_data(ok(run("session", "end", "--context-usage", "40", "--json", cwd=project)))
    assert (data["id"], data["status"], data["context_usage"]) == (second["id"], "ended", 40)
    with pytest.raises(UsageError, match="completed\\[0\\]: must not be empty"):
        ws.session.end(second["id"], completed=[""])


def test_end_keeps_hand_written_lines(run: Run, project: Path) -> None:
    made = start(run, project)
    path = project / made["path"]
    edited = (
        path.read_text()
        .replace("issues: []", "issues: []   # filled in by the agent")
        .replace("## Notes\n", "## Notes\n\nMy own notes.\n")
    )
    path.write_text(edited)
    ok(run("session", "end", "--notes", "done", cwd=project, env=at(later(3))))
    assert path.read_text() == edited.replace("status: active", "status: ended").replace(
        "ended: null", f"ended: {later(3)}"
    ).replace("notes: null", "notes: done")


def test_a_crashed_session_can_still_be_ended_by_its_agent(run: Run, project: Path) -> None:
    made = start(run, project)
    ok(run("session", "reap", cwd=project, env=at(later(45))))
    result = run("session", "end", "--completed", "x", cwd=project, env=at(later(46), PLANSTATE_SESSION=made["id"]))
    assert result.returncode == 0
    assert result.stderr == f"planstate: warning: session {made['id']} had been marked crashed; it is ended now\n"
    text = (project / made["path"]).read_text()
    assert "status: ended\n" in text and "marked crashed by `planstate session reap`" in text


# ---------------------------------------------------------------------------- list and show


def test_list_and_show(run: Run, project: Path) -> None:
    first = start(run, project, "--agent", "a1")
    ok(run("session", "end", "--session", first["id"], cwd=project, env=at(later(30))))
    second = start(run, project, "--agent", "a2", when=later(40))
    lines = ok(run("session", "list", cwd=project)).stdout.splitlines()
    assert lines == [
        f"{first['id']}  ended  a1  {NOW}  {later(30)}",
        f"{second['id']}  active  a2  {later(40)}  -",
    ]
    data = json_data(ok(run("session", "list", "--json", cwd=project)))["sessions"]
    assert [(s["id"], s["heartbeat"]) for s in data] == [(first["id"], None), (second["id"], later(40))]
    assert {"id", "path", "agent", "status", "started", "ended", "completed", "issues"} <= set(data[0])
    active = json_data(ok(run("session", "list", "--status", "active", "--json", cwd=project)))["sessions"]
    assert [s["id"] for s in active] == [second["id"]]
    recent = Workspace.find(project).session.list(since=later(35))
    assert recent.ids() == [second["id"]]
    shown = ok(run("session", "show", second["id"][:-2], cwd=project)).stdout
    path = project / second["path"]
    assert shown == f"# {second['path']} (last heartbeat on this machine: {later(40)})\n{path.read_text()}"
    detail = json_data(ok(run("session", "show", first["id"], "--json", cwd=project)))
    assert detail["body"].startswith(f"# Session {first['id']} (a1)")
    refused(run("session", "show", "ses-nope", cwd=project), "no session with id 'ses-nope'")
    refused(run("session", "list", "--status", "paused", cwd=project), "not one of: active, ended, crashed")
    assert ok(run("session", "list", "--since", later(24 * 60)[:10], cwd=project)).stdout == "no sessions\n"


# ---------------------------------------------------------------------------- reap


def test_reap_marks_a_session_without_heartbeat_crashed(run: Run, project: Path) -> None:
    alive = start(run, project, "--agent", "alive")
    stale = start(run, project, "--agent", "stale")
    beat = beat_file(project, stale["id"])
    os.utime(beat, (epoch(later(10)), epoch(later(10))))  # its last beat, 10 minutes in
    os.utime(beat_file(project, alive["id"]), (epoch(later(50)), epoch(later(50))))
    before = snapshot(project)
    dry = ok(run("session", "reap", "--stale-after", "30m", "--dry-run", cwd=project, env=at(later(60))))
    assert dry.stdout == f"would mark session {stale['id']} of stale crashed (last heartbeat {later(10)})\n"
    assert snapshot(project) == before and beat.exists()

    result = ok(run("session", "reap", "--stale-after", "30m", cwd=project, env=at(later(60))))
    assert result.stdout == f"marked session {stale['id']} of stale crashed (last heartbeat {later(10)})\n"
    text = (project / stale["path"]).read_text()
    assert "status: crashed\n" in text and f"ended: {later(10)}\n" in text
    assert (
        f"issues:\n  - no heartbeat since {later(10)} (stale after 30m); marked crashed by `planstate session reap`\n"
        in text
    )
    assert not beat.exists()
    assert "status: active\n" in (project / alive["path"]).read_text()
    changed = [name for name, value in snapshot(project).items() if before.get(name) != value]
    assert changed == ["STATE.md", f"sessions/{Path(stale['path']).name}"]  # STATE.md's regions; not the history

    again = snapshot(project)
    assert ok(run("session", "reap", "--stale-after", "30m", cwd=project, env=at(later(61)))).stdout == (
        "nothing to reap\n"
    )
    assert snapshot(project) == again
    ok(run("validate", cwd=project))


def test_reap_without_a_heartbeat_file_uses_the_start_time(run: Run, project: Path) -> None:
    made = start(run, project)
    beat_file(project, made["id"]).unlink()  # as on a CI machine that never saw the heartbeats
    assert ok(run("session", "reap", "--stale-after", "2h", cwd=project, env=at(later(119)))).stdout == (
        "nothing to reap\n"
    )
    reaped = run("session", "reap", "--stale-after", "2h", "--json", cwd=project, env=at(later(121)))
    data = json_data(ok(reaped))
    assert data == {
        "dry_run": False,
        "crashed": [
            {
                "id": made["id"],
                "path": made["path"],
                "initiative": "demo",
                "agent": "tester",
                "last_seen": NOW,
                "seen_by_heartbeat": False,
            }
        ],
        "abandoned": [],
    }
    text = (project / made["path"]).read_text()
    assert f"no heartbeat on this machine since it started {NOW} (stale after 2h)" in text


def test_reap_abandons_an_idle_initiative(run: Run, project: Path) -> None:
    # The project was created at 2026-01-01T00:00:00Z and nothing happened since.
    history = project / ".planning" / "history.jsonl"
    day_two = "2026-01-02T12:00:00Z"
    assert ok(run("session", "reap", "--abandon-after", "2d", cwd=project, env=at(day_two))).stdout == (
        "nothing to reap\n"
    )
    before = snapshot(project)
    dry = ok(run("session", "reap", "--abandon-after", "24h", "--dry-run", cwd=project, env=at(day_two)))
    assert dry.stdout == "would mark initiative demo abandoned (last activity 2026-01-01T00:00:00Z)\n"
    assert snapshot(project) == before
    result = ok(run("session", "reap", "--abandon-after", "24h", cwd=project, env=at(day_two)))
    assert result.stdout == "marked initiative demo abandoned (last activity 2026-01-01T00:00:00Z)\n"
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert status["lifecycle"]["state"] == "abandoned"
    assert status["lifecycle"]["reason"] == "no activity since 2026-01-01T00:00:00Z (abandon after 24h)"
    last = json.loads(history.read_text().splitlines()[-1])
    assert last == {
        "at": day_two,
        "from": "active",
        "to": "abandoned",
        "trigger": "session reap",
        "reason": "no activity since 2026-01-01T00:00:00Z (abandon after 24h)",
        "by": "tester",
    }
    again = snapshot(project)
    assert ok(run("session", "reap", "--abandon-after", "24h", cwd=project, env=at("2026-02-01T00:00:00Z"))).stdout == (
        "nothing to reap\n"
    )
    assert snapshot(project) == again
    ok(run("validate", cwd=project))


def test_any_record_counts_as_activity(run: Run, project: Path) -> None:
    ok(
        run(
            "decision",
            "add",
            "--context",
            "c",
            "--decision",
            "d",
            "--reason",
            "r",
            cwd=project,
            env=at("2026-01-02T00:00:00Z"),
        )
    )
    # The decision is dated 2026-01-02: it counts as activity at the start of that day.
    quiet = ok(run("session", "reap", "--abandon-after", "24h", cwd=project, env=at("2026-01-02T23:00:00Z")))
    assert quiet.stdout == "nothing to reap\n"
    ok(run("blocker", "add", "--description", "b", cwd=project, env=at("2026-01-05T00:00:00Z")))
    assert ok(run("session", "reap", "--abandon-after", "24h", cwd=project, env=at("2026-01-05T12:00:00Z"))).stdout == (
        "nothing to reap\n"
    )
    made = start(run, project, when="2026-01-06T00:00:00Z")
    os.utime(beat_file(project, made["id"]), (epoch("2026-01-08T00:00:00Z"),) * 2)
    result = ok(
        run(
            "session",
            "reap",
            "--stale-after",
            "3d",
            "--abandon-after",
            "1d",
            cwd=project,
            env=at("2026-01-08T12:00:00Z"),
        )
    )
    assert result.stdout == "nothing to reap\n"  # the heartbeat is activity too
    result = ok(
        run(
            "session",
            "reap",
            "--stale-after",
            "1h",
            "--abandon-after",
            "1d",
            cwd=project,
            env=at("2026-01-09T12:00:00Z"),
        )
    )
    assert result.stdout == (
        f"marked session {made['id']} of tester crashed (last heartbeat 2026-01-08T00:00:00Z)\n"
        "marked initiative demo abandoned (last activity 2026-01-08T00:00:00Z)\n"
    )


def test_a_decision_date_counts_from_the_start_of_its_day(run: Run, project: Path) -> None:
    """A decision recorded this morning does not keep an idle initiative alive until midnight, nor in the future."""
    decided = ["decision", "add", "--context", "c", "--decision", "d", "--reason", "r"]
    ok(run(*decided, cwd=project, env=at("2026-01-02T09:00:00Z")))
    result = ok(run("session", "reap", "--abandon-after", "2h", "--json", cwd=project, env=at("2026-01-02T12:00:00Z")))
    abandoned = json_data(result)["abandoned"]
    assert abandoned == [{"initiative": "demo", "path": ".planning/STATE.md", "last_activity": "2026-01-02T00:00:00Z"}]
    assert json_data(ok(run("status", "--json", cwd=project)))["lifecycle"]["state"] == "abandoned"


def test_reap_covers_every_initiative_unless_one_is_named(run: Run, project: Path) -> None:
    planning = project / ".planning"
    (planning / "initiatives").mkdir()
    files = initiative_files(
        slug="side",
        title="Side work",
        phases=["Only"],
        first_phase=1,
        actor="tester",
        next_action=None,
        shown=".planning/initiatives/side/STATE.md",
        state="paused",
        reason="parked",
        render_regions=lambda doc: render_new(doc, planning),
    )
    materialize(files, planning / "initiatives", planning / "initiatives" / "side")
    main = start(run, project)
    side = start(run, project, "--initiative", "side")
    assert side["path"].startswith(".planning/initiatives/side/sessions/")
    named = ok(run("session", "reap", "--initiative", "side", cwd=project, env=at(later(60)))).stdout
    assert named == f"marked session {side['id']} of tester crashed (last heartbeat {NOW})\n"
    assert "status: active" in (project / main["path"]).read_text()
    assert ok(run("session", "reap", cwd=project, env=at(later(60)))).stdout == (
        f"marked session {main['id']} of tester crashed (last heartbeat {NOW})\n"
    )
    # --abandon-after moves only active initiatives: the paused one stays paused.
    ok(run("session", "reap", "--abandon-after", "1d", cwd=project, env=at("2027-01-01T00:00:00Z")))
    assert "state: paused" in (planning / "initiatives" / "side" / "STATE.md").read_text()
    assert "state: abandoned" in state_file(project).read_text()


def test_reap_warns_about_unreadable_sessions_and_reaps_the_rest(run: Run, project: Path) -> None:
    made = start(run, project)
    (project / ".planning" / "sessions" / "ses-broken.md").write_text("---\nid: [\n---\n")
    result = run("session", "reap", cwd=project, env=at(later(60)))
    assert result.returncode == 0
    assert "\nplanstate: warning: skipped .planning/sessions/ses-broken.md:" in "\n" + result.stderr
    assert "region sessions not rendered: cannot re-render: .planning/sessions/ses-broken.md" in result.stderr
    assert result.stdout == f"marked session {made['id']} of tester crashed (last heartbeat {NOW})\n"


def test_no_session_path_ever_completes_an_initiative(run: Run, project: Path) -> None:
    """Seed 002: an agent exiting, `session end` or `reap` never completes an initiative, even when all is done."""
    path = project / ".planning" / "STATE.md"  # a hand edit: every phase done, the initiative still active
    path.write_text(
        path.read_text()
        .replace("status: active\n", "status: completed\n")
        .replace("status: pending\n    checkpoint", "status: completed\n    checkpoint")
    )
    history = project / ".planning" / "history.jsonl"
    start(run, project)
    ok(run("session", "end", "--completed", "everything", cwd=project, env=at(later(1))))
    start(run, project, when=later(2))  # this agent process then dies without a word
    ok(run("session", "reap", "--stale-after", "1m", cwd=project, env=at(later(30))))
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert (status["lifecycle"]["state"], status["phases_completed"]) == ("active", 3)
    ok(run("session", "reap", "--abandon-after", "1d", cwd=project, env=at("2027-01-01T00:00:00Z")))
    state = Workspace.find(project).state()
    assert state.lifecycle.state == "abandoned"
    assert state.lifecycle.completed_at is None
    assert all(json.loads(line)["to"] != "completed" for line in history.read_text().splitlines())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--stale-after", "soon"), "--stale-after 'soon' is not a duration"),
        (("--stale-after", "0m"), "--stale-after '0m' must be longer than zero"),
        (("--abandon-after", "24"), "--abandon-after '24' is not a duration"),
        (("--abandon-after=-1d",), "is not a duration"),
        (
            ("--stale-after", "999999999999w"),
            "--stale-after '999999999999w' is too long; durations are at most 100 years",
        ),
        (("--abandon-after", "1000000000d"), "--abandon-after '1000000000d' is too long"),
    ],
)
def test_reap_refuses_bad_durations(run: Run, project: Path, args: tuple[str, ...], message: str) -> None:
    start(run, project)
    before = snapshot(project)
    refused(run("session", "reap", *args, cwd=project, env=at(later(600))), message)
    assert snapshot(project) == before


def test_reap_through_the_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project)
    made = ws.session.start()
    monkeypatch.setenv("PLANSTATE_NOW", later(31))
    assert not ws.session.reap(stale_after=timedelta(minutes=32))
    result = ws.session.reap(stale_after="30m", dry_run=True)
    assert result.dry_run and [c.id for c in result.crashed] == [made.id]
    assert ws.session.show(made.id).data["status"] == "active"
    result = ws.session.reap(stale_after=timedelta(minutes=30))
    assert result.to_dict()["crashed"][0]["last_seen"] == NOW
    assert ws.session.show(made.id).data["status"] == "crashed"
    with pytest.raises(UsageError, match="longer than zero"):
        ws.session.reap(stale_after=timedelta(0))


# ---------------------------------------------------------------------------- templates


def test_user_template_override_and_literal_values(run: Run, project: Path) -> None:
    folder = project / ".planning" / "templates"
    folder.mkdir()
    (folder / "session.md.j2").write_text("{{ agent }} works on {{ working_on }} since {{ started }}\n")
    made = start(run, project, "--working-on", "{{ 7*7 }} {% raw %}")
    body = (project / made["path"]).read_text().split("\n---\n", 1)[1]
    assert body == "tester works on {{ 7*7 }} {% raw %} since 2026-03-04 05:00:00+00:00\n"


# ---------------------------------------------------------------------------- hand-made and hand-broken files

HAND_MADE = """\
---
schema_version: 1
id: session-003
agent: worker-abc   # the night shift
status: active
started: 2026-03-04T01:00:00Z
working_on: "Phase 2, Task 4: refresh token rotation"
---
Notes kept by hand.
"""


def test_a_hand_made_session_is_found_ended_and_reaped(run: Run, project: Path) -> None:
    folder = project / ".planning" / "sessions"
    path = folder / "session-003-worker-abc.md"
    path.write_text(HAND_MADE)
    ok(run("session", "heartbeat", "--session", "session-003", cwd=project, env=at(NOW)))
    assert beat_file(project, "session-003").stat().st_mtime == epoch(NOW)
    result = ok(run("session", "reap", "--stale-after", "1h", cwd=project, env=at(later(61))))
    assert result.stdout == f"marked session session-003 of worker-abc crashed (last heartbeat {NOW})\n"
    after = path.read_text()
    assert after == HAND_MADE.replace("status: active", "status: crashed").replace(
        "---\nNotes",
        f"ended: {NOW}\nissues:\n  - no heartbeat since {NOW} (stale after 1h); marked crashed by "
        "`planstate session reap`\n---\nNotes",
    )
    resumed = start(run, project, when=later(70))
    assert resumed["resumed_from"] == "session-003"
    ended = run("session", "end", "--session", "session-003", "--notes", "back", cwd=project)
    assert ended.returncode == 0 and "had been marked crashed" in ended.stderr
    assert path.read_text().endswith("notes: back\n---\nNotes kept by hand.\n")
    assert "# the night shift" in path.read_text()


def test_an_invalid_session_is_not_rewritten(run: Run, project: Path) -> None:
    path = project / ".planning" / "sessions" / "session-004-x.md"
    text = HAND_MADE.replace("session-003", "session-004").replace("agent: worker-abc", "issues: see notes\nagent: x")
    path.write_text(text)
    refused(run("session", "end", "--session", "session-004", cwd=project), "issues: expected a list, got a string")
    result = run("session", "reap", cwd=project, env=at(later(600)))
    assert result.returncode == 0
    assert result.stderr.startswith(f"planstate: warning: skipped .planning/sessions/{path.name}:4:1: issues: expected")
    assert result.stdout == "nothing to reap\n"
    assert path.read_text() == text


def test_start_warns_about_an_unreadable_session(run: Run, project: Path) -> None:
    (project / ".planning" / "sessions" / "ses-broken.md").write_text("---\nid: [\n---\n")
    result = run("session", "start", cwd=project)
    assert result.returncode == 0
    assert "\nplanstate: warning: skipped .planning/sessions/ses-broken.md:" in "\n" + result.stderr
    assert "region sessions not rendered: cannot re-render: .planning/sessions/ses-broken.md" in result.stderr


def test_a_heartbeat_that_cannot_be_written_is_a_warning_at_start(run: Run, project: Path) -> None:
    local = project / ".planning" / ".local"
    local.mkdir(exist_ok=True)
    (local / "heartbeats").write_text("not a folder\n")
    result = run("session", "start", "--json", cwd=project, env=at(NOW))
    assert result.returncode == 0
    assert result.stderr.startswith("planstate: warning: no heartbeat: .planning/.local/heartbeats/ses-")
    made = json_data(result)
    assert made["heartbeat"] is None and (project / made["path"]).is_file()
    refused(run("session", "heartbeat", cwd=project), "cannot write the heartbeat")
    reaped = ok(run("session", "reap", "--stale-after", "1h", cwd=project, env=at(later(61)))).stdout
    assert reaped == f"marked session {made['id']} of tester crashed (started {NOW})\n"
