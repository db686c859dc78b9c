"""Bounded record regions ("and N more" lines) and `planstate records archive`, through the real command.

STATE.md stays short however many records there are: each record region shows a few and counts the rest.
Old finished records move to their kind's `archive/` folder, where show, list, check, validate, diff and the
merge driver still find them; after every command `planstate check` is clean.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import builders
import pytest
from conftest import Run, json_data, ok, refused, state_file
from gitutil import commit_all, git, install_driver, new_repo
from test_json_contract import validate

OLD, NEW = "2026-02-01T09:00:00Z", "2026-03-01T09:00:00Z"  # when the records of `history` are made
History = tuple[Path, dict[str, str]]  # a project folder and the ids of its records by name
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def clean(run: Run, cwd: Path) -> None:
    """Assert `planstate check` finds nothing at all (at the time of the newest records, so no session is stale)."""
    result = run("check", "--json", cwd=cwd, env={"PLANSTATE_NOW": NEW})
    assert result.returncode == 0 and json_data(result)["findings"] == [], result.stdout


def region(state: Path, name: str) -> str:
    """The text of one generated region of a STATE.md, between its marker lines."""
    text = state.read_text()
    start = text.index("\n", text.index(f"<!-- planstate:begin {name} ")) + 1
    return text[start : text.index(f"<!-- planstate:end {name} -->", start)]


# ---------------------------------------------------------------------------- bounded regions


def test_the_blockers_region_shows_the_ten_oldest_and_counts_the_rest(run: Run, project: Path) -> None:
    for i in range(12):
        builders.write_record(project, "blocker", builders.blocker(i))
    builders.write_record(project, "blocker", builders.blocker(20, status="resolved", resolution="done"))
    ok(run("render", cwd=project))
    shown = region(state_file(project), "blockers")
    assert shown.count("- **[Blocker number") == 10
    assert "Blocker number 9" in shown and "Blocker number 10" not in shown  # oldest first
    assert shown.endswith("\n2 more open blockers in `blockers/`.\n\n1 resolved blocker in `blockers/`.\n")
    clean(run, project)
    ok(run("blocker", "add", "--description", "One more", cwd=project))  # a record command renders the same way
    assert "\n3 more open blockers in `blockers/`.\n" in region(state_file(project), "blockers")
    clean(run, project)


def test_decisions_and_sessions_regions_count_the_older_ones(run: Run, project: Path) -> None:
    for i in range(12):
        builders.write_record(project, "decision", builders.decision(i))
    for i in range(6):
        builders.write_record(project, "session", builders.session(i))
    ok(run("render", cwd=project))
    decisions, sessions = region(state_file(project), "decisions"), region(state_file(project), "sessions")
    assert decisions.count("| [Decision number") == 10 and decisions.endswith("\n2 older decisions in `decisions/`.\n")
    assert sessions.count("| ended |") == 5 and sessions.endswith("\n1 older session in `sessions/`.\n")
    clean(run, project)


# ---------------------------------------------------------------------------- archiving


def at(when: str) -> dict[str, str]:
    """The environment of a command run at `when`."""
    return {"PLANSTATE_NOW": when}


def _build_history(project: Path) -> dict[str, str]:
    """Records of every kind and state, finished ones in February and in March, made through the API: name -> id."""
    from planstate.workspace import Workspace

    ids: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANSTATE_NOW", OLD)
        ws = Workspace.init(project, title="Demo", phases=["Design", "Build"], actor="tester")
        for when, tag in ((OLD, "old"), (NEW, "new")):
            patch.setenv("PLANSTATE_NOW", when)
            first = ws.decision.add(context="c", decision=f"{tag} first", reason="r").id
            ids[f"{tag} superseded"] = first
            ids[f"{tag} successor"] = ws.decision.add(context="c", decision=f"{tag} 2", reason="r", supersedes=first).id
            rejected = ws.decision.add(context="c", decision=f"{tag} no", reason="r", status="proposed").id
            ids[f"{tag} rejected"] = ws.decision.reject(rejected, reason="risky").id
            blocker = ws.blocker.add(description=f"{tag} resolved blocker").id
            ids[f"{tag} resolved"] = ws.blocker.resolve(blocker, resolution="done").id
            ids[f"{tag} open"] = ws.blocker.add(description=f"{tag} open blocker").id
            ids[f"{tag} ended"] = ws.session.end(ws.session.start(agent=f"{tag}-agent").id).id
        ids["active"] = ws.session.start(agent="still-here").id
    return ids


@pytest.fixture(scope="module")
def _history_template(tmp_path_factory: pytest.TempPathFactory) -> History:
    """The workspace of `_build_history`, made once for this module; `history` copies it."""
    project = tmp_path_factory.mktemp("history") / "proj"
    project.mkdir()
    return project, _build_history(project)


@pytest.fixture
def history(tmp_path: Path, _history_template: History) -> History:
    """A project folder in tmp_path holding a copy of the records of `_build_history`, and their ids."""
    template, ids = _history_template
    project = tmp_path / "proj"
    shutil.copytree(template, project, copy_function=shutil.copy)
    return project, ids


def tree(project: Path) -> dict[str, bytes]:
    """Every committed planning file's bytes, by path inside `.planning/`."""
    planning = project / ".planning"
    return {
        str(p.relative_to(planning)): p.read_bytes()
        for p in sorted(planning.rglob("*"))
        if p.is_file() and ".local" not in p.relative_to(planning).parts
    }


def test_archive_moves_finished_records_before_the_date_and_keeps_the_rest(run: Run, history: History) -> None:
    project, ids = history
    clean(run, project)
    planning = project / ".planning"
    before = tree(project)
    result = ok(run("records", "archive", "--before", "2026-02-15", "--json", cwd=project))
    data = json_data(result)
    assert data["counts"] == {"decision": 2, "blocker": 1, "session": 1} and data["dry_run"] is False
    moved = {item["id"] for item in data["archived"]}
    assert moved == {ids["old superseded"], ids["old rejected"], ids["old resolved"], ids["old ended"]}
    for item in data["archived"]:
        source, target = project / item["path"], project / item["to"]
        assert not source.exists() and target.read_bytes() == before[str(source.relative_to(planning))]
        assert target.parent.name == "archive" and target.name == source.name
    kept = {p.name.split("-")[0] + "-" + p.name.split("-")[1] for p in planning.glob("*/*.md")}
    assert {ids[k] for k in ("new superseded", "new resolved", "new ended", "old open", "active")} <= kept
    clean(run, project)  # references to archived records (`supersedes`) are not missing
    ok(run("validate", cwd=project))
    assert "nothing to archive" in ok(run("records", "archive", "--before", "2026-02-15", cwd=project)).stdout
    state = state_file(project)
    assert "1 resolved blocker in `blockers/`." in region(state, "blockers")  # the regions lost the archived ones


def test_archived_records_stay_readable_and_are_not_changed(run: Run, history: History) -> None:
    project, ids = history
    ok(run("records", "archive", "--before", "2026-02-15", cwd=project))
    old = ids["old superseded"]
    shown = json_data(ok(run("decision", "show", old, "--json", cwd=project)))
    assert shown["id"] == old and shown["path"].startswith(".planning/decisions/archive/")
    assert old not in ok(run("decision", "list", cwd=project)).stdout
    assert old in ok(run("decision", "list", "--all", cwd=project)).stdout
    assert ids["old resolved"] in ok(run("blocker", "list", "--all", cwd=project)).stdout
    assert ids["old ended"] not in ok(run("session", "list", cwd=project)).stdout
    assert ids["old ended"] in ok(run("session", "list", "--all", cwd=project)).stdout
    ok(run("blocker", "show", ids["old resolved"], cwd=project))
    ok(run("session", "show", ids["old ended"], cwd=project))
    line = refused(run("decision", "accept", ids["old rejected"], cwd=project), "is archived", "archive/")
    assert line.startswith("planstate: .planning/decisions/archive/")
    refused(run("blocker", "activate", ids["old resolved"], cwd=project), "is archived")
    clean(run, project)


def test_validate_and_check_read_archived_records(run: Run, history: History) -> None:
    project, ids = history
    ok(run("records", "archive", "--before", "2026-02-15", cwd=project))
    (archived,) = (project / ".planning" / "sessions" / "archive").glob(f"{ids['old ended']}-*.md")
    archived.write_text(archived.read_text().replace("status: ended", "status: finished"))
    shown = f".planning/sessions/archive/{archived.name}"
    validate = run("validate", cwd=project)
    assert validate.returncode == 1 and shown in validate.stdout + validate.stderr
    check = json_data(run("check", "--json", cwd=project, env=at(NEW)))
    assert [(f["code"], f["path"]) for f in check["findings"]] == [("schema-error", shown)]


def test_a_dry_run_says_what_would_move_and_writes_nothing(run: Run, history: History) -> None:
    project, ids = history
    before = tree(project)
    out = ok(run("records", "archive", "--before", "2026-02-15", "--kind", "blocker", "--dry-run", cwd=project)).stdout
    assert f"would archive blocker {ids['old resolved']}: " in out and out.endswith("would archive 1 blocker\n")
    assert tree(project) == before
    clean(run, project)


def test_a_finished_record_that_cannot_move_is_named_and_left_in_place(run: Run, history: History) -> None:
    project, ids = history
    planning = project / ".planning"
    (broken,) = planning.glob(f"decisions/{ids['old rejected']}-*.md")
    broken.write_text(broken.read_text().replace("reversible: true", "reversible: sometimes"))
    (real,) = planning.glob(f"blockers/{ids['old resolved']}-*.md")
    elsewhere = planning / "kept" / real.name
    elsewhere.parent.mkdir()
    real.rename(elsewhere)
    real.symlink_to(elsewhere)
    result = run("records", "archive", "--before", "2026-02-15", "--json", cwd=project)
    assert result.returncode == 0
    assert {item["id"] for item in json_data(result)["archived"]} == {ids["old superseded"], ids["old ended"]}
    warnings = [line for line in result.stderr.splitlines() if line.startswith("planstate: warning: skipped ")]
    assert len(warnings) == 2, result.stderr
    shown = f".planning/decisions/{broken.name}: does not validate, so it stays in place (see `planstate check`)"
    assert any(line.endswith(shown) for line in warnings), warnings
    assert any(f".planning/blockers/{real.name}: is a symbolic link, so it stays in place" in w for w in warnings)
    assert broken.is_file() and real.is_symlink()


def test_archiving_nothing_changes_nothing(run: Run, project: Path) -> None:
    before = tree(project)
    assert ok(run("records", "archive", "--before", "90d", cwd=project)).stdout == "nothing to archive\n"
    assert tree(project) == before
    clean(run, project)


def test_open_blockers_active_sessions_and_live_decisions_never_move(run: Run, history: History) -> None:
    project, ids = history
    data = json_data(ok(run("records", "archive", "--before", "2099-01-01", "--json", cwd=project)))
    moved = {item["id"] for item in data["archived"]}
    assert not moved & {ids["old open"], ids["new open"], ids["active"], ids["old successor"], ids["new successor"]}
    assert len(moved) == 8
    clean(run, project)


def test_a_date_counts_as_its_whole_day(run: Run, history: History) -> None:
    project, ids = history
    dry = ("records", "archive", "--kind", "decision", "--dry-run", "--json")
    on_the_day = json_data(ok(run(*dry, "--before", "2026-02-01T12:00:00Z", cwd=project)))
    assert on_the_day["archived"] == []  # decided on 2026-02-01: not wholly before noon that day
    next_day = json_data(ok(run(*dry, "--before", "2026-02-02", cwd=project)))
    assert {item["id"] for item in next_day["archived"]} == {ids["old superseded"], ids["old rejected"]}


def test_wrong_dates_and_kinds_are_refused(run: Run, project: Path) -> None:
    before = tree(project)
    refused(run("records", "archive", "--before", "2026-13-01", cwd=project), "--before", "is not a date")
    refused(run("records", "archive", "--before", "someday", cwd=project), "--before")
    refused(run("records", "archive", "--before", "2026-01-01", "--kind", "note", cwd=project), "--kind")
    refused(run("records", "archive", cwd=project), "--before")
    assert tree(project) == before


def test_a_read_only_initiative_is_refused(run: Run, history: History) -> None:
    project, _ids = history
    ok(run("archive", "--reason", "done", cwd=project))
    before = tree(project)
    refused(run("records", "archive", "--before", "2099-01-01", cwd=project), "archived")
    assert tree(project) == before


def test_references_to_archived_records_are_found_and_duplicates_are_reported(run: Run, history: History) -> None:
    project, ids = history  # the new ended session is `resumed_from` the old one, which is archived
    adding = ("blocker", "add", "--description", "needs the old one", "--affects", ids["old rejected"])
    ok(run(*adding, cwd=project, env=at(NEW)))
    ok(run("records", "archive", "--before", "2026-02-15", cwd=project))
    clean(run, project)
    archived = next((project / ".planning" / "decisions" / "archive").glob(f"{ids['old rejected']}-*.md"))
    (archived.parent.parent / archived.name).write_bytes(archived.read_bytes())  # the same record in both places
    report = json_data(run("check", "--json", cwd=project, env=at(NEW)))
    assert sorted(f["code"] for f in report["findings"]) == ["duplicate-id", "stale-region"]  # a region: a new row


# ---------------------------------------------------------------------------- git: diff and merge across an archive


@needs_git
def test_diff_shows_an_archive_as_archived_records_and_git_as_renames(run: Run, history: History) -> None:
    project, ids = history
    new_repo(project)
    commit_all(project, "records")
    ok(run("records", "archive", "--before", "2026-02-15", cwd=project))
    commit_all(project, "archive")
    renames = git(project, "diff", "--name-status", "-M", "HEAD~1", "HEAD").stdout.splitlines()
    assert len([line for line in renames if line.startswith("R100\t")]) == 4
    data = json_data(ok(run("diff", "HEAD~1", "HEAD", "--json", cwd=project)))
    validate(data, "diff")
    (initiative,) = data["initiatives"]
    events = [(e["id"], e["event"]) for kind in ("decisions", "blockers", "sessions") for e in initiative[kind]]
    archived = {ids[k] for k in ("old superseded", "old rejected", "old resolved", "old ended")}
    assert sorted(events) == sorted((record_id, "archived") for record_id in archived)
    assert initiative["fields"] == []  # a move is no field change
    text = ok(run("diff", "HEAD~1", "HEAD", cwd=project)).stdout
    assert f"decision archived: {ids['old superseded']} " in text


def _branches(run: Run, history: History, *, driver: bool) -> tuple[Path, dict[str, str]]:
    """The history in a repository (the driver installed or not), branch `x` archiving the old records and main
    adding a decision, resolving a blocker and adding a line to the body of a record that x archives."""
    project, ids = history
    new_repo(project)
    if driver:
        install_driver(run, project)
    commit_all(project, "records")
    git(project, "checkout", "--quiet", "-b", "x")
    ok(run("records", "archive", "--before", "2026-02-15", cwd=project))
    commit_all(project, "archive")
    git(project, "checkout", "--quiet", "main")
    ok(run("decision", "add", "--context", "c", "--decision", "Use main's idea", "--reason", "r", cwd=project))
    ok(run("blocker", "resolve", ids["old open"], "--resolution", "done", cwd=project))  # both change the region
    (resolved,) = (project / ".planning" / "blockers").glob(f"{ids['old resolved']}-*.md")
    resolved.write_text(resolved.read_text() + "\nFixed upstream in release 2.1.\n")
    commit_all(project, "main")
    return project, ids


@needs_git
def test_a_merge_with_the_driver_follows_the_archive(run: Run, history: History) -> None:
    project, ids = _branches(run, history, driver=True)
    merged = git(project, "merge", "--no-edit", "x")
    assert "CONFLICT" not in merged.stdout
    assert git(project, "status", "--porcelain").stdout == ""
    (moved,) = (project / ".planning" / "blockers" / "archive").glob(f"{ids['old resolved']}-*.md")
    assert moved.read_text().endswith("\nFixed upstream in release 2.1.\n")  # main's edit, in the archive
    assert not list((project / ".planning" / "blockers").glob(f"{ids['old resolved']}-*.md"))
    state = state_file(project)
    assert "Use main's idea" in region(state, "decisions") and "2 resolved blockers in" in region(state, "blockers")
    clean(run, project)


@needs_git
def test_a_merge_without_the_driver_is_repaired_by_one_check_fix(run: Run, history: History) -> None:
    project, _ids = _branches(run, history, driver=False)
    git(project, "merge", "--no-edit", "x", check=False)
    ok(run("check", "--fix", cwd=project, env=at(NEW)))
    clean(run, project)


def test_the_region_limits_are_documented_as_they_are() -> None:
    from planstate.render.sources import LIMITS

    text = (Path(__file__).resolve().parent.parent / "docs" / "format.md").read_text(encoding="utf-8")
    rows = {row.split("|")[1].strip(" `"): row.split("|")[2] for row in text.splitlines() if row.startswith("| `")}
    assert f"the {LIMITS['blockers']} oldest unresolved blockers" in rows["blockers"]
    assert f"the {LIMITS['decisions']} most recent decisions" in rows["decisions"]
    assert f"the {LIMITS['sessions']} most recent sessions" in rows["sessions"]
    assert f"({LIMITS['blockers']} blockers, {LIMITS['decisions']} decisions, {LIMITS['sessions']} sessions;" in text
