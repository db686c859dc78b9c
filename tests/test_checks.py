"""`planstate check`: every finding code in text, JSON and GitHub formats, `--fix` for each fixable one, exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, Run, exits, json_data, json_error, planstate_command, state_file

from planstate.check import checks
from planstate.workspace import Workspace
from tests.gitutil import commit_all, git, new_repo

STATE = ".planning/STATE.md"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def line_of(path: Path, start: str, after: int = 0) -> int:
    """The 1-based number of the first line (after line `after`) that starts with `start`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if number > after and line.startswith(start):
            return number
    raise AssertionError(f"no line starting with {start!r} in {path}")


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a file by hand, as a person would."""
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def record(project: Path, folder: str, name: str, fields: dict[str, object], body: str = "") -> Path:
    """Write a record file by hand."""
    path = project / ".planning" / folder / name
    lines = ["---", *(f"{k}: {json.dumps(v)}" for k, v in fields.items()), "---", body]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def decision(project: Path, record_id: str, name: str | None = None, **extra: object) -> Path:
    fields: dict[str, object] = {
        "schema_version": 1,
        "id": record_id,
        "title": "A decision",
        "date": "2026-01-01",
        "context": "c",
        "decision": "d",
        "reason": "r",
        **extra,
    }
    return record(project, "decisions", name or f"{record_id}-a-decision.md", fields)


def session(project: Path, record_id: str, started: str = "2026-01-01T00:00:00Z", **extra: object) -> Path:
    fields: dict[str, object] = {
        "schema_version": 1,
        "id": record_id,
        "agent": "worker",
        "status": "active",
        "started": started,
        **extra,
    }
    return record(project, "sessions", f"{record_id}-worker.md", fields)


def blocker(project: Path, record_id: str, **extra: object) -> Path:
    fields: dict[str, object] = {
        "schema_version": 1,
        "id": record_id,
        "title": "A blocker",
        "status": "active",
        "description": "d",
        "identified": "2026-01-01T00:00:00Z",
        **extra,
    }
    return record(project, "blockers", f"{record_id}-a-blocker.md", fields)


# ---------------------------------------------------------------------------- one case per code

Where = tuple[str, int | None]  # (file as shown, line) of the finding


def parse_error(p: Path) -> Where:
    edit(state_file(p), "title: Demo\n", "title: [Demo\n")
    return STATE, line_of(state_file(p), "title:") + 1  # the YAML error shows on the line after the open bracket


def schema_error(p: Path) -> Where:
    path = decision(p, "dec-1b2k9qx7m4fa", status="maybe")
    return ".planning/decisions/" + path.name, line_of(path, "status:")


def unknown_key(p: Path) -> Where:
    edit(state_file(p), "title: Demo\n", "title: Demo\ncolour: blue\n")
    return STATE, line_of(state_file(p), "colour:")


def conflict_marker(p: Path) -> Where:
    path = decision(p, "dec-1b2k9qx7m4fa")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("intro\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other-branch\n")
    return ".planning/decisions/" + path.name, line_of(path, "<<<<<<<")


def stale_region(p: Path) -> Where:
    decision(p, "dec-1b2k9qx7m4fa")
    return STATE, line_of(state_file(p), "<!-- planstate:begin decisions")


def hand_edit(p: Path) -> Where:
    edit(state_file(p), "- **Task:** none (pending)", "- **Task:** typed by hand")
    return STATE, line_of(state_file(p), "- **Task:** typed by hand")  # the edited line


def malformed_region(p: Path) -> Where:
    with state_file(p).open("a", encoding="utf-8") as handle:
        handle.write("\n<!-- planstate:begin timeline -->\n<!-- planstate:end timeline -->\n")
    return STATE, line_of(state_file(p), "<!-- planstate:begin timeline")


def template_error(p: Path) -> Where:
    folder = p / ".planning" / "templates" / "regions"
    folder.mkdir(parents=True)
    (folder / "progress.md.j2").write_text("{{ bar }}\n{{ missing_name }}\n")
    return ".planning/templates/regions/progress.md.j2", 2


def derived_mismatch(p: Path) -> Where:
    edit(state_file(p), "  percent: 0\n", "  percent: 50\n")
    return STATE, line_of(state_file(p), "  percent:")


def phase_name_mismatch(p: Path) -> Where:
    edit(state_file(p), "  phase_name: Design\n", "  phase_name: Planning\n")
    return STATE, line_of(state_file(p), "  phase_name:")


def phase_out_of_range(p: Path) -> Where:
    edit(state_file(p), "  phase: 1\n", "  phase: 9\n")
    return STATE, line_of(state_file(p), "  phase: 9")


def structure_mismatch(p: Path) -> Where:
    with Workspace.find(p).edit() as state:  # a phase added by hand; the snapshot still counts three
        state.phases.append({"name": "Deploy", "status": "pending"})
    return STATE, line_of(state_file(p), "  phases_total:")


def completion_mismatch(p: Path) -> Where:
    edit(state_file(p), "  state: active\n", "  state: completed\n  completed_at: 2026-01-02T00:00:00Z\n")
    with (p / ".planning" / "history.jsonl").open("a") as log:
        log.write('{"at": "2026-01-02T00:00:00Z", "from": "active", "to": "completed", "trigger": "complete"}\n')
    return STATE, line_of(state_file(p), "  state:")


def completion_pending(p: Path) -> Where:
    with Workspace.find(p).edit() as state:  # every phase done by hand, the initiative left active
        for phase in state.phases:
            phase.status = "completed"
    return STATE, line_of(state_file(p), "  state:")


def history_mismatch(p: Path) -> Where:
    log = p / ".planning" / "history.jsonl"
    with log.open("a") as handle:
        handle.write('{"at": "2026-01-01T01:00:00Z", "from": "active", "to": "paused", "trigger": "pause"}\n')
    return ".planning/history.jsonl", 2


def missing_reference(p: Path) -> Where:
    path = blocker(p, "blk-1b2k9qx7m4fa", affects=["phase 2", "Phase 7: launch"])
    Workspace.find(p).render()
    return ".planning/blockers/" + path.name, line_of(path, "affects:")


def task(project: Path, record_id: str, **extra: object) -> Path:
    fields: dict[str, object] = {
        "schema_version": 1,
        "id": record_id,
        "title": "A task",
        "status": "pending",
        "created": "2026-01-01T00:00:00Z",
        **extra,
    }
    (project / ".planning" / "tasks").mkdir(exist_ok=True)
    return record(project, "tasks", f"{record_id}-a-task.md", fields)


def dependency_cycle(p: Path) -> Where:
    path = task(p, "tsk-1b2k9qx7m4fa", depends_on=["tsk-1b2k9qx7m4fb"])
    task(p, "tsk-1b2k9qx7m4fb", depends_on=["tsk-1b2k9qx7m4fa"])
    return ".planning/tasks/" + path.name, line_of(path, "depends_on:")


def duplicate_id(p: Path) -> Where:
    decision(p, "dec-1b2k9qx7m4fa")
    path = decision(p, "dec-1b2k9qx7m4fa", name="dec-1b2k9qx7m4fa-again.md")
    return ".planning/decisions/" + path.name, line_of(path, "id:")


def filename_id_mismatch(p: Path) -> Where:
    path = decision(p, "dec-1b2k9qx7m4fa", name="my-decision.md")
    return ".planning/decisions/my-decision.md", line_of(path, "id:")


def multiple_active_initiatives(p: Path) -> Where:
    other = p / ".planning" / "initiatives" / "other"
    other.mkdir(parents=True)
    text = state_file(p).read_text().replace("initiative: demo\n", "initiative: other\n")
    (other / "STATE.md").write_text(text)
    shutil.copy(p / ".planning" / "history.jsonl", other / "history.jsonl")
    return ".planning/initiatives/other/STATE.md", line_of(other / "STATE.md", "  state:")


def multiple_active_sessions(p: Path) -> Where:
    session(p, "ses-1b2k9qx7m4fa", started="2026-01-01T00:00:00Z")
    path = session(p, "ses-1b2k9qx7m4fb", started="2026-01-01T00:00:00Z")
    Workspace.find(p).render()  # records never write STATE.md; show them, as the next write would
    return ".planning/sessions/" + path.name, line_of(path, "status:")


def stale_session(p: Path) -> Where:
    path = session(p, "ses-1b2k9qx7m4fa", started="2025-12-31T20:00:00Z")  # 4 hours before the pinned clock
    Workspace.find(p).render()
    return ".planning/sessions/" + path.name, line_of(path, "status:")


def missing_file(p: Path) -> Where:
    (p / "src").mkdir()
    (p / "src" / "here.py").write_text("")
    Workspace.find(p).set({"resume_context.files_modified": ["src/here.py", "src/gone.py"]})
    return STATE, line_of(state_file(p), "    - src/gone.py")


def attributes_without_config(p: Path, section: str) -> Where:
    """A clone that has planstate's attributes (committed) but not the git config for `section`."""
    git_repo(p)
    Workspace.find(p).git_install()
    subprocess.run(["git", "config", "--remove-section", section], cwd=p, check=True, capture_output=True)
    return ".planning/.gitattributes", line_of(p / ".planning" / ".gitattributes", "*.md merge=planstate")


def merge_driver_missing(p: Path) -> Where:
    return attributes_without_config(p, "merge.planstate")


def diff_driver_missing(p: Path) -> Where:
    return attributes_without_config(p, "diff.planstate")


def driver_command_fragile(p: Path) -> Where:
    """A clone whose merge driver an older install wrote from an activated venv: a bare `planstate`."""
    where = attributes_without_config(p, "merge.planstate")
    driver = "planstate git merge-driver %O %A %B %L %P"
    subprocess.run(["git", "config", "merge.planstate.driver", driver], cwd=p, check=True, capture_output=True)
    return where


def stale_temp_file(p: Path) -> Where:
    """A temp file a killed `decision add` left; pid 4194303 is above every pid_max Linux allows but one."""
    name = ".dec-1ng9h0a3b4c5-use-jose.md.4194303.9f2c01ab.tmp"
    (p / ".planning" / "decisions" / name).write_text("---\nschema_version: 1\n")
    return f".planning/decisions/{name}", None


CASES: dict[str, Callable[[Path], Where]] = {
    "parse-error": parse_error,
    "schema-error": schema_error,
    "unknown-key": unknown_key,
    "conflict-marker": conflict_marker,
    "stale-region": stale_region,
    "hand-edit": hand_edit,
    "malformed-region": malformed_region,
    "template-error": template_error,
    "derived-mismatch": derived_mismatch,
    "phase-name-mismatch": phase_name_mismatch,
    "phase-out-of-range": phase_out_of_range,
    "structure-mismatch": structure_mismatch,
    "completion-mismatch": completion_mismatch,
    "completion-pending": completion_pending,
    "history-mismatch": history_mismatch,
    "missing-reference": missing_reference,
    "dependency-cycle": dependency_cycle,
    "duplicate-id": duplicate_id,
    "filename-id-mismatch": filename_id_mismatch,
    "multiple-active-initiatives": multiple_active_initiatives,
    "multiple-active-sessions": multiple_active_sessions,
    "stale-session": stale_session,
    "missing-file": missing_file,
    "merge-driver-missing": merge_driver_missing,
    "diff-driver-missing": diff_driver_missing,
    "driver-command-fragile": driver_command_fragile,
    "stale-temp-file": stale_temp_file,
}
ENV = {"PLANSTATE_NOW": "2026-01-01T00:00:00Z"}


def test_every_code_has_a_case_and_a_documented_example() -> None:
    assert sorted(CASES) == sorted(checks.CODES)
    docs = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    headings = re.findall(r"^### `([a-z-]+)`", docs, re.MULTILINE)
    assert headings == list(checks.CODES)  # documented, in the order of checks.CODES
    for code, info in checks.CODES.items():
        section = docs.split(f"### `{code}`\n", 1)[1].split("\n### ", 1)[0]
        assert f"**{info.severity}**" in section, code
        assert ("fixed by `planstate check --fix`" in section) == info.fixable, code
        assert "```console\n$ planstate check\n" in section and "Fix:" in section, code


@dataclass
class Seen:
    """A finding as the three formats report it."""

    text: str
    data: dict[str, object]
    annotation: str


def check_all_formats(run: Run, project: Path, code: str, where: Where) -> Seen:
    """Run check in text, JSON and GitHub formats and return the one finding with `code` at `where`."""
    file, line = where
    severity = checks.CODES[code].severity
    exit_code = 1 if severity == "error" else 0
    text = exits(run("check", cwd=project, env=ENV), exit_code).stdout
    location = f"{file}:{line}" if line is not None else file
    (text_line,) = [ln for ln in text.splitlines() if ln.startswith(location + ":") and f" {severity} {code}: " in ln]
    data = json_data(exits(run("check", "--format", "json", cwd=project, env=ENV), exit_code))
    (finding,) = [f for f in data["findings"] if f["code"] == code]
    assert (finding["path"], finding["line"], finding["severity"]) == (file, line, severity)
    assert finding["fixable"] is checks.CODES[code].fixable and finding["message"] and finding["hint"]
    assert (data["error_count"] > 0) is (severity == "error")
    github = exits(run("check", "--format", "github", cwd=project, env=ENV), exit_code).stdout
    (annotation,) = [ln for ln in github.splitlines() if f"title={code}::" in ln]
    expected = f"::{severity} file={file}" + (f",line={line}" if line is not None else "")
    assert annotation.startswith(expected), annotation
    return Seen(text_line, finding, annotation)


@pytest.mark.parametrize("code", list(CASES))
def test_check_reports_each_code_in_every_format(run: Run, project: Path, code: str) -> None:
    where = CASES[code](project)
    seen = check_all_formats(run, project, code, where)
    assert str(seen.data["message"]) in seen.text and f"({seen.data['hint']})" in seen.text
    # docs/checks.md shows this very line as the code's example.
    section = (REPO / "docs" / "checks.md").read_text(encoding="utf-8").split(f"### `{code}`\n", 1)[1]
    example = section.split("```console\n$ planstate check\n", 1)[1].split("\n```", 1)[0]
    assert example == seen.text


@pytest.mark.parametrize("code", checks.FIXABLE)
def test_check_fix_repairs_each_fixable_code(run: Run, project: Path, code: str) -> None:
    CASES[code](project)
    preview = exits(
        run("check", "--diff", cwd=project, env=ENV), 1 if checks.CODES[code].severity == "error" else 0
    ).stdout
    assert preview.startswith("--- a/.planning/")
    result = exits(run("check", "--fix", "--format", "json", cwd=project, env=ENV))
    data = json_data(result)
    assert [f["code"] for f in data["fixed"]] == [code]
    assert data["findings"] == [] and data["fix_failures"] == []
    assert (
        exits(run("check", cwd=project, env=ENV)).stdout
        == f"{data['files_checked']} files checked: 0 errors, 0 warnings\n"
    )


def test_check_diff_previews_exactly_what_fix_writes(run: Run, project: Path) -> None:
    derived_mismatch(project)
    phase_name_mismatch(project)
    stale_region(project)
    history_mismatch(project)
    env = {**ENV, "PLANSTATE_NOW": "2026-01-05T00:00:00Z"}  # pinned, so the preview's timestamps are the fix's
    before = {p: p.read_bytes() for p in (state_file(project), project / ".planning" / "history.jsonl")}
    preview = exits(run("check", "--diff", cwd=project, env=env), 1).stdout
    assert all(p.read_bytes() == data for p, data in before.items())  # --diff alone writes nothing
    fixed = exits(run("check", "--fix", "--diff", cwd=project, env=env)).stdout
    diff = preview[: preview.index("\n.planning/") + 1]
    assert fixed.startswith(diff)
    assert '"trigger": "repair"' in diff and "+  percent: 0" in diff and "+  phase_name: Design" in diff
    assert "+| 2026-01-01 | [A decision]" in diff
    assert fixed.splitlines()[-1] == "3 files checked: 0 errors, 0 warnings, 4 fixed"


def test_warnings_pass_unless_strict(run: Run, project: Path) -> None:
    unknown_key(project)
    exits(run("check", cwd=project, env=ENV))
    exits(run("check", "--strict", cwd=project, env=ENV), 1)


def test_stale_after_is_configurable_and_a_fresh_heartbeat_counts(run: Run, project: Path) -> None:
    stale_session(project)
    exits(run("check", "--strict", "--stale-after", "5h", cwd=project, env=ENV))
    exits(run("check", "--strict", "--stale-after", "2h", cwd=project, env=ENV), 1)
    beats = project / ".planning" / ".local" / "heartbeats"
    beats.mkdir(parents=True)
    (beats / "ses-1b2k9qx7m4fa").write_text("")
    pinned = 1767225600  # 2026-01-01T00:00:00Z: the heartbeat is as new as the pinned clock
    os.utime(beats / "ses-1b2k9qx7m4fa", (pinned, pinned))
    exits(run("check", "--strict", "--stale-after", "2h", cwd=project, env=ENV))
    result = exits(run("check", "--stale-after", "soon", cwd=project), 2)
    assert result.stderr.startswith("planstate: check: --stale-after 'soon' is not a duration;")


def test_parse_and_schema_findings_are_the_problems_validate_reports(project: Path) -> None:
    """check finds what `validate` finds (it reads files through the cache, so the two must never drift)."""
    for case in (schema_error, phase_out_of_range, multiple_active_initiatives, filename_id_mismatch):
        case(project)
    record(project, "decisions", "dec-broken-x.md", {"schema_version": 1}, "")
    (project / ".planning" / "blockers" / "blk-1b2k9qx7m4fa-bad.md").write_text("---\nid: [x\n---\n")
    with (project / ".planning" / "history.jsonl").open("a") as log:
        log.write("not json\n")
    ws = Workspace.find(project)
    _count, problems = ws.validate()
    codes = {"parse-error", "schema-error", "phase-out-of-range", "multiple-active-initiatives"}
    _files, findings = checks.run(ws.ctx)
    from_check = {(f.file, f.line, f.column, f.message) for f in findings if f.code in codes}
    assert len(from_check) >= 6
    assert from_check == {(p.file, p.line, p.column, p.message) for p in problems}


def test_conflict_markers_hide_the_parse_error_they_cause(run: Run, project: Path) -> None:
    edit(state_file(project), "title: Demo\n", "<<<<<<< HEAD\ntitle: Demo\n=======\ntitle: Other\n>>>>>>> b\n")
    data = json_data(exits(run("check", "--format", "json", cwd=project), 1))
    assert [f["code"] for f in data["findings"]] == ["conflict-marker"]
    assert data["findings"][0]["message"] == "unresolved git conflict (lines 6-10)"


def test_fix_leaves_what_it_cannot_fix_and_says_so(run: Run, project: Path) -> None:
    derived_mismatch(project)
    edit(state_file(project), "title: Demo\n", "title: Demo\nschema_version: 1\n")  # a duplicate key: parse error
    result = exits(run("check", "--fix", cwd=project), 1)
    assert "parse-error" in result.stdout and "fixed:" not in result.stdout  # nothing fixable in an unreadable file
    assert result.stdout.endswith(", 0 fixed\n")


def test_check_api_mirrors_the_command(project: Path) -> None:
    derived_mismatch(project)
    ws = Workspace.find(project)
    report = ws.check()
    assert [f.code for f in report.errors] == ["derived-mismatch"] and report.to_dict()["error_count"] == 1
    report = ws.check(fix=True, diff=True)
    assert [f.code for f in report.fixed] == ["derived-mismatch"] and report.findings == []
    assert report.changes and report.changes[0].shown == STATE


def test_github_annotations_escape_their_data() -> None:
    finding = checks.Finding("missing-file", "a,b:c.md", 3, None, "100% gone\nreally", "fix, it")
    assert finding.github() == "::warning file=a%2Cb%3Ac.md,line=3,title=missing-file::100%25 gone%0Areally (fix, it)"


# ---------------------------------------------------------------------------- pre-commit


def offered_hooks() -> dict[str, dict[str, Any]]:
    """The hooks .pre-commit-hooks.yaml offers pre-commit users, by id."""
    return {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def run_hook(hook: dict[str, Any], repo: Path) -> subprocess.CompletedProcess[str]:
    """Run a hook as pre-commit runs it: its entry and args in the repository, with its environment's `bin` first on
    a plain PATH (no activated venv), and no file names (`pass_filenames: false`)."""
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert re.search(hook["files"], ".planning/STATE.md") and not re.search(hook["files"], "src/app.py")
    command = [*hook["entry"].split(), *hook.get("args", [])]
    assert command[0] == "planstate"
    hook_env = Path(planstate_command()[0]).parent  # where pre-commit's env for this repository keeps the script
    env = {k: v for k, v in os.environ.items() if k not in ("PATH", "VIRTUAL_ENV") and not k.startswith("PLANSTATE")}
    env |= {"PATH": f"{hook_env}:/usr/bin:/bin", "PLANSTATE_NOW": ENV["PLANSTATE_NOW"]}
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def test_pre_commit_hooks_offered(run: Run, project: Path) -> None:
    hooks = offered_hooks()
    assert list(hooks) == ["planstate-render", "planstate-check"]  # render first: check then sees the result
    assert hooks["planstate-check"]["entry"] == "planstate check"
    assert hooks["planstate-render"]["entry"] == "planstate render --exit-code"
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    (local,) = [r for r in config["repos"] if r["repo"] == "local"]
    assert {h["id"]: h["entry"] for h in local["hooks"]} == {
        name: f".venv/bin/{hooks[name]['entry']}" for name in hooks
    }


def test_pre_commit_check_hook_fails_the_commit_on_drift(project: Path) -> None:
    hook = offered_hooks()["planstate-check"]
    exits(run_hook(hook, project))  # what pre-commit runs passes on a clean workspace...
    derived_mismatch(project)
    exits(run_hook(hook, project), 1)  # ...and fails the commit on drift


@needs_git
def test_pre_commit_render_hook_makes_a_hand_edit_one_step(run: Run, tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo")
    exits(run("init", "--title", "Demo", "--phase", "Design", cwd=repo, env=ENV))
    commit_all(repo, "init")
    render, check = offered_hooks()["planstate-render"], offered_hooks()["planstate-check"]
    exits(run_hook(render, repo))  # nothing stale: passes, writes nothing
    assert git(repo, "status", "--porcelain").stdout == ""
    path = state_file(repo)
    edit(path, "  task: null\n", "  task: Write the index\n")  # a hand edit of a field the position region shows
    git(repo, "add", "-A")
    stale = exits(run_hook(check, repo), 1).stdout.splitlines()[0]
    assert stale == (
        f"{STATE}:{line_of(path, '<!-- planstate:begin position')}: error stale-region: region position does not "
        f"show the current state (run `planstate render`, then `git add {STATE}`; `planstate check --fix` renders "
        "it too)"
    )
    done = exits(run_hook(render, repo), 1)  # it rendered the region: the commit stops, as after a formatter
    assert done.stdout.splitlines()[0] == f"{STATE}: rendered position" and done.stderr == ""
    assert git(repo, "diff", "--name-only").stdout.split() == [STATE]  # what pre-commit sees as "files were modified"
    assert "Write the index" in path.read_text().split("<!-- planstate:begin position", 1)[1]
    git(repo, "add", "-A")  # the one step the person takes
    exits(run_hook(render, repo))
    exits(run_hook(check, repo))
    assert git(repo, "diff", "--name-only").stdout == ""
    commit_all(repo, "task")
    edit(path, "- **Task:** Write the index", "- **Task:** my own words")  # inside a region: never overwritten
    before = path.read_bytes()
    kept = exits(run_hook(render, repo), 1)
    assert "edited by hand" in kept.stderr and path.read_bytes() == before


# ---------------------------------------------------------------------------- review fixes


def test_a_history_repair_the_lifecycle_forbids_is_not_fixable(run: Run, project: Path) -> None:
    """active → completed with phases unfinished is no lifecycle move: --fix must not write a history line."""
    edit(state_file(project), "  state: active\n", "  state: completed\n  completed_at: 2026-01-02T00:00:00Z\n")
    log = project / ".planning" / "history.jsonl"
    before = log.read_bytes()
    data = json_data(exits(run("check", "--fix", "--format", "json", cwd=project, env=ENV), 1))
    (mismatch,) = [f for f in data["findings"] if f["code"] == "history-mismatch"]
    assert mismatch["fixable"] is False
    assert "the lifecycle allows no move from active to completed while phases are unfinished" in mismatch["message"]
    assert "correct lifecycle.state by hand" in mismatch["hint"]
    assert "completion-mismatch" in {f["code"] for f in data["findings"]}
    assert "history-mismatch" not in {f["code"] for f in data["fixed"]} and log.read_bytes() == before


def test_a_history_repair_the_lifecycle_allows_is_fixed(run: Run, project: Path) -> None:
    edit(state_file(project), "  state: active\n", "  state: paused\n")  # active → paused: `pause` makes that move
    data = json_data(exits(run("check", "--fix", "--format", "json", cwd=project, env=ENV)))
    assert {f["code"] for f in data["fixed"]} == {"history-mismatch", "stale-region"}  # the position region too
    last = json.loads((project / ".planning" / "history.jsonl").read_text().splitlines()[-1])
    assert (last["from"], last["to"], last["trigger"]) == ("active", "paused", "repair")


def test_a_decision_made_in_a_phase_that_does_not_exist_is_reported(run: Run, project: Path) -> None:
    path = decision(project, "dec-1b2k9qx7m4fa", phase=7)
    Workspace.find(project).render()
    data = json_data(exits(run("check", "--format", "json", cwd=project, env=ENV), 1))
    (finding,) = data["findings"]
    assert (finding["code"], finding["field"], finding["line"]) == (
        "missing-reference",
        "phase",
        line_of(path, "phase:"),
    )
    assert finding["message"] == "phase names phase 7, but phases are numbered 1 to 3"


@pytest.mark.parametrize(("completed", "target"), [(0, 1), (1, 2), (3, 3)])
def test_fix_points_an_out_of_range_position_at_the_current_phase(
    run: Run, project: Path, completed: int, target: int
) -> None:
    for number in range(1, completed + 1):
        exits(run("phase", "complete", str(number), cwd=project, env=ENV))
    text = state_file(project).read_text(encoding="utf-8")
    current = re.search(r"^  phase: (\d+)$", text, re.M)
    assert current is not None
    edit(state_file(project), current.group(0) + "\n", "  phase: 9\n")
    (finding,) = json_data(exits(run("check", "--format", "json", cwd=project, env=ENV), 1))["findings"]
    assert finding["code"] == "phase-out-of-range" and f"points it at phase {target}," in finding["hint"]
    exits(run("check", "--fix", cwd=project, env=ENV))
    assert json_data(exits(run("check", "--format", "json", cwd=project, env=ENV)))["findings"] == []
    assert f"\n  phase: {target}\n" in state_file(project).read_text(encoding="utf-8")


def test_fix_never_records_a_second_active_initiative_in_the_history(run: Run, project: Path) -> None:
    exits(run("initiative", "new", "other", "--title", "Other", "--phase", "x", cwd=project, env=ENV))
    other = project / ".planning" / "initiatives" / "other"
    edit(other / "STATE.md", "  state: paused\n", "  state: active\n")
    history_before = (other / "history.jsonl").read_bytes()
    data = json_data(exits(run("check", "--fix", "--format", "json", cwd=project, env=ENV), 1))
    codes = {f["code"]: f for f in data["findings"]}
    assert set(codes) == {"multiple-active-initiatives", "history-mismatch"}
    assert codes["history-mismatch"]["fixable"] is False
    assert "another initiative is active too" in codes["history-mismatch"]["hint"]
    assert (other / "history.jsonl").read_bytes() == history_before


def git_repo(folder: Path) -> None:
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_github_annotations_name_files_from_the_repository_root(run: Run, tmp_path: Path) -> None:
    """A monorepo: .planning/ lives in svc/, the check runs from the repository root or from elsewhere."""
    repo = tmp_path / "repo"
    service = repo / "svc"
    service.mkdir(parents=True)
    git_repo(repo)
    exits(run("init", "--title", "Svc", "--phase", "One", cwd=service, env=ENV))
    edit(service / ".planning" / "STATE.md", "  percent: 0\n", "  percent: 50\n")
    from_root = exits(run("check", "--format", "github", "--dir", "svc", cwd=repo, env=ENV), 1).stdout
    assert from_root.startswith("::error file=svc/.planning/STATE.md,line=")
    inside = service / "src"
    inside.mkdir()
    from_below = exits(run("check", "--format", "github", cwd=inside, env=ENV), 1).stdout
    assert from_below == from_root  # the repository root, wherever the check runs
    text = exits(run("check", "--dir", "svc", cwd=repo, env=ENV), 1).stdout
    assert text.startswith(".planning/STATE.md:")  # text output stays relative to the project folder


def test_github_annotations_outside_git_are_relative_to_the_current_folder(run: Run, tmp_path: Path) -> None:
    service = tmp_path / "svc"
    service.mkdir()
    exits(run("init", "--title", "Svc", "--phase", "One", cwd=service, env=ENV))
    edit(service / ".planning" / "STATE.md", "  percent: 0\n", "  percent: 50\n")
    env = {**ENV, "GIT_CEILING_DIRECTORIES": str(tmp_path)}  # no repository above, whatever holds the temp folder
    out = exits(run("check", "--format", "github", "--dir", "svc", cwd=tmp_path, env=env), 1)
    assert out.stdout.startswith("::error file=svc/.planning/STATE.md,line=")


def test_json_and_another_format_conflict(run: Run, project: Path) -> None:
    result = exits(run("check", "--format", "github", "--json", cwd=project), 2)
    assert "--json and --format github" in json_error(result)["message"]  # --json asked: the refusal is JSON too
    assert json_data(exits(run("check", "--format", "json", "--json", cwd=project)))["findings"] == []


def test_messages_read_well(run: Run, project: Path) -> None:
    """Plurals, hints without nested parentheses, a phase by its number."""
    path = state_file(project)
    with Workspace.find(project).edit() as state:
        state.phases[0].status = "completed"
    edit(path, "  percent: 33\n", "  percent: 1\n")
    text = path.read_text()
    start = text.index("    duration_seconds:") if "    duration_seconds:" in text else -1
    assert start == -1  # a phase without times has no duration; give it one that disagrees
    edit(path, "  - name: Design\n", "  - name: Design\n    duration_seconds: 5\n")
    decision(project, "dec-1b2k9qx7m4fa", supersedes="dec-0000000000zz")
    result = exits(run("check", cwd=project, env=ENV), 1).stdout
    assert "phases.1.duration_seconds is 5 but the phases make it None" in result
    assert "(correct the id; commands accept a unique prefix, and `planstate decision list` shows them)" in result
    assert result.endswith(" files checked: 4 errors, 0 warnings\n")
    assert "1 errors" not in result and "1 warnings" not in result


def test_a_missing_state_file_says_how_to_get_one_back(run: Run, project: Path) -> None:
    state_file(project).unlink()
    result = exits(run("check", cwd=project, env=ENV), 1).stdout
    assert ".planning/STATE.md: error parse-error: file not found" in result
    assert "restore it (`git checkout -- FILE`), or run `planstate init`" in result
    assert "make it a readable regular file" not in result
