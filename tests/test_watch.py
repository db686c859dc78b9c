"""`planstate watch`: a real watchdog observer in a real process, on real files edited the ways editors edit them.

Every wait polls for the expected line with a generous timeout (the machine may be busy); no test
assumes how fast a write is seen.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import json_error, planstate_command, state_file
from watching import TIMEOUT, WatchProcess

from planstate.check import checks
from planstate.workspace import Workspace


def editor_save(path: Path, text: str) -> None:
    """Save as many editors do: write a temp file beside the file, then rename it over the file."""
    temp = path.with_name(f".{path.name}.swp-{os.getpid()}")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def vim_save(path: Path, text: str) -> None:
    """Save as vim does with `backupcopy=no`: rename the file to a backup, write a new file, delete the backup."""
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    path.write_text(text, encoding="utf-8")
    backup.unlink()


def keys(ws: Workspace) -> set[tuple[Any, ...]]:
    """The keys of what `planstate check` finds now."""
    return {f.key for f in checks.run(ws.ctx)[1]}


# ---------------------------------------------------------------------------- editors


def test_editor_style_save_is_found_then_cleared(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    original = path.read_text()
    watcher = watch()
    editor_save(path, original.replace("  percent: 0\n", "  percent: 50\n"))
    found = watcher.wait_event("found", "derived-mismatch")
    assert found["path"] == ".planning/STATE.md"
    assert found["message"] == "progress.percent is 50 but the phases make it 0"
    editor_save(path, original)
    cleared = watcher.wait_event("cleared", "derived-mismatch")
    assert cleared["message"] == found["message"]


def test_vim_backup_and_write_is_seen(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    original = path.read_text()
    watcher = watch()
    vim_save(path, original.replace("  phase_name: Design\n", "  phase_name: Drawing\n"))
    watcher.wait_event("found", "phase-name-mismatch")
    vim_save(path, original)
    watcher.wait_event("cleared", "phase-name-mismatch")
    assert not any(e["event"] == "found" and e["code"] == "parse-error" for e in watcher.seen)  # no torn reads


def test_a_burst_of_100_writes_settles_on_the_truth(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    original = path.read_text()
    watcher = watch()
    for n in range(100):
        path.write_text(original.replace("  percent: 0\n", f"  percent: {n % 7}\n"), encoding="utf-8")
    # The last write leaves percent 99 % 7 = 1: one finding, whatever the watcher saw on the way.
    watcher.wait_until_current(keys(Workspace.find(project)))
    assert len(watcher.current) == 1 and next(iter(watcher.current))[0] == "derived-mismatch"
    path.write_text(original, encoding="utf-8")
    watcher.wait_until_current(set())
    assert watcher.proc.poll() is None


def test_a_hand_edit_inside_a_region_is_found(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    original = path.read_text()
    watcher = watch()
    editor_save(path, original.replace("- **Task:** none (pending)", "- **Task:** my words"))
    found = watcher.wait_event("found", "hand-edit")
    assert found["field"] == "region position" and found["line"] is not None
    editor_save(path, original)
    watcher.wait_event("cleared", "hand-edit")


def test_an_invalid_yaml_save_is_found_then_cleared_when_fixed(
    watch: Callable[..., WatchProcess], project: Path
) -> None:
    path = state_file(project)
    original = path.read_text()
    watcher = watch()
    path.write_text(original.replace("title: Demo\n", "title: [Demo\n"), encoding="utf-8")
    found = watcher.wait_event("found", "parse-error")
    assert found["path"] == ".planning/STATE.md" and found["line"] == 7
    path.write_text(original, encoding="utf-8")
    watcher.wait_event("cleared", "parse-error")


def test_a_finding_is_not_checked_while_its_file_does_not_parse_and_not_found_twice(
    watch: Callable[..., WatchProcess], project: Path
) -> None:
    path = state_file(project)
    original = path.read_text()
    drifted = original.replace("  percent: 0\n", "  percent: 50\n")
    watcher = watch()
    editor_save(path, drifted)
    found = watcher.wait_event("found", "derived-mismatch")
    editor_save(path, drifted.replace("title: Demo\n", "title: [Demo\n"))
    watcher.wait_event("found", "parse-error")
    unchecked = watcher.wait_event("unchecked", "derived-mismatch")
    assert unchecked["message"] == found["message"]
    assert unchecked["reason"] == "not checked until .planning/STATE.md parses"
    schema = json.loads((Path(checks.__file__).parent.parent / "schemas" / "watch.json").read_text())
    jsonschema.validate(unchecked, schema)
    editor_save(path, drifted)  # it parses again and the finding still holds: it was never cleared
    watcher.wait_event("cleared", "parse-error")
    editor_save(path, drifted.replace("  phase_name: Design\n", "  phase_name: Drawing\n"))
    watcher.wait_event("found", "phase-name-mismatch")  # a later check: everything before it was said
    said = [(e["event"], e["code"]) for e in watcher.seen if e.get("code") == "derived-mismatch"]
    assert said == [("found", "derived-mismatch"), ("unchecked", "derived-mismatch")]
    assert watcher.current.keys() == keys(Workspace.find(project))
    editor_save(path, original.replace("title: Demo\n", "title: [Demo\n"))  # both repaired while it is unreadable
    watcher.wait_event("unchecked", "derived-mismatch")
    editor_save(path, original)
    watcher.wait_event("cleared", "derived-mismatch")  # it parses, and the finding is gone: now it is cleared
    watcher.wait_until_current(set())


def test_a_finding_is_not_checked_while_the_planning_folder_is_gone(
    watch: Callable[..., WatchProcess], project: Path, tmp_path: Path
) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    planning = project / ".planning"
    saved = tmp_path / "saved"
    shutil.copytree(planning, saved)
    process = WatchProcess(project, "--format", "text")  # the lines as people read them
    try:
        process.wait(lambda line: line.startswith("watching "))
        shutil.rmtree(planning)
        line = process.wait(lambda line: line.startswith("unchecked "))
        assert line == (
            "unchecked .planning/STATE.md:47:3: error derived-mismatch: progress.percent is 50 but the phases make"
            " it 0 (not checked until .planning/ is back)"
        )
        shutil.copytree(saved, planning)
        process.wait(lambda line: line.startswith("cleared ") and "gone" in line)
        path.write_text(path.read_text().replace("  phase_name: Design\n", "  phase_name: Drawing\n"))
        process.wait(lambda line: line.startswith("found ") and "phase-name-mismatch" in line)
        said = [line.split()[0] for line in process.seen if "derived-mismatch" in line]
        assert said == ["found", "unchecked"]  # found before the folder went, and not again when it came back
    finally:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()


def test_a_record_written_by_another_clone_makes_a_region_stale(
    watch: Callable[..., WatchProcess], project: Path
) -> None:
    watcher = watch()
    record = project / ".planning" / "blockers" / "blk-1b2k9qx7m4fa-quota.md"
    record.write_text(
        "---\nschema_version: 1\nid: blk-1b2k9qx7m4fa\ntitle: Quota\nstatus: active\ndescription: d\n"
        "identified: 2026-01-01T00:00:00Z\n---\n"
    )
    found = watcher.wait_event("found", "stale-region")
    assert found["field"] == "region blockers"


# ---------------------------------------------------------------------------- the folder itself


def test_a_deleted_and_recreated_planning_folder_is_watched_again(
    watch: Callable[..., WatchProcess], project: Path, tmp_path: Path
) -> None:
    planning = project / ".planning"
    saved = tmp_path / "saved"
    shutil.copytree(planning, saved)
    watcher = watch()
    shutil.rmtree(planning)
    gone = watcher.wait_event("found", "parse-error")
    assert gone["path"] == ".planning/" and "gone" in gone["message"]
    shutil.copytree(saved, planning)
    watcher.wait_event("cleared", "parse-error")
    path = state_file(project)
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 5\n"))  # seen through the new watch
    watcher.wait_event("found", "derived-mismatch")


def test_a_planning_folder_moved_away_and_back_is_watched_again(
    watch: Callable[..., WatchProcess], project: Path
) -> None:
    planning = project / ".planning"
    watcher = watch()
    os.rename(planning, project / "planning-away")
    watcher.wait_event("found", "parse-error")
    os.rename(project / "planning-away", planning)
    watcher.wait_event("cleared", "parse-error")
    path = state_file(project)
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 5\n"))
    watcher.wait_event("found", "derived-mismatch")


def test_a_project_folder_moved_away_edited_and_moved_back_is_watched_again(
    watch: Callable[..., WatchProcess], project: Path
) -> None:
    away = project.with_name("proj-away")
    watcher = watch()
    os.rename(project, away)  # no edit yet: the move alone is seen, from the folder above the project
    gone = watcher.wait_event("found", "parse-error")
    assert gone["path"] == ".planning/" and "gone" in gone["message"]
    moved = state_file(away)
    moved.write_text(moved.read_text().replace("  percent: 0\n", "  percent: 13\n"))  # while out of sight
    os.rename(away, project)
    watcher.wait_event("cleared", "parse-error")
    found = watcher.wait_event("found", "derived-mismatch")  # the edit made while away is read on return
    assert found["message"] == "progress.percent is 13 but the phases make it 0"
    path = state_file(project)
    editor_save(path, path.read_text().replace("  percent: 13\n", "  percent: 0\n"))  # later edits are seen
    watcher.wait_event("cleared", "derived-mismatch")
    editor_save(path, path.read_text().replace("  phase_name: Design\n", "  phase_name: Drawing\n"))
    watcher.wait_event("found", "phase-name-mismatch")
    assert watcher.current.keys() == keys(Workspace.find(project))


def test_files_of_the_resume_context_are_watched(watch: Callable[..., WatchProcess], project: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("")
    Workspace.find(project).set({"resume_context.files_modified": ["src/app.py"]})
    watcher = watch()
    (project / "src" / "app.py").unlink()
    found = watcher.wait_event("found", "missing-file")
    assert found["field"] == "resume_context.files_modified.0"
    (project / "src" / "app.py").write_text("")
    watcher.wait_event("cleared", "missing-file")


@pytest.mark.usefixtures("real_clock")
def test_stale_sessions_are_found_without_any_file_changing(watch: Callable[..., WatchProcess], project: Path) -> None:
    record = project / ".planning" / "sessions" / "ses-1b2k9qx7m4fa-worker.md"
    record.write_text(
        "---\nschema_version: 1\nid: ses-1b2k9qx7m4fa\nagent: worker\nstatus: active\n"
        "started: 2026-01-01T00:00:00Z\n---\n"
    )
    Workspace.find(project).render()
    beats = project / ".planning" / ".local" / "heartbeats"
    beats.mkdir(parents=True)
    heartbeat = beats / "ses-1b2k9qx7m4fa"
    heartbeat.write_text("")
    tomorrow = time.time() + 24 * 3600  # real clock: the watcher's timer must see the heartbeat go stale
    os.utime(heartbeat, (tomorrow, tomorrow))  # fresh however long the watcher takes to start on a busy machine
    watcher = watch("--stale-after", "2s", "--interval", "0.5")
    assert not any(e.get("code") == "stale-session" for e in watcher.seen)
    os.utime(heartbeat)  # a heartbeat now, stale 2 seconds from now; `.local/` changes start no check: the timer must
    found = watcher.wait_event("found", "stale-session")
    assert found["severity"] == "warning"


# ---------------------------------------------------------------------------- --fix, output and stopping


def test_fix_repairs_and_ignores_its_own_writes(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    watcher = watch("--fix")
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    fixed = watcher.wait_event("fixed", "derived-mismatch")
    assert fixed["message"] == "progress.percent is 50 but the phases make it 0"
    assert "  percent: 0\n" in path.read_text()
    # The watcher's own write does not start another round; the next event is the next edit.
    path.write_text(path.read_text().replace("title: Demo\n", "title: [Demo\n"))
    nxt = watcher.wait(lambda e: e["event"] != "cleared")
    assert (nxt["event"], nxt["code"]) == ("found", "parse-error")
    assert not any(e["event"] == "found" and e["code"] == "derived-mismatch" for e in watcher.seen)


def test_text_output_and_sigint_stop_cleanly(project: Path) -> None:
    path = state_file(project)
    process = WatchProcess(project, "--format", "text")  # not the fixture: it waits for a JSON "ready" line
    try:
        ready = process.wait(lambda line: line.startswith("watching "))
        assert ready.endswith("(0 errors, 0 warnings); Ctrl-C stops")
        path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
        line = process.wait(lambda line: line.startswith("found"))
        assert line.startswith("found   .planning/STATE.md:47:3: error derived-mismatch: progress.percent is 50")
        code, stderr = process.stop(signal.SIGINT)
        assert code == 0 and stderr == ""
        assert process.wait(lambda line: line == "stopped")
    finally:
        if process.proc.poll() is None:
            process.proc.kill()


def test_sigterm_stops_cleanly(watch: Callable[..., WatchProcess]) -> None:
    watcher = watch()
    code, stderr = watcher.stop(signal.SIGTERM)
    assert code == 0 and stderr == ""
    assert watcher.wait_event("stopped")


def test_watch_api_reports_through_a_callback(project: Path) -> None:
    ws = Workspace.find(project)
    events: queue.Queue[dict[str, Any]] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(target=ws.watch, args=(events.put,), kwargs={"stop": stop}, daemon=True)
    thread.start()
    try:
        assert events.get(timeout=TIMEOUT)["event"] == "ready"
        path = state_file(project)
        path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
        event = events.get(timeout=TIMEOUT)
        assert (event["event"], event["code"]) == ("found", "derived-mismatch")
    finally:
        stop.set()
        thread.join(timeout=TIMEOUT)
    assert not thread.is_alive()
    assert events.get(timeout=TIMEOUT)["event"] == "stopped"


# ---------------------------------------------------------------------------- review fixes


@pytest.mark.usefixtures("real_clock")
def test_a_stale_session_is_found_once_while_its_age_grows(watch: Callable[..., WatchProcess], project: Path) -> None:
    from datetime import UTC, datetime, timedelta

    started = (datetime.now(UTC) - timedelta(seconds=20)).strftime("%Y-%m-%dT%H:%M:%SZ")  # real clock: age grows
    record = project / ".planning" / "sessions" / "ses-1b2k9qx7m4fa-worker.md"
    record.write_text(
        f"---\nschema_version: 1\nid: ses-1b2k9qx7m4fa\nagent: worker\nstatus: active\nstarted: {started}\n---\n"
    )
    ws = Workspace.find(project)
    ws.render()
    watcher = watch("--stale-after", "5s", "--interval", "0.3")
    (first,) = [e for e in watcher.seen if e.get("code") == "stale-session"]
    # Wait until the message a check would print has moved on (its age grew), however long that takes here.
    deadline = time.monotonic() + TIMEOUT
    while True:
        now = [f for f in checks.run(ws.ctx, stale_after=5)[1] if f.code == "stale-session"]
        if now and now[0].message != first["message"]:
            break
        assert time.monotonic() < deadline, "the session's age never changed"
        threading.Event().wait(0.1)
    path = state_file(project)
    editor_save(path, path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    watcher.wait_event("found", "derived-mismatch")  # this check (and every timer tick before it) saw the new age
    stale = [e for e in watcher.seen if e.get("code") == "stale-session"]
    assert stale == [first]  # found once, never cleared or found again


def test_a_torn_save_of_a_decision_never_rewrites_state(watch: Callable[..., WatchProcess], project: Path) -> None:
    folder = project / ".planning" / "decisions"
    fields = "schema_version: 1\ntitle: {t}\ndate: 2026-01-01\ncontext: c\ndecision: d\nreason: r\n"
    for record_id, title in (("dec-1b2k9qx7m4fa", "Use jose"), ("dec-1b2k9qx7m4fb", "Use Redis")):
        (folder / f"{record_id}-x.md").write_text(f"---\nid: {record_id}\n{fields.format(t=title)}---\n")
    Workspace.find(project).render()
    path = state_file(project)
    before = path.read_bytes()
    watcher = watch("--fix")
    record = folder / "dec-1b2k9qx7m4fb-x.md"
    whole = record.read_text()
    record.write_text(whole[: whole.index("title:") + 12])  # the editor has written half of the file
    found = watcher.wait_event("found", "stale-region")
    assert found["fixable"] is False and "cannot re-render" in found["message"]
    assert path.read_bytes() == before
    editor_save(record, whole)
    watcher.wait_until_current(set())
    assert path.read_bytes() == before
    assert not any(e["event"] in ("fixed", "fix-failed") for e in watcher.seen)


def test_json_is_the_documented_spelling_and_format_json_its_alias(project: Path) -> None:
    shown = subprocess.run([*planstate_command(), "watch", "--help"], capture_output=True, text=True, check=True)
    help_text = " ".join(shown.stdout.split())
    assert "--json" in help_text and "one JSON object per line" in help_text
    for args in (("--json",), ("--format", "json")):
        process = WatchProcess(project, *args)
        try:
            ready = process.wait_event("ready")
            assert ready["error_count"] == 0
            code, stderr = process.stop()
            assert code == 0 and stderr == ""
        finally:
            if process.proc.poll() is None:
                process.proc.kill()
    refused = subprocess.run(
        [*planstate_command(), "watch", "--json", "--format", "text"], cwd=project, capture_output=True, text=True
    )
    assert "--json and --format text" in json_error(refused)["message"]  # --json asked: the refusal is JSON


def test_the_ready_line_counts_in_words(project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("title: Demo\n", "title: Demo\ncolour: blue\n"))
    process = WatchProcess(project, "--format", "text")
    try:
        ready = process.wait(lambda line: line.startswith("watching "))
        assert ready.endswith("(0 errors, 1 warning); Ctrl-C stops")
    finally:
        process.proc.kill()
        process.proc.wait()


def test_fix_waits_while_an_editor_has_the_file_open(watch: Callable[..., WatchProcess], project: Path) -> None:
    path = state_file(project)
    swap = path.with_name(f".{path.name}.swp")  # vim keeps it beside the file while its buffer is open
    swap.write_bytes(b"b0VIM 9.0")
    watcher = watch("--fix")
    path.write_text(path.read_text().replace("  percent: 0\n", "  percent: 50\n"))
    failed = watcher.wait_event("fix-failed")
    assert ".STATE.md.swp" in failed["message"] and "not fixed while an editor has it open" in failed["message"]
    assert "  percent: 50\n" in path.read_text()  # the editor's save would have undone a fix
    swap.unlink()  # the editor closes the file: the fix that waited goes ahead
    watcher.wait_event("fixed", "derived-mismatch")
    assert "  percent: 0\n" in path.read_text()
