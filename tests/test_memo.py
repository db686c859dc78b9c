"""The findings memo of `check` and `validate` is a cache: it answers only while no file of the workspace changed,
gives what a run without any cache finds, and computes afresh what depends on the clock or on files outside
`.planning/` (a hand edit keeping size and mtime, a new or deleted file, a deleted `.local/`, a `git checkout`, a
merge behind our back, a session going stale as the clock moves: each is seen)."""

from __future__ import annotations

import json
import os
import shutil
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
from test_cache import broken_pair, findings, same_size_edit
from watching import WatchProcess

from planstate import Workspace
from planstate.check import recordmemo
from planstate.check.memo import ROWS_FROM
from planstate.store.memo import VERSION

MARK = "made up, so that only the memo can have said it"
NOW = {"PLANSTATE_NOW": "2026-01-01T00:30:00Z"}  # half an hour after the project's pinned creation


def memo_file(project: Path, name: str) -> Path:
    return project / ".planning" / ".local" / "cache" / f"memo-{name}-v{VERSION}.json"


def mark(project: Path, name: str = "check", *, code: str = "unknown-key", recent: str | None = None) -> None:
    """Add a made-up finding of `code` (or a problem) to the memo `name`: an answer that holds it came from the memo.
    With `recent`, say that the files just written (too recent for their identity alone to vouch for them) had
    bytes of that digest."""
    path = memo_file(project, name)
    head_text, body_text = path.read_text(encoding="utf-8").split("\n", 1)
    head, body = json.loads(head_text), json.loads(body_text)
    if recent is not None:
        assert head["recent"]
        head["recent"] = [[file, recent] for file, _digest in head["recent"]]
    if name.startswith("check"):
        body["findings"].append([code, ".planning/STATE.md", 1, 1, MARK, "a hint", "x", None, None, None])
    else:
        body["problems"].append(["PlanstateError", MARK, ".planning/STATE.md", 1, 1, None, None, []])
    path.write_text(f"{json.dumps(head)}\n{json.dumps(body)}", encoding="utf-8")


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


@pytest.mark.parametrize("served", [False, True], ids=["alone", "watched"])
def test_a_file_just_written_vouches_for_the_memo_only_while_it_has_the_same_bytes(
    run: Run, project: Path, served: bool, watch: Callable[..., WatchProcess]
) -> None:
    """A file changed within the timestamp tick of the memo's key could keep its identity: the memo keeps the digest
    of each file that recent, and answers only while each still has those bytes (the files of a test are all
    that recent). With a watcher serving the journal, the recent files are those it names and those its kept
    listings hold fresh."""
    if served:
        watch("--no-check")
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
    (memo,) = (project / ".planning" / ".local" / "cache").glob(f"memo-check-*-v{VERSION}.json")
    name = memo.name.removeprefix("memo-").removesuffix(f"-v{VERSION}.json")
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
    assert not memo_file(project, "check").exists()
    assert findings(run, project) == first
    assert not memo_file(project, "check").exists()


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
MARKED = 4242  # a count of decisions no workspace here has: a brief that says it came from the memo


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
    """Say in the memo of the brief's decisions that there are MARKED of them."""
    (path,) = (project / ".planning" / ".local" / "cache").glob(f"memo-resume-decision-*-v{VERSION}.json")
    head, body = path.read_text(encoding="utf-8").split("\n", 1)
    records = json.loads(json.loads(body))  # the records as the front-matter cache encodes data, as a JSON string
    records["decisions"]["total"] = MARKED
    path.write_text(f"{head}\n{json.dumps(json.dumps(records))}", encoding="utf-8")


def decisions_total(brief: dict[str, object]) -> object:
    decisions = brief["decisions"]
    assert isinstance(decisions, dict)
    return decisions["total"]


@pytest.mark.parametrize("change", [_hand_edit, _new_file, _deleted_file, _deleted_local])
def test_resume_takes_its_records_from_the_memo_until_a_file_changes(
    run: Run, project: Path, change: Callable[[Path], None]
) -> None:
    """On a hit the brief's records (counts, blockers, decisions, sessions) come from the memo, and the brief is
    the one a run without cache gives; any change to the files is seen."""
    broken_pair(project)
    exits(run("blocker", "add", "--description", "Waiting on keys", "--affects", "phase 2", cwd=project, env=NOW))
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    first = cold_brief(run, project)
    assert resume_brief(run, project) == first
    mark_brief(project)
    assert decisions_total(resume_brief(run, project)) == MARKED  # the memo answered
    change(project)
    after = resume_brief(run, project)
    assert decisions_total(after) != MARKED
    assert after == cold_brief(run, project)


def test_resume_judges_sessions_by_the_clock_and_the_heartbeats_on_every_hit(run: Run, project: Path) -> None:
    """Whether a session is alive (the clock, the machine-local heartbeats) is never memoized: a session going
    stale as the clock moves, and alive again after a heartbeat, is seen while the memo answers the rest."""
    exits(run("session", "start", "--agent", "w", cwd=project, env=NOW))
    alive = cold_brief(run, project)
    sessions = alive["sessions"]
    assert isinstance(sessions, dict) and [s["agent"] for s in sessions["active"]] == ["w"]
    assert alive["last_session"] is None
    resume_brief(run, project)
    mark_brief(project)
    stale = resume_brief(run, project, LATER)
    assert decisions_total(stale) == MARKED
    last = stale["last_session"]
    assert isinstance(last, dict) and last["agent"] == "w" and last["silent_seconds"] == 9000
    assert stale["sessions"] == {**sessions, "active": []}
    exits(run("session", "heartbeat", cwd=project, env=LATER))  # machine-local: the memo still answers
    again = resume_brief(run, project, LATER)
    assert decisions_total(again) == MARKED and again["last_session"] is None
    assert [s["agent"] for s in again["sessions"]["active"]] == ["w"]  # type: ignore[index]
    assert {**again, "decisions": alive["decisions"]} == cold_brief(run, project, LATER)


# ---------------------------------------------------------------------------- the rows kept of each record


def _rows(project: Path) -> list[Path]:
    return sorted((project / ".planning" / ".local" / "cache").glob("rows-*.marshal"))


UNSETTLED = 7  # where kept rows (whole, or the part changed since) hold when unsettled rows were read
NAMES = {False: 8, True: 9}  # where they hold the names of their records (the part changed since: after the gone)


def age_rows(project: Path) -> None:
    """Say that every row kept of a record was read long after its file last changed (a check trusts an identity only
    once it is older than the filesystem's timestamp tick, and the files of a test are all that recent)."""
    import marshal

    for path in _rows(project):
        try:
            kept = list(marshal.loads(path.read_bytes()))
        except (EOFError, ValueError):
            continue  # torn: what the check makes of it is the test's
        kept[UNSETTLED] = {name: at + 3_600_000_000_000 for name, at in kept[UNSETTLED].items()}
        path.write_bytes(marshal.dumps(tuple(kept), 2))


def mark_row(project: Path, record: Path) -> None:
    """Add a made-up finding to the row kept of `record` (in the part changed since when it is there): a check that
    shows it took that row instead of reading the file."""
    import marshal

    for path in sorted(_rows(project), key=lambda path: not path.name.endswith(recordmemo.DELTA)):
        delta = path.name.endswith(recordmemo.DELTA)
        kept = list(marshal.loads(path.read_bytes()))
        if record.name in kept[NAMES[delta]]:
            kept[NAMES[delta] + 6].setdefault(record.name, []).append(  # the findings column
                ["unknown-key", f".planning/decisions/{record.name}", 1, 1, MARK, "a hint", "x", None, None, None]
            )
            path.write_bytes(marshal.dumps(tuple(kept), 2))
            return
    raise AssertionError(f"no row kept of {record.name}")


def same_as_without_cache(run: Run, project: Path, tmp_path: Path) -> list[dict[str, object]]:
    """The findings of `check --json` in `project` (its kept rows aged first), and its resume brief, asserted equal
    to those of a copy of it without `.local/`."""
    age_rows(project)
    brief = resume_brief(run, project)
    found = findings(run, project)
    other = tmp_path / "copy" / project.name
    shutil.rmtree(other.parent, ignore_errors=True)
    shutil.copytree(project, other, symlinks=True)
    shutil.rmtree(other / ".planning" / ".local", ignore_errors=True)
    assert brief == resume_brief(run, other)
    assert found == findings(run, other)
    return found


@pytest.mark.parametrize("served", [False, True], ids=["alone", "watched"])
def test_after_writes_and_edits_the_kept_rows_give_what_a_run_without_cache_finds(
    run: Run, project: Path, tmp_path: Path, served: bool, watch: Callable[..., WatchProcess]
) -> None:
    """After a write, a check reads only the records whose stat identity changed and takes the others from the rows
    it kept (check/recordmemo.py); the rules across records then run on the few that could break one. Through CLI
    writes, hand edits (same size, mtime set back), a deleted file and a `git checkout`, each check finds what a
    check of a copy without `.local/` finds. The kept rows are aged before each check, as if it ran two seconds
    later (else a row of a file just written is read again). With a watcher serving the journal, only the records
    it names are compared with their rows."""
    from builders import blocker, session

    repo = new_repo(project)
    if served:
        watch("--no-check")
    for i in range(100, 100 + ROWS_FROM):  # enough records for rows to be kept (fewer are read in full)
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
    assert _rows(repo)  # the run in full kept its rows

    words = ("--context", "c", "--decision", "Use a queue", "--reason", "r", "--json")
    added = json_data(exits(run("decision", "add", *words, cwd=repo)))
    (new,) = (repo / ".planning" / "decisions").glob(f"{added['id']}*.md")
    later = time.time_ns() + 1_800_000_000_000  # changed half an hour from now: too recent, however busy the machine
    os.utime(new, ns=(later, later))
    findings(run, repo)  # keeps the row of the decision just added with when it was read: too soon to vouch for it
    mark_row(repo, new)
    exits(run("set", "next_action", "Review the queue", cwd=repo))
    assert MARK not in messages(findings(run, repo))  # read again: its row was not aged
    same_as_without_cache(run, repo, tmp_path)
    mark_row(repo, paths[3])
    exits(run("set", "next_action", "Write the tests", cwd=repo))
    age_rows(repo)
    assert MARK in messages(findings(run, repo))  # the row kept of an unchanged record answered for it
    same_size_edit(paths[3], "option 3", "option X")  # the same size and mtime: read again all the same
    assert MARK not in messages(same_as_without_cache(run, repo, tmp_path))
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


def test_after_a_write_only_the_rows_of_what_changed_are_written_and_a_stray_part_is_ignored(
    run: Run, project: Path, tmp_path: Path
) -> None:
    """A check after a write keeps the rows of the records it read again in a part beside the rows kept whole, which
    it leaves as they are (a write changes one record of thousands). A part made from other rows kept whole (another
    process kept them whole meanwhile), or a torn one, is not used; each answer is that of a copy without `.local/`."""
    import marshal

    for i in range(100, 100 + ROWS_FROM):  # enough records for rows to be kept (fewer are read in full)
        write_record(project, "decision", decision(i))
    Workspace.find(project).render()
    same_as_without_cache(run, project, tmp_path)
    folder = project / ".planning" / ".local" / "cache"
    rows = folder.glob(f"rows-*-v{recordmemo.VERSION}.marshal")
    whole = max(rows, key=lambda path: len(marshal.loads(path.read_bytes())[NAMES[False]]))  # the decisions'
    age_rows(project)  # else the records written just now are read again, too many to judge one by one
    before = whole.read_bytes()
    words = ("--context", "c", "--decision", "Use a queue", "--reason", "r")
    exits(run("decision", "add", *words, cwd=project))
    findings(run, project)
    part = whole.with_name(whole.name.removesuffix(".marshal") + recordmemo.DELTA)
    assert whole.read_bytes() == before and part.exists()
    assert len(marshal.loads(part.read_bytes())[NAMES[True]]) == 1  # the decision just added
    same_as_without_cache(run, project, tmp_path)

    stray = part.read_bytes()
    shutil.rmtree(folder)
    same_as_without_cache(run, project, tmp_path)  # rows kept whole anew, under another token
    part.write_bytes(stray)  # a part made from the rows kept whole before
    exits(run("decision", "add", *words, cwd=project))
    same_as_without_cache(run, project, tmp_path)
    part.write_bytes(part.read_bytes()[:-40])  # torn
    exits(run("decision", "add", *words, cwd=project))
    same_as_without_cache(run, project, tmp_path)
    findings(run, project)
    kept = list(marshal.loads(part.read_bytes()))
    kept[NAMES[True] - 1] = [1]  # a number among the records gone: marshal reads it, the check must not use it
    part.write_bytes(marshal.dumps(tuple(kept), 2))
    exits(run("decision", "add", *words, cwd=project))
    same_as_without_cache(run, project, tmp_path)


def test_past_so_many_changed_records_the_rows_are_kept_whole_again(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The part beside the rows kept whole grows with each record touched since; past `DELTA_MAX` of them the rows
    are kept whole again and the part is deleted."""
    import marshal

    from planstate.store import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # what was just written is kept
    monkeypatch.setattr(recordmemo, "DELTA_MAX", 2)
    for i in range(100, 100 + ROWS_FROM):
        write_record(project, "decision", decision(i))
    ws = Workspace.find(project)
    ws.render()
    ws.check()  # in full: keeps the rows whole
    folder = project / ".planning" / ".local" / "cache"
    rows = folder.glob(f"rows-*-v{recordmemo.VERSION}.marshal")
    whole = max(rows, key=lambda path: len(marshal.loads(path.read_bytes())[NAMES[False]]))
    part = whole.with_name(whole.name.removesuffix(".marshal") + recordmemo.DELTA)
    token = marshal.loads(whole.read_bytes())[4]
    touched = []
    for n in range(3):
        touched.append(Workspace.find(project).decision.add(context="c", decision=f"Choice {n}", reason="r").id)
        Workspace.find(project).check()
        if n < 2:
            assert marshal.loads(whole.read_bytes())[4] == token  # the rows kept whole stay as they were
            assert sorted(name[:16] for name in marshal.loads(part.read_bytes())[NAMES[True]]) == sorted(touched)
    assert marshal.loads(whole.read_bytes())[4] != token and not part.exists()
    shutil.rmtree(folder)
    assert Workspace.find(project).check().to_dict()["findings"] == []


def test_a_check_plans_its_regions_from_the_scan_its_memo_key_took(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check after a write that judges only what changed (check/recordmemo.py) plans STATE.md's record regions
    from the stat identities its memo key took of every folder (`Context.scanned`), not from a second `lstat` of
    every record file; it finds what a check with the scan finds (a hand edit that makes a region stale is seen)."""
    from planstate.store import cache, heads

    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: what was just written is kept (in rows, in heads)
    for i in range(100, 100 + ROWS_FROM):  # enough records for rows to be kept (fewer are read in full)
        write_record(project, "decision", decision(i))
    ws = Workspace.find(project)
    ws.render()
    assert ws.check().to_dict()["error_count"] == 0  # in full: keeps the rows
    added = ws.decision.add(context="c", decision="One more", reason="r")
    newest = next((project / ".planning" / "decisions").glob(f"{added.id}*.md"))
    newest.write_text(newest.read_text().replace("title: One more", "title: One mOre"))

    scans: list[object] = []
    planned: list[object] = []
    scan, head = heads.scan, heads.head

    def scanning(*args: Any, **kwargs: Any) -> Any:
        scans.append(args)
        return scan(*args, **kwargs)

    def planning(*args: Any, **kwargs: Any) -> Any:
        planned.append(args)
        return head(*args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(heads, "scan", scanning)
        patched.setattr(heads, "head", planning)
        codes = [f["code"] for f in Workspace.find(project).check().to_dict()["findings"]]
    assert len(planned) == 3 and scans == []  # each record region planned from a kept head, with no scan of its own
    assert "stale-region" in codes
    shutil.rmtree(project / ".planning" / ".local")
    assert codes == [f["code"] for f in Workspace.find(project).check().to_dict()["findings"]]


@pytest.mark.parametrize("served", [False, True], ids=["alone", "watched"])
def test_a_resume_after_writes_takes_each_records_part_from_the_kept_rows(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: bool, watch: Callable[..., WatchProcess]
) -> None:
    """After writes to every record folder (and a hand edit of when a session ended), the resume brief takes its
    blockers, sessions and decisions parts from the rows the check kept (report/brief.py `_FROM_ROWS`), reading no
    folder whole; the brief is the one a copy without `.local/` gives. Among the records: open blockers with and
    without `affects`, a resolved one, an active session, and two sessions that ended last at the same instant
    written in two offsets (the first in file-name order is the one a brief without rows takes: the brief shows it as
    the time since which a change in git is work the state may not know of)."""
    from builders import T0, blocker, session

    from planstate.report import brief
    from planstate.store import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: what was just written is kept (in rows, in memos)
    monkeypatch.setenv("PLANSTATE_NOW", "2026-12-01T00:00:00Z")
    new_repo(project)
    if served:
        watch("--no-check")
    for i in range(100, 100 + ROWS_FROM):  # enough records for rows to be kept (fewer are read in full)
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
    ws.brief()  # keeps each part under the key of its folder
    commit_all(project, "records")

    ws.decision.add(context="c", decision="One more", reason="r")
    resolved = ws.blocker.add(description="Soon resolved", affects=["phase 1"]).id
    ws.blocker.resolve(resolved, resolution="done")
    ws.blocker.add(description="Waiting on the vendor")
    ws.session.end(ws.session.start(agent="short").id)
    text = edited.read_text()
    edited.write_text(text.replace("ended: 2026-11-01T16:00:00Z", "ended: 2026-12-01T02:00:00+02:00"))  # ties the last
    (project / "unrecorded.txt").write_text("work the state does not mention\n")
    assert edited.read_text() != text

    def whole(*args: Any) -> dict[str, Any]:
        raise AssertionError("a part computed from its folder read whole, not from the kept rows")

    ws = Workspace.find(project)
    ws.check()
    with monkeypatch.context() as patched:
        for kind in brief._PARTS:
            patched.setitem(brief._PARTS, kind, whole)
        got = ws.brief().to_dict()
    assert got["blockers"]["open"] == 4 and got["sessions"]["total"] == 5
    assert got["last_session"]["agent"] == "short"
    (unrecorded,) = [doubt for doubt in got["verification"] if doubt.get("since_event") == "session_ended"]
    assert unrecorded["since"] == "2026-12-01T02:00:00+02:00"  # the end of the session first in file-name order
    other = tmp_path / "copy"
    shutil.copytree(project, other, symlinks=True)
    shutil.rmtree(other / ".planning" / ".local")
    assert got == Workspace.find(other).brief().to_dict()


def test_the_files_older_formats_of_the_cache_left_are_deleted(project: Path) -> None:
    """An upgrade changes the format of the rows, the memos and the front-matter cache (`-v<N>` in their names): the
    check in full that rebuilds them deletes what older formats left, which nothing reads; other files stay."""
    from planstate.check import recordmemo
    from planstate.store import cache

    for i in range(100, 100 + ROWS_FROM):  # enough records for rows to be kept (fewer are read in full)
        write_record(project, "decision", decision(i))
    folder = project / ".planning" / ".local" / "cache"
    Workspace.find(project).check()  # to learn the names of its memos; then a cold check again
    memos = [path.name.removesuffix(f"-v{VERSION}.json") for path in folder.glob(f"memo-*-v{VERSION}.json")]
    assert memos
    shutil.rmtree(folder)
    folder.mkdir()
    rows = recordmemo._name(Workspace.find(project).ctx, project / ".planning" / "decisions")
    left = [
        cache.versioned(folder, rows, recordmemo.VERSION - 1, ".marshal"),
        cache.versioned(folder, "front-matter", cache.VERSION - 1, ".sqlite"),
        *(cache.versioned(folder, name, VERSION - 1, ".json") for name in memos),
    ]
    other = folder / "rows-of-someone-else-v1.marshal"
    for path in [*left, other]:
        path.write_bytes(b"an older format")
    Workspace.find(project).check()
    assert [path.exists() for path in left] == [False] * len(left)
    assert other.exists() and cache.versioned(folder, rows, recordmemo.VERSION, ".marshal").exists()
