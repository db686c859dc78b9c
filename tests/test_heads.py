"""A region's head from the store (store/folders.head: its first records and counts, queried from the rows a scan
of the folder vouched for): a region a write renders from it is the region every summary gives.

`planstate check` renders the regions from every record it reads, so a clean check after each change says the head
a write rendered from was right. The store trusts only identities older than the filesystem's timestamp tick; these
tests set that tick to nothing (`RACY_NS`, the one seam), so what a write keeps is what the next write trusts, as
it would be two seconds later.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import blocker, decision, write_record
from conftest import Run, exits, newest_date, state_file
from test_cache import CACHE, same_size_edit

from planstate import Workspace
from planstate.store import cache


@pytest.fixture(autouse=True)
def _no_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: the store trusts files as soon as they are written


def region(project: Path, name: str) -> str:
    """The text of region `name` in STATE.md."""
    text = state_file(project).read_text(encoding="utf-8")
    return text.split(f"planstate:begin {name} ")[1].split(f"planstate:end {name}")[0]


def clean(run: Run, project: Path) -> None:
    """`planstate check` finds nothing: every region is what the records give."""
    exits(run("check", cwd=project))


def add(project: Path, what: str) -> None:
    Workspace.find(project).decision.add(context="c", decision=what, reason="r")


def test_decisions_from_the_store_follow_adds_hand_edits_and_removals(run: Run, project: Path) -> None:
    paths = [write_record(project, "decision", decision(i)) for i in range(25)]
    Workspace.find(project).render()  # keeps the rows
    clean(run, project)
    add(project, "First added")
    add(project, "Second added")
    clean(run, project)
    assert "Second added" in region(project, "decisions")
    assert "17 older decisions" in region(project, "decisions")
    # An old decision, not among those shown, edited by hand (same size, mtime set back) to be the newest.
    same_size_edit(paths[0], "date: 2026-11-01", f"date: {newest_date()}")
    add(project, "Third added")
    clean(run, project)
    shown = region(project, "decisions")
    assert shown.index("Decision number 0") < shown.index("Third added")
    # The newest one removed: the next is shown in its place, and the count drops.
    paths[0].unlink()
    add(project, "Fourth added")
    clean(run, project)
    assert "Decision number 0" not in region(project, "decisions")
    assert "18 older decisions" in region(project, "decisions")
    # Many of the first ones gone at once: the rows of their files are forgotten.
    for path in sorted((project / ".planning" / "decisions").iterdir())[-12:]:
        path.unlink()
    add(project, "Fifth added")
    clean(run, project)
    assert "Fifth added" in region(project, "decisions")


def _invalid(paths: list[Path]) -> Callable[[], None]:
    """A record made invalid in place (same size, mtime set back); what puts it right again."""
    same_size_edit(paths[3], "status: accepted", "status: acceptez")
    return lambda: same_size_edit(paths[3], "status: acceptez", "status: accepted")


def _fifo(paths: list[Path]) -> Callable[[], None]:
    """A FIFO named like a record beside them; what takes it away."""
    odd = paths[0].parent / "odd.md"
    os.mkfifo(odd)
    return odd.unlink


@pytest.mark.parametrize(
    ("spoil", "said"), [(_invalid, "region decisions not rendered"), (_fifo, "not a regular file")]
)
def test_a_record_that_cannot_be_shown_blocks_the_region_from_the_store(
    run: Run, project: Path, spoil: Callable[[list[Path]], Callable[[], None]], said: str
) -> None:
    paths = [write_record(project, "decision", decision(i)) for i in range(12)]
    Workspace.find(project).render()
    mend = spoil(paths)
    before = region(project, "decisions")
    result = exits(run("decision", "add", "--context", "c", "--decision", "Blocked", "--reason", "r", cwd=project))
    assert said in result.stderr
    assert region(project, "decisions") == before
    mend()
    add(project, "Unblocked")
    clean(run, project)
    assert "Unblocked" in region(project, "decisions")


def test_blockers_from_the_store_follow_resolutions(run: Run, project: Path) -> None:
    for i in range(14):
        write_record(project, "blocker", blocker(i))
    Workspace.find(project).render()
    ws = Workspace.find(project)
    ids = [b["id"] for b in ws.blocker.list().to_dict()["blockers"]]
    for ref in (ids[0], ids[-1], ids[5]):  # the oldest (shown), the newest (not shown), one in between
        Workspace.find(project).blocker.resolve(ref, resolution="done")
        clean(run, project)
    text = region(project, "blockers")
    assert "3 resolved blockers" in text
    assert "1 more open blocker in" in text


def test_a_deleted_local_folder_rebuilds_the_store(run: Run, project: Path) -> None:
    for i in range(15):
        write_record(project, "decision", decision(i))
    Workspace.find(project).render()
    shutil.rmtree(project / ".planning" / ".local")
    add(project, "After the cache")
    clean(run, project)
    assert "6 older decisions" in region(project, "decisions")


def seen_of(project: Path) -> dict[str, int]:
    """When the store's row of each decision file was written, by name."""
    import sqlite3

    with sqlite3.connect(project / CACHE) as db:
        return dict(db.execute("SELECT name, seen FROM files WHERE folder = 'decisions'").fetchall())


def kept_folder_rows(project: Path) -> list[str]:
    """The record folders the store keeps a row of (what a scan of each vouched for), by key."""
    import sqlite3

    with sqlite3.connect(project / CACHE) as db:
        return [key for (key,) in db.execute("SELECT key FROM folders WHERE key LIKE 'decisions%' ORDER BY key")]


def drop_folder_row(project: Path) -> None:
    """Delete the decisions' folder row from the store, as a crash between two writes of it might leave it."""
    import sqlite3

    with sqlite3.connect(project / CACHE) as db:
        assert db.execute("DELETE FROM folders WHERE key = 'decisions/'").rowcount == 1


def test_a_write_writes_only_the_rows_it_changed_and_a_lost_folder_row_costs_only_time(run: Run, project: Path) -> None:
    paths = [write_record(project, "decision", decision(i)) for i in range(25)]
    Workspace.find(project).render()  # keeps the rows and the folder's
    before = seen_of(project)
    add(project, "First added")
    add(project, "Second added")
    after = seen_of(project)
    assert len(after) == 27 and {name: after[name] for name in before} == before  # only the new rows were written
    clean(run, project)
    # The folder's row lost, and an old decision edited by hand (same size, mtime set back) to be the newest: the
    # scan has nothing to compare with, so each file's identity is compared with its row's.
    drop_folder_row(project)
    same_size_edit(paths[0], "date: 2026-11-01", f"date: {newest_date()}")
    add(project, "Third added")
    clean(run, project)
    shown = region(project, "decisions")
    assert shown.index("Decision number 0") < shown.index("Third added")
    assert "decisions/" in kept_folder_rows(project)  # kept again


def test_files_added_since_and_edits_or_renames_of_them_behind_our_back_are_seen(run: Run, project: Path) -> None:
    for i in range(15):
        write_record(project, "decision", decision(i))
    Workspace.find(project).render()
    for n in range(4):
        add(project, f"Added {n}")
        clean(run, project)
    # One added since, edited by hand; one of the first renamed behind our back (its ctime changes).
    folder = project / ".planning" / "decisions"
    [added] = [p for p in folder.iterdir() if "Added 3" in p.read_text(encoding="utf-8")]
    same_size_edit(added, "status: accepted", "status: rejected")
    [old] = [p for p in folder.iterdir() if "Decision number 4\n" in p.read_text(encoding="utf-8")]
    old.rename(old.with_name(old.name.replace(".md", "-renamed.md")))
    add(project, "After the edits")
    clean(run, project)
    assert "rejected" in region(project, "decisions")


@pytest.mark.parametrize(
    "names",
    [
        ["a.md", ".gitkeep", "b.md"],
        ["a.md", "notes.txt", ".hidden.md", "b.md.bak", "c.mdx", ".md"],
        [".gitkeep"],
        [],
        ["a.md"],
    ],
)
def test_record_names_found_by_searching_all_names_at_once_are_those_one_by_one_gives(names: list[str]) -> None:
    import stat

    from planstate.store.recordfiles import is_record_name
    from planstate.store.scan import Listing

    listed = sorted(names)
    scanned = Listing(listed, [stat.S_IFREG | 0o644] * len(listed), [(0, i, 0, 0, 0) for i in range(len(listed))])
    assert scanned.records()[0] == [name for name in listed if is_record_name(name)]
