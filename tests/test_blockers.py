"""Blockers through the real console script and through the API: add, list, show and the state machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import Run, json_data, ok, outside_regions, refused, state_file

from planstate.core.errors import UsageError
from planstate.model.kinds import BLOCKER_STATUSES
from planstate.ops.blockers import TABLE, allowed
from planstate.workspace import Workspace

NOW = "2026-03-04T05:06:07Z"
PINNED = {"PLANSTATE_NOW": NOW}
REPO = Path(__file__).resolve().parent.parent


def blockers(project: Path) -> list[Path]:
    """The blocker files of the project, by name."""
    return sorted((project / ".planning" / "blockers").glob("*.md"))


def add(run: Run, project: Path, description: str, *extra: str, when: str = NOW) -> dict[str, object]:
    """Add a blocker through the CLI with --json and return the printed record."""
    env = {"PLANSTATE_NOW": when}
    result = run("blocker", "add", "--description", description, *extra, "--json", cwd=project, env=env)
    return json_data(ok(result))  # type: ignore[no-any-return]


def move(run: Run, project: Path, *args: str, when: str = NOW) -> dict[str, object]:
    """Run a blocker move with --json and return the record."""
    return json_data(ok(run("blocker", *args, "--json", cwd=project, env={"PLANSTATE_NOW": when})))  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------- add


def test_add_writes_a_new_blocker(run: Run, project: Path) -> None:
    state_before = outside_regions(state_file(project))
    result = ok(
        run(
            "blocker",
            "add",
            "--description",
            "Waiting for OAuth credentials from the customer",
            "--affects",
            "phase 3",
            "--affects",
            "OAuth login",
            "--blocked-task",
            "Configure the provider",
            cwd=project,
            env=PINNED,
        )
    )
    (path,) = blockers(project)
    record_id = path.name[:16]
    assert re.fullmatch(r"blk-[0-9a-hjkmnp-tv-z]{12}", record_id)
    assert path.name == f"{record_id}-waiting-for-oauth-credentials-from-the-customer.md"
    assert result.stdout.startswith(f"Recorded blocker {record_id} [new]: Waiting for OAuth")
    front, body = path.read_text().split("\n---\n", 1)
    assert front.splitlines() == [
        "---",
        "schema_version: 1",
        f"id: {record_id}",
        "title: Waiting for OAuth credentials from the customer",
        "status: new",
        "description: Waiting for OAuth credentials from the customer",
        "identified: 2026-03-04T05:06:07Z",
        "affects:",
        "  - phase 3",
        "  - OAuth login",
        "blocked_tasks:",
        "  - Configure the provider",
        "workaround: null",
        "resolution: null",
        "resolved: null",
        "by: tester",
    ]
    assert body == (
        "# Waiting for OAuth credentials from the customer\n\nAffects:\n\n- phase 3\n- OAuth login\n\n## Notes\n\n"
    )
    assert outside_regions(state_file(project)) == state_before
    ok(run("validate", cwd=project))


def test_add_active_and_through_the_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project, actor="agent-7")
    entry = ws.blocker.add(description="CI is down", affects=["phase 2"], title="CI down", active=True)
    assert entry.shown == f".planning/blockers/{entry.id}-ci-down.md"
    data = entry.to_dict()
    assert (data["status"], data["identified"], data["by"], data["affects"]) == (
        "active",
        NOW,
        "agent-7",
        ["phase 2"],
    )
    body = entry.path.read_text().split("\n---\n", 1)[1]
    assert body.startswith("# CI down\n\nCI is down\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "the following arguments are required: --description"),
        (("--description", "  "), "description: must not be empty"),
        (("--description", "d", "--affects", ""), "affects[0]: must not be empty"),
        (("--description", "d", "--affects", "phase 1", "--affects", " 2"), "affects[1]: '2' is a bare number"),
        (("--description", "d", "--blocked-task", " "), "blocked_tasks[0]: must not be empty"),
    ],
)
def test_add_refuses_bad_input(run: Run, project: Path, args: tuple[str, ...], message: str) -> None:
    refused(run("blocker", "add", *args, cwd=project), message)
    assert blockers(project) == []


# ---------------------------------------------------------------------------- the state machine


def test_the_whole_life_of_a_blocker(run: Run, project: Path) -> None:
    made = add(run, project, "Waiting for OAuth credentials")
    ref = str(made["id"])[:-3]
    active = move(run, project, "activate", ref, "--reason", "phase 3 cannot start", when="2026-03-04T06:00:00Z")
    assert active["status"] == "active"
    bypassed = move(run, project, "bypass", ref, "--workaround", "email sign-in first", when="2026-03-04T07:00:00Z")
    assert (bypassed["status"], bypassed["workaround"]) == ("bypassed", "email sign-in first")
    again = move(run, project, "activate", ref, when="2026-03-05T07:00:00Z")
    assert (again["status"], again["workaround"]) == ("active", None)
    done = move(run, project, "resolve", ref, "--resolution", "credentials arrived", when="2026-03-06T08:00:00Z")
    assert (done["status"], done["resolution"], done["resolved"]) == (
        "resolved",
        "credentials arrived",
        "2026-03-06T08:00:00Z",
    )
    assert done["identified"] == NOW
    assert done["log"] == [
        "2026-03-04T06:00:00Z new → active: phase 3 cannot start",
        "2026-03-04T07:00:00Z active → bypassed: email sign-in first",
        "2026-03-05T07:00:00Z bypassed → active: the workaround stopped working",
        "2026-03-06T08:00:00Z active → resolved: credentials arrived",
    ]
    ok(run("validate", cwd=project))


def test_text_output_of_a_move(run: Run, project: Path) -> None:
    made = add(run, project, "Disk full")
    result = ok(run("blocker", "resolve", str(made["id"]), "--resolution", "cleaned up", cwd=project))
    assert result.stdout == f"Blocker {made['id']} is now resolved ({made['path']})\n"


def _drive(run: Run, project: Path, ref: str, status: str) -> None:
    """Move a new blocker to `status` through legal moves."""
    steps = {
        "new": [],
        "active": [("activate", ref)],
        "bypassed": [("activate", ref), ("bypass", ref, "--workaround", "w")],
        "resolved": [("resolve", ref, "--resolution", "r")],
    }[status]
    for step in steps:
        move(run, project, *step)


ILLEGAL = [
    (status, command)
    for status in BLOCKER_STATUSES
    for command in ("activate", "bypass", "resolve")
    if command not in {m.command for m in allowed(status)}
]


@pytest.mark.parametrize(("status", "command"), ILLEGAL)
def test_illegal_moves_name_the_status_and_the_allowed_commands(
    run: Run, project: Path, status: str, command: str
) -> None:
    made = add(run, project, "Something")
    ref = str(made["id"])
    _drive(run, project, ref, status)
    path = project / str(made["path"])
    before = path.read_bytes()
    extra = {"bypass": ["--workaround", "w"], "resolve": ["--resolution", "r"], "activate": []}[command]
    line = refused(
        run("blocker", command, ref, *extra, cwd=project),
        f"{made['path']}:5:1: status: {ref}: cannot {command} a blocker that is {status}; allowed from {status}: ",
    )
    for m in allowed(status):
        assert f"`blocker {m.command}` (→ {m.target})" in line
    if status == "resolved":
        assert "none, it is final" in line
    assert path.read_bytes() == before


def test_moves_refuse_missing_or_blank_arguments(run: Run, project: Path) -> None:
    made = add(run, project, "Something", "--active")
    ref = str(made["id"])
    refused(run("blocker", "bypass", ref, cwd=project), "required: --workaround")
    refused(run("blocker", "bypass", ref, "--workaround", " ", cwd=project), "workaround: must not be empty")
    refused(run("blocker", "resolve", ref, cwd=project), "required: --resolution")
    refused(run("blocker", "resolve", "blk-nope", "--resolution", "r", cwd=project), "no blocker with id 'blk-nope'")
    refused(run("blocker", "activate", cwd=project), "required: ID")


def test_api_moves(project: Path) -> None:
    ws = Workspace.find(project)
    made = ws.blocker.add(description="Flaky test")
    assert ws.blocker.activate(made.id).data["status"] == "active"
    assert ws.blocker.bypass(made.id, workaround="skip it").data["status"] == "bypassed"
    assert ws.blocker.resolve(made.id, resolution="fixed").data["status"] == "resolved"
    shown = ws.blocker.show(made.id[:-2])
    assert (shown.id, shown.data["resolution"]) == (made.id, "fixed")
    assert shown.extra["body"] == "# Flaky test\n\n## Notes\n\n"
    assert [line.split(" ", 1)[1] for line in shown.data["log"]] == [
        "new → active",
        "active → bypassed: skip it",
        "bypassed → resolved: fixed",
    ]
    with pytest.raises(UsageError, match="cannot activate a blocker that is resolved") as caught:
        ws.blocker.activate(made.id)
    assert caught.value.field == "status" and caught.value.line == 5


def test_the_table_is_documented() -> None:
    """docs/format.md's blocker table lists exactly the moves of blockers.TABLE."""
    text = (REPO / "docs" / "format.md").read_text()
    section = text.split("### Blocker", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `blocker (\w+)` \| `(\w+)` \|", section, re.MULTILINE)
    assert sorted(rows) == sorted(tuple(m) for m in TABLE)


# ---------------------------------------------------------------------------- hand-made files

HAND_MADE = """\
---
# OAuth blocker, written by hand.
schema_version: 1
id: block-001
title: OAuth credentials
status: active    # confirmed with the customer
description: 'Waiting for OAuth client credentials'
identified: 2026-01-15T10:00:00Z
affects: ["Phase 3: OAuth integration"]
workaround: ~
resolution: null
resolved: null
---
Asked the customer's IT team; *they promised* this week.

- a list the tool must not touch
"""


def test_a_hand_made_blocker_is_found_and_updated_in_place(run: Run, project: Path) -> None:
    path = project / ".planning" / "blockers" / "block-001-oauth-credentials.md"
    path.write_text(HAND_MADE)
    listed = json_data(ok(run("blocker", "list", "--json", cwd=project)))["blockers"]
    assert [b["id"] for b in listed] == ["block-001"]
    move(run, project, "bypass", "block-001", "--workaround", "email first", when="2026-01-16T09:00:00Z")
    after = path.read_text()
    assert after == HAND_MADE.replace("status: active    #", "status: bypassed    #").replace(
        "workaround: ~", "workaround: email first"
    ).replace("resolved: null\n", 'resolved: null\nlog:\n  - "2026-01-16T09:00:00Z active → bypassed: email first"\n')
    ok(run("validate", cwd=project))
    shown = ok(run("blocker", "show", "block-001", cwd=project)).stdout
    assert shown == f"# .planning/blockers/block-001-oauth-credentials.md\n{after}"


# ---------------------------------------------------------------------------- list and show


def test_list_defaults_to_unresolved_and_filters(run: Run, project: Path) -> None:
    old = add(run, project, "Old problem", when="2026-01-01T00:00:00Z")
    new = add(run, project, "New problem", "--active", when="2026-02-01T00:00:00Z")
    gone = add(run, project, "Gone problem", when="2026-02-02T00:00:00Z")
    move(run, project, "resolve", str(gone["id"]), "--resolution", "went away")
    lines = ok(run("blocker", "list", cwd=project)).stdout.splitlines()
    assert lines == [
        f"{old['id']}  new  2026-01-01T00:00:00Z  Old problem",
        f"{new['id']}  active  2026-02-01T00:00:00Z  New problem",
    ]
    every = json_data(ok(run("blocker", "list", "--all", "--json", cwd=project)))["blockers"]
    assert [b["id"] for b in every] == [old["id"], new["id"], gone["id"]]
    assert {"id", "path", "status", "description", "identified", "affects"} <= set(every[0])
    resolved = json_data(ok(run("blocker", "list", "--status", "resolved", "--json", cwd=project)))["blockers"]
    assert [b["id"] for b in resolved] == [gone["id"]]
    recent = json_data(ok(run("blocker", "list", "--since", "2026-01-15", "--json", cwd=project)))["blockers"]
    assert [b["id"] for b in recent] == [new["id"]]
    ws = Workspace.find(project)
    assert ws.blocker.list(all=True, since="2026-02-01T00:00:00Z").ids() == [new["id"], gone["id"]]
    assert ws.blocker.list(status="active").ids() == [new["id"]]
    refused(run("blocker", "list", "--status", "open", cwd=project), "'open' is not one of: new, active")


def test_list_of_nothing(run: Run, project: Path) -> None:
    assert ok(run("blocker", "list", cwd=project)).stdout == "no unresolved blockers (--all shows resolved ones too)\n"
    assert ok(run("blocker", "list", "--all", cwd=project)).stdout == "no blockers\n"


def test_show_json_has_the_body(run: Run, project: Path) -> None:
    made = add(run, project, "Need API keys", "--title", "API keys")
    data = json_data(ok(run("blocker", "show", str(made["id"]), "--json", cwd=project)))
    assert data["id"] == made["id"]
    assert data["body"].startswith("# API keys\n\nNeed API keys\n")
    refused(run("blocker", "show", "blk-0", cwd=project), "no blocker with id 'blk-0'")


# ---------------------------------------------------------------------------- templates


def test_user_template_override_and_literal_values(run: Run, project: Path) -> None:
    folder = project / ".planning" / "templates"
    folder.mkdir()
    (folder / "blocker.md.j2").write_text("{{ status }} since {{ identified }}: {{ description }}\n")
    made = add(run, project, "{{ 7*7 }} and {% raw %}")
    body = (project / str(made["path"])).read_text().split("\n---\n", 1)[1]
    assert body == "new since 2026-03-04 05:06:07+00:00: {{ 7*7 }} and {% raw %}\n"
    assert made["description"] == "{{ 7*7 }} and {% raw %}"


def test_an_invalid_hand_edit_is_refused_not_replaced(run: Run, project: Path) -> None:
    path = project / ".planning" / "blockers" / "block-002-x.md"
    text = HAND_MADE.replace("block-001", "block-002").replace("resolved: null\n", "resolved: null\nlog: see notes\n")
    path.write_text(text)
    refused(
        run("blocker", "bypass", "block-002", "--workaround", "w", cwd=project),
        f".planning/blockers/{path.name}:13:1: log: expected a list, got a string",
    )
    assert path.read_text() == text


def test_an_ambiguous_prefix_is_refused(run: Run, project: Path) -> None:
    folder = project / ".planning" / "blockers"
    for name in ("block-010", "block-011"):
        (folder / f"{name}.md").write_text(HAND_MADE.replace("block-001", name))
    result = run("blocker", "resolve", "block-01", "--resolution", "r", cwd=project)
    refused(result, "ambiguous", "block-010, block-011")
    assert move(run, project, "resolve", "block-011", "--resolution", "r")["status"] == "resolved"


@pytest.mark.parametrize("kind", ["blocker", "decision", "session"])
def test_a_record_that_does_not_validate_is_listed_with_a_warning(run: Run, project: Path, kind: str) -> None:
    made = {
        "blocker": ("blocker", "add", "--description", "No credentials"),
        "decision": ("decision", "add", "--context", "c", "--decision", "d", "--reason", "r"),
        "session": ("session", "start", "--agent", "w"),
    }[kind]
    ok(run(*made, "--json", cwd=project, env=PINNED))
    (path,) = sorted((project / ".planning" / f"{kind}s").glob("*.md"))
    text = path.read_text(encoding="utf-8")
    status = re.search(r"^status: (\w+)$", text, re.M)
    assert status is not None
    path.write_text(text.replace(status.group(0), "status: blocked"), encoding="utf-8")
    line = text[: status.start()].count("\n") + 1
    result = run(kind, "list", "--json", cwd=project, env=PINNED)
    assert result.returncode == 0
    assert [item["status"] for item in json_data(result)[f"{kind}s"]] == ["blocked"]
    shown = path.relative_to(project).as_posix()
    assert result.stderr.startswith(f"planstate: warning: listed as it is, but it does not validate: {shown}:{line}:")
    assert "status: 'blocked' is not one of" in result.stderr
