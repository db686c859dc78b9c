"""The watcher's journal (check/journal.py, core/watched.py): while `planstate watch` runs, a command looks again only
at the files the journal says changed, and answers exactly what it answers with no watcher, whatever changed
behind its back: a same-size edit, new, deleted and renamed files, a folder moved away and back, a file edited
through a second hard link, a checkout, a restart of the watcher, its queue overflowing, `.local/` deleted.

Each list is compared with the same list made with nothing cached (test_pages.py's `same_as_cold`). As there, the
filesystem's timestamp tick is set to nothing in this process (`RACY_NS`), where the lists run, so what a list keeps
is what the next one trusts. The watcher is a real `planstate watch --no-check` process; the full listings of a
folder are counted (a spy on `watched.listed`, not a stand-in) to tell that a list took the journal's way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from builders import decision, write_record
from conftest import Run, exits, json_data, planstate_command, refused
from gitutil import commit_all, git, new_repo
from test_cache import same_size_edit
from test_pages import cold, listed, same_as_cold
from watching import WatchProcess

from planstate.check.journal import Journal, shared_filesystem
from planstate.core import inotify, watched
from planstate.store import cache
from planstate.workspace import Workspace

MANY = 40  # decisions: a list of the default page size leaves most of them out


@pytest.fixture(autouse=True)
def _no_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)  # cache.settled: kept views take in files as soon as they are written


@pytest.fixture
def decisions(project: Path) -> Path:
    """The project with MANY decisions written by hand."""
    for i in range(MANY):
        write_record(project, "decision", decision(i))
    return project / ".planning" / "decisions"


@pytest.fixture
def serving(watch: Callable[..., WatchProcess]) -> Callable[[], WatchProcess]:
    """Start `planstate watch --no-check` in the project (again, after a stop; conftest's `watch` stops it at
    teardown)."""

    def start() -> WatchProcess:
        process = watch("--no-check")
        ready = process.seen[-1]
        assert ready["journal"] is True and "error_count" not in ready  # no checks run
        return process

    return start


class FullListings:
    """How many folders were listed in full (`watched.listed`: one `lstat` per file) while counting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = watched.listed

        def counted(fd: int, names: list[str] | None = None) -> watched.Listing:
            self.calls += 1
            return real(fd, names)

        monkeypatch.setattr(watched, "listed", counted)


def shown_file(project: Path) -> Path:
    """The file of the first decision the list shows."""
    first = listed(project, limit=10)[0][0]
    return next((project / ".planning" / "decisions").glob(f"{first}*.md"))


def journaled_list(project: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The list (checked against one made with nothing cached), taken the journal's way: no folder listed in full,
    only the files the journal names looked at."""
    with monkeypatch.context() as patch:
        count = FullListings(patch)
        ids = listed(project, limit=10)[0]
    assert count.calls == 0
    assert ids == same_as_cold(project, limit=10)
    return ids


def test_behind_its_back_changes_are_seen_without_a_look_at_every_file(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    serving()
    first = same_as_cold(project, limit=10)  # kept, with the journal's token
    assert journaled_list(project, monkeypatch) == first
    before = listed(project, limit=10)
    same_size_edit(shown_file(project), "status: accepted", "status: rejected")  # the same size, the mtime put back
    assert listed(project, limit=10) == cold(project, limit=10) != before
    write_record(project, "decision", decision(MANY + 1, title="Added by hand"))
    journaled_list(project, monkeypatch)
    os.rename(decisions / sorted(os.listdir(decisions))[-1], decisions / "renamed-by-hand.md")
    journaled_list(project, monkeypatch)
    (decisions / "renamed-by-hand.md").unlink()
    journaled_list(project, monkeypatch)


def same_as_without_local(project: Path, tmp_path: Path) -> list[object]:
    """The findings of a check in `project`, asserted equal to those of a copy of it without `.local/`, and its
    resume brief likewise."""
    ws = Workspace.find(project)
    found = ws.check().to_dict()["findings"]
    brief = ws.brief().to_dict()
    other = tmp_path / "copy" / project.name
    shutil.rmtree(other.parent, ignore_errors=True)
    shutil.copytree(project, other, symlinks=True, ignore=shutil.ignore_patterns(".local"))
    assert found == Workspace.find(other).check().to_dict()["findings"]
    assert brief == Workspace.find(other).brief().to_dict()
    return list(found)


def test_a_kept_listing_keeps_only_the_changes_since_it_was_kept_whole(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder's listing is kept whole once; after a change only the changes since are kept beside it (a few
    entries, where the listing is 10,000), until there are too many (`CHANGES_MAX`). Changes kept over another
    listing, or torn, are not used; each check finds what a check of a copy without `.local/` finds."""
    import marshal

    monkeypatch.setenv("PLANSTATE_NOW", "2026-11-22T08:00:00Z")
    serving()
    same_as_without_local(project, tmp_path)
    planning = project / ".planning"
    whole = Path(watched._state_path(planning, "decisions"))
    changes = Path(watched._state_path(planning, "decisions", watched.CHANGES))
    before = whole.read_bytes()
    added = decision(MANY + 1, title="Added by hand")
    write_record(project, "decision", added)
    same_as_without_local(project, tmp_path)
    assert whole.read_bytes() == before
    assert [name[:16] for name in marshal.loads(changes.read_bytes())[-1]] == [added["id"]]
    changes.write_bytes(changes.read_bytes()[:-20])  # torn: the journal names what changed since the whole one
    (decisions / sorted(os.listdir(decisions))[0]).unlink()
    same_as_without_local(project, tmp_path)
    assert whole.read_bytes() == before and len(marshal.loads(changes.read_bytes())[-1]) == 2
    stray = changes.read_bytes()
    monkeypatch.setattr(watched, "CHANGES_MAX", 2)
    write_record(project, "decision", decision(MANY + 2, title="One too many"))
    same_as_without_local(project, tmp_path)
    assert whole.read_bytes() != before and not changes.exists()  # kept whole again
    changes.write_bytes(stray)  # changes over the listing kept whole before
    write_record(project, "decision", decision(MANY + 3, title="After the stray changes"))
    same_as_without_local(project, tmp_path)
    assert len(marshal.loads(changes.read_bytes())[-1]) == 1


def test_the_files_changed_within_the_tick_are_recent_through_the_journal(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within the timestamp tick of a scan could keep its identity through another change: the memo
    keeps the digest of each (store/memo.py `_recent`). Through the journal, they are found among the entries it
    names and those a kept listing holds fresh, and only there: the same files a scan of every entry finds."""
    from planstate.store import memo

    monkeypatch.setattr(memo, "RACY_NS", 600 * 10**9)  # a tick of ten minutes: every file of the test is recent

    def recent() -> set[str]:
        found = memo.inputs(project / ".planning", "test")
        assert found is not None
        return {name for name, _digest in found.recent}

    every = {str(path) for path in decisions.glob("*.md")}  # all written just now
    Workspace.find(project).check()  # makes the cache's folder, where listings are kept
    serving()
    assert every <= recent()  # listed in full, and kept with these fresh
    assert every <= recent()  # through the journal: nothing changed, all fresh
    added = write_record(project, "decision", decision(MANY + 1, title="Added by hand"))
    assert {*every, str(added)} <= recent()  # one the journal names, with the fresh ones
    assert {*every, str(added)} <= recent()


def test_a_check_after_a_change_compares_only_the_records_the_journal_names(
    project: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A check keeps the rows of its records with the journal's token (check/recordmemo.py); the next compares only
    the records the journal names as changed since with their rows, never every one, and finds what a check of a
    copy without `.local/` finds: after a same-size edit, a record added (its folder's listing kept since, by
    another command), one renamed to a name that does not start with its id, one naming a record that does not
    exist, one deleted, and a checkout of none of it."""
    from planstate.check import recordmemo
    from planstate.check.memo import ROWS_FROM

    monkeypatch.setenv("PLANSTATE_NOW", "2026-11-22T08:00:00Z")  # the briefs compared are of one moment
    for i in range(ROWS_FROM):
        write_record(project, "decision", decision(i))
    Workspace.find(project).render()
    new_repo(project)
    commit_all(project, "the decisions")
    folder = project / ".planning" / "decisions"
    serving()

    def checked(whole: bool = False) -> list[object]:
        with monkeypatch.context() as patch:
            compared: list[int] = []
            real = recordmemo._differ

            def counted(*args: object) -> object:
                compared.append(1)
                return real(*args)  # type: ignore[arg-type]

            patch.setattr(recordmemo, "_differ", counted)
            asked: list[object] = []
            real_asked = recordmemo._asked

            def answered(*args: object) -> object:
                asked.append(real_asked(*args))  # type: ignore[arg-type]
                return asked[-1]

            patch.setattr(recordmemo, "_asked", answered)
            found = same_as_without_local(project, tmp_path)
        assert whole or (not compared and asked and None not in asked)  # the journal's way, for every folder asked
        return found

    checked(whole=True)  # in full: the rows are kept, with the journal's token
    first = sorted(folder.glob("*.md"))
    same_size_edit(first[0], "status: accepted", "status: rejected")
    checked()
    write_record(project, "decision", decision(ROWS_FROM + 1, title="Added by hand"))
    Workspace.find(project).validate()  # keeps the folder's listing as it is now: the rows are older than it
    checked()
    os.rename(first[1], folder / "renamed-by-hand.md")
    assert any(f["code"] == "filename-id-mismatch" for f in checked())  # type: ignore[index]
    write_record(project, "decision", decision(ROWS_FROM + 2, supersedes="dec-0000000000000"))
    assert any(f["code"] == "missing-reference" for f in checked())  # type: ignore[index]
    first[2].unlink()
    checked()
    git(project, "checkout", "-q", "--", ".")
    git(project, "clean", "-qfd", "--", ".planning/decisions")
    assert checked() == []


def test_without_a_watcher_every_file_is_looked_at(
    project: Path, decisions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    same_as_cold(project, limit=10)
    with monkeypatch.context() as patch:
        count = FullListings(patch)
        listed(project, limit=10)
    assert count.calls == 1


def test_a_folder_moved_away_and_back_is_listed_in_full(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    serving()
    same_as_cold(project, limit=10)
    away = project / "decisions-away"
    decisions.rename(away)
    assert listed(project, limit=10)[0] == same_as_cold(project, limit=10) == []
    (away / sorted(os.listdir(away))[0]).unlink()  # changed while out of the watched tree
    away.rename(decisions)
    assert len(same_as_cold(project, limit=10)) == 10
    journaled_list(project, monkeypatch)


def test_an_edit_through_a_second_hard_link_is_seen(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], tmp_path: Path
) -> None:
    serving()
    outside = tmp_path / "linked.md"
    os.link(shown_file(project), outside)  # its link count changes its ctime: the journal sees that much
    same_as_cold(project, limit=10)
    before = listed(project, limit=10)
    same_size_edit(outside, "status: accepted", "status: rejected")  # no watch sees an edit under this name
    assert listed(project, limit=10) == cold(project, limit=10) != before


def test_a_restarted_watcher_answers_nothing_from_before(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    process = serving()
    same_as_cold(project, limit=10)
    before = listed(project, limit=10)
    process.stop()
    same_size_edit(shown_file(project), "status: accepted", "status: rejected")  # unseen: no watcher runs
    serving()
    assert listed(project, limit=10) == cold(project, limit=10) != before  # another epoch: listed in full
    journaled_list(project, monkeypatch)


def test_a_checkout_is_seen(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    new_repo(project)
    commit_all(project, "forty decisions")
    git(project, "checkout", "-q", "-b", "more")
    for i in range(MANY, MANY + 5):
        write_record(project, "decision", decision(i, title=f"On a branch {i}"))
    commit_all(project, "five more")
    serving()
    on_branch = same_as_cold(project, limit=10)
    git(project, "checkout", "-q", "-")
    assert listed(project, limit=10)[0] == same_as_cold(project, limit=10) != on_branch
    git(project, "checkout", "-q", "more")
    assert journaled_list(project, monkeypatch) == on_branch


def test_deleting_local_while_watched_costs_only_time(
    project: Path, decisions: Path, serving: Callable[[], WatchProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    serving()
    same_as_cold(project, limit=10)
    shutil.rmtree(project / ".planning" / ".local")
    write_record(project, "decision", decision(MANY + 1, title="Added meanwhile"))
    # The cookies' folder is made again; this list does not ask the journal.
    assert listed(project, limit=10)[0] == same_as_cold(project, limit=10)
    synced(project / ".planning")  # once the watcher watches it
    same_as_cold(project, limit=10)
    journaled_list(project, monkeypatch)


def test_two_writers_at_once_leave_a_clean_workspace(
    run: Run, project: Path, serving: Callable[[], WatchProcess]
) -> None:
    serving()
    exits(run("decision", "add", "--context", "c", "--decision", "first", "--reason", "r", cwd=project))
    writers = [
        subprocess.Popen(
            [*planstate_command(), "decision", "add", "--context", "c", "--decision", f"writer {n}", "--reason", "r"],
            cwd=project,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PLANSTATE_ACTOR": "tester"},
        )
        for n in range(2)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    state = (project / ".planning" / "STATE.md").read_text(encoding="utf-8")
    assert "writer 0" in state and "writer 1" in state
    assert json_data(exits(run("check", "--json", cwd=project)))["error_count"] == 0


def test_a_second_watcher_serves_no_journal(project: Path, serving: Callable[[], WatchProcess], run: Run) -> None:
    serving()
    second = subprocess.run(
        [*planstate_command(), "watch", "--no-check"], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert second.returncode == 2
    assert "cannot serve the journal: another watcher serves this workspace" in second.stderr
    checking = WatchProcess(project)  # with the checks, it watches all the same
    try:
        ready = checking.wait_event("ready")
        assert ready["journal"] is False and ready["journal_note"] == "another watcher serves this workspace"
    finally:
        checking.proc.terminate()
        checking.proc.wait()
    assert "--fix needs the checks" in refused(run("watch", "--no-check", "--fix", cwd=project))


# ---------------------------------------------------------------------------- the journal itself, in this process


@pytest.fixture
def journal(project: Path) -> Iterator[Journal]:
    """The journal of the project's planning folder, served from this process."""
    served = Journal(project / ".planning")
    served.start()
    yield served
    served.stop()


def wait_for(condition: Callable[[], bool]) -> None:
    """Poll until `condition` holds (a guard against a hang: a fast machine needs a fraction of a second)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def synced(planning: Path) -> watched.Token:
    """The journal's token, asked until it answers (a cookie made in a folder the watcher does not watch yet, or
    while its queue is full, is never seen: that question gets no answer)."""
    found: list[watched.Token] = []
    wait_for(
        lambda: bool(found.append(token) if (token := watched.sync(planning)) is not None else False) or bool(found)
    )
    return found[0]


def test_the_journal_names_what_changed_and_refuses_what_it_cannot_tell(project: Path, journal: Journal) -> None:
    planning = project / ".planning"
    folder = str(planning / "decisions")
    token = watched.sync(planning)
    assert token is not None and token[0] == journal.epoch
    assert watched.changed(planning, folder, token) == []
    (planning / "decisions" / "one.md").write_text("x", encoding="utf-8")
    (planning / "blockers" / "two.md").write_text("x", encoding="utf-8")
    assert watched.sync(planning) is not None  # everything before it is numbered
    assert watched.changed(planning, folder, token) == ["one.md"]
    assert watched.changed(planning, str(planning / "blockers"), token) == ["two.md"]
    assert watched.changed(planning, str(planning), token) == ["blockers", "decisions"]  # their times changed
    (planning / "decisions").rename(planning / "elsewhere")
    assert watched.sync(planning) is not None
    assert watched.changed(planning, folder, token) is None  # the folder itself moved
    assert watched.changed(planning, str(planning / ".local"), token) is None  # never journaled
    assert watched.changed(planning, folder, ("another epoch", 0)) is None


def test_an_overflowed_queue_starts_a_new_epoch(project: Path, journal: Journal) -> None:
    planning = project / ".planning"
    token = watched.sync(planning)
    assert token is not None
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    crowd = planning / "crowd"
    crowd.mkdir()
    with journal._cond:  # the reader waits to record what it read: the kernel's queue fills up behind it
        wait_for(lambda: "crowd" in journal._tree.watched)  # type: ignore[union-attr]
        for n in range(limit // 2 + 100):  # a create and a write each: more events than the queue holds
            fd = os.open(crowd / f"{n}.md", os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, b"x")
            os.close(fd)
    after = synced(planning)
    assert after[0] != token[0]
    assert watched.changed(planning, str(crowd), token) is None
    (crowd / "late.md").write_text("x", encoding="utf-8")
    assert watched.sync(planning) is not None
    assert watched.changed(planning, str(crowd), after) == ["late.md"]


def test_a_cookie_the_journal_never_sees_is_no_answer(project: Path, journal: Journal) -> None:
    assert journal.sync("never-created", timeout=0.05) is None
    stopped = threading.Event()
    threading.Thread(target=lambda: (journal.sync("unseen", timeout=30), stopped.set()), daemon=True).start()
    journal.stop()  # a waiting question is answered when the journal stops
    wait_for(stopped.is_set)


def test_a_tree_watches_folders_as_they_come_and_go(tmp_path: Path) -> None:
    (tmp_path / "left-out").mkdir()
    tree = inotify.Tree(str(tmp_path), lambda folder: folder == "left-out")
    seen: list[inotify.Event] = []
    try:
        assert set(tree.watched) == {""}
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "deeper").mkdir()
        wait_for(lambda: bool(seen.extend(tree.events())) or "sub/deeper" in tree.watched)
        (tmp_path / "sub").rename(tmp_path / "moved")
        wait_for(lambda: bool(seen.extend(tree.events())) or "moved/deeper" in tree.watched)
        assert "sub" not in tree.watched and "sub/deeper" not in tree.watched
        assert ("", "sub") in [(event.folder, event.name) for event in seen]
    finally:
        tree.close()


@pytest.mark.parametrize(
    ("kind", "shared"),
    [
        ("ext4", None),
        ("nfs4", "nfs4"),
        ("cifs", "cifs"),
        ("virtiofs", "virtiofs"),
        ("fuse.sshfs", "fuse.sshfs"),
        ("fuse-overlayfs", None),
        ("overlay", None),
        ("tmpfs", None),
    ],
)
def test_no_journal_where_another_machine_changes_the_files(tmp_path: Path, kind: str, shared: str | None) -> None:
    info = os.stat(tmp_path)
    device = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"
    by_device = f"40 27 {device} / /somewhere rw,relatime - {kind} server:/export rw\n"
    assert shared_filesystem(tmp_path, "22 1 0:1 / / rw - ext4 /dev/sda1 rw\n" + by_device) == shared
    by_path = f"40 27 0:99 / {tmp_path} rw,relatime - {kind} server:/export rw\n"  # a device that does not match
    assert shared_filesystem(tmp_path, "22 1 0:1 / / rw - ext4 /dev/sda1 rw\n" + by_path) == shared
    assert shared_filesystem(tmp_path, "") == "an unknown filesystem"


def test_a_reader_that_cannot_go_on_stops_the_journal(
    project: Path, journal: Journal, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    planning = project / ".planning"
    assert watched.sync(planning) is not None
    tree = journal._tree
    assert tree is not None

    def broken() -> Iterator[inotify.Event]:
        raise inotify.Unavailable("the system's limit of inotify watches is reached")
        yield  # pragma: no cover - a generator that raises when first read

    monkeypatch.setattr(tree, "events", broken)  # the seam: a kernel limit cannot be reached here on purpose
    (planning / "decisions" / "wakes-the-reader.md").write_text("x", encoding="utf-8")
    wait_for(lambda: journal._stop.is_set())
    assert watched.sync(planning) is None  # no answer, and at once: not after the cookie's timeout
    assert "the journal stopped" in capsys.readouterr().err
