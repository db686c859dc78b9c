"""Task records through the real CLI: `task add`, `task list`, `ready`, and what `check` says of tasks."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from conftest import Run, exits, json_data, ok, refused
from test_docs import CLI, assert_examples_run_as_shown

from planstate.core.errors import EXIT_FINDINGS


def clean(run: Run, project: Path) -> None:
    """`planstate check` finds nothing."""
    assert ok(run("check", cwd=project)).stdout.endswith(": 0 errors, 0 warnings\n")


MINUTES = itertools.count()  # each task is added a minute after the one before: ids order tasks of one second alone


def add(run: Run, project: Path, *args: str, now: str | None = None) -> str:
    """`planstate task add ARGS`: the id it prints, after checking that check stays clean."""
    minute = next(MINUTES)
    env = {"PLANSTATE_NOW": now or f"2026-11-{20 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"}
    printed = ok(run("task", "add", *args, cwd=project, env=env)).stdout
    assert re.fullmatch(r"tsk-[0-9a-z]{12}\n", printed), printed
    clean(run, project)
    return printed.strip()


def ready(run: Run, project: Path, *args: str) -> list[str]:
    """The ids `planstate ready --json` lists, in its order (the text lines say the same)."""
    data = json_data(run("ready", *args, "--json", cwd=project))
    ids = [task["id"] for task in data["tasks"]]
    assert data["total"] == len(ids)
    lines = ok(run("ready", *args, cwd=project)).stdout.splitlines()
    assert [line.split()[0] for line in lines] == ids or (not ids and lines == ["no task is ready"])
    return ids


def task_file(project: Path, task_id: str) -> Path:
    (path,) = (project / ".planning" / "tasks").glob(f"{task_id}-*.md")
    return path


def edit(path: Path, old: str, new: str) -> None:
    """Change a task file by hand."""
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_add_writes_a_task_file_that_list_and_ready_show(run: Run, project: Path) -> None:
    first = add(run, project, "Add the users table", "--phase", "1")
    second = add(run, project, "Seed the users", "--after", first[:8] + first[8:], "--wave", "1")
    text = task_file(project, second).read_text(encoding="utf-8")
    assert text.startswith(f"---\nschema_version: 1\nid: {second}\ntitle: Seed the users\nstatus: pending\n")
    assert f"depends_on:\n  - {first}\nwave: 1\nclaim: null\nevidence: {{}}\nby: tester\n---\n" in text
    listed = ok(run("task", "list", cwd=project)).stdout.splitlines()
    assert listed == [f"{first}  pending  1  -  Add the users table", f"{second}  pending  -  1  Seed the users"]
    assert ready(run, project) == [first]  # the second waits for the first
    clean(run, project)


def test_add_json_answers_with_the_task_and_schema_task_describes_it(run: Run, project: Path) -> None:
    data = json_data(run("task", "add", "Write docs", "--phase", "2", "--wave", "0", "--json", cwd=project))
    assert data["title"] == "Write docs" and (data["phase"], data["wave"], data["status"]) == (2, 0, "pending")
    assert data["depends_on"] == [] and data["claim"] is None and data["evidence"] == {}
    assert data["path"] == f".planning/tasks/{data['id']}-write-docs.md"
    schema = json.loads(ok(run("schema", "task", cwd=project)).stdout)
    assert schema["properties"]["status"]["enum"] == ["pending", "in_progress", "done", "dropped"]
    assert schema["properties"]["claim"]["type"] == ["object", "null"]
    assert schema["properties"]["claim"]["required"] == ["session", "since"]
    clean(run, project)


def test_add_refuses_an_unknown_task_after_and_a_phase_that_does_not_exist(run: Run, project: Path) -> None:
    known = add(run, project, "First")
    before = sorted(p.name for p in (project / ".planning" / "tasks").iterdir())
    refused(run("task", "add", "Second", "--after", "tsk-nope", cwd=project), "no task with id 'tsk-nope'")
    refused(
        run("task", "add", "Second", "--after", known, "--phase", "7", cwd=project),
        "phase: 7 is not a phase of this initiative; phases are numbered 1 to 3",
    )
    refused(run("task", "add", "Second", "--wave", "-1", cwd=project), "wave: -1 is not a wave number")
    refused(run("task", "add", " ", cwd=project), "title: must not be empty")
    refused(run("task", "list", "--status", "finished", cwd=project), "status: 'finished' is not one of")
    refused(run("task", "list", "--phase", "4", cwd=project), "phase: 4 is not a phase of this initiative")
    refused(run("ready", "--phase", "0", cwd=project), "phase: 0 is not a phase of this initiative")
    assert sorted(p.name for p in (project / ".planning" / "tasks").iterdir()) == before  # nothing written
    clean(run, project)


def test_a_hand_edited_invalid_status_is_one_located_line(run: Run, project: Path) -> None:
    broken = add(run, project, "Broken by hand")
    fine = add(run, project, "Fine")
    after = add(run, project, "After the broken one", "--after", broken)
    path = task_file(project, broken)
    edit(path, "status: pending", "status: finished")
    shown = f".planning/tasks/{path.name}:5:1: status: 'finished' is not one of: pending, in_progress, done, dropped"
    listed = exits(run("task", "list", cwd=project))
    assert listed.stderr == f"planstate: warning: skipped {shown}\n"
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [fine, after]
    queue = exits(run("ready", cwd=project))
    assert queue.stderr == f"planstate: warning: skipped {shown}\n"
    assert queue.stdout.split()[0] == fine and after not in queue.stdout  # its dependency cannot be judged done
    found = exits(run("check", cwd=project), EXIT_FINDINGS).stdout
    assert f".planning/tasks/{path.name}:5:1: error schema-error: status: 'finished' is not one of" in found


def test_ready_orders_by_wave_none_last_then_age(run: Run, project: Path) -> None:
    late = add(run, project, "No wave, older", now="2026-11-20T09:00:00Z")
    two = add(run, project, "Wave 2", "--wave", "2", now="2026-11-20T09:01:00Z")
    zero_new = add(run, project, "Wave 0, newer", "--wave", "0", now="2026-11-20T09:03:00Z")
    zero_old = add(run, project, "Wave 0, older", "--wave", "0", now="2026-11-20T09:02:00Z")
    fresh = add(run, project, "No wave, newer", now="2026-11-20T09:04:00Z")
    assert ready(run, project) == [zero_old, zero_new, two, late, fresh]


def test_ready_waits_for_dependencies_and_phases_filter(run: Run, project: Path) -> None:
    schema = add(run, project, "Schema", "--phase", "1")
    seed = add(run, project, "Seed", "--phase", "1", "--after", schema)
    api = add(run, project, "API", "--phase", "2", "--after", schema, "--after", seed)
    assert ready(run, project) == [schema]
    edit(task_file(project, schema), "status: pending", "status: done")  # `task done ID` comes later
    clean(run, project)
    assert ready(run, project) == [seed]
    edit(task_file(project, seed), "status: pending", "status: dropped")
    assert ready(run, project) == []  # a dropped dependency is not done
    edit(task_file(project, seed), "status: dropped", "status: done")
    assert ready(run, project) == [api]
    assert ready(run, project, "--phase", "1") == []
    assert ready(run, project, "--phase", "2") == [api]
    assert [line.split()[0] for line in ok(run("task", "list", "--all", cwd=project)).stdout.splitlines()] == [
        schema,
        seed,
        api,
    ]
    assert ok(run("task", "list", cwd=project)).stdout.split()[0] == api  # done ones hidden
    listed = json_data(run("task", "list", "--status", "done", "--phase", "1", "--json", cwd=project))
    assert [t["id"] for t in listed["tasks"]] == [schema, seed] and listed["total"] == 2


def test_ready_leaves_out_what_an_open_blocker_affects(run: Run, project: Path) -> None:
    design = add(run, project, "Design it", "--phase", "1")
    build = add(run, project, "Build it", "--phase", "2")
    loose = add(run, project, "No phase")
    blocker = ok(run("blocker", "add", "--description", "Waiting for keys", "--affects", "phase 2", cwd=project)).stdout
    blocker_id = re.search(r"blk-[0-9a-z]{12}", blocker)
    assert blocker_id is not None
    clean(run, project)
    assert ready(run, project) == [design, loose]
    review = ("blocker", "add", "--description", "Needs review", "--affects", loose, "--active")
    named = ok(run(*review, cwd=project)).stdout
    clean(run, project)
    assert ready(run, project) == [design]
    ok(run("blocker", "resolve", blocker_id.group(0), "--resolution", "came", cwd=project))
    assert ready(run, project) == [design, build]
    named_id = re.search(r"blk-[0-9a-z]{12}", named)
    assert named_id is not None
    ok(run("blocker", "bypass", named_id.group(0), "--workaround", "review later", cwd=project))
    assert ready(run, project) == [design, build, loose]  # a bypassed blocker has a workaround: it blocks nothing
    clean(run, project)


def test_check_reports_an_unknown_dependency_and_a_cycle(run: Run, project: Path) -> None:
    a = add(run, project, "A")
    b = add(run, project, "B", "--after", a)
    c = add(run, project, "C", "--after", b)
    edit(task_file(project, a), "depends_on: []", f"depends_on: [{c}, tsk-0000000zzzzz]")
    found = exits(run("check", cwd=project), EXIT_FINDINGS).stdout.splitlines()
    where = f".planning/tasks/{task_file(project, a).name}"
    (cycle,) = [line for line in found if " error dependency-cycle: " in line]
    ring = [a, c, b]  # each depends on the next: reported once, from the smallest id on, on that task's file
    at = ring.index(min(ring))
    ring = ring[at:] + ring[:at]
    assert cycle.startswith(f".planning/tasks/{task_file(project, ring[0]).name}:")
    assert f"depends_on makes a cycle: {' → '.join([*ring, ring[0]])} (each waits for the next" in cycle
    assert any(
        line.startswith(f"{where}:8:")
        and "error missing-reference: depends_on.1: depends_on names task tsk-0000000zzzzz, which does not exist"
        in line
        for line in found
    ), found
    assert found[-1] == "5 files checked: 2 errors, 0 warnings" or found[-1].endswith(": 2 errors, 0 warnings")
    assert ready(run, project) == []  # each waits for another
    edit(task_file(project, a), f"depends_on: [{c}, tsk-0000000zzzzz]", f"depends_on: [{a}]")
    found = exits(run("check", cwd=project), EXIT_FINDINGS).stdout
    assert f"error dependency-cycle: depends_on.0: depends_on makes a cycle: {a} → {a}" in found


def test_task_start_and_done_without_an_id_still_move_the_position(run: Run, project: Path) -> None:
    add(run, project, "A record")
    ok(run("task", "start", "Write the schema", cwd=project))
    ok(run("task", "done", cwd=project))
    position = json_data(run("get", "position", "--json", cwd=project))
    assert position["task"] == "Write the schema" and position["status"] == "done"
    clean(run, project)


def test_cli_reference_task_examples_print_what_they_show(tmp_path: Path) -> None:
    """docs/cli.md's `task add`, `task list` and `ready` examples, run in order in an empty folder."""
    sections = [CLI.split(f"\n### planstate {name}\n", 1)[1].split("\n### ", 1)[0] for name in ("task add",)]
    sections += [CLI.split(f"\n### planstate {name}\n", 1)[1].split("\n### ", 1)[0] for name in ("task list", "ready")]
    clock = {  # a minute between the tasks: they are listed by age
        "planstate init": "2026-11-20T09:00:00Z",
        "schema=": "2026-11-20T09:01:00Z",
        'planstate task add "Seed': "2026-11-20T09:02:00Z",
        'planstate task add "Write': "2026-11-20T09:03:00Z",
    }
    assert_examples_run_as_shown("\n".join(sections), tmp_path, clock)


def test_phase_remove_and_add_renumber_the_phase_of_tasks(run: Run, project: Path) -> None:
    last = add(run, project, "Ship it", "--phase", "3")
    middle = add(run, project, "Build it", "--phase", "2")
    removed = exits(run("phase", "remove", "2", cwd=project))
    assert f"task {middle} belonged to phase 2 (Build), now removed: its phase is now null" in removed.stderr
    clean(run, project)
    phases = {t["id"]: t["phase"] for t in json_data(run("task", "list", "--json", cwd=project))["tasks"]}
    assert phases == {last: 2, middle: None}
    ok(run("phase", "add", "Review", "--before", "2", cwd=project))
    clean(run, project)
    phases = {t["id"]: t["phase"] for t in json_data(run("task", "list", "--json", cwd=project))["tasks"]}
    assert phases == {last: 3, middle: None}
