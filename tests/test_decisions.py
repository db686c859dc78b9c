"""Decisions through the real console script and through the API: add, list, show, supersede, and their errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import Run, json_data, json_error, ok, outside_regions, refused, state_file

from planstate.core.errors import UsageError
from planstate.workspace import Workspace

NOW = "2026-03-04T05:06:07Z"
PINNED = {"PLANSTATE_NOW": NOW}
ID = re.compile(r"dec-[0-9a-hjkmnp-tv-z]{12}")


def decisions(project: Path) -> list[Path]:
    """The decision files of the project, by name."""
    return sorted((project / ".planning" / "decisions").glob("*.md"))


def add(run: Run, project: Path, decision: str, *extra: str) -> dict[str, object]:
    """Add a decision through the CLI with --json and return the printed record."""
    args = ("decision", "add", "--context", "ctx", "--decision", decision, "--reason", "because", *extra, "--json")
    return json_data(ok(run(*args, cwd=project, env=PINNED)))  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------- add


def test_add_writes_one_file_with_front_matter_and_body(run: Run, project: Path) -> None:
    state_before = outside_regions(state_file(project))
    result = ok(
        run(
            "decision",
            "add",
            "--context",
            "JWT library for signing tokens",
            "--decision",
            "jose over jsonwebtoken",
            "--reason",
            "Better TypeScript support",
            "--alternative",
            "jsonwebtoken: no Web Crypto",
            "--alternative",
            "hand-written: too risky",
            "--irreversible",
            cwd=project,
            env=PINNED,
        )
    )
    (path,) = decisions(project)
    record_id = path.name[:16]
    assert ID.fullmatch(record_id)
    assert path.name == f"{record_id}-jose-over-jsonwebtoken.md"
    assert result.stdout == f"Recorded decision {record_id}: jose over jsonwebtoken (.planning/decisions/{path.name})\n"
    text = path.read_text()
    front, body = text.split("\n---\n", 1)
    assert front.splitlines() == [
        "---",
        "schema_version: 1",
        f"id: {record_id}",
        "title: jose over jsonwebtoken",
        "date: 2026-03-04",
        "status: accepted",
        "context: JWT library for signing tokens",
        "decision: jose over jsonwebtoken",
        "reason: Better TypeScript support",
        "alternatives:",
        '  - "jsonwebtoken: no Web Crypto"',
        '  - "hand-written: too risky"',
        "reversible: false",
        "supersedes: null",
        "superseded_by: null",
        "phase: 1",
        "by: tester",
    ]
    assert body.startswith("# jose over jsonwebtoken\n")
    for part in ("JWT library for signing tokens", "Better TypeScript support", "- hand-written: too risky"):
        assert part in body
    assert outside_regions(state_file(project)) == state_before  # record commands render only the regions
    assert ok(run("validate", cwd=project)).stdout == "3 files valid\n"


def test_add_through_the_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project, actor="api-agent")
    ws.phase.complete(1)  # phase 2 becomes the current phase
    entry = ws.decision.add(context="c", decision="d", reason="r", alternatives=["a1"], title="Pick d", phase=None)
    assert ID.fullmatch(entry.id)
    assert entry.path == decisions(project)[0]
    assert entry.shown == f".planning/decisions/{entry.id}-pick-d.md"
    data = entry.to_dict()
    assert data["id"] == entry.id and data["path"] == entry.shown
    assert (data["title"], data["date"], data["phase"], data["by"]) == ("Pick d", "2026-03-04", 2, "api-agent")
    assert data["alternatives"] == ["a1"] and data["reversible"] is True
    assert entry.model.decision == "d"  # type: ignore[attr-defined]
    assert entry.warnings == []
    proposed = ws.decision.add(context="c", decision="e", reason="r", status="proposed", phase=3)
    assert (proposed.data["status"], proposed.data["phase"]) == ("proposed", 3)
    assert [e.id for e in ws.decision.list()] == sorted([entry.id, proposed.id])


def test_add_json_prints_the_record(run: Run, project: Path) -> None:
    data = add(run, project, "Use SQLite", "--title", "Storage", "--proposed")
    assert list(data)[:3] == ["id", "path", "schema_version"]
    assert data["path"] == f".planning/decisions/{data['id']}-storage.md"
    assert (data["title"], data["status"], data["decision"], data["date"]) == (
        "Storage",
        "proposed",
        "Use SQLite",
        "2026-03-04",
    )


def test_default_title_is_the_decision_shortened_to_one_line(project: Path) -> None:
    ws = Workspace.find(project)
    long = "Store refresh tokens in SQLite with an expiry column and rotate them on every use\nsecond line"
    entry = ws.decision.add(context="c", decision=long, reason="r")
    title = entry.data["title"]
    assert len(title) <= 60 and title.endswith("…") and "\n" not in title
    assert title.startswith("Store refresh tokens in SQLite with an expiry")
    assert entry.path.name.startswith(f"{entry.id}-store-refresh-tokens")
    assert ws.decision.add(context="c", decision="  short  ", reason="r").data["title"] == "short"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--decision", "d", "--reason", "r"), "the following arguments are required: --context"),
        (("--context", "c", "--reason", "r"), "--decision"),
        (("--context", "c", "--decision", "d"), "--reason"),
        (("--context", " ", "--decision", "d", "--reason", "r"), "context: must not be empty"),
        (("--context", "c", "--decision", "d", "--reason", "r", "--alternative", ""), "alternatives[0]: must not"),
        (("--context", "c", "--decision", "d", "--reason", "r", "--title", "\t"), "title: must not be empty"),
        (("--context", "c", "--decision", "d", "--reason", "r", "--supersedes", "nope"), "no decision with id 'nope'"),
        (("--context", "c", "--decision", "d", "--reason", "r", "--phase", "x"), "invalid int value"),
    ],
)
def test_add_refuses_bad_input_and_writes_nothing(run: Run, project: Path, args: tuple[str, ...], message: str) -> None:
    refused(run("decision", "add", *args, cwd=project), message)
    assert decisions(project) == []


def test_add_api_refuses_bad_values(project: Path) -> None:
    ws = Workspace.find(project)
    with pytest.raises(UsageError) as caught:
        ws.decision.add(context="c", decision="", reason="r")
    assert caught.value.field == "decision"
    with pytest.raises(UsageError, match="not one of: accepted, proposed"):
        ws.decision.add(context="c", decision="d", reason="r", status="superseded")
    with pytest.raises(UsageError, match="not a phase number"):
        ws.decision.add(context="c", decision="d", reason="r", phase=-1)
    with pytest.raises(UsageError, match="list of strings"):
        ws.decision.add(context="c", decision="d", reason="r", alternatives="one string")  # type: ignore[arg-type]
    assert decisions(project) == []


def test_add_with_an_unreadable_state_warns_and_leaves_phase_empty(run: Run, project: Path) -> None:
    state_file(project).write_text("---\ntitle: [broken\n---\n")
    result = run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("planstate: warning: phase left empty: .planning/STATE.md:")
    assert "phase: null" in decisions(project)[0].read_text()


# ---------------------------------------------------------------------------- list and show


def test_list_hides_superseded_filters_and_prints_json(run: Run, project: Path) -> None:
    first = add(run, project, "Use MySQL")
    second = add(run, project, "Use Postgres", "--supersedes", str(first["id"]))
    later = json_data(
        ok(
            run(
                "decision",
                "add",
                "--context",
                "c",
                "--decision",
                "Cache in Redis",
                "--reason",
                "r",
                "--json",
                cwd=project,
                env={"PLANSTATE_NOW": "2026-04-01T00:00:00Z"},
            )
        )
    )
    lines = ok(run("decision", "list", cwd=project)).stdout.splitlines()
    assert lines == [
        f"{second['id']}  2026-03-04  accepted  Use Postgres",
        f"{later['id']}  2026-04-01  accepted  Cache in Redis",
    ]
    everything = json_data(ok(run("decision", "list", "--all", "--json", cwd=project)))["decisions"]
    assert [d["id"] for d in everything] == [*sorted([first["id"], second["id"]]), later["id"]]
    old = next(d for d in everything if d["id"] == first["id"])
    assert (old["status"], old["superseded_by"]) == ("superseded", second["id"])
    assert old["path"] == first["path"]
    only = json_data(ok(run("decision", "list", "--status", "superseded", "--json", cwd=project)))["decisions"]
    assert [d["id"] for d in only] == [first["id"]]
    recent = json_data(ok(run("decision", "list", "--since", "2026-03-05", "--json", cwd=project)))["decisions"]
    assert [d["id"] for d in recent] == [later["id"]]
    window = run("decision", "list", "--since", "7d", "--json", cwd=project, env={"PLANSTATE_NOW": "2026-04-02T00:00Z"})
    assert [d["id"] for d in json_data(ok(window))["decisions"]] == [later["id"]]
    ws = Workspace.find(project)
    assert ws.decision.list(all=True).ids() == [d["id"] for d in everything]
    assert ws.decision.list(since="2026-04-01").ids() == [later["id"]]


def test_list_of_nothing_and_bad_filters(run: Run, project: Path) -> None:
    assert ok(run("decision", "list", cwd=project)).stdout.startswith("no decisions (superseded ones are hidden")
    assert json_data(ok(run("decision", "list", "--json", cwd=project)))["decisions"] == []
    refused(run("decision", "list", "--status", "done", cwd=project), "'done' is not one of: proposed, accepted")
    refused(run("decision", "list", "--since", "last week", cwd=project), "--since 'last week' is not a date")


def test_list_warns_about_unreadable_files_and_lists_the_rest(run: Run, project: Path) -> None:
    good = add(run, project, "Keep going")
    broken = project / ".planning" / "decisions" / "dec-broken.md"
    broken.write_text("---\nid: [unclosed\n---\n")
    result = run("decision", "list", cwd=project)
    assert result.returncode == 0
    assert result.stderr.startswith("planstate: warning: skipped .planning/decisions/dec-broken.md:")
    assert result.stderr.count("\n") == 1
    assert result.stdout.startswith(str(good["id"]))
    listing = Workspace.find(project).decision.list()
    assert listing.ids() == [good["id"]]
    assert [p.file for p in listing.problems] == [".planning/decisions/dec-broken.md"]


def test_show_by_id_and_prefix(run: Run, project: Path) -> None:
    made = add(run, project, "Use jose")
    path = project / str(made["path"])
    text = ok(run("decision", "show", str(made["id"])[:9], cwd=project)).stdout
    assert text == f"# {made['path']}\n{path.read_text()}"
    data = json_data(ok(run("decision", "show", str(made["id"]), "--json", cwd=project)))
    assert data["id"] == made["id"] and data["decision"] == "Use jose"
    assert data["body"] == path.read_text().split("\n---\n", 1)[1]
    assert Workspace.find(project).decision.show(str(made["id"])[:10]).id == made["id"]


def test_show_unknown_and_ambiguous_ids(run: Run, project: Path) -> None:
    folder = project / ".planning" / "decisions"
    for name in ("dec-aaaaaaaaaaaa", "dec-aaaaaaaaaaab"):
        (folder / f"{name}-x.md").write_text(
            f"---\nschema_version: 1\nid: {name}\ntitle: x\ndate: 2026-01-01\ncontext: c\ndecision: d\nreason: r\n---\n"
        )
    refused(run("decision", "show", "dec-zzz", cwd=project), "no decision with id 'dec-zzz'")
    refused(run("decision", "show", "dec-aaa", cwd=project), "ambiguous", "dec-aaaaaaaaaaaa, dec-aaaaaaaaaaab")
    ok(run("decision", "show", "dec-aaaaaaaaaaab", cwd=project))
    error = json_error(run("decision", "show", "dec-zzz", "--json", cwd=project))
    assert error["type"] == "UsageError"


def test_a_record_whose_file_name_is_not_its_id_is_found_by_its_id_even_after_a_hand_edit(
    run: Run, project: Path
) -> None:
    """A miss by file names searches every record's id (the cached summaries): exact ids, prefixes, ambiguity
    across both searches, and an id changed by hand behind the cache's back."""
    folder = project / ".planning" / "decisions"
    path = folder / "notes-on-the-database.md"
    text = "---\nschema_version: 1\nid: adr-042\ntitle: x\ndate: 2026-01-01\ncontext: c\ndecision: d\nreason: r\n---\n"
    path.write_text(text)
    ok(run("decision", "list", cwd=project))  # its summary is cached now
    for ref in ("adr-042", "adr-04", "adr"):
        assert ok(run("decision", "show", ref, cwd=project)).stdout == f"# .planning/decisions/{path.name}\n{text}"
    (folder / "adr-049-y.md").write_text(text.replace("adr-042", "adr-049"))
    refused(run("decision", "show", "adr-04", cwd=project), "ambiguous", "adr-042, adr-049")
    path.write_text(text.replace("adr-042", "adr-077"))  # by hand: the cached summary no longer vouches
    refused(run("decision", "show", "adr-042", cwd=project), "no decision with id 'adr-042'")
    assert json_data(ok(run("decision", "show", "adr-07", "--json", cwd=project)))["id"] == "adr-077"


# ---------------------------------------------------------------------------- supersede

HAND_MADE = """\
---
# Written by hand before planstate existed; keep this comment.
schema_version: 1
id: adr-007
title: Use Postgres
date: 2025-12-01
status: accepted   # we were sure back then
context: Main database
decision: Postgres 16
reason: "Team knows it"
reversible: true
---
## Notes

Hand-written body, *kept* byte for byte.\r
"""
HAND_MADE += "Trailing spaces stay.   \n"


def test_supersede_a_hand_made_decision_keeps_every_other_byte(run: Run, project: Path) -> None:
    path = project / ".planning" / "decisions" / "adr-007-use-postgres.md"
    path.write_bytes(HAND_MADE.encode())
    new = add(run, project, "Use CockroachDB", "--supersedes", "adr-007")
    assert new["supersedes"] == "adr-007"
    after = path.read_bytes().decode()
    expected = HAND_MADE.replace("status: accepted   #", "status: superseded   #").replace(
        "reversible: true\n", f"reversible: true\nsuperseded_by: {new['id']}\n"
    )
    assert after == expected
    ok(run("validate", cwd=project))
    refused(run("decision", "supersede", "adr-007", str(new["id"]), cwd=project), f"superseded by {new['id']}")


def test_supersede_command_sets_both_sides(run: Run, project: Path) -> None:
    old = add(run, project, "Use REST")
    new = add(run, project, "Use gRPC")
    state_before = outside_regions(state_file(project))
    result = ok(run("decision", "supersede", str(old["id"])[:-2], str(new["id"]), cwd=project))
    assert result.stdout == f"Decision {old['id']} is now superseded by {new['id']} ({old['path']}).\n"
    old_text = (project / str(old["path"])).read_text()
    new_text = (project / str(new["path"])).read_text()
    assert "status: superseded\n" in old_text and f"superseded_by: {new['id']}\n" in old_text
    assert f"supersedes: {old['id']}\n" in new_text and "status: accepted\n" in new_text
    assert outside_regions(state_file(project)) == state_before
    ok(run("validate", cwd=project))


def test_supersede_json_and_api(run: Run, project: Path) -> None:
    ws = Workspace.find(project)
    old = ws.decision.add(context="c", decision="A", reason="r")
    new = ws.decision.add(context="c", decision="B", reason="r")
    result = ws.decision.supersede(old.id, new.id)
    assert result.old.data["status"] == "superseded" and result.new.data["supersedes"] == old.id
    third = ws.decision.add(context="c", decision="C", reason="r")
    data = json_data(ok(run("decision", "supersede", new.id, third.id, "--json", cwd=project)))
    assert data["superseded"]["id"] == new.id and data["superseded"]["superseded_by"] == third.id
    assert data["replacement"]["id"] == third.id and data["replacement"]["supersedes"] == new.id


def test_supersede_keeps_an_existing_supersedes_and_takes_the_actor_before_the_command(run: Run, project: Path) -> None:
    a = add(run, project, "A")
    b = add(run, project, "B")
    c = add(run, project, "C", "--supersedes", str(a["id"]))
    ok(run("--by", "carol", "decision", "supersede", str(b["id"]), str(c["id"]), cwd=project))
    c_text = (project / str(c["path"])).read_text()
    assert f"supersedes: {a['id']}\n" in c_text  # it named one already; the old one still points here
    assert f"superseded_by: {c['id']}\n" in (project / str(b["path"])).read_text()
    d = add(run, project, "D")
    ok(run("decision", "supersede", str(c["id"]), str(d["id"]), "--by", "dave", cwd=project))  # --by is who acts
    assert f"superseded_by: {d['id']}\n" in (project / str(c["path"])).read_text()


def test_supersede_refusals(run: Run, project: Path) -> None:
    a = add(run, project, "A")
    b = add(run, project, "B", "--supersedes", str(a["id"]))
    c = add(run, project, "C")
    refused(run("decision", "supersede", str(c["id"]), str(c["id"]), cwd=project), "cannot supersede itself")
    refused(
        run("decision", "supersede", str(c["id"]), str(a["id"]), cwd=project),
        f"decision {a['id']} is itself superseded by {b['id']}",
    )
    refused(
        run("decision", "supersede", str(a["id"]), str(c["id"]), cwd=project),
        f"{a['id']} is already superseded by {b['id']}",
        f"{a['path']}:13:1: superseded_by: ",
    )
    refused(run("decision", "supersede", str(c["id"]), cwd=project), "required: NEW")
    refused(run("decision", "supersede", "nope", str(c["id"]), cwd=project), "no decision with id 'nope'")
    # A cycle can only come from hand edits: b supersedes a, and someone wrote that a supersedes c.
    a_path = project / str(a["path"])
    a_path.write_text(
        a_path.read_text()
        .replace("status: superseded", "status: accepted")
        .replace(f"superseded_by: {b['id']}", "superseded_by: null")
    )
    a_path.write_text(a_path.read_text().replace("supersedes: null", f"supersedes: {c['id']}"))
    before = {p: p.read_bytes() for p in decisions(project)}
    refused(
        run("decision", "supersede", str(a["id"]), str(c["id"]), cwd=project),
        "would make a cycle",
        f"({a['id']} supersedes {c['id']})",
    )
    assert {p: p.read_bytes() for p in decisions(project)} == before


# ---------------------------------------------------------------------------- templates


def test_user_template_override(run: Run, project: Path) -> None:
    folder = project / ".planning" / "templates"
    folder.mkdir()
    (folder / "decision.md.j2").write_text("Custom {{ id }}: {{ decision }} by {{ by }} on {{ date }}\n")
    made = add(run, project, "Use jose")
    body = (project / str(made["path"])).read_text().split("\n---\n", 1)[1]
    assert body == f"Custom {made['id']}: Use jose by tester on 2026-03-04\n"


def test_a_broken_user_template_is_one_line_and_writes_nothing(run: Run, project: Path) -> None:
    folder = project / ".planning" / "templates"
    folder.mkdir()
    (folder / "decision.md.j2").write_text("{{ no_such_variable }}\n")
    refused(
        run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project),
        ".planning/templates/decision.md.j2",
        "no_such_variable",
    )
    assert decisions(project) == []


def test_template_looking_values_are_written_literally(run: Run, project: Path) -> None:
    values = {"context": "{{ 7*7 }}", "decision": "{% raw %}x{% endraw %}", "reason": "{# not a comment #} ${HOME}"}
    made = add(run, project, values["decision"], "--context", values["context"], "--reason", values["reason"])
    text = (project / str(made["path"])).read_text()
    body = text.split("\n---\n", 1)[1]
    for value in values.values():
        assert value in body
    assert "49" not in text.replace(str(made["id"]), "")  # a random id may hold "49"
    shown = json_data(ok(run("decision", "show", str(made["id"]), "--json", cwd=project)))
    assert (shown["context"], shown["decision"], shown["reason"]) == (
        values["context"],
        values["decision"],
        values["reason"],
    )


def test_after_creation_the_body_belongs_to_people(run: Run, project: Path) -> None:
    old = add(run, project, "A")
    path = project / str(old["path"])
    edited = path.read_text().replace("## Notes\n", "## Notes\n\nMy own words.\n")
    path.write_text(edited)
    new = add(run, project, "B")
    ok(run("decision", "supersede", str(old["id"]), str(new["id"]), cwd=project))
    assert path.read_text().split("\n---\n", 1)[1] == edited.split("\n---\n", 1)[1]


def test_add_superseding_says_so(run: Run, project: Path) -> None:
    old = add(run, project, "Use REST")
    result = ok(
        run(
            "decision",
            "add",
            "--context",
            "c",
            "--decision",
            "Use gRPC",
            "--reason",
            "r",
            "--supersedes",
            str(old["id"]),
            cwd=project,
        )
    )
    first, second = result.stdout.splitlines()
    assert first.startswith("Recorded decision dec-") and first.endswith("-use-grpc.md)")
    assert second == f"Decision {old['id']} is now superseded by {first.split()[2].rstrip(':')}."


def test_a_phase_the_initiative_does_not_have_is_refused(run: Run, project: Path) -> None:
    before = sorted((project / ".planning" / "decisions").iterdir())
    result = run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", "--phase", "7", cwd=project)
    assert result.returncode == 2
    assert "7 is not a phase of this initiative; phases are numbered 1 to 3" in result.stderr
    assert sorted((project / ".planning" / "decisions").iterdir()) == before


# ---------------------------------------------------------------------------- accept and reject


def test_a_proposed_decision_is_accepted_or_rejected(run: Run, project: Path) -> None:
    proposed = add(run, project, "Use SQLite", "--title", "Storage", "--proposed")
    path = Path(project, str(proposed["path"]))
    out = ok(run("decision", "accept", str(proposed["id"])[:10], cwd=project, env=PINNED)).stdout
    assert out == f"Decision {proposed['id']} is now accepted ({proposed['path']})\n"
    assert "status: accepted\n" in path.read_text()
    before = path.read_bytes()
    refused(run("decision", "accept", str(proposed["id"]), cwd=project), "already accepted", f"{proposed['path']}:")
    line = refused(run("decision", "reject", str(proposed["id"]), cwd=project), "an accepted decision is replaced")
    assert f"`planstate decision supersede {proposed['id']} NEW`" in line
    assert path.read_bytes() == before

    other = add(run, project, "Use Postgres", "--proposed")
    result = ok(run("decision", "reject", str(other["id"]), "--reason", "too heavy", "--json", cwd=project))
    rejected = json_data(result)
    assert (rejected["status"], rejected["rejection"]) == ("rejected", "too heavy")
    for verb in ("accept", "reject"):
        refused(run("decision", verb, str(other["id"]), cwd=project), "it was rejected (too heavy)", "status:")
    assert ok(run("validate", cwd=project)).stdout == "4 files valid\n"


def test_superseded_decisions_are_not_accepted(run: Run, project: Path) -> None:
    old = add(run, project, "Use SQLite", "--proposed")
    new = add(run, project, "Use Postgres", "--supersedes", str(old["id"]))
    for verb in ("accept", "reject"):
        refused(run("decision", verb, str(old["id"]), cwd=project), f"it is superseded by {new['id']}")


def test_accept_and_reject_through_the_api(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANSTATE_NOW", NOW)
    ws = Workspace.find(project, actor="api-agent")
    first = ws.decision.add(context="c", decision="d", reason="r", status="proposed")
    second = ws.decision.add(context="c", decision="e", reason="r", status="proposed")
    assert ws.decision.accept(first.id).data["status"] == "accepted"
    rejected = ws.decision.reject(second.id)
    assert (rejected.data["status"], rejected.data.get("rejection")) == ("rejected", None)
    with pytest.raises(UsageError, match="must not be empty"):
        ws.decision.reject(first.id, reason=" ")
    assert {e.id: e.data["status"] for e in ws.decision.list()} == {first.id: "accepted", second.id: "rejected"}


# ---------------------------------------------------------------------------- finding records


def test_a_record_that_does_not_parse_is_reported_not_missing(run: Run, project: Path) -> None:
    made = add(run, project, "Use SQLite")
    path = Path(project, str(made["path"]))
    path.write_text(path.read_text().replace("status: accepted", "status: [accepted"))
    for command in (("decision", "show", str(made["id"])), ("decision", "accept", str(made["id"])[:8])):
        line = refused(run(*command, cwd=project))
        assert line.startswith(f"planstate: {made['path']}:"), line
        assert re.match(rf"planstate: {re.escape(str(made['path']))}:\d+:\d+: ", line), line
        assert "no decision with id" not in line


def test_a_hand_made_record_is_found_by_the_id_inside(run: Run, project: Path) -> None:
    folder = project / ".planning" / "decisions"
    (folder / "2026-11-20-jwt-library.md").write_text(
        "---\nschema_version: 1\nid: jwt-choice\ntitle: JWT library\ndate: 2026-11-20\nstatus: proposed\n"
        "context: c\ndecision: jose\nreason: r\n---\n"
    )
    shown = json_data(ok(run("decision", "show", "jwt-choice", "--json", cwd=project)))
    assert (shown["id"], shown["path"]) == ("jwt-choice", ".planning/decisions/2026-11-20-jwt-library.md")
    ok(run("decision", "accept", "jwt-ch", cwd=project))
    assert "status: accepted\n" in (folder / "2026-11-20-jwt-library.md").read_text()
    refused(run("decision", "show", "nothing-like-it", cwd=project), "no decision with id 'nothing-like-it'")


def test_a_duration_too_long_for_the_clock_is_a_usage_error(run: Run, project: Path) -> None:
    for since in ("99999999d", "999999999999w"):
        line = refused(run("decision", "list", "--since", since, cwd=project))
        assert "--since" in line and since in line
