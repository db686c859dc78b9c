"""List commands from the store (store/folders.columns: each record's name, order and status, from the rows a scan
of the folder vouched for): a list answered from them and the files changed since is the list every summary gives,
whatever changed behind planstate's back.

Each list below is compared with the same list made with the cache moved away (nothing kept, every file read).
The store trusts only identities older than the filesystem's timestamp tick; these tests set that tick to nothing
(`RACY_NS`, the one seam) in this process, where the lists run, so what a list keeps is what the next one trusts,
as it would be two seconds later.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import blocker, decision, session, write_record
from conftest import Run, exits, json_data, newest_date
from gitutil import commit_all, git, new_repo
from test_cache import CACHE, same_size_edit

from planstate import Workspace
from planstate.store import cache


@pytest.fixture(autouse=True)
def _no_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: the store trusts files as soon as they are written


def listed(project: Path, kind: str = "decision", **options: Any) -> tuple[list[str], list[str], int, list[Any]]:
    """What a list shows: ids, warnings (the files it could not use), how many older ones match, the data shown."""
    found = getattr(Workspace.find(project), kind).list(**options)
    warnings = [str(problem) for problem in [*found.problems, *found.invalid]]
    return found.ids(), warnings, found.more, [entry.data for entry in found]


def cold(project: Path, kind: str = "decision", **options: Any) -> tuple[list[str], list[str], int, list[Any]]:
    """The same list made with nothing cached; the cache (with the store) is put back afterwards."""
    local = project / ".planning" / ".local"
    aside = project.parent / f"{project.name}-cache-aside"
    shutil.rmtree(aside, ignore_errors=True)
    if (local / "cache").exists():
        shutil.move(local / "cache", aside)
    try:
        return listed(project, kind, **options)
    finally:
        shutil.rmtree(local / "cache", ignore_errors=True)
        if aside.exists():
            shutil.move(aside, local / "cache")


def same_as_cold(project: Path, kind: str = "decision", **options: Any) -> list[str]:
    """The list from the store, checked against the one made with nothing cached; its ids."""
    kept = listed(project, kind, **options)
    assert kept == cold(project, kind, **options)
    return kept[0]


def doctor(project: Path, folder: str, record_id: str, status: str) -> None:
    """Say in the store's row of the record `record_id` of `folder` (its key inside the workspace) that its status is
    `status`, which its file does not say: a list shown without it is proof that it came from the store."""
    with sqlite3.connect(project / CACHE) as db:
        changed = db.execute("UPDATE files SET status = ? WHERE folder = ? AND rid = ?", (status, folder, record_id))
        assert changed.rowcount == 1


def add(run: Run, project: Path, what: str) -> None:
    exits(run("decision", "add", "--context", "c", "--decision", what, "--reason", "r", cwd=project))


def test_the_store_answers_a_list_until_its_files_change(project: Path) -> None:
    for i in range(6):
        write_record(project, "decision", decision(i))
    first = same_as_cold(project, limit=3)
    assert len(first) == 3 and listed(project, limit=3)[2] == 3
    doctor(project, "decisions", first[-1], "superseded")
    doctored = listed(project, limit=3)[0]
    assert first[-1] not in doctored and len(doctored) == 3  # the store answered
    assert first[-1] not in listed(project, limit=4)[0]  # another page size: the same rows
    (newest,) = (project / ".planning" / "decisions").glob(f"{first[-1]}*.md")
    same_size_edit(newest, "Decision number 5", "Decision NUMBER 5")  # its file changed: its row is made anew
    assert same_as_cold(project, limit=3) == first
    doctor(project, "decisions", first[-1], "superseded")
    shutil.rmtree(project / ".planning" / ".local")  # a deleted cache: every summary again
    assert same_as_cold(project, limit=3) == first


def test_a_list_follows_adds_hand_edits_and_removals(run: Run, project: Path) -> None:
    paths = [write_record(project, "decision", decision(i)) for i in range(25)]
    same_as_cold(project, limit=5)
    same_as_cold(project, status="accepted", limit=5)
    add(run, project, "Added through the CLI")
    assert listed(project, limit=5)[3][-1]["title"] == "Added through the CLI"
    same_as_cold(project, limit=5)
    # An old decision, far from the page, edited by hand (same size, mtime set back) to be the newest.
    same_size_edit(paths[0], "date: 2026-11-01", f"date: {newest_date()}")
    shown = same_as_cold(project, limit=5)
    assert shown[-1] == paths[0].stem
    # A decision on the page edited by hand to leave the accepted ones (same size), then superseded (longer).
    same_size_edit(paths[0], "status: accepted", "status: rejected")
    assert paths[0].stem not in same_as_cold(project, status="accepted", limit=5)
    assert paths[0].stem in same_as_cold(project, limit=5)
    paths[-1].write_text(paths[-1].read_text(encoding="utf-8").replace("accepted", "superseded"), encoding="utf-8")
    assert paths[-1].stem not in same_as_cold(project, limit=5)
    same_as_cold(project, status="superseded", limit=5)
    # One on the page deleted: the next older one takes its place; many deleted at once: every summary again.
    paths[-2].unlink()
    assert paths[-2].stem not in same_as_cold(project, limit=5)
    for path in paths[-12:-2]:
        path.unlink()
    same_as_cold(project, limit=5)
    same_as_cold(project, status="accepted", limit=5)
    # A record broken by hand: listed as it is, with its warning, whatever was kept.
    same_size_edit(paths[3], "status: accepted", "status: accepte!")
    kept = same_as_cold(project, limit=5)
    assert listed(project, limit=5)[1] and kept
    same_size_edit(paths[3], "status: accepte!", "status: accepted")
    same_as_cold(project, limit=5)


def test_blocker_and_session_pages_follow_the_cli(run: Run, project: Path) -> None:
    for i in range(6):
        write_record(project, "blocker", blocker(i))
        write_record(project, "session", session(i))
    shown = same_as_cold(project, "blocker", limit=3)
    same_as_cold(project, "blocker", status="resolved", limit=3)
    exits(run("blocker", "resolve", shown[-1], "--resolution", "done", cwd=project))
    assert shown[-1] not in same_as_cold(project, "blocker", limit=3)
    assert shown[-1] in same_as_cold(project, "blocker", status="resolved", limit=3)
    same_as_cold(project, "session", limit=3)
    started = json_data(exits(run("session", "start", "--agent", "w", "--json", cwd=project)))["id"]
    assert same_as_cold(project, "session", limit=3)[-1] == started
    assert same_as_cold(project, "session", status="active", limit=3) == [started]
    exits(run("session", "end", "--session", started, cwd=project))
    assert same_as_cold(project, "session", status="active", limit=3) == []


def test_a_checkout_behind_our_back_is_listed_again(run: Run, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Pages", cwd=repo))
    for i in range(4):
        write_record(repo, "decision", decision(i))
    exits(run("render", cwd=repo))
    commit_all(repo, "four decisions")
    git(repo, "checkout", "--quiet", "-b", "other")
    add(run, repo, "Use Redis")
    first = sorted((repo / ".planning" / "decisions").glob("*.md"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace("accepted", "superseded"), encoding="utf-8")
    exits(run("render", cwd=repo))
    commit_all(repo, "other")
    on_other = same_as_cold(repo, limit=3)
    git(repo, "checkout", "--quiet", "main")
    on_main = same_as_cold(repo, limit=3)
    assert on_main != on_other
    git(repo, "checkout", "--quiet", "other")
    assert same_as_cold(repo, limit=3) == on_other


def test_a_session_heartbeat_is_looked_up_while_the_store_answers(run: Run, project: Path) -> None:
    """A heartbeat is machine-local, not in the files: the store answers, and each session shown has the heartbeat
    it has now."""
    for i in range(2):
        write_record(project, "session", session(i, status="active", ended=None))
    shown = same_as_cold(project, "session", status="active", limit=1)
    doctor(project, "sessions", shown[0], "ended")
    assert listed(project, "session", status="active", limit=1)[0] not in ([], shown)  # the store answered
    (older,) = listed(project, "session", status="active", limit=1)[0]
    later = {"PLANSTATE_NOW": "2031-01-01T00:00:00Z"}
    exits(run("session", "heartbeat", "--session", older, cwd=project, env=later))
    found = Workspace.find(project).session.list(status="active", limit=1)
    assert [entry.extra["heartbeat"] for entry in found] == ["2031-01-01T00:00:00Z"]


def test_a_lost_or_unreadable_folder_row_costs_only_time(project: Path) -> None:
    paths = [write_record(project, "decision", decision(i)) for i in range(8)]
    same_as_cold(project, limit=3)
    with sqlite3.connect(project / CACHE) as db:
        assert db.execute("DELETE FROM folders WHERE key = 'decisions/'").rowcount == 1
    same_size_edit(paths[0], "date: 2026-11-01", f"date: {newest_date()}")  # no scan to compare: each file's identity
    assert same_as_cold(project, limit=3)[-1] == paths[0].stem
    with sqlite3.connect(project / CACHE) as db:
        db.execute("UPDATE folders SET recent = X'00'")  # unreadable: as if none were kept
    paths[1].unlink()
    assert paths[1].stem not in same_as_cold(project, limit=3)
