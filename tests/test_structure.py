"""Plans change: `planstate phase add|rename|remove|move` through the real CLI, and a phase added by hand."""

from __future__ import annotations

import json
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
from conftest import Run, front, json_data, refused, state_file
from conftest import ok as quiet

from planstate.text.document import Document
from planstate.workspace import Workspace


def ok(result: CompletedProcess[str]) -> str:
    """Assert a command succeeded quietly on stderr; return its stdout."""
    return quiet(result).stdout


def answer(result: CompletedProcess[str]) -> Any:
    """Assert a `--json` command succeeded quietly on stderr; return the `data` of its answer."""
    quiet(result)
    return json_data(result)


def names(project: Path) -> list[str]:
    """The phases' names, in order."""
    return [p["name"] for p in front(project)["phases"]]


def last_history(project: Path) -> dict[str, Any]:
    """The last line of the root initiative's history.jsonl."""
    value: dict[str, Any] = json.loads((project / ".planning" / "history.jsonl").read_text().splitlines()[-1])
    return value


def clean(run: Run, project: Path) -> None:
    """`planstate check` finds nothing at all."""
    out = ok(run("check", cwd=project))
    assert out.endswith("0 errors, 0 warnings\n"), out


def blocker(run: Run, project: Path, *affects: str) -> Path:
    """A blocker that affects `affects`, with the regions rendered; its file."""
    args = [a for item in affects for a in ("--affects", item)]
    ok(run("blocker", "add", "--title", "Keys", "--description", "No keys", *args, cwd=project))
    ok(run("render", cwd=project))
    (path,) = (project / ".planning" / "blockers").glob("*.md")
    return path


def affects(path: Path) -> list[str]:
    """A blocker file's `affects`."""
    data = Document.from_bytes(path.read_bytes()).data
    assert isinstance(data, dict)
    return list(data["affects"])


def test_add_at_the_end_counts_it_and_records_a_structure_change(run: Run, project: Path) -> None:
    assert ok(run("phase", "add", "Deploy", cwd=project)) == "phase 4 (Deploy) added (4 phases)\n"
    data = front(project)
    assert names(project) == ["Design", "Build", "Ship", "Deploy"]
    assert data["phases"][3] == {"name": "Deploy", "status": "pending", "checkpoint": "pending"}
    assert data["structure"]["phases_total"] == 4
    assert data["progress"]["phases_total"] == 4
    line = last_history(project)
    assert (line["from"], line["to"], line["trigger"]) == ("active", "active", "phase add")
    assert line["reason"] == "added phase 4 (Deploy); phases_total 3 → 4"
    clean(run, project)
    status = answer(run("status", "--json", cwd=project))
    assert (status["phases_total"], status["lifecycle"]["state"]) == (4, "active")


def test_add_before_renumbers_blockers_and_decisions_and_keeps_the_text(run: Run, project: Path) -> None:
    path = blocker(run, project, "Phase 3: the release", "phase 1", "Build")
    ok(run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project))
    (decision,) = (project / ".planning" / "decisions").glob("*.md")
    decision.write_text(decision.read_text().replace("phase: 1\n", "phase: 3\n"))
    ok(run("render", cwd=project))
    result = answer(run("phase", "add", "Security review", "--before", "3", "--json", cwd=project))
    assert (result["action"], result["phase"], result["from_number"], result["from_name"]) == (
        "add",
        {"number": 3, "name": "Security review"},
        None,
        None,
    )
    assert result["renumbered"] == [{"from": 3, "to": 4}]
    assert result["phases_total"] == 4 and result["current_phase_number"] == 1 and result["changed"] is True
    assert sorted(result["references"]) == sorted(
        [f".planning/blockers/{path.name}", f".planning/decisions/{decision.name}"]
    )
    assert names(project) == ["Design", "Build", "Security review", "Ship"]
    assert affects(path) == ["Phase 4: the release", "phase 1", "Build"]
    assert "phase: 4\n" in decision.read_text()
    assert "renumbered 3 → 4" in last_history(project)["reason"]
    clean(run, project)


def test_position_and_next_action_follow_their_phase(run: Run, project: Path) -> None:
    """A pending phase ahead of the current one is removed: the current phase moves up a number, and the
    next action planstate wrote for it moves with it."""
    with Workspace.find(project).edit() as state:  # phase 1 never started; phase 2 is where work is
        state.phases[0]._writable().update({"status": "pending", "started": None, "attempts": 0})
        state.phases[1]._writable().update({"status": "active", "started": state.created, "attempts": 1})
        state.position.phase = 2
        state.next_action = "Start phase 2: Build"
    out = ok(run("phase", "remove", "1", cwd=project))
    assert out == "phase 1 (Design) removed (2 phases); renumbered 2 → 1, 3 → 2\n"
    data = front(project)
    assert (data["position"]["phase"], data["position"]["phase_name"]) == (1, "Build")
    assert data["next_action"] == "Start phase 1: Build"
    clean(run, project)


def test_rename_follows_in_blockers_named_by_name_and_in_the_next_action(run: Run, project: Path) -> None:
    path = blocker(run, project, "design", "phase 2")
    assert ok(run("phase", "rename", "1", "Drafting", cwd=project)) == (
        f"phase 1 renamed: Design → Drafting; updated .planning/blockers/{path.name}\n"
    )
    assert names(project)[0] == "Drafting"
    assert affects(path) == ["Drafting", "phase 2"]
    assert front(project)["next_action"] == "Start phase 1: Drafting"
    line = last_history(project)
    assert (line["trigger"], line["reason"]) == ("phase rename", "renamed phase 1: Design → Drafting")
    clean(run, project)
    before = state_file(project).read_bytes()
    assert answer(run("phase", "rename", "1", "Drafting", "--json", cwd=project))["changed"] is False
    assert state_file(project).read_bytes() == before


def test_remove_marks_references_to_the_removed_phase_and_warns_about_decisions(run: Run, project: Path) -> None:
    path = blocker(run, project, "phase 3", "Ship", "phase 2")
    ok(run("decision", "add", "--context", "c", "--decision", "d", "--reason", "r", cwd=project))
    (decision,) = (project / ".planning" / "decisions").glob("*.md")
    decision.write_text(decision.read_text().replace("phase: 1\n", "phase: 3\n"))
    ok(run("render", cwd=project))
    done = run("phase", "remove", "3", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("phase 3 (Ship) removed (2 phases); updated ")
    assert "now removed: its phase is now null" in done.stderr
    assert affects(path) == ["removed phase: Ship", "removed phase: Ship", "phase 2"]
    assert "phase: null\n" in decision.read_text()
    assert front(project)["structure"]["phases_total"] == 2
    assert last_history(project)["trigger"] == "phase remove"
    clean(run, project)


def test_removing_the_last_unfinished_phase_completes_the_initiative(run: Run, project: Path) -> None:
    ok(run("phase", "complete", "1", cwd=project))
    ok(run("phase", "skip", "2", cwd=project))  # phase 3 starts: make phase 2 current again, leaving 3 pending
    with Workspace.find(project).edit() as state:
        state.phases[2]._writable().update({"status": "pending", "started": None, "attempts": 0})
        state.position.phase = 2
    out = ok(run("phase", "remove", "3", cwd=project))
    assert out == "phase 3 (Ship) removed (2 phases); initiative demo completed\n"
    assert front(project)["lifecycle"]["state"] == "completed"
    lines = (project / ".planning" / "history.jsonl").read_text().splitlines()
    assert [json.loads(x)["trigger"] for x in lines[-2:]] == ["phase remove", "phase remove"]
    assert (json.loads(lines[-1])["from"], json.loads(lines[-1])["to"]) == ("active", "completed")
    clean(run, project)


def test_move_renumbers_the_phases_between(run: Run, project: Path) -> None:
    ok(run("phase", "add", "Docs", cwd=project))
    path = blocker(run, project, "phase 4", "phase 2")
    out = ok(run("phase", "move", "4", "--to", "2", cwd=project))
    assert out == (
        f"phase 4 (Docs) moved to 2; renumbered 4 → 2, 2 → 3, 3 → 4; updated .planning/blockers/{path.name}\n"
    )
    assert names(project) == ["Design", "Docs", "Build", "Ship"]
    assert affects(path) == ["phase 2", "phase 3"]
    line = last_history(project)
    assert (line["from"], line["to"], line["trigger"]) == ("active", "active", "phase move")
    clean(run, project)
    before = state_file(project).read_bytes()
    assert ok(run("phase", "move", "2", "--to", "2", cwd=project)) == "phase 2 (Docs): nothing changed\n"
    assert state_file(project).read_bytes() == before


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("add", "X", "--after", "1", "--before", "2"), ("argument --before: not allowed with argument --after",)),
        (("add", "X", "--after", "7"), ("phases:", "cannot add a phase after 7: phases are numbered 1 to 3")),
        (("add", "X", "--before", "1"), ("phases.1.status", "before phase 1 (Design): it is active")),
        (("add", "  "), ("a phase needs a name",)),
        (("rename", "0", "X"), ("phase 0",)),
        (("rename", "4", "X"), ("cannot rename phase 4: phases are numbered 1 to 3",)),
        (("remove", "1"), ("phases.1.status", "cannot remove phase 1 (Design): it is active; only a pending")),
        (("remove", "9"), ("cannot remove phase 9: phases are numbered 1 to 3",)),
        (("move", "1", "--to", "3"), ("cannot move phase 1 (Design): it is active; only a pending phase moves",)),
        (("move", "3", "--to", "1"), ("cannot move phase 3 (Ship) to 1 before phase 1 (Design): it is active",)),
        (("move", "3", "--to", "5"), ("cannot move phase 3 (Ship) to 5: phases are numbered 1 to 3",)),
        (("move", "3"), ("the following arguments are required: --to",)),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) and v and v[0] in ("add", "rename", "remove", "move") else "",
)
def test_wrong_input_is_refused_with_one_line_and_nothing_written(
    run: Run, project: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    before = state_file(project).read_bytes()
    history = (project / ".planning" / "history.jsonl").read_bytes()
    refused(run("phase", *args, cwd=project), *needles)
    assert state_file(project).read_bytes() == before
    assert (project / ".planning" / "history.jsonl").read_bytes() == history


def test_completed_phases_and_the_current_one_stay(run: Run, project: Path) -> None:
    ok(run("phase", "complete", "1", cwd=project))  # 1 completed, 2 active and current
    refused(run("phase", "move", "1", "--to", "3", cwd=project), "it is completed; only a pending phase moves")
    refused(run("phase", "remove", "1", cwd=project), "it is completed; only a pending phase is removed")
    refused(run("phase", "add", "X", "--after", "1", cwd=project), "before phase 2 (Build): it is active")
    with Workspace.find(project).edit() as state:  # a pending current phase (as after `position --phase`)
        state.phases[1]._writable().update({"status": "pending", "started": None})
    refused(run("phase", "remove", "2", cwd=project), "position.phase", "it is the current phase")


def test_a_read_only_initiative_is_refused(run: Run, project: Path) -> None:
    ok(run("archive", cwd=project))
    refused(run("phase", "add", "X", cwd=project), "lifecycle.state", "is archived (read-only)")


def test_the_api_twins(project: Path) -> None:
    ws = Workspace.find(project)
    assert ws.phase.add("Deploy", after=2).to_dict()["renumbered"] == [{"from": 3, "to": 4}]
    assert ws.phase.move(4, to=3).phase == 3
    assert ws.phase.rename(3, "Release").from_name == "Ship"
    assert ws.phase.remove(4).name == "Deploy"
    assert [p.name for p in ws.state().phases] == ["Design", "Build", "Release"]


def test_a_phase_added_by_hand_is_read_and_check_fix_records_it(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    marker = "  - name: Ship\n    status: pending\n    checkpoint: pending\n"
    path.write_text(text.replace(marker, marker + "  - name: Deploy\n    status: pending\n", 1))
    status = answer(run("status", "--json", cwd=project))
    assert (status["phases_total"], status["phases_completed"]) == (4, 0)  # every listed phase counts
    assert ok(run("get", "phases.4.name", cwd=project)) == "Deploy\n"
    found = run("check", "--json", cwd=project)
    findings = {f["code"]: f for f in json_data(found)["findings"]}
    mismatch = findings["structure-mismatch"]
    assert (mismatch["severity"], mismatch["field"], mismatch["fixable"]) == ("warning", "structure.phases_total", True)
    assert mismatch["message"] == "structure.phases_total is 3 but 4 phases are listed"
    assert "set it to 4" in mismatch["hint"]
    assert "lists 4 phases" not in ok(run("validate", cwd=project))
    ok(run("check", "--fix", cwd=project))
    assert front(project)["structure"]["phases_total"] == 4
    line = last_history(project)
    assert (line["from"], line["to"], line["trigger"]) == ("active", "active", "repair")
    assert line["reason"].startswith("structure.phases_total 3 → 4")
    clean(run, project)
    assert ok(run("phase", "remove", "4", cwd=project)) == "phase 4 (Deploy) removed (3 phases)\n"
    clean(run, project)


def test_a_structure_line_does_not_hide_a_lagging_history(run: Run, project: Path) -> None:
    """The rule about the last transition skips structure changes: a history that lags stays reported."""
    log = project / ".planning" / "history.jsonl"
    with log.open("a") as handle:
        handle.write('{"at": "2026-01-01T00:00:00Z", "from": "active", "to": "paused", "trigger": "pause"}\n')
    ok(run("phase", "add", "Deploy", cwd=project))
    out = run("check", cwd=project).stdout
    assert "history-mismatch: the last transition leads to 'paused' but lifecycle.state is 'active'" in out
