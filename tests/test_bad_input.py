"""Bad files and bad arguments: one clear line on stderr, the right exit code, no change on disk, no hang."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from conftest import Run, RunAll, exits, json_data, json_error, state_file

TIMEOUT = 120  # seconds: the guard against hangs; a command that takes longer fails its test with TimeoutExpired
LOCATED = re.compile(r"^\.planning/STATE\.md:\d+:\d+: ")

READERS = (("get", "title"), ("status",))
WRITERS = (
    ("set", "position.task", "x"),
    ("append", "resume_context.files_modified", "x"),
    ("unset", "position.wave"),
)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under `folder` (except the lock folder): file bytes, or a symlink's target."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if ".local" in Path(rel).parts:  # the lock file notes its last holder
            continue
        if path.is_symlink():
            out[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            out[rel] = path.read_bytes()
        else:
            out[rel] = "dir" if path.is_dir() else "other"
    return out


def one_line_error(result: CompletedProcess[str], code: int, *needles: str) -> str:
    """Assert a failed command printed exactly one error line (and no traceback); return the line."""
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("planstate: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0].removeprefix("planstate: ")


def refuses(run: Run, project: Path, args: tuple[str, ...], code: int, *needles: str) -> str:
    """Run a command that must fail with one line and must leave every file as it was."""
    before = snapshot(project)
    result = run(*args, cwd=project, timeout=TIMEOUT)
    line = one_line_error(result, code, *needles)
    assert result.stdout == ""
    assert snapshot(project) == before
    return line


def refuse_all(
    run_all: RunAll, project: Path, commands: list[tuple[str, ...]], *needles: str, code: int = 2
) -> list[str]:
    """Run commands side by side, and `planstate validate`; each must fail with one line, no file may change.

    Returns the error lines, then the findings `validate` printed (it must exit 1 and name them).
    """
    before = snapshot(project)
    results = run_all([*commands, ("validate",)], cwd=project, timeout=TIMEOUT)
    lines = []
    for args, result in zip(commands, results, strict=False):
        assert result.stdout == "", args
        lines.append(one_line_error(result, code, *needles))
    check = results[-1]
    assert check.returncode == 1, (check.stdout, check.stderr)
    assert check.stderr == ""
    assert "Traceback" not in check.stdout
    assert check.stdout.strip()
    for needle in needles:
        assert needle in check.stdout
    assert snapshot(project) == before
    return [*lines, *check.stdout.splitlines()]


# ---------------------------------------------------------------------------- broken STATE.md


def break_yaml(path: Path) -> None:
    """Malformed YAML: an unclosed flow sequence."""
    path.write_text(path.read_text().replace("title: Demo\n", "title: [unclosed\n"))


def test_malformed_yaml(run_all: RunAll, project: Path) -> None:
    break_yaml(state_file(project))
    *lines, finding = refuse_all(run_all, project, [*READERS, *WRITERS])
    for line in lines:
        assert LOCATED.match(line), line
    assert LOCATED.match(finding), finding
    assert finding.startswith(".planning/STATE.md:7:")  # where the parser noticed
    assert "line 6" in finding  # and where the broken value starts


def test_an_unquoted_colon_gets_the_quoted_value_as_its_fix(run: Run, run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    text = path.read_text()
    number = text[: text.index("next_action: ")].count("\n") + 1
    path.write_text(text.replace('next_action: "Start phase 1: Design"\n', "next_action: Build: the index\n"))
    fix = 'mapping values are not allowed here: quote the value, as in `next_action: "Build: the index"`'
    where = f".planning/STATE.md:{number}:19: "
    *lines, finding = refuse_all(run_all, project, [("get", "title"), ("set", "position.task", "x")], fix)
    assert [line.removesuffix(fix) for line in lines] == [where, where]
    assert finding == where + fix
    checked = exits(run("check", cwd=project, timeout=TIMEOUT), 1)
    assert checked.stdout.splitlines()[0].startswith(f"{where}error parse-error: {fix} (")


def test_malformed_yaml_json_error_is_one_line(run: Run, project: Path) -> None:
    break_yaml(state_file(project))
    result = run("get", "title", "--json", cwd=project, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stderr == ""
    error = json_error(result)
    assert error["type"] == "ParseError"
    assert error["path"] == ".planning/STATE.md"
    assert error["line"] == 7
    validated = run("validate", "--json", cwd=project, timeout=TIMEOUT)
    assert validated.returncode == 1
    assert json_data(validated)["findings"][0]["line"] == 7


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"", "no front matter"),
        (b"# Just markdown\n\nNo front matter here.\n", "no front matter"),
        (b"---\ntitle: x\nno closing delimiter\n", "never closed"),
        (b"---\n---\nbody\n", "front matter is empty"),
        (b"---\n- a\n- b\n---\n", "expected a mapping"),
        (b"---\ntitle: caf\xe9\n---\n", "not UTF-8"),
        (b"---\ntitle: a\ntitle: b\n---\n", "duplicate"),
        (b"---\n" + b"a: [" * 5000 + b"\n---\n", ""),
    ],
    ids=["empty", "no-front-matter", "unclosed", "empty-front-matter", "list", "latin1", "duplicate-key", "deep"],
)
def test_broken_files(run: Run, run_all: RunAll, project: Path, content: bytes, needle: str) -> None:
    state_file(project).write_bytes(content)
    refuses(run, project, ("get", "title"), 2)  # get reads what is there, so its message may differ
    refuse_all(run_all, project, [("status",), ("set", "title", "x")], needle)


def test_binary_file(run_all: RunAll, project: Path) -> None:
    state_file(project).write_bytes(bytes(range(256)) * 40)
    refuse_all(run_all, project, [*READERS, *WRITERS], "binary")


def test_binary_after_valid_front_matter_is_kept(run: Run, project: Path) -> None:
    path = state_file(project)
    path.write_bytes(path.read_bytes() + b"\x00\xff\xfe binary tail \x00")
    before = path.read_bytes()
    result = run("set", "position.task", "x", cwd=project, timeout=TIMEOUT)
    if result.returncode == 0:  # accepted: the body is kept byte for byte
        assert path.read_bytes().endswith(b"\x00\xff\xfe binary tail \x00")
    else:
        one_line_error(result, 2)
        assert path.read_bytes() == before


def test_huge_file_is_refused_without_reading_it(run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    with path.open("ab") as handle:
        handle.truncate(50 * 1024 * 1024)  # 50 MB: valid front matter, then a sparse run of NULs
    refuse_all(run_all, project, [("get", "title"), ("status",), ("set", "position.task", "x")], "MB")
    assert path.stat().st_size == 50 * 1024 * 1024


def test_huge_front_matter_is_refused(run: Run, project: Path) -> None:
    path = state_file(project)
    filler = "".join(f"k{i}: {'v' * 60}\n" for i in range(20_000))  # about 1.4 MB of YAML
    path.write_text("---\n" + filler + "---\n")
    refuses(run, project, ("status",), 2, "front matter is")


def test_alias_bomb(run_all: RunAll, project: Path) -> None:
    lines = ["---", 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines += ["title: bomb", "---", ""]
    state_file(project).write_text("\n".join(lines))
    refuse_all(run_all, project, [("get", "title"), ("get", "a9"), ("status",), ("set", "title", "x")], "alias")


def test_schema_violation_in_file(run: Run, run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    path.write_text(path.read_text().replace("  state: active\n", "  state: bogus\n"))
    *_lines, finding = refuse_all(run_all, project, [("status",), ("set", "position.task", "x")], "lifecycle.state")
    assert LOCATED.match(finding)
    assert run("get", "title", cwd=project).returncode == 0  # get reads what is there


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("  first_phase: 1\n", "  first_phase: x\n", "structure.first_phase"),
        ("    started: 2026-01-01T00:00:00Z\n", "    started: yesterday\n", "phases.1.started"),
        ("  phases_total: 3\n", "  phases_total: many\n", "structure.phases_total"),
        ("  phase: 1\n", "  phase: first\n", "position.phase"),
    ],
    ids=["first-phase", "phase-started", "phases-total", "position-phase"],
)
def test_a_hand_edited_wrong_type_is_named_not_a_crash(run: Run, project: Path, old: str, new: str, where: str) -> None:
    """Derived values are computed only from valid data: a wrong type is a located exit 2, never an internal error."""
    path = state_file(project)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    line_number = path.read_text()[: path.read_text().index(new)].count("\n") + 1
    for args in (("set", "title", "y"), ("next", "n"), ("append", "resume_context.files_modified", "a.py")):
        line = refuses(run, project, args, 2, where)
        assert line.startswith(f".planning/STATE.md:{line_number}:"), line


# ---------------------------------------------------------------------------- bad values and paths


BAD_ARGUMENTS: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("set", "position.phase", "abc"), ("position.phase", "planstate position --phase N|phase start N")),
    (("set", "position.status", "bogus"), ("position.status", "bogus")),
    (("set", "lifecycle.state", "paused"), ("lifecycle.state", "changed only by commands", "planstate pause")),
    (("set", "phases.1.status", "completed"), ("phases.1.status", "planstate phase start")),
    (("set", "phases.1", "{name: x}"), ("phases.1", "holds phases.1.status")),
    (("append", "phases", "{name: x}"), ("phases", "holds phases[].status")),
    (("set", "structure.first_phase", "5"), ("structure.first_phase",)),
    (("set", "title", ""), ("title", "empty")),
    (("set", "resume_context.files_modified", "[a, b"), ("resume_context.files_modified", "YAML", "quote")),
    (("set", "position.wave", "1 # one"), ("position.wave", "without '# one'", "quote")),
    (("append", "resume_context.files_modified", "'a' b"), ("resume_context.files_modified", "YAML")),
    (("set", "position.task", '"a" b'), ("position.task", "YAML")),
    (("set", "title", "D", "title", "E"), ("title", "given twice")),
    (("set", "phases.1.name", "D", "phases[1].name", "E"), ("phases.1.name", "given twice")),
    (("set", "title", "   "), ("title", "empty or only spaces")),
    (("set", "phases.1.name", "\t"), ("phases.1.name", "empty or only spaces")),
    (("set", "position.wave", "{a: 1}"), ("position.wave", "mapping")),
    (("set", "nosuch.field", "1"), ("nosuch.field", "not a field")),
    (("set", "title.x", "1"), ("title.x",)),
    (("set", "phases.10.status", "completed"), ("phases.10",)),
    (("set", "phases.10.name", "x"), ("phases.10.name", "there is no phase 10: phases are numbered 1 to")),
    (("set", "progress.percent", "50"), ("progress.percent", "derived")),
    (("set", "position.phase_name", "x"), ("position.phase_name", "derived")),
    (("set", "schema_version", "99"), ("schema_version", "newer")),
    (("set", "lifecycle.completed_at", "2026-01-01T00:00:00Z"), ("lifecycle.completed_at", "planstate pause")),
    (("set", "position.task"), ("no value",)),
    (("set", "a", "1", "b"), ("'b' has no value",)),
    (("set", "", "1"), ("empty path",)),
    (("set", "a..b", "1"), ("bad path",)),
    (("get", "nosuch"), ("no value at nosuch",)),
    (("get", "phases.7"), ("phases.7", "there is no phase 7: phases are numbered 1 to")),
    (("get", "["), ("bad path",)),
    (("unset", "title"), ("title", "required")),
    (("unset", "lifecycle.state"), ("lifecycle.state", "changed only by commands")),
    (("unset", "phases.1.attempts"), ("phases.1.attempts", "planstate phase")),
    (("unset", "nosuch"), ("nosuch",)),
    (("unset", "resume_context.files_modified.3"), ("files_modified.3",)),
    (("unset", "phases.1"), ("phases",)),
    (("get", "phases.0.name"), ("phases.0.name", "there is no phase 0: phases are numbered 1 to")),
    (("set", "phases.0.name", "x"), ("phases.0.name", "there is no phase 0: phases are numbered 1 to")),
    (("append", "title", "x"), ("title", "not a list")),
    (("append", "nosuch", "x"), ("nosuch",)),
    (("append", "history", "{a: 1}"), ("history",)),
    (("--lock-timeout", "nan", "set", "title", "x"), ("lock timeout",)),
    (("--lock-timeout", "-1", "set", "title", "x"), ("lock timeout",)),
    (("--lock-timeout", "soon", "set", "title", "x"), ("invalid float",)),
    (("--dir", "x" * 5000, "status"), ("no .planning/ workspace at ", "(File name too long)")),
    (("bogus",), ("unknown command 'bogus'",)),
    (("get",), ("required",)),
    (("set",), ("required",)),
    (("schema", "nosuch"), ("invalid choice",)),
    (("status", "--no-such-flag"), ("unrecognized",)),
]


def test_bad_arguments(run_all: RunAll, project: Path) -> None:
    """Each bad command line fails with exit 2 and one line naming the problem; nothing changes."""
    before = snapshot(project)
    results = run_all([args for args, _needles in BAD_ARGUMENTS], cwd=project, timeout=TIMEOUT)
    failures = []
    for (args, needles), result in zip(BAD_ARGUMENTS, results, strict=True):
        try:
            assert result.stdout == ""
            one_line_error(result, 2, *needles)
        except AssertionError as exc:
            failures.append(f"planstate {' '.join(args)}: {exc}")
    assert not failures, "\n".join(failures)
    assert snapshot(project) == before


def test_bad_lock_timeout_in_environment(run: Run, project: Path) -> None:
    before = snapshot(project)
    result = run("set", "title", "x", cwd=project, env={"PLANSTATE_LOCK_TIMEOUT": "later"}, timeout=TIMEOUT)
    one_line_error(result, 2, "PLANSTATE_LOCK_TIMEOUT")
    assert snapshot(project) == before


def test_json_errors_are_one_json_line(run: Run, project: Path) -> None:
    result = run("set", "progress.percent", "1", "--json", cwd=project, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stderr == ""
    error = json_error(result)
    assert error["type"] == "UsageError"
    assert error["field"] == "progress.percent"


def test_output_the_terminal_cannot_encode(run: Run, project: Path) -> None:
    result = run("set", "title", "Café → Ωmega", cwd=project, env={"PYTHONIOENCODING": "ascii"}, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert "title" in result.stdout
    assert run("get", "title", cwd=project).stdout == "Café → Ωmega\n"


# ---------------------------------------------------------------------------- the file system


def test_symlink_outside_the_workspace(run_all: RunAll, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    path = state_file(project)
    outside.write_bytes(path.read_bytes())
    original = outside.read_bytes()
    path.unlink()
    path.symlink_to(outside)
    refuse_all(run_all, project, [*READERS, *WRITERS], "outside the workspace")
    assert outside.read_bytes() == original
    assert path.is_symlink()


def test_symlink_loop(run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    path.unlink()
    path.symlink_to("STATE.md")
    refuse_all(run_all, project, [("get", "title"), ("set", "title", "x")], "symlink loop")


def test_dangling_symlink(run: Run, project: Path) -> None:
    path = state_file(project)
    path.unlink()
    path.symlink_to("missing.md")
    refuses(run, project, ("status",), 2, "not found")


def test_symlink_inside_the_workspace_is_written_through(run: Run, project: Path) -> None:
    path = state_file(project)
    real = project / ".planning" / "real" / "STATE.md"
    real.parent.mkdir()
    path.rename(real)
    path.symlink_to(Path("real") / "STATE.md")
    result = run("set", "position.task", "through", cwd=project, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert path.is_symlink()  # the link is kept; the file it points to changed
    assert "  task: through\n" in real.read_text()


def test_fifo_does_not_hang(run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    path.unlink()
    os.mkfifo(path)
    refuse_all(run_all, project, [("get", "title"), ("set", "title", "x")], "not a regular file")


def history_file(project: Path) -> Path:
    """The history.jsonl of a project folder."""
    return project / ".planning" / "history.jsonl"


def test_history_fifo_does_not_hang(run: Run, project: Path) -> None:
    path = history_file(project)
    path.unlink()
    os.mkfifo(path)
    validate = run("validate", cwd=project, timeout=TIMEOUT)
    assert validate.returncode == 1, validate.stderr
    assert ".planning/history.jsonl: not a regular file" in validate.stdout
    refuses(run, project, ("pause",), 2, ".planning/history.jsonl", "not a regular file")
    assert run("get", "lifecycle.state", cwd=project, timeout=TIMEOUT).stdout == "active\n"


def test_history_fifo_does_not_hang_resume(run: Run, project: Path) -> None:
    path = history_file(project)
    path.unlink()
    os.mkfifo(path)
    brief = run("resume", "--json", cwd=project, timeout=TIMEOUT)
    assert brief.returncode == 1, brief.stderr  # the brief is printed, flagged untrusted
    data = json_data(brief)
    assert data["trusted"] is False
    assert "not a regular file" in brief.stdout


def test_history_symlink_outside_the_workspace(run: Run, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    secret = b'{"at": "2026-01-01T00:00:00Z", "from": null, "to": "active", "trigger": "init", "secret": 1}\n'
    outside.write_bytes(secret)
    path = history_file(project)
    path.unlink()
    path.symlink_to(outside)
    validate = run("validate", cwd=project, timeout=TIMEOUT)
    assert validate.returncode == 1
    assert "outside the workspace" in validate.stdout
    assert "secret" not in validate.stdout
    assert "secret" not in run("resume", "--json", cwd=project, timeout=TIMEOUT).stdout
    refuses(run, project, ("pause",), 2, "outside the workspace")  # STATE.md not written either
    assert outside.read_bytes() == secret
    assert path.is_symlink()


def test_history_symlink_inside_the_workspace_is_appended_through(run: Run, project: Path) -> None:
    path = history_file(project)
    real = project / ".planning" / "logs" / "history.jsonl"
    real.parent.mkdir()
    path.rename(real)
    path.symlink_to(Path("logs") / "history.jsonl")
    result = run("pause", cwd=project, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert path.is_symlink()  # the link is kept; the file it points to got the line
    lines = real.read_text().splitlines()
    assert [json.loads(line)["to"] for line in lines] == ["active", "paused"]


def test_state_is_a_folder(run_all: RunAll, project: Path) -> None:
    path = state_file(project)
    path.unlink()
    path.mkdir()
    refuse_all(run_all, project, [("status",), ("set", "title", "x")], "not a regular file")


def test_state_file_missing(run_all: RunAll, project: Path) -> None:
    state_file(project).unlink()
    refuse_all(run_all, project, [("status",), ("set", "title", "x")], "not found")


def test_no_workspace_found(run: Run, run_all: RunAll, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    commands = [("status",), ("get", "title"), ("set", "title", "x"), ("validate",)]
    for result in run_all(commands, cwd=empty, timeout=TIMEOUT):
        line = one_line_error(result, 2, "no .planning/", "planstate init")
        assert "--dir" in line
    assert list(empty.iterdir()) == []
    one_line_error(run("--dir", str(empty), "status", timeout=TIMEOUT), 2, "no .planning/")
    one_line_error(run("status", env={"PLANSTATE_DIR": str(empty / "nope")}, timeout=TIMEOUT), 2, "no .planning/")


def test_init_refuses_an_existing_workspace(run: Run, project: Path) -> None:
    refuses(run, project, ("init", "--title", "Again"), 2, "already exists")
    refuses(run, project, ("--dir", str(project), "init"), 2, "already exists")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("init", "--title", "X", "--phase", " "), "phase names"),
        (("init", "--initiative", "Not A Slug"), "slug"),
        (("init", "--first-phase", "2"), "invalid choice"),
    ],
)
def test_init_bad_options(run: Run, tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    one_line_error(run(*args, cwd=folder, timeout=TIMEOUT), 2, needle)
    assert list(folder.iterdir()) == []


def test_init_refuses_a_planning_file(run: Run, tmp_path: Path) -> None:
    (tmp_path / ".planning").write_text("not a folder")
    one_line_error(run("init", timeout=TIMEOUT), 2, "already exists")
    assert (tmp_path / ".planning").read_text() == "not a folder"


def test_current_folder_deleted(tmp_path: Path) -> None:
    from conftest import planstate_command

    for command in ("status", "init"):
        gone = tmp_path / f"gone-{command}"
        gone.mkdir()
        result = subprocess.run(
            ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone), *planstate_command(), command],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        one_line_error(result, 2, "current folder no longer exists")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("set", "next_action", "\udcff\udcfe"), {}, "argument 3 (b'\\xff\\xfe') is not UTF-8 text"),
        (("next", "hi"), {"PLANSTATE_ACTOR": "\udce9"}, "PLANSTATE_ACTOR is not UTF-8 text"),
    ],
    ids=["argument", "environment"],
)
def test_text_that_is_not_utf8_is_refused_before_anything_is_written(
    project: Path, args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    from conftest import planstate_command

    before = state_file(project).read_bytes()
    environ = {**os.environ, **env}
    # Bytes that are not UTF-8 reach Python as lone surrogates; passing them through a subprocess needs bytes.
    argv = [os.fsencode(a) for a in (*planstate_command(), *args)]
    environb = {os.fsencode(k): os.fsencode(v) for k, v in environ.items()}
    result = subprocess.run(argv, cwd=project, env=environb, capture_output=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert message.encode() in result.stderr and result.stderr.count(b"\n") == 1
    assert state_file(project).read_bytes() == before
    assert subprocess.run([*planstate_command(), "validate"], cwd=project, capture_output=True).returncode == 0


def test_a_bad_pinned_clock_is_a_usage_error(run: Run, project: Path) -> None:
    before = snapshot(project)
    for args in (("resume",), ("next", "x")):
        result = run(*args, cwd=project, env={"PLANSTATE_NOW": "garbage"}, timeout=TIMEOUT)
        one_line_error(result, 2, "PLANSTATE_NOW 'garbage' is not an ISO 8601 timestamp")
    assert snapshot(project) == before


def test_a_phase_that_completes_before_it_started_is_invalid(run: Run, project: Path) -> None:
    assert run("phase", "complete", "1", cwd=project, timeout=TIMEOUT).returncode == 0
    path = state_file(project)
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^    completed: (\S+)$", text, re.M)
    assert match is not None
    path.write_text(text.replace(match.group(0), "    completed: 2000-01-01T00:00:00Z"), encoding="utf-8")
    line = text[: match.start()].count("\n") + 1
    result = run("validate", cwd=project, timeout=TIMEOUT)
    assert result.returncode == 1
    assert f".planning/STATE.md:{line}:5: phases.1.completed: is before the phase started (" in result.stdout
    refuses(run, project, ("next", "x"), 2, "phases.1.completed: is before the phase started")


def test_refusals_about_a_field_name_its_line(run: Run, project: Path) -> None:
    refuses(run, project, ("complete",), 2, ".planning/STATE.md:", ": phases: cannot complete")
    line = refuses(run, project, ("set", "lifecycle.state", "paused"), 2, "lifecycle.state: is changed only by")
    assert re.match(r"\.planning/STATE\.md:\d+:\d+: lifecycle\.state: ", line), line
