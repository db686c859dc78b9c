"""The Workspace API and its file and lock layers, in process: finding, transactions, safe reads and writes."""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import PINNED_NOW, state_file

from planstate.core import files
from planstate.core.errors import ConflictError, LockTimeout, ParseError, PlanstateError, UsageError, ValidationError
from planstate.core.files import atomic_write, create_exclusive, read_bytes, real_target
from planstate.core.lock import WorkspaceLock, check_timeout
from planstate.model.coerce import from_text
from planstate.model.kinds import State
from planstate.model.schema import lookup
from planstate.ops.fields import Change
from planstate.workspace import Workspace

# ---------------------------------------------------------------------------- finding


def test_find_upward_explicit_and_environment(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planning = project / ".planning"
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    assert Workspace.find(deep).root == planning
    assert Workspace.find(explicit=project).root == planning
    assert Workspace.find(explicit=planning).root == planning
    monkeypatch.setenv("PLANSTATE_DIR", str(project))
    assert Workspace.find(Path("/")).root == planning
    monkeypatch.setenv("PLANSTATE_DIR", str(project / "a"))
    with pytest.raises(UsageError, match=r"no \.planning/ workspace"):
        Workspace.find()


def test_find_inside_the_planning_folder(project: Path) -> None:
    planning = project / ".planning"
    Workspace.find(project).initiative.new("foo", phases=["X"])
    for inside in (planning / "decisions", planning / "initiatives"):
        ws = Workspace.find(explicit=inside)
        assert (ws.root, ws.initiative_slug) == (planning, None)
    ws = Workspace.find(explicit=planning / "initiatives" / "foo" / "sessions")
    assert (ws.root, ws.initiative_slug) == (planning, "foo")
    assert ws.target.dir == planning / "initiatives" / "foo"
    assert Workspace.find(explicit=planning / "initiatives" / "foo", initiative="demo").initiative_slug == "demo"


def test_find_refuses_a_folder_that_only_holds_a_state_file(project: Path, tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "STATE.md").write_bytes(state_file(project).read_bytes())
    with pytest.raises(UsageError, match=r"no \.planning/ workspace at .*loose \(not a \.planning/ folder"):
        Workspace.find(explicit=loose)
    with pytest.raises(UsageError, match="no such folder"):
        Workspace.find(explicit=tmp_path / "missing" / ".planning")


def test_find_reports_the_hint(tmp_path: Path) -> None:
    (tmp_path / ".planning").write_text("a file, not a workspace")
    with pytest.raises(UsageError) as caught:
        Workspace.find(tmp_path)
    assert "planstate init" in str(caught.value)
    assert caught.value.exit_code == 2


# ---------------------------------------------------------------------------- init


def test_init_is_whole_or_nothing(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path, title="T", phases=["One"])
    assert sorted(p.name for p in ws.root.iterdir()) == [
        ".gitattributes",
        ".gitignore",
        "STATE.md",
        "blockers",
        "decisions",
        "history.jsonl",
        "sessions",
        "tasks",
    ]
    assert "history.jsonl merge=union" in (ws.root / ".gitattributes").read_text()
    before = state_file(tmp_path).read_bytes()
    with pytest.raises(UsageError, match="already exists"):
        Workspace.init(tmp_path, title="Again")
    assert state_file(tmp_path).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [".planning"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"first_phase": 2}, "^first_phase must be 0 or 1$"),
        ({"phases": ["ok", "  "]}, "phase names"),
        ({"initiative": "Bad Slug"}, "slug"),
    ],
)
def test_init_refuses_bad_options(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Workspace.init(tmp_path, title="T", **options)
    assert list(tmp_path.iterdir()) == []


def test_init_in_a_missing_folder_makes_it_and_a_refused_init_leaves_none(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "missing" / "project")
    assert ws.root == tmp_path / "missing" / "project" / ".planning" and ws.state().title == "project"
    with pytest.raises(UsageError, match="slug"):
        Workspace.init(tmp_path / "other" / "project", initiative="Bad Slug")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="not a folder"):
        Workspace.init(tmp_path / "file")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file", "missing"]


# ---------------------------------------------------------------------------- transactions


def test_set_append_unset_report_changes(project: Path) -> None:
    ws = Workspace.find(project)
    changes = ws.set({"position.task": "t1", "title": "Demo"})
    assert [(c.path, c.old, c.new) for c in changes] == [("position.task", None, "t1")]
    changes = ws.append("resume_context.open_questions", "why?")
    assert [c.to_dict() for c in changes] == [
        {"field": "resume_context.open_questions", "old": [], "new": ["why?"]},
    ]
    (removed,) = ws.unset("position.wave")  # null, but present: removing it is a change
    assert removed.removed
    assert removed.to_dict() == {"field": "position.wave", "old": None, "new": None, "removed": True}
    assert "wave:" not in state_file(project).read_text()
    with pytest.raises(UsageError) as caught:
        ws.unset("position.wave")
    assert caught.value.field == "position.wave"
    assert caught.value.file == ".planning/STATE.md"


def test_set_text_and_append_text_type_like_the_command_line(project: Path) -> None:
    ws = Workspace.find(project)
    changes = ws.set_text({"position.task": "fix #12", "position.plan": "3", "position.wave": "null", "title": "2026"})
    assert {c.path: c.new for c in changes} == {"position.task": "fix #12", "position.plan": 3, "title": "2026"}
    ws.append_text("resume_context.files_modified", "[WIP] a.py")
    assert ws.get("resume_context.files_modified") == ["[WIP] a.py"]
    assert ws.set_text([("next_action", "  lead")])[0].new == "  lead"


@pytest.mark.parametrize(
    ("action", "field", "message"),
    [
        (lambda ws: ws.set_text({"position.wave": "1 # one"}), "position.wave", "without '# one'"),
        (lambda ws: ws.set_text({"resume_context.files_modified": "[a"}), "resume_context.files_modified", "YAML"),
        (lambda ws: ws.set_text([("title", "D"), ("title", "E")]), "title", "given twice"),
        (lambda ws: ws.set({"phases.0.name": "a", "phases[0].name": "b"}), "phases.0.name", "given twice"),
        (lambda ws: ws.set_text({"title": "   "}), "title", "empty or only spaces"),
        (lambda ws: ws.set({"title": " "}), "title", "empty or only spaces"),
        (lambda ws: ws.append_text("title", "x"), "title", "not a list"),
        (lambda ws: ws.set_text({"position.task": '"a" b'}), "position.task", "YAML"),
    ],
)
def test_set_text_refusals_name_the_field(
    project: Path, action: Callable[[Workspace], object], field: str, message: str
) -> None:
    ws = Workspace.find(project)
    before = ws.state_path.read_bytes()
    with pytest.raises(UsageError) as caught:
        action(ws)
    assert caught.value.field == field
    assert caught.value.file == ".planning/STATE.md"
    assert message in caught.value.message
    assert ws.state_path.read_bytes() == before


def test_a_misspelt_field_is_an_error_not_a_lost_edit(project: Path) -> None:
    ws = Workspace.find(project)
    before = ws.state_path.read_bytes()
    with pytest.raises(AttributeError, match="State has no field 'titel'"), ws.edit() as state:
        state.titel = "x"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="Position has no field 'taks'"), ws.edit() as state:
        state.position.taks = "x"  # type: ignore[attr-defined]
    assert ws.state_path.read_bytes() == before
    with ws.edit() as state:  # declared fields, typed views and private attributes still work
        state.title = "Renamed"
        state.position.task = "typed"
        state.resume_context.open_questions.append("why?")
    assert (ws.get("title"), ws.get("position.task")) == ("Renamed", "typed")


def test_writes_refuse_to_guess_the_initiative(project: Path) -> None:
    ws = Workspace.find(project)
    ws.initiative.new("side", phases=["X"])
    ws.pause()
    guessing = Workspace.find(project)
    assert guessing.state().initiative == "demo"  # reads may show the most recently changed one
    before = state_file(project).read_bytes()
    for write in (lambda: guessing.set({"title": "x"}), guessing.archive, lambda: guessing.next("n")):
        with pytest.raises(
            UsageError, match=r"no initiative is active \(initiatives: demo, side\); name one with initiative=SLUG$"
        ):
            write()
    assert state_file(project).read_bytes() == before
    named = Workspace.find(project, initiative="side")
    named.set({"title": "Side"})
    assert named.get("title") == "Side"
    side = named.target
    with guessing.transaction(explicit=True) as tx:  # an operation that names its initiative itself
        tx.state(side).next_action = "named, not guessed"
    assert named.get("next_action") == "named, not guessed"


def test_forget_target_selects_again(project: Path) -> None:
    ws = Workspace.find(project)
    ws.initiative.new("side", phases=["X"])
    assert ws.target.folder_slug is None  # demo, the active one
    other = Workspace.find(project)
    other.initiative.switch("side")
    assert ws.target.folder_slug is None  # remembered until forgotten
    ws.ctx.forget_target()
    assert ws.target.folder_slug == "side"
    ws.set({"next_action": "go on with side"})
    assert Workspace.find(project, initiative="side").get("next_action") == "go on with side"
    assert Workspace.find(project, initiative="demo").get("next_action") != "go on with side"
    pinned = Workspace.find(project, initiative="demo")
    pinned.ctx.forget_target()  # an explicit --initiative stays
    assert pinned.target.folder_slug is None


def test_change_to_dict_without_removal() -> None:
    assert Change("a", 1, 2).to_dict() == {"field": "a", "old": 1, "new": 2}


@pytest.mark.parametrize(
    ("action", "field", "message"),
    [
        (lambda ws: ws.set({"nosuch.field": 1}), "nosuch.field", "not a field"),
        (lambda ws: ws.set({"progress.bar": "x"}), "progress.bar", "derived"),
        (lambda ws: ws.unset("title"), "title", "required"),
        (lambda ws: ws.append("title", "x"), "title", "not a list"),
    ],
)
def test_refused_paths_name_field_and_file(
    project: Path, action: Callable[[Workspace], object], field: str, message: str
) -> None:
    ws = Workspace.find(project)
    before = ws.state_path.read_bytes()
    with pytest.raises(UsageError) as caught:
        action(ws)
    assert caught.value.field == field
    assert caught.value.file == ".planning/STATE.md"
    assert message in caught.value.message
    assert field not in caught.value.message  # said once, by the field prefix
    assert re.match(rf"\.planning/STATE\.md(:\d+:\d+)?: {re.escape(field)}: ", str(caught.value)), str(caught.value)
    assert ws.state_path.read_bytes() == before


def test_invalid_value_writes_nothing(project: Path) -> None:
    ws = Workspace.find(project)
    before = ws.state_path.read_bytes()
    with pytest.raises(ValidationError) as caught:
        ws.set({"position.task": "ok", "position.status": "bogus"})
    assert caught.value.field == "position.status"
    assert caught.value.line is not None
    assert ws.state_path.read_bytes() == before


def test_no_change_no_write(project: Path) -> None:
    ws = Workspace.find(project)
    os.utime(ws.state_path, ns=(10**18, 10**18))
    assert ws.set({"title": "Demo", "next_action": "Start phase 1: Design"}) == []
    with ws.edit():
        pass
    assert ws.state_path.stat().st_mtime_ns == 10**18


def test_updated_is_stamped(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.find(project)
    updated = ws.state().updated
    assert updated is not None
    assert updated.isoformat().startswith(PINNED_NOW[:19])
    monkeypatch.setenv("PLANSTATE_NOW", "2026-05-06T07:08:09Z")
    ws.set({"position.task": "x"})
    assert ws.get("updated").isoformat() == "2026-05-06T07:08:09+00:00"


def test_edit_through_the_typed_model(project: Path) -> None:
    ws = Workspace.find(project)
    with ws.edit() as state:
        state.position.task = "typed"
        state.phases[0].status = "completed"
    assert ws.get("position.task") == "typed"
    assert ws.status()["phases_completed"] == 1
    assert ws.get("progress.percent") == 33


def test_nested_transaction_conflicts_instead_of_losing_a_write(project: Path) -> None:
    ws = Workspace.find(project)
    with pytest.raises(ConflictError), ws.edit() as state:
        state.position.task = "outer"
        ws.set({"next_action": "inner"})  # re-enters the lock and writes first
    assert ws.get("next_action") == "inner"
    assert ws.get("position.task") is None


def test_symlink_inside_the_workspace_keeps_the_link(project: Path) -> None:
    ws = Workspace.find(project)
    real = ws.root / "real.md"
    ws.state_path.rename(real)
    ws.state_path.symlink_to("real.md")
    ws.set({"position.task": "via link"})
    assert ws.state_path.is_symlink()
    assert "task: via link" in real.read_text()


def test_symlink_outside_is_refused(project: Path, tmp_path: Path) -> None:
    ws = Workspace.find(project)
    outside = tmp_path / "outside.md"
    outside.write_bytes(ws.state_path.read_bytes())
    before = outside.read_bytes()
    ws.state_path.unlink()
    ws.state_path.symlink_to(outside)
    for action in (ws.state, lambda: ws.set({"position.task": "x"})):
        with pytest.raises(UsageError, match="outside the workspace"):
            action()
    assert outside.read_bytes() == before
    _count, problems = ws.validate()
    assert "outside the workspace" in str(problems[0])


def test_validate_collects_problems_of_every_file(project: Path) -> None:
    ws = Workspace.find(project)
    (ws.root / "decisions" / "bad.md").write_text("---\nid: [unclosed\n---\n")
    (ws.root / "blockers" / "plain.md").write_text("no front matter\n")
    count, problems = ws.validate()
    assert count == 4  # STATE.md, history.jsonl and the two records
    assert {p.file for p in problems} == {".planning/decisions/bad.md", ".planning/blockers/plain.md"}
    assert all(isinstance(p, PlanstateError) for p in problems)


# ---------------------------------------------------------------------------- the lock


@pytest.mark.parametrize("bad", [math.nan, -1.0, -0.001])
def test_lock_timeout_must_be_sane(bad: float, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="lock timeout"):
        check_timeout(bad)
    with pytest.raises(UsageError):
        WorkspaceLock(tmp_path / "lock", bad)
    with pytest.raises(UsageError):
        Workspace(tmp_path, lock_timeout=bad)


@pytest.mark.parametrize("value", ["soon", "nan", "-3"])
def test_lock_timeout_environment(value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_LOCK_TIMEOUT", value)
    with pytest.raises(UsageError, match="PLANSTATE_LOCK_TIMEOUT"):
        Workspace(tmp_path)


def test_lock_accepts_zero_and_infinity(tmp_path: Path) -> None:
    for timeout in (0.0, math.inf):
        lock = WorkspaceLock(tmp_path / ".local" / "lock", timeout)
        with lock:
            assert (tmp_path / ".local" / "lock").read_text().startswith(f"pid {os.getpid()} ")


def test_lock_excludes_a_second_lock_in_the_same_process(tmp_path: Path) -> None:
    first = WorkspaceLock(tmp_path / "lock", 1)
    second = WorkspaceLock(tmp_path / "lock", 0.05)
    with first, pytest.raises(LockTimeout, match=f"pid {os.getpid()}"):
        second.acquire()
    with second:  # free again once the first is released
        pass


def test_lock_release_without_acquire(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        WorkspaceLock(tmp_path / "lock").release()


def test_lock_other_thread_waits_then_proceeds(tmp_path: Path) -> None:
    lock = WorkspaceLock(tmp_path / "lock", 5)
    order: list[str] = []
    lock.acquire()

    def other() -> None:
        with lock:
            order.append("thread")

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()  # waiting: re-entrancy is per thread, not per object
    order.append("main")
    lock.release()
    thread.join(5)
    assert order == ["main", "thread"]


def test_lock_file_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    (tmp_path / "lock").symlink_to(target)
    with pytest.raises(UsageError, match="cannot take the workspace lock"):
        WorkspaceLock(tmp_path / "lock", 0.1).acquire()
    assert target.read_text() == "keep"


# ---------------------------------------------------------------------------- files


def test_read_bytes_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"x" * 100)
    assert read_bytes(path, tmp_path) == b"x" * 100
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 50)
    with pytest.raises(ParseError, match="MB"):
        read_bytes(path, tmp_path)


def test_read_bytes_refuses_special_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        read_bytes(fifo, tmp_path)
    with pytest.raises(UsageError, match="not a regular file"):
        read_bytes(tmp_path, tmp_path.parent)
    with pytest.raises(UsageError, match="not found"):
        read_bytes(tmp_path / "missing", tmp_path)


def test_real_target(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(UsageError, match="symlink loop"):
        real_target(tmp_path / "loop", tmp_path)
    (tmp_path / "in.md").write_text("x")
    (tmp_path / "link").symlink_to("in.md")
    assert real_target(tmp_path / "link", tmp_path) == (tmp_path / "in.md").resolve()
    (tmp_path / "up").symlink_to("..")
    with pytest.raises(UsageError, match="outside the workspace"):
        real_target(tmp_path / "up" / "x", tmp_path)


def test_atomic_write_conflict_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"theirs")
    with pytest.raises(ConflictError):
        atomic_write(path, b"mine", expected=b"what I read")
    assert path.read_bytes() == b"theirs"
    with pytest.raises(UsageError, match="cannot write"):
        atomic_write(tmp_path / "missing" / "f.md", b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_atomic_write_new_file_uses_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.md", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == 0o640


def test_create_exclusive(tmp_path: Path) -> None:
    create_exclusive(tmp_path / "a.md", b"first" * 10_000)
    with pytest.raises(FileExistsError):
        create_exclusive(tmp_path / "a.md", b"second")
    assert (tmp_path / "a.md").read_bytes() == b"first" * 10_000
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]


# ---------------------------------------------------------------------------- command-line values


def kind_of(path: str) -> Any:
    """The schema kind at a dotted path of STATE.md."""
    return lookup(State, tuple(path.split(".")))[1]


@pytest.mark.parametrize(
    ("path", "text", "value"),
    [
        ("title", "2026", "2026"),
        ("title", "yes", "yes"),
        ("position.phase", "2", 2),
        ("position.wave", "null", None),
        ("next_action", "line 1\nline 2", "line 1\nline 2"),
        ("next_action", "  indented\n  text", "  indented\n  text"),
        ("next_action", "|\n  block\n  text\n", "block\ntext\n"),
        ("next_action", '"quoted\n  folded"', "quoted folded"),
        ("position.task", "fix: the login bug", "fix: the login bug"),
        ("position.task", "[a, b]", "[a, b]"),
        ("position.plan", "3", 3),
        ("position.plan", "{a: 1}", "{a: 1}"),
        ("position.task", "fix #12", "fix #12"),
        ("position.task", "null", None),
        ("title", "null", "null"),
        ("position.task", "'it''s'", "it's"),
        ("position.task", "  lead", "  lead"),
        ("position.plan", "0.5", "0.5"),
        ("resume_context.files_modified", "[a, 'b #1']", ["a", "b #1"]),
        ("phases", "[]", []),
        ("nosuch", "1", 1),
    ],
)
def test_from_text(path: str, text: str, value: object) -> None:
    assert from_text(text, kind_of(path)) == value
