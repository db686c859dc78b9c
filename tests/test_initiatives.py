"""Several initiatives (seed 001) through the real CLI: new, list, switch, --initiative, at most one active."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from conftest import Run, json_data, ok, refused, state_file

from planstate.core.errors import UsageError
from planstate.store import transaction
from planstate.text.document import Document
from planstate.workspace import Workspace


def sub(project: Path, slug: str) -> Path:
    """The folder of a further initiative."""
    return project / ".planning" / "initiatives" / slug


def lifecycle(path: Path) -> dict[str, Any]:
    """The lifecycle mapping of a STATE.md."""
    data = Document.from_bytes(path.read_bytes()).data
    assert isinstance(data, dict)
    value: dict[str, Any] = data["lifecycle"]
    return value


def entries(path: Path) -> list[dict[str, Any]]:
    """The lines of a history.jsonl."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def snapshot(project: Path) -> dict[str, bytes]:
    """Every file under .planning/ except machine-local ones."""
    planning = project / ".planning"
    return {
        str(p.relative_to(planning)): p.read_bytes()
        for p in sorted(planning.rglob("*"))
        if p.is_file() and ".local" not in p.parts
    }


def test_new_is_paused_while_another_is_active(run: Run, project: Path) -> None:
    out = ok(
        run("initiative", "new", "auth", "--title", "Auth rewrite", "--phase", "Spec", "--phase", "Code", cwd=project)
    )
    assert out.stdout == "Created .planning/initiatives/auth/ for 'Auth rewrite' (initiative auth, paused).\n"
    folder = sub(project, "auth")
    for name in ("STATE.md", "history.jsonl", "decisions/.gitkeep", "blockers/.gitkeep", "sessions/.gitkeep"):
        assert (folder / name).is_file(), name
    state = lifecycle(folder / "STATE.md")
    assert (state["state"], state["reason"]) == ("paused", "created while demo is active")
    assert entries(folder / "history.jsonl") == [
        {
            "at": entries(folder / "history.jsonl")[0]["at"],
            "from": None,
            "to": "paused",
            "trigger": "create",
            "reason": "created while demo is active",
            "by": "tester",
        }
    ]
    assert lifecycle(state_file(project))["state"] == "active"
    ok(run("validate", cwd=project))
    status = json_data(ok(run("--initiative", "auth", "status", "--json", cwd=project)))
    assert (status["initiative"], status["title"], status["current_phase"]["number"], status["phases_total"]) == (
        "auth",
        "Auth rewrite",
        1,
        2,
    )


def test_new_is_active_when_none_is(run: Run, project: Path) -> None:
    ok(run("pause", cwd=project))
    result = json_data(
        ok(run("initiative", "new", "auth", "--first-phase", "0", "--phase", "A", "--json", cwd=project))
    )
    assert result == {
        "initiative": "auth",
        "title": "Auth",
        "path": ".planning/initiatives/auth",
        "lifecycle": {"state": "active"},
        "paused": [],
    }
    assert entries(sub(project, "auth") / "history.jsonl")[0]["trigger"] == "create"
    status = json_data(ok(run("status", "--json", cwd=project)))  # commands act on the active one
    assert (status["initiative"], status["current_phase"]["number"]) == ("auth", 0)


def test_new_with_switch_pauses_the_active_one_first(run: Run, project: Path) -> None:
    out = ok(run("initiative", "new", "auth", "--switch", cwd=project)).stdout
    assert out.splitlines() == [
        "demo: active → paused (switched to auth)",
        "Created .planning/initiatives/auth/ for 'Auth' (initiative auth, active).",
    ]
    assert lifecycle(state_file(project))["state"] == "paused"
    assert lifecycle(sub(project, "auth") / "STATE.md")["state"] == "active"
    assert entries(project / ".planning" / "history.jsonl")[-1]["trigger"] == "initiative switch"
    # the root was paused before the new folder appeared: never two active at once
    assert state_file(project).stat().st_mtime_ns <= (sub(project, "auth") / "STATE.md").stat().st_mtime_ns
    ok(run("validate", cwd=project))


def test_new_refuses_a_taken_or_bad_slug(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", cwd=project))
    before = snapshot(project)
    refused(run("initiative", "new", "auth", cwd=project), "initiative 'auth' already exists")
    refused(run("initiative", "new", "demo", cwd=project), "initiative 'demo' already exists")  # the root's slug
    refused(run("initiative", "new", "Bad Slug", cwd=project), "must be a slug")
    refused(run("initiative", "new", "ok", "--first-phase", "2", cwd=project), "invalid choice")
    refused(run("initiative", "new", "ok", "--phase", " ", cwd=project), "phase names must not be empty")
    assert snapshot(project) == before
    assert not [p for p in (project / ".planning" / "initiatives").iterdir() if p.name.startswith(".")]


def test_new_without_a_slug_makes_it_from_the_title_as_init_does(run: Run, project: Path, tmp_path: Path) -> None:
    title = "Billing v2: Ünïcode & more!"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    made = json_data(ok(run("init", "--title", title, "--json", cwd=elsewhere)))["initiative"]
    assert made == "billing-v2-unicode-more"
    out = ok(run("initiative", "new", "--title", title, "--phase", "Plan", cwd=project)).stdout
    assert out == f"Created .planning/initiatives/{made}/ for {title!r} (initiative {made}, paused).\n"
    assert Document.from_bytes((sub(project, made) / "STATE.md").read_bytes()).data["initiative"] == made
    refused(run("initiative", "new", "--title", title, cwd=project), f"initiative {made!r} already exists")
    before = snapshot(project)
    refused(run("initiative", "new", cwd=project), "needs a slug, or a title to make one from: --title T")
    refused(run("initiative", "new", "--title", " ", cwd=project), "needs a slug, or a title")
    assert snapshot(project) == before
    with pytest.raises(UsageError, match="title=T"):
        Workspace(project / ".planning").initiative.new()
    assert Workspace(project / ".planning").initiative.new(title="Ops").initiative == "ops"


def test_list_marks_the_current_one_and_hides_archived(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", "--title", "Auth rewrite", cwd=project))
    ok(run("initiative", "new", "old", cwd=project))
    ok(run("--initiative", "old", "archive", "--reason", "superseded", cwd=project))
    lines = ok(run("initiative", "list", cwd=project)).stdout.splitlines()
    assert [line.split()[:3] for line in lines[:2]] == [["*", "demo", "active"], ["auth", "paused", "Auth"]]
    assert lines[2] == "(1 archived initiative hidden; --all lists it)"
    assert len(lines) == 3
    listed = json_data(ok(run("initiative", "list", "--all", "--json", cwd=project)))
    assert listed["hidden"] == 0
    assert [(i["initiative"], i["lifecycle"]["state"], i["current"]) for i in listed["initiatives"]] == [
        ("demo", "active", True),
        ("auth", "paused", False),
        ("old", "archived", False),
    ]
    assert listed["initiatives"][2]["path"] == ".planning/initiatives/old"
    marked = ok(run("--initiative", "auth", "initiative", "list", cwd=project)).stdout.splitlines()
    assert marked[1].startswith("* auth")


def test_switch_pauses_then_activates_in_one_transaction(run: Run, project: Path) -> None:
    ok(run("task", "start", "Write the parser", cwd=project))
    ok(run("initiative", "new", "auth", cwd=project))
    out = ok(run("initiative", "switch", "auth", "--reason", "customer call", cwd=project)).stdout
    assert out.splitlines() == ["demo: active → paused (customer call)", "auth: paused → active (customer call)"]
    root = lifecycle(state_file(project))
    assert (root["state"], root["context"]) == ("paused", "Write the parser")  # switching keeps state
    assert lifecycle(sub(project, "auth") / "STATE.md")["state"] == "active"
    last_root = entries(project / ".planning" / "history.jsonl")[-1]
    last_auth = entries(sub(project, "auth") / "history.jsonl")[-1]
    assert (last_root["from"], last_root["to"], last_root["trigger"]) == ("active", "paused", "initiative switch")
    assert (last_auth["from"], last_auth["to"], last_auth["trigger"]) == ("paused", "active", "initiative switch")
    assert last_root["at"] == last_auth["at"]
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert status["initiative"] == "auth"  # commands now act on auth
    back = json_data(ok(run("initiative", "switch", "demo", "--json", cwd=project)))
    assert back["already_active"] is False
    assert [(t["initiative"], t["from"], t["to"]) for t in back["transitions"]] == [
        ("auth", "active", "paused"),
        ("demo", "paused", "active"),
    ]
    assert back["transitions"][1]["reason"] == "switched from auth"
    assert lifecycle(state_file(project))["resume_count"] == 1


def test_switch_writes_the_paused_file_first(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the moment the resumed STATE.md is written, the paused one is already paused on disk."""
    ws = Workspace.find(project)
    ws.initiative.new("auth")
    auth_state = sub(project, "auth") / "STATE.md"
    seen: list[tuple[str, str]] = []
    real_write = transaction.atomic_write

    def observing_write(target: Path, data: bytes, **options: Any) -> None:
        # observe, then write for real: the file contents are those planstate produced
        if target.name == "STATE.md":
            other = state_file(project) if target == auth_state else auth_state
            seen.append((target.parent.name, lifecycle(other)["state"]))
        real_write(target, data, **options)

    monkeypatch.setattr(transaction, "atomic_write", observing_write)
    ws.initiative.switch("auth")
    assert seen == [(".planning", "paused"), ("auth", "paused")]
    ws.initiative.switch("demo")
    assert seen[2:] == [("auth", "paused"), (".planning", "paused")]


def test_switch_to_the_active_one_changes_nothing(run: Run, project: Path) -> None:
    before = snapshot(project)
    assert ok(run("initiative", "switch", "demo", cwd=project)).stdout == "demo: already active\n"
    assert snapshot(project) == before


def test_switch_refuses_what_cannot_be_resumed(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "done", "--phase", "Only", cwd=project))
    ok(run("initiative", "switch", "done", cwd=project))
    ok(run("phase", "complete", "1", cwd=project))  # completes `done`
    ok(run("initiative", "new", "broken", cwd=project))  # active: nothing else is
    ok(run("error", "--reason", "boom", cwd=project))
    ok(run("resume", "--activate", "--initiative", "demo", cwd=project))
    before = snapshot(project)
    refused(
        run("initiative", "switch", "done", cwd=project),
        "cannot switch to done: its state is completed",
        "`planstate pause --initiative demo`, then `planstate reopen --initiative done`",
    )
    refused(
        run("initiative", "switch", "broken", cwd=project),
        "its state is error",
        "`planstate retry --initiative broken`",
    )
    refused(run("initiative", "switch", "nope", cwd=project), "no initiative 'nope'", "demo, broken, done")
    assert snapshot(project) == before


def test_a_second_active_one_is_refused(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", cwd=project))
    before = snapshot(project)
    refused(
        run("--initiative", "auth", "resume", "--activate", cwd=project),
        "cannot resume auth: initiative demo is active and at most one may be",
        "`planstate initiative switch auth`",
    )
    ok(run("--initiative", "auth", "archive", cwd=project))
    after_archive = snapshot(project)
    refused(run("--initiative", "auth", "reopen", cwd=project), "`planstate pause --initiative demo`")
    assert snapshot(project) == after_archive
    assert before != after_archive


def test_initiative_option_targets_one_and_the_default_is_the_active_one(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", "--phase", "Spec", cwd=project))
    root_before = state_file(project).read_bytes()
    ok(run("--initiative", "auth", "context", "--question", "Which IdP?", cwd=project))
    ok(run("context", "--question", "Root question?", "--initiative", "auth", cwd=project))
    assert state_file(project).read_bytes() == root_before
    auth = Document.from_bytes((sub(project, "auth") / "STATE.md").read_bytes()).get("resume_context.open_questions")
    assert auth == ["Which IdP?", "Root question?"]
    ok(run("next", "Root next", cwd=project))  # no --initiative: the active one (demo)
    assert Document.from_bytes(state_file(project).read_bytes()).get("next_action") == "Root next"
    env = {"PLANSTATE_INITIATIVE": "auth"}
    assert json_data(ok(run("status", "--json", cwd=project, env=env)))["initiative"] == "auth"
    refused(run("--initiative", "zzz", "status", cwd=project), "no initiative 'zzz'")


def test_two_active_after_a_hand_edit_is_a_validate_finding(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", cwd=project))
    path = sub(project, "auth") / "STATE.md"
    path.write_text(path.read_text().replace("  state: paused\n", "  state: active\n"))
    result = run("validate", cwd=project)
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if "active" in line]
    assert len(lines) == 1
    assert lines[0].startswith(".planning/initiatives/auth/STATE.md:")
    assert "lifecycle.state: is active, but so is demo" in lines[0]
    refused(run("status", cwd=project), "2 initiatives are active (demo, auth)")
    out = ok(run("initiative", "switch", "demo", cwd=project)).stdout  # the repair: pause the others
    assert out == "demo: already active\n"
    ok(run("--initiative", "auth", "pause", "--reason", "fixing the hand edit", cwd=project))
    ok(run("validate", cwd=project))


def test_a_staging_folder_is_not_an_initiative(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "auth", cwd=project))
    leftover = project / ".planning" / "initiatives" / ".auth2.init-123-abc"
    leftover.mkdir()
    (leftover / "STATE.md").write_text("half written")
    listed = json_data(ok(run("initiative", "list", "--json", cwd=project)))
    assert [i["initiative"] for i in listed["initiatives"]] == ["demo", "auth"]
    ok(run("validate", cwd=project))


def test_the_python_api(project: Path) -> None:
    ws = Workspace.find(project)
    created = ws.initiative.new("auth", title="Auth", phases=["Spec", "Code"], first_phase=0)
    assert (created.state, created.dir) == ("paused", ".planning/initiatives/auth")
    switched = ws.initiative.switch("auth", reason="focus")
    assert [t.to_dict()["to"] for t in switched.transitions] == ["paused", "active"]
    listing = ws.initiative.list()
    assert [(i.initiative, i.state) for i in listing.initiatives] == [("demo", "paused"), ("auth", "active")]
    assert Workspace.find(project).state().initiative == "auth"
    assert Workspace.find(project, initiative="demo").state().initiative == "demo"
    assert ws.initiative.switch("auth").already_active
    with pytest.raises(UsageError, match="already exists"):
        ws.initiative.new("auth")


def test_one_workspace_object_follows_a_switch(project: Path) -> None:
    """After `switch` (or `new --switch`), the same Workspace acts on the initiative that is active now."""
    ws = Workspace.find(project, actor="api-agent")
    assert ws.status()["initiative"] == "demo"  # the target is chosen, and remembered
    ws.initiative.new("auth", title="Auth", phases=["Spec", "Code"])
    assert ws.status()["initiative"] == "demo"  # created paused: the target stays
    ws.initiative.switch("auth")
    assert (ws.status()["initiative"], ws.status()["lifecycle"]) == ("auth", "active")
    made = ws.decision.add(context="c", decision="d", reason="r")
    assert made.path.parent == project / ".planning" / "initiatives" / "auth" / "decisions"
    assert ws.phase.complete(1).initiative == "auth"
    ws.initiative.new("billing", phases=["Only"], switch=True)
    assert ws.status()["initiative"] == "billing"
    assert ws.blocker.add(description="b").path.parent == project / ".planning" / "initiatives" / "billing" / "blockers"
    named = Workspace.find(project, initiative="demo")
    named.initiative.switch("auth")
    assert named.status()["initiative"] == "demo"  # --initiative is never overridden


def test_new_uses_the_workspace_template_override(run: Run, project: Path) -> None:
    from planstate.text.templates import builtin_dir

    overrides = project / ".planning" / "templates"
    overrides.mkdir()
    template = (builtin_dir() / "STATE.md.j2").read_text()
    (overrides / "STATE.md.j2").write_text(
        template.replace("---\n# {{ title | inline }}", "---\n# Team template: {{ title | inline }}")
    )
    ok(run("initiative", "new", "auth", "--title", "Auth", cwd=project))
    assert "# Team template: Auth\n" in (sub(project, "auth") / "STATE.md").read_text()
    ok(run("validate", cwd=project))


def test_concurrent_switches_leave_exactly_one_active(
    run: Run, run_all: Callable[..., list[CompletedProcess[str]]], project: Path
) -> None:
    for slug in ("auth", "billing"):
        ok(run("initiative", "new", slug, cwd=project))
    commands = [("initiative", "switch", slug) for slug in ("auth", "billing", "demo", "auth", "billing", "demo")]
    commands += [("initiative", "new", f"extra-{i}", "--switch") for i in range(2)]
    for result in run_all(commands, cwd=project):
        ok(result)
    ok(run("validate", cwd=project))  # includes "at most one active"
    listed = json_data(ok(run("initiative", "list", "--json", cwd=project)))["initiatives"]
    assert [i["lifecycle"]["state"] for i in listed].count("active") == 1
    for item in listed:
        folder = project / item["path"]
        assert entries(folder / "history.jsonl")[-1]["to"] == item["lifecycle"]["state"]  # history agrees with the file


def conflicted(path: Path) -> None:
    """Put git's conflict markers around next_action in a STATE.md, as a merge by hand leaves them."""
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith("next_action:"))
    path.write_text(text.replace(line, f"<<<<<<< HEAD\n{line}\n=======\nnext_action: theirs\n>>>>>>> feature", 1))


def test_an_unreadable_active_initiative_stops_reads_instead_of_showing_another(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "reset", "--switch", cwd=project))
    path = sub(project, "reset") / "STATE.md"
    conflicted(path)
    line = next(n for n, x in enumerate(path.read_text().splitlines(), start=1) if x.startswith("<<<<<<<"))
    before = snapshot(project)
    for command in (["status"], ["resume"], ["get", "position"], ["set", "next_action", "x"]):
        error = refused(run(*command, cwd=project), f"initiatives/reset/STATE.md:{line}:1: unresolved git conflict")
        assert "Demo" not in error
    for command in (["initiative", "switch", "demo"], ["initiative", "new", "third"]):
        refused(run(*command, cwd=project), "unresolved git conflict")  # the broken one may be active: no second
    assert snapshot(project) == before
    listing = ok(run("initiative", "list", cwd=project)).stdout
    assert "reset" in listing and "unresolved git conflict" in listing
    finding = run("check", cwd=project)
    assert finding.returncode == 1
    assert f"STATE.md:{line}: error conflict-marker: unresolved git conflict" in finding.stdout
    ok(run("--initiative", "demo", "status", cwd=project))  # named explicitly, the readable one still answers


def test_a_readable_active_initiative_is_served_while_a_paused_one_is_broken(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "later", cwd=project))
    conflicted(sub(project, "later") / "STATE.md")
    assert ok(run("status", cwd=project)).stdout.startswith("demo: Demo")
