"""Happy paths through the real `planstate` console script, run as a subprocess in temporary folders."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import Run, RunAll, json_data, json_error, ok, state_file

COMMANDS = ("init", "status", "get", "set", "append", "unset", "validate", "schema")


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, str]]:
    """Pairs of (old, new) lines that differ; both files must have the same number of lines."""
    old, new = before.decode().splitlines(), after.decode().splitlines()
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def test_init_creates_the_workspace(run: Run, tmp_path: Path) -> None:
    result = ok(run("init", "--title", "Auth rewrite", "--phase", "Design", "--phase", "Build"))
    assert "Auth rewrite" in result.stdout
    planning = tmp_path / ".planning"
    assert (planning / "STATE.md").is_file()
    for folder in ("decisions", "blockers", "sessions"):
        assert (planning / folder).is_dir()
    assert ".local/" in (planning / ".gitignore").read_text().splitlines()
    text = (planning / "STATE.md").read_text()
    assert text.startswith("---\n")
    assert "initiative: auth-rewrite" in text
    assert not [p for p in tmp_path.iterdir() if p.name != ".planning"]  # no staging folder left behind
    ok(run("validate"))


def test_init_options_and_json(run: Run, tmp_path: Path) -> None:
    result = ok(run("init", "--title", "Zero based", "--phase", "A", "--first-phase", "0", "--json"))
    data = json_data(result)
    assert data["initiative"] == "zero-based"
    assert data["title"] == "Zero based"
    assert data["path"] == ".planning/"
    status = json_data(ok(run("--json", "status")))  # --json before the command, like every global option
    assert status["current_phase"]["number"] == 0


def test_init_with_dir_naming_the_planning_folder(run: Run, tmp_path: Path) -> None:
    ok(run("--dir", str(tmp_path / ".planning"), "init", "--title", "X"))
    assert (tmp_path / ".planning" / "STATE.md").is_file()
    assert not (tmp_path / ".planning" / ".planning").exists()


def test_status_text(run: Run, project: Path) -> None:
    out = ok(run("status", cwd=project)).stdout
    assert out.startswith("demo: Demo\n")
    assert "1: Design [active]" in out
    assert "0%" in out


def test_status_text_before_any_phase_started(run: Run, tmp_path: Path) -> None:
    ok(run("init", "--title", "X"))
    ok(run("phase", "add", "One"))
    assert "phase      none started (0 of 1 completed)\n" in ok(run("status")).stdout


def test_status_json_keys(run: Run, project: Path) -> None:
    status = json_data(ok(run("status", "--json", cwd=project)))
    for key in (
        "initiative",
        "title",
        "lifecycle",
        "current_phase",
        "phases_total",
        "phases_completed",
        "percent",
        "next_action",
    ):
        assert key in status
    assert status["initiative"] == "demo"
    assert status["lifecycle"]["state"] == "active"
    assert (status["current_phase"]["number"], status["phases_total"], status["phases_completed"]) == (1, 3, 0)
    assert status["percent"] == 0
    assert status["next_action"] == "Start phase 1: Design"


def test_get_scalar_mapping_and_json(run: Run, project: Path) -> None:
    assert ok(run("get", "title", cwd=project)).stdout == "Demo\n"
    assert ok(run("get", "phases.1.name", cwd=project)).stdout == "Design\n"  # a phase by its number
    assert ok(run("get", "phases.2.name", cwd=project)).stdout == "Build\n"
    assert ok(run("get", "phases[3].name", cwd=project)).stdout == "Ship\n"  # the same notation, bracketed
    mapping = ok(run("get", "position", cwd=project)).stdout
    assert "phase: 1\n" in mapping
    assert "status: pending\n" in mapping
    data = json_data(ok(run("get", "position", "--json", cwd=project)))
    assert data["phase"] == 1
    assert data["task"] is None
    assert json_data(ok(run("get", "created", "--json", cwd=project))) == "2026-01-01T00:00:00Z"
    assert json_data(ok(run("get", "structure.phases_total", "--json", cwd=project))) == 3


def test_set_several_pairs_in_one_call(run: Run, project: Path) -> None:
    result = ok(run("set", "position.task", "Write the parser", "position.status", "in_progress", cwd=project))
    lines = result.stdout.splitlines()
    assert lines == [
        ".planning/STATE.md: position.task: null → Write the parser",
        ".planning/STATE.md: position.status: pending → in_progress",
    ]
    assert ok(run("get", "position.task", cwd=project)).stdout == "Write the parser\n"


def test_set_json_change_list(run: Run, project: Path) -> None:
    result = ok(run("set", "position.wave", "2", "next_action", "Review", "--json", cwd=project))
    data = json_data(result)
    assert data["changed"] is True
    assert data["path"] == ".planning/STATE.md"
    assert data["changes"] == [
        {"field": "position.wave", "old": None, "new": 2},
        {"field": "next_action", "old": "Start phase 1: Design", "new": "Review"},
    ]
    again = json_data(ok(run("set", "position.wave", "2", "--json", cwd=project)))
    assert again == {"path": ".planning/STATE.md", "changed": False, "changes": []}


def test_set_keeps_text_for_string_fields(run: Run, project: Path) -> None:
    ok(run("set", "title", "2026", "position.task", "yes", "next_action", "fix: the login bug", cwd=project))
    assert json_data(ok(run("get", "title", "--json", cwd=project))) == "2026"
    assert json_data(ok(run("get", "position.task", "--json", cwd=project))) == "yes"
    assert json_data(ok(run("get", "next_action", "--json", cwd=project))) == "fix: the login bug"
    ok(run("set", "next_action", "line one\nline two", cwd=project))
    assert json_data(ok(run("get", "next_action", "--json", cwd=project))) == "line one\nline two"


ORDINARY_TEXT = [
    "fix #12",
    "[WIP] login",
    "@alice review",
    "`make` fails",
    "*important* fix",
    "!urgent",
    "a: b: c",
    "{draft} x",
    "| pipe",
    "> quote",
    "  lead",
    "trailing  ",
    "- item",
    "% done",
    "&anchor",
    "yes",
    "null-ish",
    "2026-01-01",
    "3",
]


@pytest.mark.parametrize("text", ORDINARY_TEXT)
def test_set_and_append_store_ordinary_text_exactly(run: Run, project: Path, text: str) -> None:
    """Text fields take what was typed, like `position --task` and `next` do: nothing is read as YAML."""
    ok(run("set", "position.task", text, "next_action", text, cwd=project))
    ok(run("append", "resume_context.open_questions", text, cwd=project))
    assert json_data(ok(run("get", "position.task", "--json", cwd=project))) == text
    assert json_data(ok(run("get", "next_action", "--json", cwd=project))) == text
    assert json_data(ok(run("get", "resume_context.open_questions", "--json", cwd=project))) == [text]
    ok(run("validate", cwd=project))
    ok(run("position", "--task", text, cwd=project))  # the flow command stores the same
    assert json_data(ok(run("get", "position.task", "--json", cwd=project))) == text


@pytest.mark.parametrize(
    ("path", "text", "value"),
    [
        ("position.task", "null", None),
        ("position.task", "~", None),
        ("position.task", "NULL", None),
        ("title", "null", "null"),  # not nullable: the text
        ("position.task", "'it''s'", "it's"),
        ("position.task", '"tab\\there"', "tab\there"),
        ("position.task", '"fix #12"', "fix #12"),
        ("next_action", "|\n  one\n  two\n", "one\ntwo\n"),
        ("position.plan", "3", 3),
        ("position.plan", "3b", "3b"),
        ("position.wave", "2", 2),
        ("position.wave", "null", None),
        ("resume_context.files_modified", "[a.py, 'b #1.py']", ["a.py", "b #1.py"]),
    ],
)
def test_set_value_rules(run: Run, project: Path, path: str, text: str, value: object) -> None:
    """The exceptions of docs/cli.md "Values": null spellings, quoted and block YAML strings, numbers."""
    ok(run("set", path, text, cwd=project))
    assert json_data(ok(run("get", path, "--json", cwd=project))) == value


def test_set_recomputes_derived_values(run: Run, project: Path) -> None:
    path = state_file(project)  # phase statuses are managed: a person edits them by hand
    path.write_text(
        path.read_text()
        .replace("status: active", "status: completed", 1)
        .replace("    status: pending", "    status: active", 1)
        .replace("  phase: 1\n", "  phase: 2\n", 1)
    )
    ok(run("set", "position.task", "Build it", cwd=project))
    status = json_data(ok(run("status", "--json", cwd=project)))
    assert (status["current_phase"]["number"], status["phases_completed"], status["percent"]) == (2, 1, 33)
    assert ok(run("get", "position.phase_name", cwd=project)).stdout == "Build\n"
    assert ok(run("get", "progress.percent", cwd=project)).stdout == "33\n"


def test_append(run: Run, project: Path) -> None:
    ok(run("append", "resume_context.files_modified", "src/a.py", cwd=project))
    result = ok(run("append", "resume_context.files_modified", "src/b.py", "--json", cwd=project))
    change = json_data(result)["changes"][0]
    assert change == {"field": "resume_context.files_modified", "old": ["src/a.py"], "new": ["src/a.py", "src/b.py"]}
    listed = json_data(ok(run("get", "resume_context.files_modified", "--json", cwd=project)))
    assert listed == ["src/a.py", "src/b.py"]


def test_unset(run: Run, project: Path) -> None:
    ok(run("set", "position.task", "t1", cwd=project))
    result = ok(run("unset", "position.task", cwd=project))
    assert result.stdout == ".planning/STATE.md: position.task: t1 → (removed)\n"
    assert "task:" not in state_file(project).read_text().split("position:")[1].split("lifecycle:")[0]
    # a key holding null is still a key: removing it is a change and is reported as one
    data = json_data(ok(run("unset", "position.wave", "--json", cwd=project)))
    assert data["changes"] == [{"field": "position.wave", "old": None, "new": None, "removed": True}]
    ok(run("append", "resume_context.open_questions", "why?", cwd=project))
    ok(run("unset", "resume_context.open_questions.0", cwd=project))
    assert json_data(ok(run("get", "resume_context.open_questions", "--json", cwd=project))) == []
    ok(run("validate", cwd=project))


def test_validate_ok(run: Run, project: Path) -> None:
    assert ok(run("validate", cwd=project)).stdout == "2 files valid\n"  # STATE.md and history.jsonl
    data = json_data(ok(run("validate", "--json", cwd=project)))
    assert data == {"files_checked": 2, "findings": []}


def test_schema_is_valid_json_schema(run_all: RunAll) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    kinds = ("state", "decision", "blocker", "session")
    for kind, result in zip(kinds, run_all([("schema", kind) for kind in kinds]), strict=True):
        schema = json.loads(ok(result).stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object"
        assert schema["title"] == f"planstate {kind}"


def test_schema_of_all_kinds_and_state_matches_its_schema(run: Run, project: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    everything = json.loads(ok(run("schema")).stdout)
    assert json_data(ok(run("schema", "--json"))) == everything
    assert set(everything) == {"state", "decision", "blocker", "session", "task", "history"}
    for schema in everything.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    from planstate.model.kinds import to_json
    from planstate.workspace import Workspace

    ws = Workspace.find(project)
    front_matter = to_json(ws.ctx.state_document().data)
    jsonschema.Draft202012Validator(everything["state"]).validate(front_matter)
    for line in ws.target.history_path.read_text().splitlines():
        jsonschema.Draft202012Validator(everything["history"]).validate(json.loads(line))


def test_help_lists_every_command(run: Run) -> None:
    out = ok(run("--help")).stdout
    for command in COMMANDS:
        assert command in out
    assert "Exit codes" in out


def test_help_of_each_command(run_all: RunAll) -> None:
    for command, result in zip(COMMANDS, run_all([(command, "--help") for command in COMMANDS]), strict=True):
        assert ok(result).stdout.startswith(f"usage: planstate {command}")


def test_version(run: Run) -> None:
    assert ok(run("--version")).stdout.startswith("planstate ")


def test_dir_option_and_environment(run: Run, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert ok(run("--dir", str(project), "get", "title", cwd=elsewhere)).stdout == "Demo\n"
    assert ok(run("get", "title", "--dir", str(project / ".planning"), cwd=elsewhere)).stdout == "Demo\n"
    env = {"PLANSTATE_DIR": str(project)}
    assert ok(run("get", "title", cwd=elsewhere, env=env)).stdout == "Demo\n"
    ok(run("set", "position.task", "from env", cwd=elsewhere, env=env))
    assert ok(run("get", "position.task", cwd=project)).stdout == "from env\n"


def test_dir_inside_the_planning_folder(run: Run, project: Path, tmp_path: Path) -> None:
    """A --dir inside .planning/ is that workspace, under its one lock; inside initiatives/<slug>/ it picks it."""
    ok(run("initiative", "new", "foo", "--phase", "X", cwd=project))
    planning = project / ".planning"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ok(run("--dir", str(planning / "initiatives" / "foo"), "set", "title", "Foo renamed", cwd=elsewhere))
    assert not (planning / "initiatives" / "foo" / ".local").exists()  # no second lock beside the workspace's
    assert ok(run("--initiative", "foo", "get", "title", cwd=project)).stdout == "Foo renamed\n"
    assert ok(run("get", "title", cwd=project)).stdout == "Demo\n"
    inside_foo = str(planning / "initiatives" / "foo" / "decisions")
    assert ok(run("--dir", inside_foo, "get", "title", cwd=elsewhere)).stdout == "Foo renamed\n"
    assert ok(run("--dir", inside_foo, "--initiative", "demo", "get", "title", cwd=elsewhere)).stdout == "Demo\n"
    assert ok(run("--dir", str(planning / "decisions"), "get", "title", cwd=elsewhere)).stdout == "Demo\n"
    env = {"PLANSTATE_DIR": str(planning / "initiatives" / "foo")}
    assert ok(run("get", "title", cwd=elsewhere, env=env)).stdout == "Foo renamed\n"


def test_dir_of_a_folder_that_only_holds_a_state_file_is_refused(run: Run, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "copy"
    other.mkdir()
    (other / "STATE.md").write_bytes(state_file(project).read_bytes())
    before = (other / "STATE.md").read_bytes()
    for args in (("get", "title"), ("set", "title", "x")):
        result = run("--dir", str(other), *args, cwd=tmp_path)
        assert result.returncode == 2
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"planstate: no .planning/ workspace at {other}")
    assert (other / "STATE.md").read_bytes() == before
    assert sorted(p.name for p in other.iterdir()) == ["STATE.md"]


def test_a_write_without_an_active_initiative_must_name_one(run: Run, project: Path) -> None:
    """With none active, reads show the most recently changed initiative; writes refuse to guess among several."""
    ok(run("initiative", "new", "side", "--phase", "X", cwd=project))  # paused: demo is active
    ok(run("pause", cwd=project))
    state = project / ".planning" / "STATE.md"
    before = state.read_bytes()
    for args in (("archive",), ("set", "title", "x"), ("next", "n"), ("decision", "add", "--context", "c",
                 "--decision", "d", "--reason", "r")):  # fmt: skip
        result = run(*args, cwd=project)
        assert result.returncode == 2, (args, result.stderr)
        assert (
            result.stderr
            == "planstate: no initiative is active (initiatives: demo, side); name one with --initiative SLUG\n"
        )
    assert state.read_bytes() == before
    assert list((project / ".planning" / "decisions").glob("dec-*")) == []
    assert ok(run("get", "title", cwd=project)).stdout == "Demo\n"  # a read still shows the latest
    ok(run("--initiative", "side", "archive", cwd=project))
    ok(run("archive", cwd=project))  # one candidate left (demo): no guess
    assert ok(run("get", "lifecycle.state", cwd=project)).stdout == "archived\n"


def test_initiative_switch_needs_no_active_initiative(run: Run, project: Path) -> None:
    ok(run("initiative", "new", "side", "--phase", "X", cwd=project))
    ok(run("pause", cwd=project))
    ok(run("initiative", "switch", "side", cwd=project))
    assert ok(run("get", "initiative", cwd=project)).stdout == "side\n"
    ok(run("initiative", "new", "third", cwd=project))


def test_usage_errors_point_at_the_command_help(run: Run, project: Path) -> None:
    cases = [
        (("get", "title", "--bogus"), "planstate: get: unrecognized arguments: --bogus (see `planstate get --help`)"),
        (("get",), "planstate: get: the following arguments are required: PATH (see `planstate get --help`)"),
        (
            ("decision", "add", "--context", "c", "--bogus"),
            "(see `planstate decision add --help`)",
        ),
        (("bogus",), "(see `planstate --help`)"),
    ]
    for args, needle in cases:
        result = run(*args, cwd=project)
        assert result.returncode == 2
        (line,) = result.stderr.splitlines()
        assert needle in line, line


def test_usage_errors_are_json_under_json(run: Run, project: Path) -> None:
    for args in (("decision", "add", "--json"), ("get", "--json"), ("status", "--json", "--bogus")):
        result = run(*args, cwd=project)
        assert result.returncode == 2
        assert result.stderr == ""
        error = json_error(result)
        assert set(error) == {"type", "message", "path", "line", "column", "field", "text"}
        assert error["type"] == "UsageError"
        assert error["path"] is None
        assert f"(see `planstate {args[0]}" in error["message"]
        plain = run(*[a for a in args if a != "--json"], cwd=project)  # the same refusal as text
        assert error["text"] == plain.stderr.rstrip("\n")
    assert (
        "the following arguments are required: --context"
        in json_error(run("decision", "add", "--json", cwd=project))["message"]
    )


def test_no_arguments_prints_help_on_stderr(run: Run) -> None:
    result = run()
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("usage: planstate")
    assert "Exit codes" in result.stderr


def test_search_upward_from_a_subfolder(run: Run, project: Path) -> None:
    deep = project / "src" / "pkg" / "sub"
    deep.mkdir(parents=True)
    assert ok(run("get", "title", cwd=deep)).stdout == "Demo\n"
    ok(run("set", "position.task", "deep", cwd=deep))
    assert ok(run("get", "position.task", cwd=project)).stdout == "deep\n"


def test_noop_set_leaves_bytes_and_mtime(run: Run, project: Path) -> None:
    path = state_file(project)
    before = path.read_bytes()
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    mtime = path.stat().st_mtime_ns
    result = ok(run("set", "title", "Demo", "position.task", "null", cwd=project))
    assert result.stdout == ".planning/STATE.md: no change\n"
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == mtime


def test_one_field_set_changes_exactly_two_lines(run: Run, project: Path) -> None:
    path = state_file(project)
    before = path.read_bytes()
    ok(run("set", "position.task", "Write tests", cwd=project, env={"PLANSTATE_NOW": "2026-02-03T04:05:06Z"}))
    changes = changed_lines(before, path.read_bytes())
    assert changes[:2] == [
        ("updated: 2026-01-01T00:00:00Z", "updated: 2026-02-03T04:05:06Z"),
        ("  task: null", "  task: Write tests"),
    ]
    # In the body, only the generated region that shows the task changes: its marker (new hashes) and one line.
    assert [(a.split(" sha=")[0], b.split(" sha=")[0]) for a, b in changes[2:]] == [
        ("<!-- planstate:begin position", "<!-- planstate:begin position"),
        ("- **Task:** none (pending)", "- **Task:** Write tests (pending)"),
    ]


def test_file_mode_is_kept(run: Run, project: Path) -> None:
    path = state_file(project)
    path.chmod(0o600)
    ok(run("set", "position.task", "private", cwd=project))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    ok(run("append", "resume_context.files_modified", "x", cwd=project))
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_comments_unknown_keys_and_body_survive(run: Run, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    text = text.replace("title: Demo\n", "title: Demo  # the name people use\nx_team: {lead: ana, size: 3}\n")
    text = text.replace("  task: null\n", "  task: null   # filled in by the agent\n  x_note: keep me\n")
    text += "\n## Notes\n\nHand-written notes that planstate must keep.\n"
    path.write_text(text)
    ok(run("validate", cwd=project))
    before = path.read_bytes()
    ok(run("set", "position.task", "t9", "title", "Demo 2", cwd=project, env={"PLANSTATE_NOW": "2026-03-01T00:00:00Z"}))
    after = path.read_text()
    assert "title: Demo 2  # the name people use\n" in after
    assert "x_team: {lead: ana, size: 3}\n" in after
    assert "  task: t9   # filled in by the agent\n  x_note: keep me\n" in after
    assert after.endswith("\n## Notes\n\nHand-written notes that planstate must keep.\n")
    # Three front matter lines change (updated, task, title); the body changes only inside generated regions.
    assert len(changed_lines(before.split(b"\n---\n")[0], after.encode().split(b"\n---\n")[0])) == 3
    assert json_data(ok(run("get", "x_team", "--json", cwd=project))) == {"lead": "ana", "size": 3}


def test_closed_stdout_is_not_an_error(project: Path) -> None:
    from conftest import planstate_command

    reader = subprocess.Popen(
        [*planstate_command(), "schema"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # like `planstate schema | head -0`: the reader is gone before the output
    err = reader.stderr.read()
    reader.stderr.close()
    assert reader.wait(timeout=120) == 0  # a guard against a hang
    assert err == b""
