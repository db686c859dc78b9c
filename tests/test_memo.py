"""The findings memo of `check` and `validate` is a cache: it answers only while no file of the workspace changed,
gives what a run without any cache finds, and computes afresh what depends on the clock or on files outside
`.planning/` (a hand edit keeping size and mtime, a new or deleted file, a deleted `.local/`, a `git checkout`, a
merge behind our back, a session going stale as the clock moves: each is seen)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from builders import decision, write_record
from conftest import Run, exits, json_data
from gitutil import commit_all, git, new_repo
from test_cache import CACHE, age_the_cache, broken_pair, findings, same_size_edit

from planstate import Workspace
from planstate.check.memo import ROWS_FROM

MARK = "made up, so that only the memo can have said it"
NOW = {"PLANSTATE_NOW": "2026-01-01T00:30:00Z"}  # half an hour after the project's pinned creation


def memo_labels(project: Path) -> list[str]:
    """The labels of the memos the store keeps (none without a store)."""
    if not (project / CACHE).is_file():
        return []
    with sqlite3.connect(project / CACHE) as db:
        return sorted(label for (label,) in db.execute("SELECT key FROM memos"))


def mark(project: Path, name: str = "check", *, code: str = "unknown-key", recent: str | None = None) -> None:
    """Add a made-up finding of `code` (or a problem) to the memo `name` in the store: an answer that holds it came
    from the memo. With `recent`, say that the files just written (too recent for their identity alone to vouch for
    them) had bytes of that digest."""
    with sqlite3.connect(project / CACHE) as db:
        ((recent_text, body_text),) = db.execute("SELECT recent, body FROM memos WHERE key = ?", (name,)).fetchall()
        files, body = json.loads(recent_text), json.loads(body_text)
        if recent is not None:
            assert files
            files = [[file, recent] for file, _digest in files]
        if name.startswith("check"):
            body["findings"].append([code, ".planning/STATE.md", 1, 1, MARK, "a hint", "x", None, None, None])
        else:
            body["problems"].append(["PlanstateError", MARK, ".planning/STATE.md", 1, 1, None, None, []])
        db.execute("UPDATE memos SET recent = ?, body = ? WHERE key = ?", (json.dumps(files), json.dumps(body), name))


def messages(found: list[dict[str, object]]) -> list[object]:
    return [f["message"] for f in found]


def cold(run: Run, project: Path, *args: str) -> list[dict[str, object]]:
    """What a run with no cache and no memo at all finds."""
    shutil.rmtree(project / ".planning" / ".local" / "cache", ignore_errors=True)
    return findings(run, project, *args)


def test_a_memo_answers_what_a_run_without_cache_finds(run: Run, project: Path) -> None:
    paths = broken_pair(project)  # a duplicate id and a missing reference: findings across records
    same_size_edit(paths[2], "status: accepted", "status: accepte!")  # a schema problem, for validate too
    (project / "src").mkdir()
    (project / "src" / "here.py").write_text("")
    Workspace.find(project).set({"resume_context.files_modified": ["src/here.py", "src/gone.py"]})
    first = cold(run, project)
    first_problems = findings(run, project, "validate")
    assert {"duplicate-id", "missing-reference", "schema-error", "missing-file"} <= {f["code"] for f in first}
    assert first_problems
    mark(project, "check")
    mark(project, "validate")
    hit = findings(run, project)
    assert MARK in messages(hit)  # the memo answered
    assert [f for f in hit if f["message"] != MARK] == first
    problems = findings(run, project, "validate")
    assert MARK in messages(problems)
    assert [p for p in problems if p["message"] != MARK] == first_problems
    text = exits(run("validate", cwd=project), 1).stdout
    assert text.count("\n") == len(problems)  # each problem one line, as a run prints it


def test_a_file_just_written_vouches_for_the_memo_only_while_it_has_the_same_bytes(run: Run, project: Path) -> None:
    """A file changed within the timestamp tick of the memo's key could keep its identity: the memo keeps the digest
    of each file that recent, and answers only while each still has those bytes (the files of a test are all
    that recent)."""
    written = write_record(project, "decision", decision(1))
    later = time.time_ns() + 1_800_000_000_000  # changed half an hour from now: recent, however busy the machine
    os.utime(written, ns=(later, later))
    exits(run("check", cwd=project), 1)  # the decisions region is stale
    mark(project)
    assert MARK in messages(findings(run, project))
    mark(project, recent="0" * 32)  # other bytes than the files have: the memo does not answer
    assert MARK not in messages(findings(run, project))


def test_check_fix_never_uses_the_memo(run: Run, project: Path) -> None:
    write_record(project, "decision", decision(1))
    exits(run("check", cwd=project), 1)
    mark(project)
    result = run("check", "--fix", "--json", cwd=project)
    assert MARK not in result.stdout
    assert json_data(exits(result))["findings"] == []


def _hand_edit(project: Path) -> None:
    path = sorted((project / ".planning" / "decisions").glob("*.md"))[0]
    same_size_edit(path, "title:", "titel:")  # same size, same inode, mtime set back


def _new_file(project: Path) -> None:
    write_record(project, "decision", decision(9, supersedes="dec-0000000000000"))


def _deleted_file(project: Path) -> None:
    next((project / ".planning" / "decisions").glob("*-twin.md")).unlink()


def _deleted_local(project: Path) -> None:
    shutil.rmtree(project / ".planning" / ".local")


@pytest.mark.parametrize("change", [_hand_edit, _new_file, _deleted_file, _deleted_local])
def test_a_change_to_the_files_is_seen(run: Run, project: Path, change: Callable[[Path], None]) -> None:
    broken_pair(project)
    findings(run, project)
    findings(run, project, "validate")
    mark(project, "check")
    mark(project, "validate")
    assert MARK in messages(findings(run, project))
    change(project)
    after = findings(run, project)
    after_problems = findings(run, project, "validate")
    assert MARK not in messages(after) and MARK not in messages(after_problems)
    assert after == cold(run, project)
    assert after_problems == findings(run, project, "validate")


def test_the_clock_and_files_outside_planning_are_looked_at_on_every_hit(run: Run, project: Path) -> None:
    """A session going stale as the clock moves, a heartbeat, a project file deleted: seen while the memo
    answers the rest."""
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    (project / "src").mkdir()
    (project / "src" / "here.py").write_text("")
    Workspace.find(project).set({"resume_context.files_modified": ["src/here.py"]})
    assert exits(run("check", cwd=project, env=NOW))
    mark(project)
    assert messages(json_data(run("check", "--json", cwd=project, env=NOW))["findings"]) == [MARK]
    later = {"PLANSTATE_NOW": "2026-01-01T03:00:00Z"}
    stale = run("check", "--json", cwd=project, env=later)
    found = json_data(stale)["findings"]
    assert MARK in messages(found)
    assert [f["code"] for f in found if f["message"] != MARK] == ["stale-session"]
    assert found[[f["code"] for f in found].index("stale-session")]["line"] == 5  # located in its file
    exits(run("session", "heartbeat", cwd=project, env=later))  # machine-local: the memo still answers
    assert messages(json_data(run("check", "--json", cwd=project, env=later))["findings"]) == [MARK]
    (project / "src" / "here.py").unlink()
    found = json_data(run("check", "--json", cwd=project, env=later))["findings"]
    assert MARK in messages(found)
    assert [f["code"] for f in found if f["message"] != MARK] == ["missing-file"]


def test_a_checkout_or_a_merge_behind_our_back_is_seen(run: Run, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Memo", cwd=repo))
    commit_all(repo, "init")
    git(repo, "checkout", "--quiet", "-b", "side")
    exits(run("decision", "add", "--context", "c", "--decision", "Use Redis", "--reason", "r", cwd=repo))
    broken = sorted((repo / ".planning" / "decisions").glob("*.md"))[0]
    broken.write_text(broken.read_text(encoding="utf-8").replace("status:", "statut:"), encoding="utf-8")
    commit_all(repo, "side")
    on_side = findings(run, repo)
    assert "statut" in {f["field"] for f in on_side}
    git(repo, "checkout", "--quiet", "main")
    exits(run("decision", "add", "--context", "c", "--decision", "Use jose", "--reason", "r", cwd=repo))
    commit_all(repo, "main")
    on_main = findings(run, repo)
    mark(repo)
    assert MARK in messages(findings(run, repo))
    git(repo, "checkout", "--quiet", "side")
    found = findings(run, repo)
    assert MARK not in messages(found) and found == on_side
    git(repo, "checkout", "--quiet", "main")
    findings(run, repo)
    mark(repo)
    assert messages(findings(run, repo)) == [*messages(on_main), MARK]
    git(repo, "merge", "--quiet", "--no-edit", "side", check=False)  # no driver: STATE.md's regions conflict
    merged = findings(run, repo)
    assert MARK not in messages(merged)
    assert merged == cold(run, repo)
    assert "conflict-marker" in {f["code"] for f in merged}


def test_resume_takes_its_trust_from_the_memo_while_nothing_changed(run: Run, project: Path) -> None:
    """The resume brief runs the checks (without regions, resume files and drivers) under a memo of its own: its
    trust verdict comes from it while nothing changed, and the brief is the one a run without cache gives."""
    paths = broken_pair(project)
    pinned = {"PLANSTATE_NOW": "2026-11-26T12:00:00Z"}

    def brief() -> dict[str, object]:
        result = run("resume", "--json", cwd=project, env=pinned)
        assert result.returncode in (0, 1), result.stderr  # 1: the state is not to be trusted
        return dict(json_data(result))

    shutil.rmtree(project / ".planning" / ".local" / "cache")
    first = brief()
    (name,) = [label for label in memo_labels(project) if label.startswith("check-")]  # the brief's checker options
    mark(project, name, code="parse-error")
    marked = brief()
    assert [item["problem"] for item in marked["trust"]] == [f".planning/STATE.md:1:1: x: {MARK}"]
    assert marked["trusted"] is False and first["trusted"] is True
    rest = {**marked, "trust": first["trust"], "trusted": True}
    assert rest == first  # the rest of the brief is read from the files
    same_size_edit(paths[1], "Decision number 1", "Decision NUMBER 1")
    after = brief()
    assert after["trust"] == first["trust"]
    shutil.rmtree(project / ".planning" / ".local" / "cache")
    assert brief() == after


def test_a_link_in_the_workspace_means_no_memo(run: Run, project: Path) -> None:
    """A link could point anywhere, and what it points to is not in the key: with one in the tree, nothing is
    memoized and every run reads the files."""
    (project / "elsewhere.md").write_text("notes\n", encoding="utf-8")
    (project / ".planning" / "notes.md").symlink_to(project / "elsewhere.md")
    first = findings(run, project)
    assert "check" not in memo_labels(project)
    assert findings(run, project) == first
    assert "check" not in memo_labels(project)


def test_a_temp_file_whose_writer_dies_is_seen_though_no_file_changed(run: Run, project: Path) -> None:
    """A temp file is left behind only once the writer that made it is gone: whether it is, the files do not say,
    so the rule looks again on every call."""
    writer = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        temp = project / ".planning" / f".STATE.md.{writer.pid}.0123abcd.tmp"
        temp.write_text("half written", encoding="utf-8")
        assert findings(run, project) == []  # its writer is alive: still writing
        mark(project)
        assert messages(findings(run, project)) == [MARK]
    finally:
        assert writer.stdin is not None
        writer.stdin.close()
        writer.wait()
    found = findings(run, project)
    assert MARK in messages(found)
    assert [f["code"] for f in found if f["message"] != MARK] == ["stale-temp-file"]


LATER = {"PLANSTATE_NOW": "2026-01-01T03:00:00Z"}  # two and a half hours on: a silent session is stale
GHOST = "dec-0000000000099-ghost.md"  # a decision file no workspace here holds


def resume_brief(run: Run, project: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """The resume brief (`--json`), whatever its exit (1: the state is not to be trusted)."""
    result = run("resume", "--json", cwd=project, env=env or NOW)
    assert result.returncode in (0, 1), result.stderr
    return dict(json_data(result))


def cold_brief(run: Run, project: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """The brief of a run with no cache and no memo at all."""
    shutil.rmtree(project / ".planning" / ".local" / "cache", ignore_errors=True)
    return resume_brief(run, project, env)


def mark_brief(project: Path) -> None:
    """Plant in the store a row of a valid, rejected, oldest decision whose file (GHOST) does not exist, beside the
    rows a scan of the folder vouched for: a brief that counts one decision more than the files hold took its
    decisions from the store's rows (a scan of the folder that differs from the one vouched for forgets it)."""
    ctx = Workspace.find(project).ctx
    folder = ctx.cache_key(ctx.target.folder("decision"))
    summary = json.dumps(["dec-0000000000099", "0001-01-01", "rejected", "", None, False])
    facts = json.dumps({"id": "dec-0000000000099", "status": "rejected", "date": "0001-01-01"})
    row = {"key": f"{folder}/{GHOST}", "folder": folder, "name": GHOST, "seen": 0, "digest": "", "summary": summary}
    row.update(facts=facts, rid="dec-0000000000099", ord="0001-01-01", status="rejected", valid=1, refers=0)
    with sqlite3.connect(project / CACHE) as db:
        assert db.execute("SELECT count(*) FROM folders WHERE key = ?", (folder + "/",)).fetchone()[0] == 1
        db.execute(f"INSERT INTO files ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        db.execute("DELETE FROM memos WHERE key LIKE 'brief-%'")  # the brief's parts are taken from the rows again


def mark_parts(project: Path) -> None:
    """Add one to the decisions the memo of the brief's parts counts: a brief that says so took its parts from it."""
    with sqlite3.connect(project / CACHE) as db:
        ((key, body),) = db.execute("SELECT key, body FROM memos WHERE key LIKE 'brief-%'").fetchall()
        parts = json.loads(json.loads(body))  # the memo keeps the parts' JSON text as its value
        parts["decisions"]["total"] += 1
        db.execute("UPDATE memos SET body = ? WHERE key = ?", (json.dumps(json.dumps(parts)), key))


def decisions_total(brief: dict[str, object]) -> int:
    """How many valid decisions the brief counts."""
    decisions = brief["decisions"]
    assert isinstance(decisions, dict) and isinstance(decisions["total"], int)
    return decisions["total"]


@pytest.mark.parametrize("change", [_hand_edit, _new_file, _deleted_file, _deleted_local])
def test_resume_takes_its_records_from_the_store_until_a_file_changes(
    run: Run, project: Path, change: Callable[[Path], None]
) -> None:
    """On a hit of the checks' memo the brief's records (counts, blockers, decisions, sessions) come from the store's
    rows (report/brief.py `_FROM_STORE`), and the brief is the one a run without cache gives; any change to the
    files is seen."""
    broken_pair(project)
    exits(run("blocker", "add", "--description", "Waiting on keys", "--affects", "phase 2", cwd=project, env=NOW))
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    first = cold_brief(run, project)
    assert resume_brief(run, project) == first
    mark_brief(project)
    marked = resume_brief(run, project)
    assert decisions_total(marked) == decisions_total(first) + 1  # the store's rows answered
    assert {**marked, "decisions": first["decisions"]} == first  # the rest as the files say
    change(project)
    after = resume_brief(run, project)
    assert after == cold_brief(run, project)  # the planted row is forgotten: a cold brief never counts it


@pytest.mark.parametrize("change", [_hand_edit, _new_file, _deleted_file, _deleted_local])
def test_the_brief_takes_its_parts_from_their_memo_until_a_file_changes(
    run: Run, project: Path, change: Callable[[Path], None]
) -> None:
    """While no file changed, the brief's parts (what it derives from each kind of record) come from a memo kept
    beside the checks' own, under the same key: a made-up count in it is answered, until any change to the files."""
    broken_pair(project)
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    first = cold_brief(run, project)
    assert resume_brief(run, project) == first
    mark_parts(project)
    marked = resume_brief(run, project)
    assert decisions_total(marked) == decisions_total(first) + 1  # the memo of the parts answered
    assert {**marked, "decisions": first["decisions"]} == first
    change(project)
    assert resume_brief(run, project) == cold_brief(run, project)


def test_resume_judges_sessions_by_the_clock_and_the_heartbeats_on_every_hit(run: Run, project: Path) -> None:
    """Whether a session is alive (the clock, the machine-local heartbeats) is never memoized: a session going
    stale as the clock moves, and alive again after a heartbeat, is seen while the memo and the store's rows answer
    the rest."""
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    alive = cold_brief(run, project)
    sessions = alive["sessions"]
    assert isinstance(sessions, dict) and [s["agent"] for s in sessions["active"]] == ["w"]
    assert alive["last_session"] is None
    resume_brief(run, project)
    mark_brief(project)
    stale = resume_brief(run, project, LATER)
    assert decisions_total(stale) == decisions_total(alive) + 1
    last = stale["last_session"]
    assert isinstance(last, dict) and last["agent"] == "w" and last["silent_seconds"] == 9000
    assert stale["sessions"] == {**sessions, "active": []}
    exits(run("session", "heartbeat", cwd=project, env=LATER))  # machine-local: the memo still answers
    again = resume_brief(run, project, LATER)
    assert decisions_total(again) == decisions_total(alive) + 1 and again["last_session"] is None
    assert [s["agent"] for s in again["sessions"]["active"]] == ["w"]  # type: ignore[index]
    assert {**again, "decisions": alive["decisions"]} == cold_brief(run, project, LATER)


# ---------------------------------------------------------------------------- the store's rows of each record


def _rows(project: Path) -> int:
    """How many rows of record files (those with facts) the store keeps."""
    with sqlite3.connect(project / CACHE) as db:
        return int(db.execute("SELECT count(*) FROM files WHERE facts IS NOT NULL").fetchone()[0])


GHOST_ID = "dec-0000000000042"  # an id no record here has: a finding that names it was said by a doctored row


def mark_row(project: Path, record: Path, digest: str | None = None) -> None:
    """Say in the store's row of `record` that it supersedes GHOST_ID (its file says nothing of it): a check whose
    findings name it took that row instead of reading the file. With `digest`, say too that the row was read from
    bytes of that digest."""
    with sqlite3.connect(project / CACHE) as db:
        ((key, facts, real),) = db.execute(
            "SELECT key, facts, digest FROM files WHERE key LIKE ?", (f"%/{record.name}",)
        ).fetchall()
        doctored = {**json.loads(facts), "supersedes": GHOST_ID}
        db.execute(
            "UPDATE files SET facts = ?, refers = 1, digest = ? WHERE key = ?",
            (json.dumps(doctored), digest or real, key),
        )


def row_said(found: list[dict[str, object]]) -> bool:
    """Whether a finding names GHOST_ID (see `mark_row`)."""
    return any(GHOST_ID in str(f["message"]) for f in found)


def same_as_without_cache(run: Run, project: Path, tmp_path: Path) -> list[dict[str, object]]:
    """The findings of `check --json` in `project` (the store's rows aged first), and its resume brief, asserted
    equal to those of a copy of it without `.local/`."""
    age_the_cache(project)
    brief = resume_brief(run, project)
    found = findings(run, project)
    other = tmp_path / "copy" / project.name
    shutil.rmtree(other.parent, ignore_errors=True)
    shutil.copytree(project, other, symlinks=True)
    shutil.rmtree(other / ".planning" / ".local", ignore_errors=True)
    assert brief == resume_brief(run, other)
    assert found == findings(run, other)
    return found


def test_after_writes_and_edits_the_kept_rows_give_what_a_run_without_cache_finds(
    run: Run, project: Path, tmp_path: Path
) -> None:
    """After a write, a check reads only the records whose stat identity changed and takes the others from the
    store's rows (`Checker.run_from_rows`); the rules across records then run on the few that could break one.
    Through CLI writes, hand edits (same size, mtime set back), a deleted file and a `git checkout`, each check finds
    what a check of a copy without `.local/` finds. The store's rows are aged before each check, as if it ran two
    seconds later (else the bytes of a file just written are compared with its row's digest again)."""
    from builders import blocker, session

    repo = new_repo(project)
    for i in range(100, 100 + ROWS_FROM):  # enough records for a check from the store's rows
        write_record(repo, "decision", decision(i))
    paths = broken_pair(repo)  # a duplicate id and a decision superseding one that does not exist
    write_record(repo, "decision", decision(20, phase=7))  # a phase outside the phases
    misnamed = write_record(repo, "decision", decision(21))
    misnamed.rename(misnamed.with_name("dec-renamed.md"))
    write_record(repo, "blocker", blocker(1, affects=["phase-9", "dec-0000000000000", "phase-1"]))
    write_record(repo, "session", session(1, resumed_from="ses-0000000000000"))
    write_record(repo, "session", session(2, status="active", ended=None))
    write_record(repo, "session", session(3, status="active", ended=None))
    write_record(repo, "decision", decision(22, titel="A typo"))  # an unknown key
    Workspace.find(repo).render()
    commit_all(repo, "records")
    first = same_as_without_cache(run, repo, tmp_path)
    codes = {f["code"] for f in first}
    assert {"duplicate-id", "missing-reference", "filename-id-mismatch", "unknown-key"} <= codes
    assert {"multiple-active-sessions", "stale-session"} <= codes
    assert _rows(repo) >= ROWS_FROM  # the run in full kept its rows

    words = ("--context", "c", "--decision", "Use a queue", "--reason", "r", "--json")
    added = json_data(exits(run("decision", "add", *words, cwd=repo)))
    (new,) = (repo / ".planning" / "decisions").glob(f"{added['id']}*.md")
    later = time.time_ns() + 1_800_000_000_000  # changed half an hour from now: too recent, however busy the machine
    os.utime(new, ns=(later, later))
    findings(run, repo)  # keeps the row of the decision just added with when it was read: too soon to vouch for it
    mark_row(repo, new, digest="0" * 32)
    exits(run("set", "next_action", "Review the queue", cwd=repo))
    assert not row_said(findings(run, repo))  # read again: its row was not aged, and its bytes are not the row's
    same_as_without_cache(run, repo, tmp_path)
    mark_row(repo, paths[3])
    exits(run("set", "next_action", "Write the tests", cwd=repo))
    age_the_cache(repo)
    assert row_said(findings(run, repo))  # the row kept of an unchanged record answered for it
    same_size_edit(paths[3], "option 3", "option X")  # the same size and mtime: read again all the same
    assert not row_said(same_as_without_cache(run, repo, tmp_path))
    exits(run("phase", "add", "Four", cwd=repo))  # more phases: another decision's phase may now exist
    same_as_without_cache(run, repo, tmp_path)
    same_size_edit(paths[4], "status: accepted", "status: accepte!")  # a record that does not validate
    assert "schema-error" in {f["code"] for f in same_as_without_cache(run, repo, tmp_path)}
    paths[6].unlink()  # the twin: no duplicate id any more
    assert "duplicate-id" not in {f["code"] for f in same_as_without_cache(run, repo, tmp_path)}
    git(repo, "checkout", "--quiet", "--", ".planning")  # the files as committed, behind our back
    assert "duplicate-id" in {f["code"] for f in same_as_without_cache(run, repo, tmp_path)}
    exits(run("blocker", "add", "--description", "Waiting", "--affects", "dec-0000000000001", cwd=repo))
    same_as_without_cache(run, repo, tmp_path)


def seen_of(project: Path, folder: str) -> dict[str, int]:
    """When the store's row of each file of `folder` (its key inside the workspace) was written, by name."""
    with sqlite3.connect(project / CACHE) as db:
        return dict(db.execute("SELECT name, seen FROM files WHERE folder = ?", (folder,)).fetchall())


def test_after_a_write_only_the_rows_of_what_changed_are_written(run: Run, project: Path, tmp_path: Path) -> None:
    """A write, and a check after it, write the rows of the records they wrote or read again and leave the rows of
    the others as they are (a write changes one record of thousands): those keep when they were read (`seen`).
    Each answer is that of a copy without `.local/`, also after the store is deleted."""
    for i in range(100, 100 + ROWS_FROM):  # enough records for a check from the store's rows
        write_record(project, "decision", decision(i))
    Workspace.find(project).render()
    same_as_without_cache(run, project, tmp_path)
    age_the_cache(project)  # else the records written just now are compared with their rows' digests again
    before = seen_of(project, "decisions")
    assert len(before) == ROWS_FROM
    words = ("--context", "c", "--decision", "Use a queue", "--reason", "r", "--json")
    added = json_data(exits(run("decision", "add", *words, cwd=project)))
    findings(run, project)
    after = seen_of(project, "decisions")
    (new,) = set(after) - set(before)
    assert new.startswith(str(added["id"]))  # the decision just added
    assert {name: after[name] for name in before} == before  # the others' rows were not written again
    same_as_without_cache(run, project, tmp_path)

    shutil.rmtree(project / ".planning" / ".local" / "cache")
    same_as_without_cache(run, project, tmp_path)  # the rows made anew
    exits(run("decision", "add", *words, cwd=project))
    same_as_without_cache(run, project, tmp_path)


def test_a_check_takes_one_scan_of_each_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A check after a write that judges only what changed (`Checker.run_from_rows`) scans each folder once
    (store/scan.scan), for its memo key: the store vouches for each record folder's rows and STATE.md's record
    regions are planned (store/folders.head) from that scan, with no second `lstat` of every record file; it finds
    what a check with no store finds (a hand edit that makes a region stale is seen)."""
    from planstate.store import cache, folders, scan

    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: what was just written is trusted at once
    for i in range(100, 100 + ROWS_FROM):  # enough records for a check from the store's rows
        write_record(project, "decision", decision(i))
    ws = Workspace.find(project)
    ws.render()
    assert ws.check().to_dict()["error_count"] == 0  # in full: keeps the rows
    added = ws.decision.add(context="c", decision="One more", reason="r")
    newest = next((project / ".planning" / "decisions").glob(f"{added.id}*.md"))
    newest.write_text(newest.read_text().replace("title: One more", "title: One mOre"))

    scans: list[str] = []
    planned: list[object] = []
    real_scan, head = scan.scan, folders.head

    def scanning(folder: Any, *args: Any, **kwargs: Any) -> Any:
        scans.append(str(folder))
        return real_scan(folder, *args, **kwargs)

    def planning(*args: Any, **kwargs: Any) -> Any:
        planned.append(found := head(*args, **kwargs))
        return found

    with monkeypatch.context() as patched:
        for module in list(sys.modules.values()):  # every name the scan is bound to (`from ... import scan`)
            if getattr(module, "__name__", "").startswith("planstate.") and getattr(module, "scan", None) is real_scan:
                patched.setattr(module, "scan", scanning)
        patched.setattr(folders, "head", planning)
        codes = [f["code"] for f in Workspace.find(project).check().to_dict()["findings"]]
    planning_folder = str(project / ".planning")
    scanned = [folder for folder in scans if folder == planning_folder or folder.startswith(planning_folder + os.sep)]
    assert str(project / ".planning" / "decisions") in scanned
    assert len(scanned) == len(set(scanned))  # each folder once
    assert len(planned) == 3 and None not in planned  # each record region planned from the store's rows
    assert "stale-region" in codes
    shutil.rmtree(project / ".planning" / ".local")
    assert codes == [f["code"] for f in Workspace.find(project).check().to_dict()["findings"]]


def test_a_resume_after_writes_takes_each_records_part_from_the_store(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After writes to every record folder (and a hand edit of when a session ended), the resume brief takes its
    blockers, sessions and decisions parts from the store's rows (report/brief.py `_FROM_STORE`), reading no
    folder whole; the brief is the one a copy without `.local/` gives. Among the records: open blockers with and
    without `affects`, a resolved one, an active session, and two sessions that ended last at the same instant
    written in two offsets (the first in file-name order is the one a brief without the store takes: the brief shows
    it as the time since which a change in git is work the state may not know of)."""
    from builders import T0, blocker, session

    from planstate.core import clock
    from planstate.report import brief
    from planstate.store import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: what was just written is trusted at once
    monkeypatch.setenv("PLANSTATE_NOW", "2026-12-01T00:00:00Z")
    new_repo(project)
    for i in range(100, 100 + ROWS_FROM):  # enough records for a check from the store's rows
        write_record(project, "decision", decision(i))
    write_record(project, "blocker", blocker(1))
    write_record(project, "blocker", blocker(2, status="new", affects=["phase-1"]))
    write_record(project, "blocker", blocker(3, status="bypassed", workaround="mock it", affects=["phase-2"]))
    last = T0 + timedelta(hours=30)
    write_record(project, "session", session(20, ended=last))
    write_record(project, "session", session(21, ended=last.astimezone(timezone(timedelta(hours=2)))))
    edited = write_record(project, "session", session(5))
    write_record(project, "session", session(40, status="active", ended=None))
    ws = Workspace.find(project)
    ws.render()
    assert ws.check().to_dict()["error_count"] == 0  # in full: keeps the rows
    ws.brief()  # the store vouches for each record folder
    commit_all(project, "records")

    ws.decision.add(context="c", decision="One more", reason="r")
    resolved = ws.blocker.add(description="Soon resolved", affects=["phase 1"]).id
    ws.blocker.resolve(resolved, resolution="done")
    ws.blocker.add(description="Waiting on the vendor")
    ws.session.end(ws.session.start(agent="short").id)
    text = edited.read_text()
    # ties the last: the session `short` ended at the clock's now, written here in another offset
    tied = clock.now().astimezone(timezone(timedelta(hours=2))).isoformat()
    edited.write_text(text.replace("ended: 2026-11-01T16:00:00Z", f"ended: {tied}"))
    (project / "unrecorded.txt").write_text("work the state does not mention\n")
    assert edited.read_text() != text

    def whole(*args: Any) -> dict[str, Any]:
        raise AssertionError("a part computed from its folder read whole, not from the store's rows")

    ws = Workspace.find(project)
    ws.check()
    with monkeypatch.context() as patched:
        for kind in brief._PARTS:
            patched.setitem(brief._PARTS, kind, whole)
        got = ws.brief().to_dict()
    assert got["blockers"]["open"] == 4 and got["sessions"]["total"] == 5
    assert got["last_session"]["agent"] == "short"
    (unrecorded,) = [doubt for doubt in got["verification"] if doubt.get("since_event") == "session_ended"]
    assert unrecorded["since"] == tied  # the end of the session first in file-name order
    other = tmp_path / "copy"
    shutil.copytree(project, other, symlinks=True)
    shutil.rmtree(other / ".planning" / ".local")
    assert got == Workspace.find(other).brief().to_dict()


def test_the_files_older_formats_of_the_cache_left_are_deleted(project: Path) -> None:
    """An upgrade changes the format of what the cache folder keeps: when the store is made, what older planstates
    kept there (a front-matter cache, memo files, kept rows, kept listings) and older versions of the store are
    deleted, as nothing reads them; other files stay."""
    from planstate.store import cache

    folder = project / CACHE.parent
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    left = [
        folder / "front-matter-v7.sqlite",
        folder / "memo-check-v3.json",
        folder / "memo-resume-decision-1a2b3c4d5e6f-v3.json",
        folder / "rows-decisions-1a2b3c4d5e6f-v4.marshal",
        folder / "rows-decisions-1a2b3c4d5e6f-v4.delta.marshal",
        folder / f"{cache.NAME}-v{cache.VERSION - 1}.sqlite",
    ]
    listings = folder / "listings"
    listings.mkdir()
    (listings / "decisions.marshal").write_bytes(b"an older format")
    other = folder / "notes-of-someone-else.txt"
    for path in [*left, other]:
        path.write_bytes(b"an older format")
    Workspace.find(project).check()
    assert [path.exists() for path in left] == [False] * len(left)
    assert not listings.exists()
    assert other.exists() and (project / CACHE).is_file()
